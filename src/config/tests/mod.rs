//! Tests of the strict loader: every rejection with its exact message shape (path, what was
//! expected, line where it matters) and the guarantee that no value from the file is echoed,
//! plus every valid form of the contract and of upstream-mcp.md §17 M. One file per part of
//! the configuration, as the loader reads it: the document ([`documents`]) and the files it
//! comes from ([`files`]), a target's own fields ([`target_fields`]), its sections
//! ([`http_section`], [`mcp_section`], [`stdio_section`], [`oauth_section`],
//! [`functional_section`]), the graph of dependencies ([`dependencies`]) and the `/probe`
//! modules ([`modules`]).

mod dependencies;
mod documents;
mod files;
mod functional_section;
mod http_section;
mod mcp_section;
mod modules;
mod oauth_section;
mod stdio_section;
mod target_fields;

use std::time::{Duration, Instant};

use super::load::{LoadError, MAX_FILE_BYTES, load_file, load_str};
use super::{Config, HttpMethod, McpTransport, OAuthGrant, Relationship, Target, TargetType};
use crate::contract::{Bound, Dimension};

/// A secret-looking value placed in offending fields; it must never appear in a message.
pub(super) const CANARY: &str = "sk-CANARY-6f1d2c";
/// A numeric canary for integer fields.
pub(super) const NUM_CANARY: &str = "987654321";

/// A one-target document; `extra` lines are indented under the target. The first extra line
/// is line 6.
pub(super) fn one(kind: &str, extra: &str) -> String {
    let mut s = format!(
        "version: v1\ntargets:\n  - name: t\n    type: {kind}\n    endpoint: http://127.0.0.1:1/\n"
    );
    for line in extra.lines() {
        s.push_str("    ");
        s.push_str(line);
        s.push('\n');
    }
    s
}

pub(super) fn load(text: &str) -> Config {
    match load_str(text) {
        Ok(c) => c,
        Err(e) => panic!("expected to load, got `{e}` for:\n{text}"),
    }
}

pub(super) fn root(text: &str) -> Target {
    let c = load(text);
    c.nodes[c.roots[0]].clone()
}

/// Asserts the rejection's path and text, and that no canary leaks into the message.
#[track_caller]
pub(super) fn rejects(text: &str, path: &str, expected: &str) -> LoadError {
    let e = match load_str(text) {
        Ok(_) => panic!("expected `{path}: {expected}`, but it loaded:\n{text}"),
        Err(e) => e,
    };
    assert_eq!(
        (e.path.as_str(), e.expected.as_str()),
        (path, expected),
        "for:\n{text}"
    );
    let shown = e.to_string();
    assert!(!shown.contains(CANARY), "value echoed: {shown}");
    assert!(!shown.contains(NUM_CANARY), "value echoed: {shown}");
    assert!(!shown.contains('\n'), "not one line: {shown}");
    e
}

#[track_caller]
pub(super) fn rejects_at(text: &str, path: &str, expected: &str, line: usize) {
    let e = rejects(text, path, expected);
    assert_eq!(e.line, Some(line), "line of `{e}`");
}

/// Each document of `cases` is refused at its key path with its message ([`rejects`]).
#[track_caller]
pub(super) fn refuses(cases: &[(String, &str, &str)]) {
    for (text, path, expected) in cases {
        rejects(text, path, expected);
    }
}
