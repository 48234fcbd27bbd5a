//! The target mapping (top-level or inline dependency): its own fields, its `http` and `mcp`
//! sections, and the rules that span sections (`auth` against the MCP transport and OAuth,
//! `functional` against `mcp.functional`). Its `dependencies` are read by the caller, after
//! everything here.

use super::{Decl, env_ref, http, mcp};
use crate::config::reader::{Fail, Field, Fields, KeyPath};
use crate::config::{
    DEFAULT_RETRY_DELAY_MS, DEFAULT_TIMEOUT_MS, McpTransport, Origin, Target, TargetType, rules,
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

/// Reads the fields of a target whose key set has been checked; its `deps` are left empty.
pub(super) fn target(fields: &Fields<'_>) -> Result<Decl, Fail> {
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
        if !rules::is_id(s) {
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
        setting(fields, "timeout_ms", rules::TIMEOUT_MS)?.unwrap_or(DEFAULT_TIMEOUT_MS);
    let check_timeouts_ms = match fields.get("check_timeouts_ms") {
        Some(f) => check_timeouts(f)?,
        None => Vec::new(),
    };
    let retries = setting(fields, "retries", rules::RETRIES)?.unwrap_or(0);
    let retry_delay_ms =
        setting(fields, "retry_delay_ms", rules::RETRY_DELAY_MS)?.unwrap_or(DEFAULT_RETRY_DELAY_MS);
    let budget_ms = setting(fields, "budget_ms", rules::BUDGET_MS)?;

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
        Some(f) => Some(http::http(f, explicit, &requested)?),
        None => None,
    };

    let mcp = match fields.get("mcp") {
        Some(f) if kind != TargetType::Mcp => {
            return Err(f
                .path
                .fail_key("`mcp` options are only allowed on mcp targets"));
        }
        Some(f) => Some(mcp::mcp(f, explicit, &requested)?),
        None => None,
    };

    // Rules across sections.
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

    // Repeats in `checks` are tolerated; the first occurrence is kept.
    let checks = checks.map(|c| {
        let mut dims = Vec::with_capacity(c.len());
        for (d, _) in c {
            if !dims.contains(&d) {
                dims.push(d);
            }
        }
        dims
    });

    Ok(Decl {
        target: Target {
            id,
            name,
            kind,
            endpoint,
            checks,
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
        deps: Vec::new(),
    })
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
