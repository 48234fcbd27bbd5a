//! A `modules:` entry: a target without an endpoint, which `serve`'s `/probe` checks at the
//! URL a scraper names, and the `allow` list that URL must pass. Every target key but
//! `endpoint`, `id` and `dependencies` means what it means on a target; a module checks a URL,
//! so stdio is refused too.

use std::sync::Arc;

use super::target;
use crate::config::reader::{At, Fail};
use crate::config::{Module, rules};
use crate::contract::AllowList;
use crate::contract::allow::AllowEntry;

/// Keys a module refuses by name, with why.
const REFUSED: [(&str, &str); 5] = [
    (
        "endpoint",
        "not allowed in a module; the URL comes from /probe's `target`",
    ),
    ("id", "not allowed in a module; a module is named by `name`"),
    (
        "dependencies",
        "a module has no dependencies; probe them as targets",
    ),
    ("critical", "only allowed on dependency entries"),
    ("relationship", "only allowed on dependency entries"),
];

/// Reads one entry of `modules`, whose name none of the modules `before` it has.
pub(crate) fn module(at: At<'_, '_>, before: &[Module]) -> Result<Module, Fail> {
    let fields = at.map("a mapping describing a module")?;
    for (key, why) in REFUSED {
        if let Some(f) = fields.get(key) {
            return Err(f.path.fail_key(why));
        }
    }
    target::check_keys_but(&fields, &["endpoint", "id", "dependencies"], &["allow"])?;
    let name = fields.require("name")?;
    let name_text = name.at().str("a module name")?;
    if !rules::is_id(name_text) {
        return Err(name.path.fail(
            "expected a module name of 1 to 64 characters from A-Z a-z 0-9 _ . - starting \
             with a letter or digit",
        ));
    }
    if before.iter().any(|m| m.name == name_text) {
        return Err(name.path.fail("another module has this name"));
    }
    no_stdio(&fields)?;
    let mut decl = target::target_at(&fields, String::new())?;
    let allow = allow_list(fields.require("allow")?.at())?;
    decl.target.allow = Some(Arc::new(allow));
    Ok(Module {
        name: name_text.to_string(),
        template: decl.target,
    })
}

/// A module's target is reached by URL: `mcp.transport: stdio` and `mcp.stdio` are refused.
fn no_stdio(fields: &crate::config::reader::Fields<'_>) -> Result<(), Fail> {
    let Some(mcp) = fields.get("mcp") else {
        return Ok(());
    };
    let mcp = mcp.at().map("the `mcp` section")?;
    let refused = "a module checks a URL; stdio is not allowed";
    if let Some(t) = mcp.get("transport") {
        if t.at().str("a transport").is_ok_and(|v| v == "stdio") {
            return Err(t.path.fail(refused));
        }
    }
    match mcp.get("stdio") {
        Some(s) => Err(s.path.fail_key(refused)),
        None => Ok(()),
    }
}

/// `allow`: at least one entry, each a host, `*.domain`, IP or CIDR, or URL prefix.
fn allow_list(at: At<'_, '_>) -> Result<AllowList, Fail> {
    let items = at.str_list(
        "a list of allowed hosts, networks and URL prefixes",
        "an allow entry",
    )?;
    if items.is_empty() {
        return Err(at.fail("expected at least one entry"));
    }
    let mut entries = Vec::with_capacity(items.len());
    for (path, text) in items {
        let entry = AllowEntry::parse(text).ok_or_else(|| {
            path.fail(
                "expected a host name, *.domain, an IP address or CIDR, or an http(s) URL \
                 prefix",
            )
        })?;
        entries.push(entry);
    }
    Ok(AllowList(entries))
}
