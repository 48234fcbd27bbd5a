//! The target mapping (top-level or inline dependency): its own fields, its `http` and `mcp`
//! sections, and the rules that span sections (`auth` against the MCP transport and OAuth,
//! `functional` against `mcp.functional`). Its `dependencies` are read by the caller, after
//! everything here.

use super::{Decl, Requested, env_ref, http, mcp};
use crate::config::reader::{Fail, Field, Fields, KeyPath};
use crate::config::{
    DEFAULT_RETRY_DELAY_MS, DEFAULT_TIMEOUT_MS, McpOptions, McpTransport, Origin, Target,
    TargetType, rules,
};
use crate::contract::Dimension;

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

/// Rejects keys a target mapping cannot have: the contract's `agent`/`a2a` sections (not
/// supported here yet) by name, anything else not a target key or in `extra` with a
/// suggestion.
pub(super) fn check_keys(fields: &Fields<'_>, extra: &[&str]) -> Result<(), Fail> {
    check_keys_but(fields, &[], extra)
}

/// [`check_keys`] for a mapping that has the target keys but those in `without`.
pub(super) fn check_keys_but(
    fields: &Fields<'_>,
    without: &[&str],
    extra: &[&str],
) -> Result<(), Fail> {
    for key in ["agent", "a2a"] {
        if let Some(f) = fields.get(key) {
            return Err(f.path.fail_key(format!(
                "the `{key}` section is not supported by this version of agenthealth"
            )));
        }
    }
    let known: Vec<&str> = TARGET_KEYS
        .iter()
        .filter(|k| !without.contains(k))
        .chain(extra)
        .copied()
        .collect();
    fields.only(&known)
}

/// Reads the fields of a target whose key set has been checked; its `deps` are left empty.
/// The fields are read in the order of [`TARGET_KEYS`], then the rules across sections, so
/// the first error a file has is the one reported.
pub(super) fn target(fields: &Fields<'_>) -> Result<Decl, Fail> {
    target_with(fields, None)
}

/// Reads the fields of a module's target: a target whose endpoint is `endpoint` (the URL a
/// probe names), not read from the mapping.
pub(super) fn target_at(fields: &Fields<'_>, endpoint: String) -> Result<Decl, Fail> {
    target_with(fields, Some(endpoint))
}

/// The target's fields, the endpoint read from the mapping (in its place among them) unless
/// given.
fn target_with(fields: &Fields<'_>, endpoint: Option<String>) -> Result<Decl, Fail> {
    let name = fields.nonblank("name", "a non-blank string")?;
    let kind = target_type(fields.require("type")?)?;
    let endpoint = match endpoint {
        Some(e) => e,
        None => fields.nonblank("endpoint", "a non-blank string")?,
    };
    let (id, id_path) = match fields.get("id") {
        Some(f) => (Some(id(f)?), Some(f.path.clone())),
        None => (None, None),
    };
    let checks = fields.get("checks").map(checks).transpose()?;
    let requested = Requested(checks.as_deref());
    let latency_threshold_ms = fields.get("thresholds").map(thresholds).transpose()?;
    let timeout_ms =
        setting(fields, "timeout_ms", rules::TIMEOUT_MS)?.unwrap_or(DEFAULT_TIMEOUT_MS);
    let check_timeouts_ms = fields.get("check_timeouts_ms").map(check_timeouts);
    let check_timeouts_ms = check_timeouts_ms.transpose()?.unwrap_or_default();
    let retries = setting(fields, "retries", rules::RETRIES)?.unwrap_or(0);
    let retry_delay_ms =
        setting(fields, "retry_delay_ms", rules::RETRY_DELAY_MS)?.unwrap_or(DEFAULT_RETRY_DELAY_MS);
    let budget_ms = setting(fields, "budget_ms", rules::BUDGET_MS)?;
    let bearer_env = fields.get("auth").map(auth).transpose()?;
    let http = match fields.get("http") {
        Some(f) if !kind.is_http_family() => {
            return Err(f.path.fail_key(format!(
                "`http` options are only allowed on {} targets",
                TargetType::names(&TargetType::HTTP_FAMILY, ", ")
            )));
        }
        Some(f) => Some(http::http(f, &requested)?),
        None => None,
    };
    let mcp = match fields.get("mcp") {
        Some(f) if kind != TargetType::Mcp => {
            return Err(f
                .path
                .fail_key("`mcp` options are only allowed on mcp targets"));
        }
        Some(f) => Some(mcp::mcp(f, &requested)?),
        None => None,
    };
    across_sections(fields, kind, checks.as_deref(), mcp.as_ref())?;
    let unusable = fields
        .get("endpoint")
        .and_then(|f| unusable(kind, &endpoint, mcp.as_ref()).map(|why| f.path.fail(why)));
    Ok(Decl {
        target: Target {
            id,
            name,
            kind,
            endpoint,
            checks: checks.map(first_occurrences),
            latency_threshold_ms: latency_threshold_ms.flatten(),
            timeout_ms,
            check_timeouts_ms,
            retries: u32::try_from(retries).unwrap_or(0),
            retry_delay_ms,
            budget_ms,
            bearer_env,
            dependencies: Vec::new(),
            http,
            mcp,
            allow: None,
            path: fields.path.render(),
            origin: Origin::File,
        },
        path: fields.path.clone(),
        id_path,
        deps: Vec::new(),
        unusable,
    })
}

/// Why `endpoint` cannot work for a target of `kind` on any host, if it cannot: the HTTP
/// family and MCP over HTTP need an `http(s)` URL, an MCP stdio target `stdio://NAME`. Types
/// without an adapter have no rule. The same grammar the adapters' configuration check runs.
fn unusable(kind: TargetType, endpoint: &str, mcp: Option<&McpOptions>) -> Option<String> {
    use crate::contract::endpoint::{STDIO_SCHEME, http_url, is_stdio_name};
    let stdio = mcp.is_some_and(|m| m.transport == McpTransport::Stdio);
    if kind == TargetType::Mcp && stdio {
        return (!is_stdio_name(endpoint))
            .then(|| "expected a stdio endpoint (the scheme stdio, `://` and a name) for mcp.transport: stdio".to_string());
    }
    if !kind.is_http_family() && kind != TargetType::Mcp {
        return None;
    }
    let problem = http_url(endpoint).err()?;
    let scheme = endpoint.get(..STDIO_SCHEME.len());
    if kind == TargetType::Mcp && scheme.is_some_and(|s| s.eq_ignore_ascii_case(STDIO_SCHEME)) {
        return Some("expected an http(s) URL; a stdio endpoint needs mcp.transport: stdio".into());
    }
    Some(format!("expected an http(s) URL; {}", problem.what()))
}

/// `id`: 1 to 64 characters of the id alphabet.
fn id(f: &Field<'_>) -> Result<String, Fail> {
    let s = f.at().str("an id")?;
    if !rules::is_id(s) {
        return Err(f.path.fail(
            "expected an id of 1 to 64 characters from A-Z a-z 0-9 _ . - starting with a \
             letter or digit",
        ));
    }
    Ok(s.to_string())
}

/// `auth`: the name of the variable holding a static bearer token.
fn auth(f: &Field<'_>) -> Result<String, Fail> {
    let auth = f
        .at()
        .section("a mapping with `bearer_env`", &["bearer_env"])?;
    Ok(env_ref(auth.require("bearer_env")?.at())?.to_string())
}

/// The rules across sections: `auth` against the MCP transport and OAuth, `functional`
/// against `mcp.functional`.
fn across_sections(
    fields: &Fields<'_>,
    kind: TargetType,
    checks: Option<&[(Dimension, KeyPath)]>,
    mcp: Option<&McpOptions>,
) -> Result<(), Fail> {
    if let (Some(m), Some(auth)) = (mcp, fields.get("auth")) {
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
    if kind == TargetType::Mcp && mcp.is_none_or(|m| m.functional.is_none()) {
        if let Some((_, path)) = checks
            .unwrap_or_default()
            .iter()
            .find(|(d, _)| *d == Dimension::Functional)
        {
            return Err(path.fail("`functional` on an mcp target requires `mcp.functional`"));
        }
    }
    Ok(())
}

/// `checks` without its repeats: they are tolerated, and the first occurrence is kept.
fn first_occurrences(checks: Vec<(Dimension, KeyPath)>) -> Vec<Dimension> {
    let mut dims = Vec::with_capacity(checks.len());
    for (d, _) in checks {
        if !dims.contains(&d) {
            dims.push(d);
        }
    }
    dims
}

/// An optional whole-number setting within `range`.
fn setting(fields: &Fields<'_>, key: &str, range: rules::Range) -> Result<Option<u64>, Fail> {
    match fields.get(key) {
        Some(f) => Ok(Some(f.at().whole(range)?)),
        None => Ok(None),
    }
}

fn target_type(f: &Field<'_>) -> Result<TargetType, Fail> {
    let s = f.at().str("a target type")?;
    TargetType::parse(s).ok_or_else(|| {
        let names: Vec<&str> = TargetType::ALL.iter().map(|t| t.as_str()).collect();
        f.path.fail(rules::unknown("target type", &names, s))
    })
}

/// `checks`: dimensions with the path of each item (duplicates kept here).
fn checks(f: &Field<'_>) -> Result<Vec<(Dimension, KeyPath)>, Fail> {
    let names: Vec<&str> = Dimension::ALL.iter().map(|d| d.as_str()).collect();
    let mut out = Vec::new();
    for (path, s) in f
        .at()
        .str_list("a list of dimensions", "a dimension name")?
    {
        let d =
            Dimension::parse(s).ok_or_else(|| path.fail(rules::unknown("dimension", &names, s)))?;
        out.push((d, path));
    }
    Ok(out)
}

/// `thresholds`: only `latency_ms` so far.
fn thresholds(f: &Field<'_>) -> Result<Option<f64>, Fail> {
    let t = f
        .at()
        .section("a mapping with `latency_ms`", &["latency_ms"])?;
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

/// `check_timeouts_ms`: a deadline per dimension that makes requests of its own.
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
            None => {
                return Err(entry
                    .path
                    .fail_key(rules::unknown("dimension", &names, entry.name)));
            }
        };
        out.push((d, entry.at().whole(rules::TIMEOUT_MS)?));
    }
    Ok(out)
}
