//! `mcp.stdio`: the subprocess to start (never through a shell) and the environment it gets.

use super::{env_ref, no_nul};
use crate::config::reader::{At, Fail, Field};
use crate::config::{StdioOptions, rules};

const STDIO_KEYS: &[&str] = &["command", "args", "directory", "env"];

/// Reads `mcp.stdio`. Every string may reach an argv, a path or the environment, so none may
/// hold a NUL byte.
pub(super) fn stdio(f: &Field<'_>) -> Result<StdioOptions, Fail> {
    let map = f.at().section("a mapping with `command`", STDIO_KEYS)?;
    let c = map.require("command")?;
    let command = no_nul(c.at(), "a non-blank command")?;
    if rules::is_blank(command) {
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
            if !rules::is_env_name(entry.name) {
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
