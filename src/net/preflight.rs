//! The offline checks every HTTP-speaking adapter makes before any traffic: the endpoint
//! parses as an `http(s)` URL without userinfo or fragment, the credential holds no control
//! byte (TAB allowed), an `https` host can carry a certificate name, and the trust store and
//! proxy setting the request would use are usable. A failure is a MISCONFIGURED observation
//! with the rule that failed as evidence; no value is ever recorded.

use crate::contract::Status;
use crate::net::{Client, Endpoint};
use crate::result::reason::{EndpointProblem, Misconfig, Reason};
use crate::result::{Fact, Key, Observation};

/// Runs the checks; returns the parsed endpoint.
pub fn preflight(
    endpoint: &str,
    authorization: Option<&str>,
    client: &Client,
) -> Result<Endpoint, Observation> {
    let misconfigured = |problem, key, word| {
        Observation::failed(Status::Misconfigured, Reason::Config(problem))
            .with(key, Fact::Word(word))
    };
    let bad_endpoint =
        |e: EndpointProblem| misconfigured(Misconfig::Endpoint(e), Key::Endpoint, e.as_word());
    let endpoint = Endpoint::parse(endpoint).map_err(bad_endpoint)?;
    if authorization.is_some_and(has_control_bytes) {
        return Err(misconfigured(
            Misconfig::CredentialControlCharacter,
            Key::Credential,
            "control_character",
        ));
    }
    if endpoint.is_https() {
        if !endpoint.has_valid_tls_name() {
            return Err(bad_endpoint(EndpointProblem::InvalidTlsName));
        }
        if let Err(e) = crate::net::trust::process_store() {
            let mut obs = misconfigured(
                Misconfig::TrustStore(e.problem()),
                Key::TrustStoreError,
                e.as_word(),
            );
            if let Some(variable) = e.variable() {
                obs.evidence
                    .set(Key::TrustStoreVariable, Fact::Word(variable));
            }
            return Err(obs);
        }
    }
    if let Err(e) = client.proxy_variable(&endpoint) {
        return Err(
            misconfigured(Misconfig::Proxy, Key::ProxyError, e.as_word())
                .with(Key::Proxy, Fact::Word(e.variable())),
        );
    }
    Ok(endpoint)
}

/// Control characters other than TAB, which no header value may carry.
fn has_control_bytes(value: &str) -> bool {
    value.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Reuse;

    fn word(obs: &Observation, key: Key) -> Option<&'static str> {
        match obs.evidence.get(key) {
            Some(Fact::Word(w)) => Some(w),
            _ => None,
        }
    }

    #[test]
    fn every_rule_is_misconfigured_without_echoing_values() {
        let client = Client::new(Reuse::Fresh);
        let bad = |endpoint: &str, auth: Option<&str>| {
            preflight(endpoint, auth, &client)
                .err()
                .unwrap_or_else(|| panic!("{endpoint} should fail"))
        };
        let o = bad("ftp://h/", None);
        assert_eq!(o.status, Status::Misconfigured);
        assert_eq!(word(&o, Key::Endpoint), Some("unsupported_scheme"));
        assert_eq!(
            word(&bad("http://u:p@h/", None), Key::Endpoint),
            Some("userinfo")
        );
        assert_eq!(
            word(&bad("http://h/#f", None), Key::Endpoint),
            Some("fragment")
        );
        for byte in [1u8, 7, 8, 10, 13, 31, 127] {
            let token = format!("Bearer a{}b", byte as char);
            assert_eq!(
                word(&bad("http://h/", Some(&token)), Key::Credential),
                Some("control_character")
            );
        }
        assert!(preflight("http://h/", Some("Bearer a\tb"), &client).is_ok());
    }
}
