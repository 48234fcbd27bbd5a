//! Expectations on a functional call's result (`mcp.functional.expect`): a tool that answers
//! is not yet a tool that works.
//!
//! * `json` — JSON Pointer → expected value, compared by JSON equality (numbers by value,
//!   member order ignored) against the result's document: its `structuredContent`, or, when
//!   that is absent, its first text block parsed as JSON.
//! * `text_contains` — some text block contains the configured text.
//! * `fresh_within_s` — JSON Pointer → seconds: the document holds an RFC 3339 timestamp there
//!   ([`crate::text::rfc3339`]) no older than that. A timestamp ahead of our clock counts as fresh
//!   (clock skew is not staleness). This is what catches a cached payload that still says
//!   "healthy".
//!
//! Every expectation is evaluated, in configuration order (`json`, `text_contains`,
//! `fresh_within_s`); the first that fails is reported by kind, pointer, the configured
//! expectation and why — never by the server's value.

use std::time::SystemTime;

use serde_json::Value;

use super::schema::json_equal;
use crate::config::McpExpect;
use crate::result::Key;
use crate::result::{Evidence, Fact};
use crate::text::rfc3339;

/// Why an expectation failed (our words, also the `expect_failure` evidence).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// No `structuredContent`, and no first text block that parses as JSON.
    NoDocument,
    /// The pointer does not resolve in the document.
    Missing,
    /// The value there differs from the configured one.
    Differs,
    /// No text block contains the configured text.
    NotFound,
    /// The value there is not an RFC 3339 timestamp string.
    NotATimestamp,
    /// The timestamp is older than allowed.
    Stale,
}

impl Why {
    /// The evidence word.
    pub fn as_str(self) -> &'static str {
        match self {
            Why::NoDocument => "no_json_document",
            Why::Missing => "missing",
            Why::Differs => "differs",
            Why::NotFound => "not_found",
            Why::NotATimestamp => "not_a_timestamp",
            Why::Stale => "stale",
        }
    }
}

/// The first failed expectation, in configuration terms only.
#[derive(Clone, Debug, PartialEq)]
pub struct Failed {
    /// `json`, `text_contains` or `fresh_within_s`.
    pub kind: &'static str,
    /// The configured pointer (`json`, `fresh_within_s`).
    pub pointer: Option<String>,
    /// The configured expectation: the JSON value, the text, or the seconds.
    pub expected: String,
    /// Why it failed.
    pub why: Why,
}

/// What checking every expectation found.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Expectations met.
    pub met: usize,
    /// The first failure, and how many failed in all.
    pub failed: Option<(Failed, usize)>,
}

impl Outcome {
    /// Records `expectations_met` (when any were configured) and, on failure,
    /// `expectations_failed`, `expect_kind`, `expect_pointer`, `expected`, `expect_failure`.
    pub fn record(&self, evidence: &mut Evidence) {
        let count = |n: usize| Fact::Int(i64::try_from(n).unwrap_or(i64::MAX));
        if let Some((first, n)) = &self.failed {
            evidence.set(Key::ExpectationsFailed, count(*n));
            evidence.set(Key::ExpectKind, Fact::Word(first.kind));
            if let Some(pointer) = &first.pointer {
                evidence.set(Key::ExpectPointer, Fact::Config(pointer.clone()));
            }
            evidence.set(Key::Expected, Fact::Config(first.expected.clone()));
            evidence.set(Key::ExpectFailure, Fact::Word(first.why.as_str()));
        } else if self.met > 0 {
            evidence.set(Key::ExpectationsMet, count(self.met));
        }
    }
}

/// Checks every expectation against a result's `structuredContent` (if any) and its text
/// blocks, in order, at time `now`.
pub fn check(
    expect: &McpExpect,
    structured: Option<&Value>,
    texts: &[&str],
    now: SystemTime,
) -> Outcome {
    let parsed;
    let document = match structured {
        Some(v) => Some(v),
        None => {
            parsed = texts
                .first()
                .and_then(|t| serde_json::from_str::<Value>(t).ok());
            parsed.as_ref()
        }
    };
    let mut met = 0;
    let mut failures: Vec<Failed> = Vec::new();
    let mut tally = |result: Result<(), Failed>| match result {
        Ok(()) => met += 1,
        Err(f) => failures.push(f),
    };
    for (pointer, value) in &expect.json {
        tally(at_pointer(
            document,
            "json",
            pointer,
            value.to_string(),
            |found| {
                if json_equal(found, value) {
                    Ok(())
                } else {
                    Err(Why::Differs)
                }
            },
        ));
    }
    if let Some(text) = &expect.text_contains {
        tally(if texts.iter().any(|t| t.contains(text.as_str())) {
            Ok(())
        } else {
            Err(Failed {
                kind: "text_contains",
                pointer: None,
                expected: text.clone(),
                why: Why::NotFound,
            })
        });
    }
    for (pointer, seconds) in &expect.fresh_within_s {
        let expected = seconds.to_string();
        tally(at_pointer(
            document,
            "fresh_within_s",
            pointer,
            expected,
            |found| match found.as_str().and_then(rfc3339::parse) {
                None => Err(Why::NotATimestamp),
                Some(t) if rfc3339::age_seconds(t, now) > *seconds => Err(Why::Stale),
                Some(_) => Ok(()),
            },
        ));
    }
    let n = failures.len();
    Outcome {
        met,
        failed: failures.into_iter().next().map(|first| (first, n)),
    }
}

/// An expectation of `kind` on the value at `pointer` of `document`: no document and no
/// value there fail it, and `judge` says what the value found means.
fn at_pointer(
    document: Option<&Value>,
    kind: &'static str,
    pointer: &str,
    expected: String,
    judge: impl FnOnce(&Value) -> Result<(), Why>,
) -> Result<(), Failed> {
    let found = match document.map(|d| d.pointer(pointer)) {
        None => Err(Why::NoDocument),
        Some(None) => Err(Why::Missing),
        Some(Some(found)) => judge(found),
    };
    found.map_err(|why| Failed {
        kind,
        pointer: Some(pointer.to_string()),
        expected,
        why,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::{Duration, UNIX_EPOCH};

    /// 2026-06-18T10:00:00Z.
    fn now() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_781_776_800)
    }

    fn expect(json: &[(&str, Value)], text: Option<&str>, fresh: &[(&str, f64)]) -> McpExpect {
        McpExpect {
            json: json
                .iter()
                .map(|(p, v)| ((*p).to_owned(), v.clone()))
                .collect(),
            text_contains: text.map(str::to_owned),
            fresh_within_s: fresh.iter().map(|(p, s)| ((*p).to_owned(), *s)).collect(),
        }
    }

    fn first(o: &Outcome) -> Option<(&'static str, Why)> {
        o.failed.as_ref().map(|(f, _)| (f.kind, f.why))
    }

    #[test]
    fn nothing_configured_is_met_trivially() {
        let o = check(&McpExpect::default(), None, &[], now());
        assert_eq!(
            o,
            Outcome {
                met: 0,
                failed: None
            }
        );
        let mut ev = Evidence::default();
        o.record(&mut ev);
        assert!(ev.is_empty());
    }

    #[test]
    fn json_against_structured_content() {
        let sc =
            json!({"status": "healthy", "n": 3.0, "deep": {"a/b": [1, {"~k": true}]}, "nil": null});
        let e = expect(
            &[
                ("/status", json!("healthy")),
                ("/n", json!(3)),
                ("/deep/a~1b/1/~0k", json!(true)),
                ("/nil", Value::Null),
                ("", sc.clone()),
            ],
            None,
            &[],
        );
        let o = check(&e, Some(&sc), &["not json"], now());
        assert_eq!(o.met, 5);
        assert!(o.failed.is_none());

        let e = expect(
            &[
                ("/status", json!("degraded")),
                ("/absent", json!(1)),
                ("/deep/a~1b/01", json!(1)),
            ],
            None,
            &[],
        );
        let o = check(&e, Some(&sc), &[], now());
        assert_eq!(first(&o), Some(("json", Why::Differs)));
        let (f, n) = o.failed.clone().expect("failed");
        assert_eq!(n, 3);
        assert_eq!(f.pointer.as_deref(), Some("/status"));
        assert_eq!(f.expected, "\"degraded\"");
        // The evidence holds the configured expectation, never the server's value.
        let mut ev = Evidence::default();
        o.record(&mut ev);
        assert_eq!(ev.get(Key::ExpectKind), Some(&Fact::Word("json")));
        assert_eq!(
            ev.get(Key::ExpectPointer),
            Some(&Fact::Config("/status".into()))
        );
        assert_eq!(
            ev.get(Key::Expected),
            Some(&Fact::Config("\"degraded\"".into()))
        );
        assert_eq!(ev.get(Key::ExpectFailure), Some(&Fact::Word("differs")));
        assert_eq!(ev.get(Key::ExpectationsFailed), Some(&Fact::Int(3)));
        assert!(!format!("{ev:?}").contains("healthy"));
    }

    #[test]
    fn json_falls_back_to_the_first_text_block() {
        let e = expect(&[("/ok", json!(true))], None, &[]);
        let o = check(&e, None, &[r#"{"ok":true}"#, "{}"], now());
        assert_eq!(o.met, 1);
        // Only the first text block counts.
        let o = check(&e, None, &["plain", r#"{"ok":true}"#], now());
        assert_eq!(first(&o), Some(("json", Why::NoDocument)));
        let o = check(&e, None, &[], now());
        assert_eq!(first(&o), Some(("json", Why::NoDocument)));
        // structuredContent wins over the text, even when the text would match.
        let o = check(&e, Some(&json!({"ok": false})), &[r#"{"ok":true}"#], now());
        assert_eq!(first(&o), Some(("json", Why::Differs)));
    }

    #[test]
    fn text_contains_searches_every_text_block() {
        let e = expect(&[], Some("ready"), &[]);
        assert_eq!(check(&e, None, &["warming", "all ready"], now()).met, 1);
        let o = check(&e, None, &["warming"], now());
        assert_eq!(first(&o), Some(("text_contains", Why::NotFound)));
        let mut ev = Evidence::default();
        o.record(&mut ev);
        assert_eq!(ev.get(Key::Expected), Some(&Fact::Config("ready".into())));
        assert_eq!(ev.get(Key::ExpectPointer), None);
    }

    #[test]
    fn freshness() {
        let e = expect(&[], None, &[("/observed_at", 300.0)]);
        let at = |t: &str| json!({ "observed_at": t });
        let fresh = check(&e, Some(&at("2026-06-18T09:56:00Z")), &[], now());
        assert_eq!(fresh.met, 1);
        let edge = check(&e, Some(&at("2026-06-18T09:55:00Z")), &[], now());
        assert_eq!(edge.met, 1, "exactly the allowed age is fresh");
        let offset = check(&e, Some(&at("2026-06-18T11:58:00+02:00")), &[], now());
        assert_eq!(offset.met, 1);
        let future = check(&e, Some(&at("2026-06-18T10:00:30Z")), &[], now());
        assert_eq!(future.met, 1, "clock skew is not staleness");
        let stale = check(&e, Some(&at("2020-01-01T00:00:00Z")), &[], now());
        assert_eq!(first(&stale), Some(("fresh_within_s", Why::Stale)));
        let (f, _) = stale.failed.clone().expect("failed");
        assert_eq!(f.expected, "300");
        let just = check(&e, Some(&at("2026-06-18T09:54:59.999Z")), &[], now());
        assert_eq!(first(&just), Some(("fresh_within_s", Why::Stale)));
        for bad in [json!({"observed_at": 1_781_776_800}), at("yesterday")] {
            let o = check(&e, Some(&bad), &[], now());
            assert_eq!(first(&o), Some(("fresh_within_s", Why::NotATimestamp)));
        }
        let o = check(&e, Some(&json!({})), &[], now());
        assert_eq!(first(&o), Some(("fresh_within_s", Why::Missing)));
        let half = expect(&[], None, &[("/t", 0.5)]);
        let o = check(
            &half,
            Some(&json!({"t": "2026-06-18T09:59:59Z"})),
            &[],
            now(),
        );
        assert_eq!(first(&o), Some(("fresh_within_s", Why::Stale)));
        let mut ev = Evidence::default();
        o.record(&mut ev);
        assert_eq!(ev.get(Key::Expected), Some(&Fact::Config("0.5".into())));
    }

    #[test]
    fn first_failure_in_configuration_order() {
        let e = expect(
            &[("/status", json!("healthy"))],
            Some("absent text"),
            &[("/observed_at", 60.0)],
        );
        let sc = json!({"status": "healthy", "observed_at": "2020-01-01T00:00:00Z"});
        let o = check(&e, Some(&sc), &["healthy"], now());
        assert_eq!(o.met, 1);
        assert_eq!(first(&o), Some(("text_contains", Why::NotFound)));
        assert_eq!(o.failed.as_ref().map(|(_, n)| *n), Some(2));
    }
}
