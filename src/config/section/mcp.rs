//! The `mcp` section of an mcp target: transport, pinned revision, required inventory, and
//! the `functional`, `stdio` and `oauth` blocks with the rules between them.

use std::collections::HashSet;

use super::{Requested, functional, oauth, stdio};
use crate::config::reader::{Fail, Field};
use crate::config::{McpOptions, McpTransport, rules};
use crate::contract::Dimension;

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

/// Reads `mcp` for a target whose `checks` request `requested`.
pub(super) fn mcp(f: &Field<'_>, requested: &Requested<'_>) -> Result<McpOptions, Fail> {
    let map = f.at().section("a mapping of MCP options", MCP_KEYS)?;
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
        if requested.explicit() && !requested.has(Dimension::Capability) {
            return Err(r
                .path
                .fail_key("requires `capability` in the explicit `checks`"));
        }
    }
    if let Some(func) = map.get("functional") {
        if !requested.has(Dimension::Functional) {
            return Err(func
                .path
                .fail_key("requires `functional` listed explicitly in `checks`"));
        }
        out.functional = Some(functional::functional(func)?);
    }
    if let Some(s) = map.get("stdio") {
        if out.transport != McpTransport::Stdio {
            return Err(s.path.fail_key("requires `transport: stdio`"));
        }
        out.stdio = Some(stdio::stdio(s)?);
    } else if out.transport == McpTransport::Stdio {
        let at = map.get("transport").map_or(&map.path, |t| &t.path);
        return Err(at.fail("the stdio transport requires an `mcp.stdio` block with a command"));
    }
    if let Some(o) = map.get("oauth") {
        if out.transport == McpTransport::Stdio {
            return Err(o.path.fail_key("cannot be used with the stdio transport"));
        }
        out.oauth = Some(oauth::oauth(o)?);
    }
    Ok(out)
}

/// A list of non-blank, unique names (`required_*`).
fn names(f: &Field<'_>, what: &str) -> Result<Vec<String>, Fail> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    let list_what = format!("a list of {what}s");
    let item_what = format!("a non-blank {what}");
    for (path, s) in f.at().str_list(&list_what, &item_what)? {
        if rules::is_blank(s) {
            return Err(path.fail(format!("expected {item_what}, found a blank string")));
        }
        if !seen.insert(s) {
            return Err(path.fail(format!("duplicate {what}")));
        }
        out.push(s.to_string());
    }
    Ok(out)
}
