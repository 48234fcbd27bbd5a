//! The v1 configuration schema: targets, dependency entries and the `http` and `mcp`
//! sections, read strictly from the untyped tree.
//!
//! Each function reads one mapping: it first rejects unknown keys (with a suggestion), then
//! reads the fields in a fixed order, then applies the cross-field rules, so the first error
//! reported for a mapping does not depend on key order. Dependencies are read last, after the
//! target's own fields. The result is a tree of [`Decl`]s; [`super::graph`] turns it into the
//! node arena and validates references.

use std::collections::HashSet;

use super::reader::{At, Fail, Field, Fields, KeyPath, is_blank, mismatch};
use super::yaml::Node;
use super::{
    DEFAULT_MAX_BODY_BYTES, DEFAULT_RETRY_DELAY_MS, DEFAULT_TIMEOUT_MS, HttpMethod, HttpOptions,
    McpExpect, McpFunctional, McpOptions, McpTransport, OAuthGrant, OAuthOptions, Origin,
    Relationship, StdioOptions, Target, TargetType,
};
use crate::vocab::Dimension;
use crate::vocab::text::suggest;

/// Keys of a target (top-level or inline dependency).
const TARGET_KEYS: &[&str] = &[
    "name",
    "type",
    "endpoint",
    "id",
    "checks",
    "thresholds",
    "timeout_ms",
    "check_timeouts_ms",
    "retries",
    "retry_delay_ms",
    "budget_ms",
    "auth",
    "dependencies",
    "http",
    "mcp",
];
/// Keys an inline dependency entry has besides the target's: its edge.
const EDGE_KEYS: &[&str] = &["critical", "relationship"];
/// Keys of a `ref` dependency entry.
const REF_KEYS: &[&str] = &["ref", "critical", "relationship"];
const HTTP_KEYS: &[&str] = &[
    "method",
    "expected_status",
    "headers",
    "body_contains",
    "max_body_bytes",
];
const MCP_KEYS: &[&str] = &[
    "transport",
    "protocol_version",
    "required_tools",
    "required_resources",
    "required_prompts",
    "functional",
    "stdio",
    "oauth",
];
const FUNCTIONAL_KEYS: &[&str] = &["tool", "safe", "arguments_json", "expect"];
const EXPECT_KEYS: &[&str] = &["json", "text_contains", "fresh_within_s"];
const STDIO_KEYS: &[&str] = &["command", "args", "directory", "env"];
const OAUTH_KEYS: &[&str] = &[
    "issuer",
    "client_id",
    "grant",
    "client_secret_env",
    "refresh_token_env",
    "token_file",
    "scopes",
    "redirect_port",
];

/// Upper bound of `timeout_ms` and `check_timeouts_ms` values.
pub(crate) const MAX_TIMEOUT_MS: i128 = 300_000;
/// Upper bound of `retries`.
pub(crate) const MAX_RETRIES: i128 = 3;
/// Upper bound of `retry_delay_ms`.
pub(crate) const MAX_RETRY_DELAY_MS: i128 = 60_000;
/// Upper bound of `budget_ms`.
pub(crate) const MAX_BUDGET_MS: i128 = 60_000;
/// Upper bound of `http.max_body_bytes`.
pub(crate) const MAX_BODY_BYTES: i128 = 1_048_576;
/// Upper bound of `mcp.functional.arguments_json`, in bytes.
pub(crate) const MAX_ARGUMENTS_JSON_BYTES: usize = 65_536;

/// A target as declared, before the graph is assembled.
#[derive(Debug)]
pub(crate) struct Decl {
    /// The target; `dependencies` is still empty.
    pub target: Target,
    /// Where the target was declared.
    pub path: KeyPath,
    /// Where its `id` value is, when it has one.
    pub id_path: Option<KeyPath>,
    /// Its dependency entries, in order.
    pub deps: Vec<DepDecl>,
}

/// One dependency entry as declared.
#[derive(Debug)]
pub(crate) struct DepDecl {
    /// `critical` (default true).
    pub critical: bool,
    /// `relationship`, if given.
    pub relationship: Option<Relationship>,
    /// Where the entry was declared.
    pub path: KeyPath,
    /// What the entry points at.
    pub to: DepTo,
}

/// The two kinds of dependency entry.
#[derive(Debug)]
pub(crate) enum DepTo {
    /// An inline target: a node of its own.
    Inline(Box<Decl>),
    /// `ref: <id>`: the node declared with that id.
    Ref {
        /// The id.
        id: String,
        /// Where the `ref` value is.
        path: KeyPath,
    },
}

/// Reads one entry of `targets`.
pub(crate) fn top_level_target(at: At<'_, '_>) -> Result<Decl, Fail> {
    let fields = at.map("a mapping describing a target")?;
    for key in ["critical", "relationship"] {
        if let Some(f) = fields.get(key) {
            return Err(f
                .path
                .fail_key("only allowed on dependency entries; a top-level target has no edge"));
        }
    }
    if let Some(f) = fields.get("ref") {
        return Err(f
            .path
            .fail_key("only allowed on dependency entries; a top-level entry must be a target"));
    }
    check_keys(&fields, &[])?;
    target(&fields)
}

/// Reads one entry of a `dependencies` list: an inline target or a `ref`.
fn dependency(at: At<'_, '_>) -> Result<DepDecl, Fail> {
    let fields = at.map("a mapping describing a dependency (a target or a `ref`)")?;
    if let Some(r) = fields.get("ref") {
        if let Some(extra) = fields.fields.iter().find(|f| !REF_KEYS.contains(&f.name)) {
            return Err(extra.path.fail_key(
                "not allowed in a `ref` entry; expected only ref, critical, relationship",
            ));
        }
        let id = r.at().str("the id of a target")?.to_string();
        let (critical, relationship) = edge(&fields)?;
        return Ok(DepDecl {
            critical,
            relationship,
            path: fields.path.clone(),
            to: DepTo::Ref {
                id,
                path: r.path.clone(),
            },
        });
    }
    check_keys(&fields, EDGE_KEYS)?;
    let (critical, relationship) = edge(&fields)?;
    let decl = target(&fields)?;
    Ok(DepDecl {
        critical,
        relationship,
        path: fields.path.clone(),
        to: DepTo::Inline(Box::new(decl)),
    })
}

/// `critical` and `relationship` of a dependency entry.
fn edge(fields: &Fields<'_>) -> Result<(bool, Option<Relationship>), Fail> {
    let critical = match fields.get("critical") {
        Some(f) => f.at().bool()?,
        None => true,
    };
    let relationship = match fields.get("relationship") {
        Some(f) => {
            let names: Vec<&str> = Relationship::ALL.iter().map(|r| r.as_str()).collect();
            let s = f.at().str("a relationship")?;
            let found = Relationship::ALL.into_iter().find(|r| r.as_str() == s);
            Some(found.ok_or_else(|| f.path.fail(one_of("relationship", &names, s)))?)
        }
        None => None,
    };
    Ok((critical, relationship))
}

/// `unknown <what>; expected one of a, b, c (did you mean `b`?)` — never echoes `found`.
fn one_of(what: &str, names: &[&str], found: &str) -> String {
    let mut msg = format!("unknown {what}; expected one of {}", names.join(", "));
    if let Some(s) = suggest(found, names.iter().copied()) {
        msg.push_str(&format!(" (did you mean `{s}`?)"));
    }
    msg
}

/// Rejects keys a target mapping cannot have: the contract's `agent`/`a2a` sections (not
/// supported here yet) by name, anything else not a target key or in `extra` with a
/// suggestion.
fn check_keys(fields: &Fields<'_>, extra: &[&str]) -> Result<(), Fail> {
    for key in ["agent", "a2a"] {
        if let Some(f) = fields.get(key) {
            return Err(f.path.fail_key(format!(
                "the `{key}` section is not supported by this version of agenthealth"
            )));
        }
    }
    let known: Vec<&str> = TARGET_KEYS.iter().chain(extra).copied().collect();
    fields.only(&known)
}

/// Reads the fields of a target whose key set has been checked.
fn target(fields: &Fields<'_>) -> Result<Decl, Fail> {
    let name = fields
        .require("name")?
        .at()
        .nonblank("a non-blank string")?
        .to_string();
    let kind = target_type(fields.require("type")?)?;
    let endpoint = fields
        .require("endpoint")?
        .at()
        .nonblank("a non-blank string")?
        .to_string();

    let mut id = None;
    let mut id_path = None;
    if let Some(f) = fields.get("id") {
        let s = f.at().str("an id")?;
        if !valid_id(s) {
            return Err(f.path.fail(
                "expected an id of 1 to 64 characters from A-Z a-z 0-9 _ . - starting with a \
                 letter or digit",
            ));
        }
        id = Some(s.to_string());
        id_path = Some(f.path.clone());
    }

    let checks = match fields.get("checks") {
        Some(f) => Some(checks(f)?),
        None => None,
    };
    let requested = |d: Dimension| {
        checks
            .as_ref()
            .is_some_and(|c| c.iter().any(|(x, _)| *x == d))
    };
    let explicit = checks.is_some();

    let latency_threshold_ms = match fields.get("thresholds") {
        Some(f) => thresholds(f)?,
        None => None,
    };
    let timeout_ms =
        opt_int(fields, "timeout_ms", 1, MAX_TIMEOUT_MS)?.unwrap_or(DEFAULT_TIMEOUT_MS);
    let check_timeouts_ms = match fields.get("check_timeouts_ms") {
        Some(f) => check_timeouts(f)?,
        None => Vec::new(),
    };
    let retries = opt_int(fields, "retries", 0, MAX_RETRIES)?.unwrap_or(0);
    let retry_delay_ms =
        opt_int(fields, "retry_delay_ms", 0, MAX_RETRY_DELAY_MS)?.unwrap_or(DEFAULT_RETRY_DELAY_MS);
    let budget_ms = opt_int(fields, "budget_ms", 1, MAX_BUDGET_MS)?;

    let mut bearer_env = None;
    if let Some(f) = fields.get("auth") {
        let auth = f.at().map("a mapping with `bearer_env`")?;
        auth.only(&["bearer_env"])?;
        bearer_env = Some(env_ref(auth.require("bearer_env")?.at())?.to_string());
    }

    let http = match fields.get("http") {
        Some(f) if !kind.is_http_family() => {
            return Err(f.path.fail_key(format!(
                "`http` options are only allowed on {} targets",
                TargetType::names(&TargetType::HTTP_FAMILY, ", ")
            )));
        }
        Some(f) => Some(http(f, explicit, &requested)?),
        None => None,
    };

    let mcp = match fields.get("mcp") {
        Some(f) if kind != TargetType::Mcp => {
            return Err(f
                .path
                .fail_key("`mcp` options are only allowed on mcp targets"));
        }
        Some(f) => Some(mcp(f, explicit, &requested)?),
        None => None,
    };

    // Cross-section rules.
    if let Some(m) = &mcp {
        if let Some(auth) = fields.get("auth") {
            if m.transport == McpTransport::Stdio {
                return Err(auth.path.fail_key(
                    "cannot be used with the stdio transport; pass credentials with \
                     `mcp.stdio.env`",
                ));
            }
            if m.oauth.is_some() {
                return Err(auth.path.fail_key("cannot be combined with `mcp.oauth`"));
            }
        }
    }
    if kind == TargetType::Mcp && mcp.as_ref().is_none_or(|m| m.functional.is_none()) {
        if let Some((_, path)) = checks
            .as_ref()
            .and_then(|c| c.iter().find(|(d, _)| *d == Dimension::Functional))
        {
            return Err(path.fail("`functional` on an mcp target requires `mcp.functional`"));
        }
    }

    let dependencies = match fields.get("dependencies") {
        Some(f) => {
            let mut deps = Vec::new();
            for (path, node) in f.at().list("a list of dependency entries")? {
                deps.push(dependency(At { node, path: &path })?);
            }
            deps
        }
        None => Vec::new(),
    };

    let mut checks_out: Option<Vec<Dimension>> = None;
    if let Some(c) = checks {
        let mut dims = Vec::with_capacity(c.len());
        for (d, _) in c {
            if !dims.contains(&d) {
                dims.push(d);
            }
        }
        checks_out = Some(dims);
    }

    Ok(Decl {
        target: Target {
            id,
            name,
            kind,
            endpoint,
            checks: checks_out,
            latency_threshold_ms,
            timeout_ms,
            check_timeouts_ms,
            retries: u32::try_from(retries).unwrap_or(0),
            retry_delay_ms,
            budget_ms,
            bearer_env,
            dependencies: Vec::new(),
            http,
            mcp,
            path: fields.path.render(),
            origin: Origin::File,
        },
        path: fields.path.clone(),
        id_path,
        deps: dependencies,
    })
}

/// An optional integer field within `lo..=hi` (both non-negative).
fn opt_int(fields: &Fields<'_>, key: &str, lo: i128, hi: i128) -> Result<Option<u64>, Fail> {
    match fields.get(key) {
        Some(f) => {
            let n = f.at().int(lo, hi)?;
            Ok(Some(
                u64::try_from(n).map_err(|_| f.path.fail("out of range"))?,
            ))
        }
        None => Ok(None),
    }
}

fn target_type(f: &Field<'_>) -> Result<TargetType, Fail> {
    let s = f.at().str("a target type")?;
    TargetType::parse(s).ok_or_else(|| {
        let names: Vec<&str> = TargetType::ALL.iter().map(|t| t.as_str()).collect();
        f.path.fail(one_of("target type", &names, s))
    })
}

/// `^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`
pub(crate) fn valid_id(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

fn dimension_names() -> Vec<&'static str> {
    Dimension::ALL.iter().map(|d| d.as_str()).collect()
}

/// `checks`: dimensions with the path of each item (duplicates kept here).
fn checks(f: &Field<'_>) -> Result<Vec<(Dimension, KeyPath)>, Fail> {
    let mut out = Vec::new();
    for (path, s) in f
        .at()
        .str_list("a list of dimensions", "a dimension name")?
    {
        let d = Dimension::parse(s)
            .ok_or_else(|| path.fail(one_of("dimension", &dimension_names(), s)))?;
        out.push((d, path));
    }
    Ok(out)
}

fn thresholds(f: &Field<'_>) -> Result<Option<f64>, Fail> {
    let t = f.at().map("a mapping with `latency_ms`")?;
    t.only(&["latency_ms"])?;
    match t.get("latency_ms") {
        Some(l) => {
            let what = "a finite number of milliseconds ≥ 0";
            let n = l.at().number(what)?;
            if n < 0.0 {
                return Err(l
                    .path
                    .fail(format!("expected {what}; found a negative number")));
            }
            Ok(Some(n))
        }
        None => Ok(None),
    }
}

fn check_timeouts(f: &Field<'_>) -> Result<Vec<(Dimension, u64)>, Fail> {
    let map = f.at().map("a mapping of dimension to milliseconds")?;
    let names: Vec<&str> = Dimension::ALL
        .iter()
        .filter(|d| **d != Dimension::Dependency)
        .map(|d| d.as_str())
        .collect();
    let mut out = Vec::new();
    for entry in &map.fields {
        let d = match Dimension::parse(entry.name) {
            Some(Dimension::Dependency) => {
                return Err(entry
                    .path
                    .fail_key("`dependency` makes no request of its own and takes no timeout"));
            }
            Some(d) => d,
            None => return Err(entry.path.fail_key(one_of("dimension", &names, entry.name))),
        };
        let ms = entry.at().int(1, MAX_TIMEOUT_MS)?;
        out.push((d, u64::try_from(ms).unwrap_or(1)));
    }
    Ok(out)
}

/// The name of an environment variable: not blank, no `=` or NUL.
fn env_ref<'a>(at: At<'a, '_>) -> Result<&'a str, Fail> {
    let what = "the name of an environment variable";
    let s = at.nonblank(what)?;
    if s.contains(['=', '\0']) {
        return Err(at.fail(format!("expected {what}; `=` and NUL are not allowed")));
    }
    Ok(s)
}

/// A string without NUL bytes.
fn no_nul<'a>(at: At<'a, '_>, what: &str) -> Result<&'a str, Fail> {
    let s = at.str(what)?;
    if s.contains('\0') {
        return Err(at.fail(format!("expected {what}; NUL is not allowed")));
    }
    Ok(s)
}

fn http(
    f: &Field<'_>,
    explicit: bool,
    requested: &dyn Fn(Dimension) -> bool,
) -> Result<HttpOptions, Fail> {
    let map = f.at().map("a mapping of HTTP options")?;
    map.only(HTTP_KEYS)?;
    let mut out = HttpOptions {
        max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        ..HttpOptions::default()
    };
    if let Some(m) = map.get("method") {
        out.method = Some(match m.at().str("`HEAD` or `GET`")? {
            "HEAD" => HttpMethod::Head,
            "GET" => HttpMethod::Get,
            _ => return Err(m.path.fail("expected `HEAD` or `GET` (upper case)")),
        });
    }
    if let Some(s) = map.get("expected_status") {
        let items = s.at().list("a non-empty list of HTTP status codes")?;
        if items.is_empty() {
            return Err(s
                .path
                .fail("expected at least one status code from 200 to 599"));
        }
        let mut codes = Vec::with_capacity(items.len());
        for (path, node) in items {
            let code = At { node, path: &path }.int(200, 599)?;
            codes.push(u16::try_from(code).unwrap_or(200));
        }
        out.expected_status = Some(codes);
    }
    if let Some(h) = map.get("headers") {
        let headers = h.at().map("a mapping of header name to expected value")?;
        let mut seen = HashSet::with_capacity(headers.fields.len());
        for entry in &headers.fields {
            if !is_token(entry.name) {
                return Err(entry.path.fail_key("header name must be an RFC 7230 token"));
            }
            if !seen.insert(entry.name.to_ascii_lowercase()) {
                return Err(entry
                    .path
                    .fail_key("duplicate header name (header names are case-insensitive)"));
            }
            let value = entry.at().str("a string")?;
            if value
                .chars()
                .any(|c| (c < ' ' && c != '\t') || c == '\u{7f}')
            {
                return Err(entry
                    .path
                    .fail("header value must not contain control characters other than TAB"));
            }
            out.headers
                .push((entry.name.to_string(), value.to_string()));
        }
    }
    if let Some(b) = map.get("body_contains") {
        let text = b.at().str("a string")?;
        if !text.is_empty() {
            if !requested(Dimension::Functional) {
                return Err(b
                    .path
                    .fail_key("requires `functional` listed explicitly in `checks`"));
            }
            out.body_contains = Some(text.to_string());
        }
    }
    if let Some(m) = map.get("max_body_bytes") {
        let n = m.at().int(1, MAX_BODY_BYTES)?;
        out.max_body_bytes = u64::try_from(n).unwrap_or(DEFAULT_MAX_BODY_BYTES);
    }
    if explicit && !requested(Dimension::Protocol) && !requested(Dimension::Functional) {
        let culprit = match map.get("expected_status") {
            Some(s) => Some(s),
            None => map.get("headers").filter(|_| !out.headers.is_empty()),
        };
        if let Some(c) = culprit {
            return Err(c
                .path
                .fail_key("requires `protocol` or `functional` in the explicit `checks`"));
        }
    }
    Ok(out)
}

/// RFC 7230 `token`: one or more tchar.
fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c))
}

fn mcp(
    f: &Field<'_>,
    explicit: bool,
    requested: &dyn Fn(Dimension) -> bool,
) -> Result<McpOptions, Fail> {
    let map = f.at().map("a mapping of MCP options")?;
    map.only(MCP_KEYS)?;
    let mut out = McpOptions::default();
    if let Some(t) = map.get("transport") {
        out.transport = match t.at().str("`http` or `stdio`")? {
            "" | "http" => McpTransport::Http,
            "stdio" => McpTransport::Stdio,
            _ => return Err(t.path.fail("expected `http` or `stdio`")),
        };
    }
    if let Some(v) = map.get("protocol_version") {
        // Any revision string loads; an unknown one is a MISCONFIGURED result at run time.
        out.protocol_version = Some(
            v.at()
                .nonblank("a protocol revision such as `2025-11-25`")?
                .to_string(),
        );
    }
    let mut first_requirement = None;
    for (key, what) in [
        ("required_tools", "tool name"),
        ("required_resources", "resource URI"),
        ("required_prompts", "prompt name"),
    ] {
        let Some(r) = map.get(key) else { continue };
        let list = names(r, what)?;
        if !list.is_empty() && first_requirement.is_none() {
            first_requirement = Some(r);
        }
        match key {
            "required_tools" => out.required_tools = list,
            "required_resources" => out.required_resources = list,
            _ => out.required_prompts = list,
        }
    }
    if let Some(r) = first_requirement {
        if explicit && !requested(Dimension::Capability) {
            return Err(r
                .path
                .fail_key("requires `capability` in the explicit `checks`"));
        }
    }
    if let Some(func) = map.get("functional") {
        if !requested(Dimension::Functional) {
            return Err(func
                .path
                .fail_key("requires `functional` listed explicitly in `checks`"));
        }
        out.functional = Some(functional(func)?);
    }
    if let Some(s) = map.get("stdio") {
        if out.transport != McpTransport::Stdio {
            return Err(s.path.fail_key("requires `transport: stdio`"));
        }
        out.stdio = Some(stdio(s)?);
    } else if out.transport == McpTransport::Stdio {
        let at = map.get("transport").map_or(&map.path, |t| &t.path);
        return Err(at.fail("the stdio transport requires an `mcp.stdio` block with a command"));
    }
    if let Some(o) = map.get("oauth") {
        if out.transport == McpTransport::Stdio {
            return Err(o.path.fail_key("cannot be used with the stdio transport"));
        }
        out.oauth = Some(oauth(o)?);
    }
    Ok(out)
}

/// A list of non-blank, unique names.
fn names(f: &Field<'_>, what: &str) -> Result<Vec<String>, Fail> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    let list_what = format!("a list of {what}s");
    let item_what = format!("a non-blank {what}");
    for (path, s) in f.at().str_list(&list_what, &item_what)? {
        if is_blank(s) {
            return Err(path.fail(format!("expected {item_what}, found a blank string")));
        }
        if !seen.insert(s) {
            return Err(path.fail(format!("duplicate {what}")));
        }
        out.push(s.to_string());
    }
    Ok(out)
}

fn functional(f: &Field<'_>) -> Result<McpFunctional, Fail> {
    let map = f.at().map("a mapping with `tool` and `safe: true`")?;
    map.only(FUNCTIONAL_KEYS)?;
    let tool = map
        .require("tool")?
        .at()
        .nonblank("a non-blank tool name")?
        .to_string();
    let safe = map.get("safe").ok_or_else(|| {
        map.path
            .fail("missing required key `safe`; a functional call must be declared `safe: true`")
    })?;
    if !safe.at().bool()? {
        return Err(safe
            .path
            .fail("expected `true`; a functional call runs only when declared safe"));
    }
    let arguments_json = match map.get("arguments_json") {
        Some(a) => arguments_json(a)?,
        None => "{}".to_string(),
    };
    let expect = match map.get("expect") {
        Some(e) => expect(e)?,
        None => McpExpect::default(),
    };
    Ok(McpFunctional {
        tool,
        safe: true,
        arguments_json,
        expect,
    })
}

fn arguments_json(f: &Field<'_>) -> Result<String, Fail> {
    let what = "a string holding a JSON object";
    let s = f.at().str(what)?;
    if s.len() > MAX_ARGUMENTS_JSON_BYTES {
        return Err(f.path.fail(format!(
            "expected a JSON object of at most {MAX_ARGUMENTS_JSON_BYTES} bytes"
        )));
    }
    if serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(s).is_err() {
        return Err(f.path.fail(format!("expected {what}")));
    }
    Ok(s.to_string())
}

fn expect(f: &Field<'_>) -> Result<McpExpect, Fail> {
    let map = f.at().map("a mapping of expectations")?;
    map.only(EXPECT_KEYS)?;
    let mut out = McpExpect::default();
    if let Some(j) = map.get("json") {
        let json = j.at().map("a mapping of JSON Pointer to expected value")?;
        for entry in &json.fields {
            pointer(entry)?;
            out.json
                .push((entry.name.to_string(), to_json(entry.at())?));
        }
    }
    if let Some(t) = map.get("text_contains") {
        let s = t.at().str("a non-empty string")?;
        if s.is_empty() {
            return Err(t.path.fail("expected a non-empty string"));
        }
        out.text_contains = Some(s.to_string());
    }
    if let Some(fw) = map.get("fresh_within_s") {
        let fresh = fw.at().map("a mapping of JSON Pointer to seconds")?;
        for entry in &fresh.fields {
            pointer(entry)?;
            let what = "a number of seconds greater than 0";
            let n = entry.at().number(what)?;
            if n <= 0.0 {
                return Err(entry.path.fail(format!("expected {what}")));
            }
            out.fresh_within_s.push((entry.name.to_string(), n));
        }
    }
    Ok(out)
}

/// The key must be an RFC 6901 JSON Pointer.
fn pointer(entry: &Field<'_>) -> Result<(), Fail> {
    if valid_pointer(entry.name) {
        Ok(())
    } else {
        Err(entry.path.fail_key(
            "expected a JSON Pointer: empty or starting with `/`, `~` only as `~0` or `~1`",
        ))
    }
}

/// RFC 6901: empty, or `/`-separated tokens where `~` is only `~0` or `~1`.
pub(crate) fn valid_pointer(p: &str) -> bool {
    if p.is_empty() {
        return true;
    }
    if !p.starts_with('/') {
        return false;
    }
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return false;
        }
    }
    true
}

/// Any YAML value as JSON: `null` is allowed here (it is an expected value, not a setting).
fn to_json(at: At<'_, '_>) -> Result<serde_json::Value, Fail> {
    use serde_json::Value;
    Ok(match at.node {
        Node::Null => Value::Null,
        Node::Bool(b) => Value::Bool(*b),
        Node::Int(n) => {
            if let Ok(i) = i64::try_from(*n) {
                Value::from(i)
            } else if let Ok(u) = u64::try_from(*n) {
                Value::from(u)
            } else {
                return Err(at.fail("expected an integer within the 64-bit range"));
            }
        }
        Node::Float(x) => match serde_json::Number::from_f64(*x) {
            Some(n) => Value::Number(n),
            None => return Err(at.fail("expected a finite number")),
        },
        Node::Str(s) => Value::String(s.clone()),
        Node::Seq(_) => {
            let mut items = Vec::new();
            for (path, node) in at.list("a list")? {
                items.push(to_json(At { node, path: &path })?);
            }
            Value::Array(items)
        }
        Node::Map(_) => {
            let map = at.map("a mapping")?;
            let mut obj = serde_json::Map::new();
            for entry in &map.fields {
                obj.insert(entry.name.to_string(), to_json(entry.at())?);
            }
            Value::Object(obj)
        }
        Node::Tagged => return Err(at.fail(mismatch("a JSON value", at.node))),
    })
}

fn stdio(f: &Field<'_>) -> Result<StdioOptions, Fail> {
    let map = f.at().map("a mapping with `command`")?;
    map.only(STDIO_KEYS)?;
    let c = map.require("command")?;
    let command = no_nul(c.at(), "a non-blank command")?;
    if is_blank(command) {
        return Err(c
            .path
            .fail("expected a non-blank command, found a blank string"));
    }
    let mut out = StdioOptions {
        command: command.to_string(),
        ..StdioOptions::default()
    };
    if let Some(a) = map.get("args") {
        for (path, node) in a.at().list("a list of strings")? {
            out.args
                .push(no_nul(At { node, path: &path }, "a string")?.to_string());
        }
    }
    if let Some(d) = map.get("directory") {
        let dir = no_nul(d.at(), "a directory path")?;
        if !dir.is_empty() {
            out.directory = Some(dir.to_string());
        }
    }
    if let Some(e) = map.get("env") {
        let env = e
            .at()
            .map("a mapping of child variable name to host variable name")?;
        for entry in &env.fields {
            if is_blank(entry.name) || entry.name.contains(['=', '\0']) {
                return Err(entry.path.fail_key(
                    "expected the name of an environment variable (not blank, no `=` or NUL)",
                ));
            }
            let host = env_ref(entry.at())?;
            out.env.push((entry.name.to_string(), host.to_string()));
        }
    }
    Ok(out)
}

fn oauth(f: &Field<'_>) -> Result<OAuthOptions, Fail> {
    let map = f.at().map("a mapping of OAuth settings")?;
    map.only(OAUTH_KEYS)?;
    let issuer = map
        .require("issuer")?
        .at()
        .nonblank("a non-blank issuer URL")?
        .to_string();
    let client_id = map
        .require("client_id")?
        .at()
        .nonblank("a non-blank client id")?
        .to_string();
    let g = map.require("grant")?;
    let grants = ["client_credentials", "refresh_token", "authorization_code"];
    let grant = match g.at().str("an OAuth grant")? {
        "client_credentials" => OAuthGrant::ClientCredentials,
        "refresh_token" => OAuthGrant::RefreshToken,
        "authorization_code" => OAuthGrant::AuthorizationCode,
        other => return Err(g.path.fail(one_of("grant", &grants, other))),
    };
    let client_secret_env = match map.get("client_secret_env") {
        Some(e) => Some(env_ref(e.at())?.to_string()),
        None => None,
    };
    let refresh_token_env = match map.get("refresh_token_env") {
        Some(e) => Some(env_ref(e.at())?.to_string()),
        None => None,
    };
    let token_file = match map.get("token_file") {
        Some(t) => {
            let s = no_nul(t.at(), "a non-blank file path")?;
            if is_blank(s) {
                return Err(t
                    .path
                    .fail("expected a non-blank file path, found a blank string"));
            }
            Some(s.to_string())
        }
        None => None,
    };
    let mut scopes: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    if let Some(s) = map.get("scopes") {
        for (path, scope) in s.at().str_list("a list of scopes", "a scope")? {
            let ok = !scope.is_empty()
                && scope
                    .bytes()
                    .all(|b| (33..=126).contains(&b) && b != b'"' && b != b'\\');
            if !ok {
                return Err(
                    path.fail("expected a scope of printable ASCII without spaces, `\"` or `\\`")
                );
            }
            if !seen.insert(scope) {
                return Err(path.fail("duplicate scope"));
            }
            scopes.push(scope.to_string());
        }
    }
    let redirect_port = match map.get("redirect_port") {
        Some(p) => Some(u16::try_from(p.at().int(0, 65_535)?).unwrap_or(0)),
        None => None,
    };
    let missing = match grant {
        OAuthGrant::ClientCredentials if client_secret_env.is_none() => {
            Some("grant `client_credentials` requires `client_secret_env`")
        }
        OAuthGrant::RefreshToken if refresh_token_env.is_none() && token_file.is_none() => {
            Some("grant `refresh_token` requires `refresh_token_env` or `token_file`")
        }
        OAuthGrant::AuthorizationCode if token_file.is_none() => {
            Some("grant `authorization_code` requires `token_file`")
        }
        _ => None,
    };
    if let Some(msg) = missing {
        return Err(g.path.fail(msg));
    }
    Ok(OAuthOptions {
        issuer,
        client_id,
        grant,
        client_secret_env,
        refresh_token_env,
        token_file,
        scopes,
        redirect_port,
    })
}
