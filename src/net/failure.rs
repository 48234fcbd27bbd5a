//! Why an exchange failed, as a fixed word, and what that means for health.
//!
//! One classification serves every adapter that speaks HTTP (the HTTP adapter and the MCP
//! Streamable-HTTP transport), so the same peer behaviour always reads the same way:
//!
//! * no response byte arrived (DNS failure, refused, reset or closed before any byte, TLS or
//!   certificate failure, deadline before any byte) → **UNREACHABLE**;
//! * the response had started, then the deadline passed or the peer cut it → **UNKNOWN**;
//! * the peer answered bytes that are not HTTP → **UNHEALTHY** (`protocol`);
//! * the failure is on our side and no byte was sent (an unusable trust store or proxy
//!   setting, a header value we refuse to send) → **MISCONFIGURED**;
//! * this host ran out of descriptors, threads or memory → **UNKNOWN** (`local_resource`):
//!   never the peer's fault.
//!
//! Error text from ureq, rustls or the OS is never kept: it can quote the server or the URL.

use std::io;

use ureq::Error;

use crate::contract::{Bound, Forbidden, LocalResource, Status};
use crate::result::reason::{NetFailure, Note, Reason};
use crate::result::{Evidence, Fact, Key, Observation};

use super::stages::Timings;
use super::trust::TrustSource;

/// A failed exchange: what went wrong, whether the response had started, and the stages.
#[derive(Clone, Debug)]
pub struct NetError {
    /// The classification.
    pub kind: NetFailure,
    /// Whether any response byte had arrived.
    pub response_seen: bool,
    /// The stages as far as they got (boxed: keeps `Result<_, NetError>` small).
    pub timings: Box<Timings>,
    /// For a certificate failure: the trust store the certificate was checked against, so
    /// the evidence (and `doctor`) can say which one (`None`: not a TLS failure, or a
    /// store supplied by the caller).
    pub trust: Option<TrustSource>,
    /// The bound of the attempt's deadline, which a timeout reports.
    pub bound: Bound,
}

impl NetError {
    /// Whether the exchange met a kept-alive connection the server had already reset: it
    /// reused an idle connection, which was reset before any byte of an answer arrived (and
    /// the attempt was not cut off). An orderly close (FIN) instead may follow a request the
    /// server read and acted on, so it is no stale connection.
    pub fn stale_connection(&self) -> bool {
        self.kind == NetFailure::Reset
            && !self.timings.new_connection
            && self
                .timings
                .http
                .is_none_or(|http| http.status == Status::Unreachable)
    }

    /// The health status this failure stands for.
    pub fn status(&self) -> Status {
        status_for(self.kind, self.response_seen)
    }

    /// The reason: a timeout is the engine's deadline note (with the bound that set the
    /// deadline), anything else the network failure itself.
    pub fn reason(&self) -> Reason {
        match self.kind {
            NetFailure::Timeout => Reason::Engine(Note::TimedOut {
                bound: self.bound,
                response_seen: self.response_seen,
            }),
            NetFailure::LocalResource(resource) => Reason::Engine(Note::LocalResource(resource)),
            kind => Reason::Network(kind),
        }
    }

    /// An observation of this failure: status, reason, the stages as steps and the `failure`
    /// evidence word.
    pub fn observation(&self) -> Observation {
        let mut obs = Observation::failed(self.status(), self.reason());
        self.timings.write_steps(&mut obs.steps);
        self.write_evidence(&mut obs.evidence);
        obs.response_seen = self.response_seen;
        obs
    }

    /// Adds the `failure` word, and for a certificate failure `trust_store` and
    /// `trust_store_source`.
    pub fn write_evidence(&self, evidence: &mut Evidence) {
        evidence.set(Key::Failure, Fact::Word(self.kind.as_word()));
        if let NetFailure::LocalResource(resource) = self.kind {
            evidence.set(Key::LocalResource, Fact::Word(resource.as_word()));
        }
        if let NetFailure::AddressRefused(refusal) = self.kind {
            evidence.set(Key::AddressRefused, Fact::Word(refusal.as_str()));
        }
        if let Some(trust) = self.trust {
            evidence.set(Key::TrustStore, Fact::Word(trust.kind_word()));
            evidence.set(Key::TrustStoreSource, Fact::Word(trust.origin_word()));
        }
    }
}

/// The status rule shared by every HTTP-speaking adapter.
pub fn status_for(kind: NetFailure, response_seen: bool) -> Status {
    if kind.is_local() {
        Status::Misconfigured
    } else if matches!(kind, NetFailure::LocalResource(_)) {
        // Nothing was learnt about the peer: inconclusive, never its fault.
        Status::Unknown
    } else if matches!(kind, NetFailure::Protocol) {
        // The peer answered, with bytes that are not HTTP: a malformed answer.
        Status::Unhealthy
    } else if response_seen {
        Status::Unknown
    } else {
        Status::Unreachable
    }
}

/// Classifies a ureq error. `expired` is our own clock's verdict (deadline passed or watchdog
/// abort): ureq's timeout reason is not exact, and an abort surfaces as an I/O error.
pub fn classify(err: &Error, expired: bool) -> NetFailure {
    let kind = classify_error(err);
    // An abort shuts the socket down: whatever error that produced, it was the deadline.
    if expired && !kind.is_local() && !matches!(kind, NetFailure::LocalResource(_)) {
        NetFailure::Timeout
    } else {
        kind
    }
}

/// Classifies an I/O error from reading a response body (ureq wraps its own errors in
/// `io::Error` there).
pub fn classify_io(err: &io::Error, expired: bool) -> NetFailure {
    if let Some(resource) = local_resource(err) {
        return NetFailure::LocalResource(resource);
    }
    if expired {
        return NetFailure::Timeout;
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
    if no_lookup(err) == Some(&NoLookup::NoResolver) {
        return NetFailure::DnsNoResolver;
    }
    if let Some(refused) = err
        .get_ref()
        .and_then(|e| e.downcast_ref::<ForbiddenAddress>())
    {
        return NetFailure::AddressRefused(refused.0);
    }
    classify_io_kind(err.kind())
}

/// Why a name lookup was not attempted, carried through ureq inside the `io::Error` the
/// resolver returns, so the failure classification recognises it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NoLookup {
    /// No resolver configuration, and the name is not a host of the hosts file.
    NoResolver,
    /// No thread could be started for the lookup: the local resource, not the peer.
    NoThread,
}

impl std::fmt::Display for NoLookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NoLookup::NoResolver => "no resolver configuration",
            NoLookup::NoThread => "no thread for the name lookup",
        })
    }
}

impl std::error::Error for NoLookup {}

/// A module's allow list refused an address, carried through ureq inside the `io::Error` the
/// resolver or the connector returns.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ForbiddenAddress(pub(crate) Forbidden);

impl std::fmt::Display for ForbiddenAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "address refused: {}", self.0.as_str())
    }
}

impl std::error::Error for ForbiddenAddress {}

impl ForbiddenAddress {
    /// As the error the resolver or the connector returns.
    pub(crate) fn error(refusal: Forbidden) -> Error {
        Error::Io(io::Error::other(ForbiddenAddress(refusal)))
    }
}

/// The [`NoLookup`] an I/O error carries, if any.
pub(crate) fn no_lookup(err: &io::Error) -> Option<&NoLookup> {
    err.get_ref().and_then(|e| e.downcast_ref::<NoLookup>())
}

/// The local resource an I/O error says ran out: descriptors or memory when a socket could
/// not be opened, a thread when a lookup could not start.
fn local_resource(err: &io::Error) -> Option<LocalResource> {
    if no_lookup(err) == Some(&NoLookup::NoThread) {
        return Some(LocalResource::Threads);
    }
    err.raw_os_error().and_then(LocalResource::of_open)
}

fn classify_error(err: &Error) -> NetFailure {
    match err {
        Error::Timeout(_) => NetFailure::Timeout,
        Error::HostNotFound => NetFailure::Dns,
        Error::Rustls(e) => classify_tls(e),
        Error::Tls(_) | Error::TlsRequired => NetFailure::TlsHandshake,
        Error::Io(e) => classify_io(e, false),
        Error::ConnectProxyFailed(_) => NetFailure::Proxy,
        Error::InvalidProxyUrl => NetFailure::ProxyConfig,
        Error::Protocol(_) | Error::LargeResponseHeader(_, _) | Error::BodyStalled => {
            NetFailure::Protocol
        }
        Error::Http(_) | Error::BadUri(_) => NetFailure::InvalidRequest,
        _ => NetFailure::Other,
    }
}

fn classify_io_kind(kind: io::ErrorKind) -> NetFailure {
    use io::ErrorKind as K;
    match kind {
        K::ConnectionRefused => NetFailure::ConnectRefused,
        K::HostUnreachable | K::NetworkUnreachable | K::NetworkDown | K::AddrNotAvailable => {
            NetFailure::NetworkUnreachable
        }
        K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::NotConnected => {
            NetFailure::Reset
        }
        K::UnexpectedEof => NetFailure::Closed,
        K::TimedOut | K::WouldBlock => NetFailure::Timeout,
        _ => NetFailure::Other,
    }
}

/// Maps a rustls error (handshake or certificate verification) to a fixed word.
pub fn classify_tls(err: &rustls::Error) -> NetFailure {
    use rustls::CertificateError as C;
    match err {
        rustls::Error::InvalidCertificate(cert) => match cert {
            C::NotValidForName | C::NotValidForNameContext { .. } => NetFailure::TlsNameMismatch,
            C::Expired | C::ExpiredContext { .. } => NetFailure::TlsExpired,
            C::NotValidYet | C::NotValidYetContext { .. } => NetFailure::TlsNotYetValid,
            _ => NetFailure::TlsUntrusted,
        },
        _ => NetFailure::TlsHandshake,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_seen_decides_between_unreachable_and_unknown() {
        for kind in [
            NetFailure::Dns,
            NetFailure::ConnectRefused,
            NetFailure::Reset,
            NetFailure::Timeout,
            NetFailure::TlsUntrusted,
        ] {
            assert_eq!(status_for(kind, false), Status::Unreachable);
            assert_eq!(status_for(kind, true), Status::Unknown);
        }
        assert_eq!(
            status_for(NetFailure::TrustStore, false),
            Status::Misconfigured
        );
    }

    #[test]
    fn our_clock_wins_over_the_error_kind() {
        let reset = Error::Io(io::Error::from(io::ErrorKind::ConnectionReset));
        assert_eq!(classify(&reset, false), NetFailure::Reset);
        assert_eq!(classify(&reset, true), NetFailure::Timeout);
    }

    #[test]
    fn running_out_locally_is_unknown_and_never_the_peer() {
        let emfile = Error::Io(io::Error::from_raw_os_error(
            nix::errno::Errno::EMFILE as i32,
        ));
        let kind = classify(&emfile, true);
        assert_eq!(
            kind,
            NetFailure::LocalResource(LocalResource::FileDescriptors)
        );
        assert_eq!(status_for(kind, false), Status::Unknown);
        let thread = Error::Io(io::Error::other(NoLookup::NoThread));
        assert_eq!(
            classify(&thread, false),
            NetFailure::LocalResource(LocalResource::Threads)
        );
        assert_eq!(kind.as_word(), "local_resource");
    }

    #[test]
    fn non_http_bytes_are_unhealthy() {
        assert_eq!(status_for(NetFailure::Protocol, true), Status::Unhealthy);
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
        assert_eq!(classify_io(&wrapped, false), NetFailure::Timeout);
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
        assert_eq!(classify_io(&wrapped, false), NetFailure::TlsUntrusted);
    }
}
