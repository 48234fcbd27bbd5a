//! The stateless 2026-07-28 revision's establishment: the per-request envelope and
//! `server/discover`.
//!
//! Modern checks never send `initialize`, `notifications/initialized`, a session id or
//! `DELETE`: discovery alone establishes the protocol and the server's capabilities.

use serde_json::Value;
use serde_json::value::RawValue;

use super::era::Era;
use super::failure::McpError;
use super::inventory::Advertised;
use super::result_shape::{check_result_type, object};
use super::session::Session;
use super::transport::ResponseMode;
use crate::contract::Revision;
use crate::result::reason::Malformed;
use crate::result::{Evidence, Fact, Key, RevisionDate};
use crate::runtime::Attempt;

/// What a successful discovery established.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiscoverResult {
    /// Which inventories the server advertises.
    pub advertised: Advertised,
    /// How the discovery response arrived.
    pub mode: ResponseMode,
}

/// Sends `server/discover` and validates its result. A result that does not list 2026-07-28
/// records the newest revision it does list in `evidence` (`server_version`, grammar-checked).
pub fn discover(
    session: &mut Session,
    evidence: &mut Evidence,
    attempt: &Attempt,
) -> Result<DiscoverResult, McpError> {
    let reply = session.request("server/discover", "", Era::Modern, attempt)?;
    let advertised = validate_discover(&reply.result).inspect_err(|f| {
        if *f == McpError::Version
            && let Some(newest) = newest_listed(&reply.result)
        {
            evidence.set(Key::ServerVersion, Fact::Revision(newest));
        }
    })?;
    Ok(DiscoverResult {
        advertised,
        mode: reply.mode,
    })
}

/// The newest revision a discover result's `supportedVersions` lists, among the entries that
/// are revisions by the grammar (revisions are dates, so they sort as text).
fn newest_listed(result: &RawValue) -> Option<RevisionDate> {
    let result = object(result).ok()?;
    let listed = result.get("supportedVersions")?.as_array()?;
    listed
        .iter()
        .filter_map(|v| v.as_str().and_then(RevisionDate::parse))
        .max_by(|a, b| a.as_str().cmp(b.as_str()))
}

/// Validates a `server/discover` result: a complete result whose `supportedVersions` (a
/// non-empty string array) lists 2026-07-28 and whose `capabilities` is an object of objects.
/// A result without the key at all is no modern answer ([`McpError::NoVersions`]).
pub fn validate_discover(result: &RawValue) -> Result<Advertised, McpError> {
    let result = object(result)?;
    check_result_type(&result)?;
    let versions = match result.get("supportedVersions") {
        None => return Err(McpError::NoVersions),
        Some(Value::Array(v)) if !v.is_empty() && v.iter().all(Value::is_string) => v,
        _ => {
            return Err(McpError::Malformed(Malformed::Result(
                "discover supportedVersions",
            )));
        }
    };
    let capabilities = match result.get("capabilities") {
        Some(Value::Object(c)) => c,
        _ => {
            return Err(McpError::Malformed(Malformed::Result(
                "discover capabilities",
            )));
        }
    };
    if !versions
        .iter()
        .any(|v| v.as_str() == Some(Revision::MODERN.as_str()))
    {
        return Err(McpError::Version);
    }
    Advertised::from_capabilities(capabilities)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).expect("test json")
    }

    #[test]
    fn discover_results() {
        let ok = validate_discover(&raw(
            r#"{"resultType":"complete","supportedVersions":["2026-07-28"],
                "capabilities":{"tools":{"listChanged":true},"resources":{},"extensions":{}},
                "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x","version":"1"}}}"#,
        ))
        .expect("valid");
        assert!(ok.tools && ok.resources && !ok.prompts);
        // A missing resultType means complete; rmcp lists every revision it knows.
        assert!(
            validate_discover(&raw(
                r#"{"supportedVersions":["2024-11-05","2025-11-25","2026-07-28"],"capabilities":{}}"#
            ))
            .is_ok()
        );
        let cases: &[(&str, McpError)] = &[
            (
                r#"{"supportedVersions":["2099-01-01"],"capabilities":{}}"#,
                McpError::Version,
            ),
            (
                r#"{"supportedVersions":["2025-11-25"],"capabilities":{}}"#,
                McpError::Version,
            ),
            (
                r#"{"resultType":"input_required","supportedVersions":["2026-07-28"],"capabilities":{}}"#,
                McpError::Input,
            ),
            (
                r#"{"resultType":"later","supportedVersions":["2026-07-28"],"capabilities":{}}"#,
                McpError::Malformed(Malformed::Result("unknown result type")),
            ),
            (
                r#"{"supportedVersions":[],"capabilities":{}}"#,
                McpError::Malformed(Malformed::Result("discover supportedVersions")),
            ),
            (
                r#"{"supportedVersions":["2026-07-28",1],"capabilities":{}}"#,
                McpError::Malformed(Malformed::Result("discover supportedVersions")),
            ),
            (r#"{"capabilities":{}}"#, McpError::NoVersions),
            (r#"{}"#, McpError::NoVersions),
            (
                r#"{"supportedVersions":["2026-07-28"],"capabilities":null}"#,
                McpError::Malformed(Malformed::Result("discover capabilities")),
            ),
            (
                r#"{"supportedVersions":["2026-07-28"],"capabilities":{"tools":null}}"#,
                McpError::Malformed(Malformed::Result("capability is not an object")),
            ),
            (
                "[]",
                McpError::Malformed(Malformed::Result("result is not an object")),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(
                validate_discover(&raw(text)).as_ref().err(),
                Some(expected),
                "{text}"
            );
        }
    }
}
