//! The legacy lifecycle (2025-03-26, 2025-06-18, 2025-11-25): `initialize`, validation of the
//! server's answer, `notifications/initialized`.
//!
//! The request offers the pin, or 2025-11-25 when unpinned, and accepts any supported legacy
//! revision the server answers (exactly the pin when pinned). After the handshake every
//! message carries the negotiated revision, and over HTTP the session id the server assigned;
//! the transport keeps the id and deletes the session at the end of the run.

use serde_json::Value;
use serde_json::value::RawValue;

use super::era::Era;
use super::failure::McpError;
use super::inventory::Advertised;
use super::result_shape;
use super::session::Session;
use super::session::{CLIENT_NAME, CLIENT_VERSION};
use crate::contract::Revision;
use crate::result::Key;
use crate::result::reason::Malformed;
use crate::result::{Evidence, Fact, RevisionDate};
use crate::runtime::Attempt;

/// What a successful handshake established.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Initialized {
    /// The negotiated revision.
    pub version: Revision,
    /// Which inventories the server advertises.
    pub advertised: Advertised,
}

/// The members of the `initialize` params offering `offer`, with empty client capabilities.
pub fn initialize_members(offer: Revision) -> String {
    format!(
        r#""protocolVersion":"{}","capabilities":{{}},"clientInfo":{{"name":"{}","version":"{}"}}"#,
        offer.as_str(),
        CLIENT_NAME,
        CLIENT_VERSION
    )
}

/// Runs the handshake: `initialize` offering `offer`, validation (exactly `pin` when
/// pinned), then `notifications/initialized`. Records `response_mode`, `session_id_issued`
/// and `negotiated_version` in `evidence` as they become known.
pub fn initialize(
    session: &mut Session,
    offer: Revision,
    pin: Option<Revision>,
    evidence: &mut Evidence,
    attempt: &Attempt,
) -> Result<Initialized, McpError> {
    let reply = session.request(
        "initialize",
        &initialize_members(offer),
        Era::Handshake,
        attempt,
    )?;
    evidence.set(Key::ResponseMode, Fact::Word(reply.mode.as_str()));
    evidence.set(Key::SessionIdIssued, Fact::Bool(reply.session_issued));
    let initialized = validate_initialize(&reply.result, pin).inspect_err(|_| {
        // On a mismatch, say which revision the server answered, when it is one by the
        // revision grammar (never other text).
        let answered = result_shape::object(&reply.result).ok().and_then(|o| {
            o.get("protocolVersion")
                .and_then(Value::as_str)
                .and_then(RevisionDate::parse)
        });
        if let Some(v) = answered {
            evidence.set(Key::ServerVersion, Fact::Revision(v));
        }
    })?;
    evidence.set(
        Key::NegotiatedVersion,
        Fact::Word(initialized.version.as_str()),
    );
    session.notify(
        "notifications/initialized",
        Era::Legacy(initialized.version),
        attempt,
    )?;
    Ok(initialized)
}

/// Validates an `initialize` result, in order: the shape (`capabilities` an object,
/// `serverInfo` with non-empty `name` and `version`), the revision (a supported legacy one,
/// equal to the pin when pinned), then every capability value being an object.
pub fn validate_initialize(
    result: &RawValue,
    pin: Option<Revision>,
) -> Result<Initialized, McpError> {
    let result = result_shape::object(result)?;
    let Some(Value::Object(capabilities)) = result.get("capabilities") else {
        return Err(McpError::Malformed(Malformed::Result(
            "initialize capabilities",
        )));
    };
    let named = |key| {
        result
            .get("serverInfo")
            .and_then(|info| info.get(key))
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    if !(named("name") && named("version")) {
        return Err(McpError::Malformed(Malformed::Result(
            "initialize serverInfo",
        )));
    }
    let version = match result.get("protocolVersion") {
        None => return Err(McpError::Version),
        Some(Value::String(v)) => Revision::parse(v).ok_or(McpError::Version)?,
        Some(_) => {
            return Err(McpError::Malformed(Malformed::Result(
                "initialize protocolVersion",
            )));
        }
    };
    if version.is_modern() || pin.is_some_and(|pin| pin != version) {
        return Err(McpError::Version);
    }
    Ok(Initialized {
        version,
        advertised: Advertised::from_capabilities(capabilities)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).expect("test json")
    }

    const INFO: &str = r#""serverInfo":{"name":"s","version":"1.0"}"#;

    fn result(version: &str, caps: &str) -> Box<RawValue> {
        raw(&format!(
            r#"{{"protocolVersion":{version},"capabilities":{caps},{INFO}}}"#
        ))
    }

    #[test]
    fn members_offer_the_version_and_identify_us() {
        let v: Value = serde_json::from_str(&format!(
            "{{{}}}",
            initialize_members(Revision::LEGACY_OFFER)
        ))
        .expect("json");
        assert_eq!(v["protocolVersion"], "2025-11-25");
        assert_eq!(v["capabilities"], serde_json::json!({}));
        assert_eq!(v["clientInfo"]["name"], "agenthealth");
    }

    #[test]
    fn accepts_any_supported_legacy_revision_when_unpinned() {
        for v in ["2025-03-26", "2025-06-18", "2025-11-25"] {
            let ok = validate_initialize(
                &result(
                    &format!("\"{v}\""),
                    r#"{"tools":{},"prompts":{"listChanged":true}}"#,
                ),
                None,
            )
            .expect("valid");
            assert_eq!(ok.version.as_str(), v);
            assert!(ok.advertised.tools && ok.advertised.prompts && !ok.advertised.resources);
        }
    }

    /// Upstream §17 B9–B11 and the version rules of §4.4.
    #[test]
    fn classification() {
        let pin = Some(Revision::V2025_11_25);
        let cases: &[(Box<RawValue>, Option<Revision>, McpError)] = &[
            (result("\"2099-01-01\"", "{}"), None, McpError::Version),
            (result("\"2024-11-05\"", "{}"), None, McpError::Version),
            (result("\"2026-07-28\"", "{}"), None, McpError::Version),
            (result("\"2025-06-18\"", "{}"), pin, McpError::Version),
            (result("\"\"", "{}"), None, McpError::Version),
            (
                raw(&format!(r#"{{"capabilities":{{}},{INFO}}}"#)),
                None,
                McpError::Version,
            ),
            (
                result("20251125", "{}"),
                None,
                McpError::Malformed(Malformed::Result("initialize protocolVersion")),
            ),
            (
                raw("{}"),
                None,
                McpError::Malformed(Malformed::Result("initialize capabilities")),
            ),
            (
                result("\"2025-11-25\"", "null"),
                None,
                McpError::Malformed(Malformed::Result("initialize capabilities")),
            ),
            (
                raw(r#"{"protocolVersion":"2025-11-25","capabilities":{}}"#),
                None,
                McpError::Malformed(Malformed::Result("initialize serverInfo")),
            ),
            (
                raw(
                    r#"{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":""}}"#,
                ),
                None,
                McpError::Malformed(Malformed::Result("initialize serverInfo")),
            ),
            (
                result("\"2025-11-25\"", r#"{"tools":true}"#),
                None,
                McpError::Malformed(Malformed::Result("capability is not an object")),
            ),
            (
                raw("null"),
                None,
                McpError::Malformed(Malformed::Result("result is not an object")),
            ),
        ];
        for (text, pin, expected) in cases {
            assert_eq!(
                validate_initialize(text, *pin).as_ref().err(),
                Some(expected),
                "{}",
                text.get()
            );
        }
        assert!(validate_initialize(&result("\"2025-11-25\"", "{}"), pin).is_ok());
    }
}
