//! Why an exchange failed, as a fixed word, and what that means for health.
//!
//! One classification serves every adapter that speaks HTTP (the HTTP adapter and the MCP
//! Streamable-HTTP transport), so the same peer behaviour always reads the same way:
//!
//! * no response byte arrived (DNS failure, refused, reset or closed before any byte, TLS or
//!   certificate failure, deadline before any byte) → **UNREACHABLE**;
//! * the response had started, then the deadline passed or the peer cut it → **UNKNOWN**;
//! * the failure is on our side and no byte was sent (an unusable trust store or proxy
//!   setting, a header value we refuse to send) → **MISCONFIGURED**.
//!
//! Error text from ureq, rustls or the OS is never kept: it can quote the server or the URL.

use std::io;

use ureq::Error;

use crate::result::{Evidence, Fact, Note, Observation};

use crate::vocab::Status;

use super::stages::Timings;
use super::trust::TrustSource;

/// What went wrong, in our own vocabulary (the `failure` evidence word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureKind {
    /// The name did not resolve.
    Dns,
    /// The peer refused the TCP connection.
    ConnectRefused,
    /// No route to the host or network (also: address not available).
    NetworkUnreachable,
    /// The deadline passed (or the watchdog cut the exchange) before it finished.
    Timeout,
    /// The connection was reset or aborted by the peer.
    Reset,
    /// The peer closed the connection before the exchange finished.
    Closed,
    /// The certificate does not chain to a trusted root (self-signed, private CA, bad
    /// signature, revoked).
    TlsUntrusted,
    /// The certificate is not valid for the host name.
    TlsNameMismatch,
    /// The certificate has expired.
    TlsExpired,
    /// The certificate is not valid yet.
    TlsNotYetValid,
    /// Any other TLS failure (protocol mismatch, alert, plain HTTP on a TLS port).
    TlsHandshake,
    /// The CONNECT proxy refused or failed the tunnel.
    Proxy,
    /// The peer answered something that is not HTTP/1.1, or a head over our limits.
    Protocol,
    /// The trust store named by `SSL_CERT_FILE`/`SSL_CERT_DIR` holds no usable certificate.
    TrustStore,
    /// The proxy environment variable for this scheme is unusable (unsupported scheme or not
    /// a URL).
    ProxyConfig,
    /// A request header could not be sent (e.g. a control byte in a value).
    InvalidRequest,
    /// Anything else.
    Other,
}

impl FailureKind {
    /// The evidence word.
    pub fn as_word(self) -> &'static str {
        match self {
            FailureKind::Dns => "dns",
            FailureKind::ConnectRefused => "connect_refused",
            FailureKind::NetworkUnreachable => "network_unreachable",
            FailureKind::Timeout => "timeout",
            FailureKind::Reset => "reset",
            FailureKind::Closed => "closed",
            FailureKind::TlsUntrusted => "tls_untrusted",
            FailureKind::TlsNameMismatch => "tls_name_mismatch",
            FailureKind::TlsExpired => "tls_expired",
            FailureKind::TlsNotYetValid => "tls_not_yet_valid",
            FailureKind::TlsHandshake => "tls_handshake",
            FailureKind::Proxy => "proxy",
            FailureKind::Protocol => "protocol",
            FailureKind::TrustStore => "trust_store",
            FailureKind::ProxyConfig => "proxy_config",
            FailureKind::InvalidRequest => "invalid_request",
            FailureKind::Other => "other",
        }
    }

    /// Whether the server's certificate was refused (the trust store decides these).
    pub fn is_certificate(self) -> bool {
        matches!(
            self,
            FailureKind::TlsUntrusted
                | FailureKind::TlsNameMismatch
                | FailureKind::TlsExpired
                | FailureKind::TlsNotYetValid
        )
    }

    /// Whether the failure is a local configuration problem found before any byte was sent.
    pub fn is_local(self) -> bool {
        matches!(
            self,
            FailureKind::TrustStore | FailureKind::ProxyConfig | FailureKind::InvalidRequest
        )
    }
}

/// A failed exchange: what went wrong, whether the response had started, and the stages.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The classification.
    pub kind: FailureKind,
    /// Whether any response byte had arrived.
    pub response_seen: bool,
    /// The stages as far as they got (boxed: keeps `Result<_, Failure>` small).
    pub timings: Box<Timings>,
    /// For a certificate failure: the trust store the certificate was checked against, so
    /// the evidence (and `doctor`) can say which one (`None`: not a TLS failure, or a
    /// store supplied by the caller).
    pub trust: Option<TrustSource>,
}

impl Failure {
    /// The health status this failure stands for.
    pub fn status(&self) -> Status {
        status_for(self.kind, self.response_seen)
    }

    /// An observation of this failure: status, the deadline note when it was a timeout, the
    /// stages as steps and the `failure` evidence word.
    pub fn observation(&self) -> Observation {
        let status = self.status();
        let mut obs = Observation::new(status);
        if self.kind == FailureKind::Timeout {
            obs.note = Some(if self.response_seen {
                Note::IncompleteResponse
            } else {
                Note::CommunicationFailed
            });
        }
        self.timings.write_steps(&mut obs.steps);
        self.write_evidence(&mut obs.evidence);
        obs.response_seen = self.response_seen;
        obs
    }

    /// Adds the `failure` word, and for a certificate failure `trust_store` and
    /// `trust_store_source`.
    pub fn write_evidence(&self, evidence: &mut Evidence) {
        evidence.set("failure", Fact::Word(self.kind.as_word()));
        if let Some(trust) = self.trust {
            evidence.set("trust_store", Fact::Word(trust.kind_word()));
            evidence.set("trust_store_source", Fact::Word(trust.origin_word()));
        }
    }
}

/// The status rule shared by every HTTP-speaking adapter.
pub fn status_for(kind: FailureKind, response_seen: bool) -> Status {
    if kind.is_local() {
        Status::Misconfigured
    } else if response_seen {
        Status::Unknown
    } else {
        Status::Unreachable
    }
}

/// Classifies a ureq error. `expired` is our own clock's verdict (deadline passed or watchdog
/// abort): ureq's timeout reason is not exact, and an abort surfaces as an I/O error.
pub fn classify(err: &Error, expired: bool) -> FailureKind {
    let kind = classify_error(err);
    // An abort shuts the socket down: whatever error that produced, it was the deadline.
    if expired && !kind.is_local() {
        FailureKind::Timeout
    } else {
        kind
    }
}

/// Classifies an I/O error from reading a response body (ureq wraps its own errors in
/// `io::Error` there).
pub fn classify_io(err: &io::Error, expired: bool) -> FailureKind {
    if expired {
        return FailureKind::Timeout;
    }
    if let Some(inner) = err.get_ref().and_then(|e| e.downcast_ref::<Error>()) {
        return classify_error(inner);
    }
    if let Some(tls) = err
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>())
    {
        return classify_tls(tls);
    }
    classify_io_kind(err.kind())
}

fn classify_error(err: &Error) -> FailureKind {
    match err {
        Error::Timeout(_) => FailureKind::Timeout,
        Error::HostNotFound => FailureKind::Dns,
        Error::Rustls(e) => classify_tls(e),
        Error::Tls(_) | Error::TlsRequired => FailureKind::TlsHandshake,
        Error::Io(e) => classify_io(e, false),
        Error::ConnectProxyFailed(_) => FailureKind::Proxy,
        Error::InvalidProxyUrl => FailureKind::ProxyConfig,
        Error::Protocol(_) | Error::LargeResponseHeader(_, _) | Error::BodyStalled => {
            FailureKind::Protocol
        }
        Error::Http(_) | Error::BadUri(_) => FailureKind::InvalidRequest,
        _ => FailureKind::Other,
    }
}

fn classify_io_kind(kind: io::ErrorKind) -> FailureKind {
    use io::ErrorKind as K;
    match kind {
        K::ConnectionRefused => FailureKind::ConnectRefused,
        K::HostUnreachable | K::NetworkUnreachable | K::NetworkDown | K::AddrNotAvailable => {
            FailureKind::NetworkUnreachable
        }
        K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::NotConnected => {
            FailureKind::Reset
        }
        K::UnexpectedEof => FailureKind::Closed,
        K::TimedOut | K::WouldBlock => FailureKind::Timeout,
        _ => FailureKind::Other,
    }
}

/// Maps a rustls error (handshake or certificate verification) to a fixed word.
pub fn classify_tls(err: &rustls::Error) -> FailureKind {
    use rustls::CertificateError as C;
    match err {
        rustls::Error::InvalidCertificate(cert) => match cert {
            C::NotValidForName | C::NotValidForNameContext { .. } => FailureKind::TlsNameMismatch,
            C::Expired | C::ExpiredContext { .. } => FailureKind::TlsExpired,
            C::NotValidYet | C::NotValidYetContext { .. } => FailureKind::TlsNotYetValid,
            _ => FailureKind::TlsUntrusted,
        },
        _ => FailureKind::TlsHandshake,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_seen_decides_between_unreachable_and_unknown() {
        for kind in [
            FailureKind::Dns,
            FailureKind::ConnectRefused,
            FailureKind::Reset,
            FailureKind::Timeout,
            FailureKind::TlsUntrusted,
        ] {
            assert_eq!(status_for(kind, false), Status::Unreachable);
            assert_eq!(status_for(kind, true), Status::Unknown);
        }
        assert_eq!(
            status_for(FailureKind::TrustStore, false),
            Status::Misconfigured
        );
    }

    #[test]
    fn our_clock_wins_over_the_error_kind() {
        let reset = Error::Io(io::Error::from(io::ErrorKind::ConnectionReset));
        assert_eq!(classify(&reset, false), FailureKind::Reset);
        assert_eq!(classify(&reset, true), FailureKind::Timeout);
    }

    #[test]
    fn io_errors_map_to_words() {
        let cases = [
            (io::ErrorKind::ConnectionRefused, "connect_refused"),
            (io::ErrorKind::ConnectionReset, "reset"),
            (io::ErrorKind::UnexpectedEof, "closed"),
            (io::ErrorKind::TimedOut, "timeout"),
            (io::ErrorKind::NetworkUnreachable, "network_unreachable"),
        ];
        for (kind, word) in cases {
            let e = Error::Io(io::Error::from(kind));
            assert_eq!(classify(&e, false).as_word(), word);
        }
        let wrapped = io::Error::other(Error::Timeout(ureq::Timeout::Global));
        assert_eq!(classify_io(&wrapped, false), FailureKind::Timeout);
        assert_eq!(
            classify(&Error::HostNotFound, false).as_word(),
            "dns",
            "host not found is a DNS failure"
        );
    }

    #[test]
    fn certificate_errors_map_to_words() {
        use rustls::CertificateError as C;
        let word = |c: C| classify_tls(&rustls::Error::InvalidCertificate(c)).as_word();
        assert_eq!(word(C::UnknownIssuer), "tls_untrusted");
        assert_eq!(word(C::BadSignature), "tls_untrusted");
        assert_eq!(word(C::NotValidForName), "tls_name_mismatch");
        assert_eq!(word(C::Expired), "tls_expired");
        assert_eq!(word(C::NotValidYet), "tls_not_yet_valid");
        assert_eq!(
            classify_tls(&rustls::Error::DecryptError).as_word(),
            "tls_handshake"
        );
        let wrapped = io::Error::new(
            io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(C::UnknownIssuer),
        );
        assert_eq!(classify_io(&wrapped, false), FailureKind::TlsUntrusted);
    }
}
