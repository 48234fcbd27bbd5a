//! Advice for network failures: DNS, refused connections, certificates, cut connections, and
//! deadlines that passed.

use super::engine::timed_out;
use super::word;
use crate::contract::Status;
use crate::result::Key;
use crate::result::document::Check;
use crate::result::reason::{NetFailure, Note, Reason};

pub(super) fn advice(failure: NetFailure, check: &Check) -> Option<String> {
    if failure.is_local() {
        // Refused before sending: the configuration check names the variable at fault.
        return None;
    }
    let store = trust_store(check);
    // The configured host and port, when the evidence names them.
    let at = word(check, Key::Address).map_or_else(
        || "the endpoint's host and port".to_string(),
        |a| format!("`{a}`"),
    );
    Some(match failure {
        NetFailure::Dns => format!("the host name of {at} does not resolve; check the endpoint's host and DNS"),
        NetFailure::DnsNoResolver => "this machine has no resolver configuration (no /etc/resolv.conf, as in an empty container root) and the host is not in /etc/hosts, so no name can be looked up; give the container a resolv.conf (in Kubernetes, a dnsPolicy other than None), or use an IP address or localhost".into(),
        NetFailure::ConnectRefused => format!("nothing is listening at {at}"),
        NetFailure::TlsUntrusted => format!(
            "the server certificate does not chain to a CA in {store}; add the CA that signed it there, or set SSL_CERT_FILE to a bundle that holds it"
        ),
        NetFailure::TlsNameMismatch => format!(
            "the certificate (verified against {store}) is not valid for the endpoint's host name"
        ),
        NetFailure::TlsExpired => {
            format!("the server certificate (verified against {store}) has expired")
        }
        NetFailure::TlsNotYetValid => format!(
            "the server certificate (verified against {store}) is not valid yet; check this host's clock"
        ),
        NetFailure::Reset | NetFailure::Closed if check.status == Status::Unknown => {
            "the server cut the connection in the middle of the response; check its logs".into()
        }
        NetFailure::Reset | NetFailure::Closed => {
            "the server closed the connection without answering; check that the endpoint speaks HTTP and the service is healthy".into()
        }
        _ => timed_out(check, bound(check)),
    })
}

/// A failed check with no reason: what its status says.
pub(super) fn unexplained(check: &Check) -> Option<String> {
    matches!(check.status, Status::Unreachable | Status::Unknown).then(|| timed_out(check, None))
}

/// The bound of the deadline a timed-out check had, if it says.
fn bound(check: &Check) -> Option<crate::contract::Bound> {
    match check.reason {
        Some(Reason::Engine(Note::TimedOut { bound, .. })) => Some(bound),
        _ => None,
    }
}

/// Which trust store verified a certificate, from the `trust_store` evidence words.
fn trust_store(check: &Check) -> String {
    let source = word(check, Key::TrustStoreSource);
    match (word(check, Key::TrustStore).as_deref(), source) {
        (Some("env"), Some(vars)) => {
            format!("the trust store named by {}", vars.replace('+', " and "))
        }
        (Some("system"), Some(path)) => format!("the system trust store {path}"),
        (Some("bundled"), _) => {
            "the bundled Mozilla roots (no SSL_CERT_FILE, no system bundle)".into()
        }
        _ => "the trust store".into(),
    }
}
