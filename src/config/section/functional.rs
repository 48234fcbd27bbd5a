//! `mcp.functional` and its `expect` block: the one opted-in tool call, declared safe, and
//! what its result must show.

use crate::config::reader::{At, Fail, Field, mismatch};
use crate::config::yaml::Node;
use crate::config::{McpExpect, McpFunctional, rules};

const FUNCTIONAL_KEYS: &[&str] = &["tool", "safe", "arguments_json", "expect"];
const EXPECT_KEYS: &[&str] = &["json", "text_contains", "fresh_within_s"];

/// Reads `mcp.functional`. `safe: true` is required, not defaulted: a tool call can change
/// something, and only the operator can say it does not.
pub(super) fn functional(f: &Field<'_>) -> Result<McpFunctional, Fail> {
    let map = f
        .at()
        .section("a mapping with `tool` and `safe: true`", FUNCTIONAL_KEYS)?;
    let tool = map.nonblank("tool", "a non-blank tool name")?;
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

/// `arguments_json`: kept as written (the call sends it verbatim), checked to be an object.
fn arguments_json(f: &Field<'_>) -> Result<String, Fail> {
    let what = "a string holding a JSON object";
    let s = f.at().str(what)?;
    if s.len() > rules::MAX_ARGUMENTS_JSON_BYTES {
        return Err(f.path.fail(format!(
            "expected a JSON object of at most {} bytes",
            rules::MAX_ARGUMENTS_JSON_BYTES
        )));
    }
    if serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(s).is_err() {
        return Err(f.path.fail(format!("expected {what}")));
    }
    Ok(s.to_string())
}

/// `expect`: JSON values at pointers, a text fragment, fresh timestamps at pointers.
fn expect(f: &Field<'_>) -> Result<McpExpect, Fail> {
    let map = f.at().section("a mapping of expectations", EXPECT_KEYS)?;
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
    if rules::is_json_pointer(entry.name) {
        Ok(())
    } else {
        Err(entry.path.fail_key(
            "expected a JSON Pointer: empty or starting with `/`, `~` only as `~0` or `~1`",
        ))
    }
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
        Node::Tagged | Node::Yaml11(_) => {
            return Err(at.fail(mismatch("a JSON value", at.node)));
        }
    })
}
