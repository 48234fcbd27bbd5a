//! Functional invocation: one explicitly safe `tools/call`, with its arguments checked against
//! the tool's contract before the call and its result checked against the protocol, the
//! tool's `outputSchema` and the operator's expectations after it.
//!
//! The flow, on the target run's session and cached inventory (discovery and the call share
//! one session or process):
//!
//! 1. **Lookup.** The configured tool must be in the discovered inventory (the adapter never
//!    picks one). Absent, unadvertised, or excluded for invalid `x-mcp-header` annotations →
//!    UNHEALTHY `mcp_required`, no call.
//! 2. **Safety.** The tool must declare `annotations.readOnlyHint: true` and an explicit
//!    `destructiveHint: false`, else MISCONFIGURED `mcp_unsafe`, no call. Annotations are
//!    hints; the operator's `safe: true` is the real declaration, and both are required.
//! 3. **Arguments.** `arguments_json` must satisfy the tool's `inputSchema` ([`schema`]'s
//!    subset), else MISCONFIGURED with no call and `argument_violation` naming the argument
//!    path and the rule. This is what catches a tool that advertises an empty schema and
//!    would silently drop the operator's diagnostic options.
//! 4. **Headers.** Modern HTTP mirrors `Mcp-Name` and every bound argument as
//!    `Mcp-Param-<Name>` (values encoded by [`param_headers`], Base64 sentinel included). An
//!    argument that cannot travel in its header (an integer beyond ±(2^53 − 1)) is the
//!    operator's to fix: MISCONFIGURED, no call.
//! 5. **The call.** One `tools/call` whose `arguments` are the operator's bytes exactly as
//!    written (no re-encoding, so large integers keep their digits). Never repeated: the
//!    engine does not retry functional checks, the transport never re-POSTs, and an
//!    `input_required` result or a −32021 (missing client capability) answer is UNKNOWN
//!    `mcp_input` with no follow-up call.
//! 6. **The result**, in order: the modern `resultType` rule; `content` an array and
//!    `isError` a boolean (else `mcp_protocol`); every content block of a recognised type
//!    with that type's required fields (else `mcp_protocol`, with `content_block`), checked
//!    before `isError`; `isError: true` → UNHEALTHY `mcp_functional`; a declared
//!    `outputSchema` → `structuredContent` present and accepted (else `mcp_protocol` with
//!    `output_violation` naming the failing path); the expectations ([`expect`]) → UNHEALTHY
//!    `mcp_functional` on the first failure. Otherwise HEALTHY. Content is never printed.
//!
//! Evidence never holds server text: property names in `argument_violation` and
//! `output_violation` are shown only when the configuration holds them (an argument key, a
//! token of an expectation pointer), else as `<property>`.

use std::collections::HashSet;
use std::time::SystemTime;

use serde_json::{Map, Value};

use super::era::{Era, MISSING_CAPABILITY};
use super::expect;
use super::failure::McpError;
use super::inventory::{self, Inventory, Tool};
use super::param_headers;
use super::result_shape;
use super::schema::{self, Segment, Subject};
use super::session::Session;
use super::transport::TransportError;
use crate::config::{McpFunctional, McpOptions};
use crate::contract::Status;
use crate::result::Key;
use crate::result::reason::{Malformed, McpFailure, Reason};
use crate::result::{Fact, Observation, Phrase};
use crate::runtime::Attempt;

/// The method, for evidence.
const METHOD: &str = "tools/call";

/// Runs the functional check against an established session and its inventory, at `now`
/// (for `fresh_within_s`). Failures of the exchange itself come back as an [`McpError`] for the
/// adapter's usual explanation; every other outcome is the observation.
pub fn check(
    session: &mut Session,
    era: Era,
    inventory: &Inventory,
    functional: &McpFunctional,
    attempt: &Attempt,
    now: SystemTime,
) -> Result<Observation, McpError> {
    let Some(tool) = find(inventory, &functional.tool) else {
        return Ok(missing(inventory, &functional.tool));
    };
    if let Err(why) = gate(tool) {
        return Ok(
            Observation::failed(Status::Misconfigured, Reason::Mcp(McpFailure::Unsafe))
                .with(Key::UnsafeAnnotation, Fact::Word(why)),
        );
    }
    let Ok(arguments) = serde_json::from_str::<Value>(&functional.arguments_json) else {
        // The loader accepts only JSON objects; kept for configurations built elsewhere.
        return Ok(argument_violation(
            Phrase::new().word("arguments_json is not a JSON object"),
        ));
    };
    let known = configured_names(&arguments, functional);
    let shown = |name: &str| known.contains(name);
    if let Err(v) = schema::validate(&tool.input_schema, &arguments) {
        return Ok(argument_violation(v.phrase(Subject::Arguments, &shown)));
    }
    let mut mirrored = Vec::with_capacity(tool.bindings.len());
    for binding in &tool.bindings {
        match param_headers::header_value(&arguments, binding) {
            Ok(Some(value)) => mirrored.push((binding.header.clone(), value)),
            Ok(None) => {}
            Err(param_headers::ArgumentMismatch) => {
                return Ok(argument_violation(unmirrorable(&binding.path, &shown)));
            }
        }
    }
    let members = format!(
        "\"name\":{},\"arguments\":{}",
        Value::String(tool.name.clone()),
        functional.arguments_json
    );
    let reply = match session.request_named(METHOD, &members, era, &tool.name, &mirrored, attempt) {
        Ok(reply) => reply,
        Err(TransportError::Rpc { code, status })
            if era == Era::Modern && code == MISSING_CAPABILITY =>
        {
            let mut o = McpError::Input
                .observe()
                .with(Key::FailedMethod, Fact::Word(METHOD));
            if let Some(status) = status {
                o = o.with(Key::HttpStatus, Fact::Int(i64::from(status)));
            }
            return Ok(o.with(Key::RpcCode, Fact::Int(code)));
        }
        Err(e) => return Err(McpError::from(e)),
    };
    let result = match result_shape::object(&reply.result) {
        Ok(result) => result,
        Err(McpError::Malformed(why)) => return Ok(protocol(why)),
        Err(other) => return Err(other),
    };
    Ok(judge(&result, era, tool, functional, &shown, now))
}

/// The tool named `name` in the inventory, if discovered and kept.
fn find<'a>(inventory: &'a Inventory, name: &str) -> Option<&'a Tool> {
    inventory.tools.as_ref()?.iter().find(|t| t.name == name)
}

/// UNHEALTHY `mcp_required` naming the configured tool (and why it was excluded, if it was).
fn missing(inventory: &Inventory, tool: &str) -> Observation {
    let wanted = McpOptions {
        required_tools: vec![tool.to_owned()],
        ..McpOptions::default()
    };
    let mut o = Observation::failed(Status::Unhealthy, Reason::Mcp(McpFailure::Required));
    inventory::missing(inventory, &wanted).record(&mut o.evidence);
    o
}

/// The annotation gate: `readOnlyHint` must be JSON `true` and `destructiveHint` present and
/// JSON `false`. Returns why not, in our words.
pub fn gate(tool: &Tool) -> Result<(), &'static str> {
    let Some(Value::Object(annotations)) = &tool.annotations else {
        return Err("tool declares no annotations");
    };
    if annotations.get("readOnlyHint") != Some(&Value::Bool(true)) {
        return Err("readOnlyHint is not true");
    }
    match annotations.get("destructiveHint") {
        None => Err("destructiveHint is not declared"),
        Some(Value::Bool(false)) => Ok(()),
        Some(_) => Err("destructiveHint is not false"),
    }
}

/// MISCONFIGURED (no code: the operator's arguments, not the server, are at fault).
fn argument_violation(phrase: Phrase) -> Observation {
    Observation::failed(
        Status::Misconfigured,
        Reason::Mcp(McpFailure::ArgumentsRejected),
    )
    .with(Key::ArgumentViolation, Fact::Phrase(phrase))
}

/// "argument `a.b` cannot be sent in its Mcp-Param header …".
fn unmirrorable(path: &[String], shown: &dyn Fn(&str) -> bool) -> Phrase {
    let path: Vec<Segment> = path.iter().cloned().map(Segment::Property).collect();
    let mut p = Phrase::new().word("argument `");
    p.append(schema::path_phrase(&path, shown));
    p.word(
        "` cannot be sent in the Mcp-Param header its x-mcp-header annotation asks for \
         (a string, a boolean, or an integer within ±(2^53 − 1))",
    )
}

/// Names the configuration holds: every member name in the arguments, at any depth, and
/// every token of the expectation pointers.
fn configured_names(arguments: &Value, functional: &McpFunctional) -> HashSet<String> {
    fn keys(v: &Value, out: &mut HashSet<String>) {
        match v {
            Value::Object(members) => {
                for (k, v) in members {
                    out.insert(k.clone());
                    keys(v, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| keys(v, out)),
            _ => {}
        }
    }
    let mut names = HashSet::new();
    keys(arguments, &mut names);
    let pointers = functional
        .expect
        .json
        .iter()
        .map(|(p, _)| p)
        .chain(functional.expect.fresh_within_s.iter().map(|(p, _)| p));
    for pointer in pointers {
        for token in pointer.split('/').skip(1) {
            names.insert(token.replace("~1", "/").replace("~0", "~"));
        }
    }
    names
}

/// UNHEALTHY `mcp_protocol` for a malformed tool result.
fn protocol(why: Malformed) -> Observation {
    McpError::Malformed(why)
        .observe()
        .with(Key::FailedMethod, Fact::Word(METHOD))
}

/// Judges a `tools/call` result (see the module documentation for the order).
fn judge(
    result: &Map<String, Value>,
    era: Era,
    tool: &Tool,
    functional: &McpFunctional,
    shown: &dyn Fn(&str) -> bool,
    now: SystemTime,
) -> Observation {
    if era == Era::Modern {
        match result_shape::check_result_type(result) {
            Ok(()) => {}
            Err(McpError::Malformed(why)) => return protocol(why),
            Err(other) => return other.observe().with(Key::FailedMethod, Fact::Word(METHOD)),
        }
    }
    let Some(Value::Array(blocks)) = result.get("content") else {
        return protocol(Malformed::Result("tool result content is not an array"));
    };
    let is_error = match result.get("isError") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return protocol(Malformed::Result("tool result isError is not a boolean")),
    };
    let count = Fact::Int(i64::try_from(blocks.len()).unwrap_or(i64::MAX));
    for (i, block) in blocks.iter().enumerate() {
        if let Err(why) = content_block(block) {
            return protocol(Malformed::Result(why)).with(
                Key::ContentBlock,
                Fact::Int(i64::try_from(i).unwrap_or(i64::MAX)),
            );
        }
    }
    if is_error {
        return Observation::failed(Status::Unhealthy, Reason::Mcp(McpFailure::ToolError))
            .with(Key::IsError, Fact::Bool(true))
            .with(Key::ContentBlocks, count);
    }
    let structured = result.get("structuredContent").filter(|v| !v.is_null());
    if let Some(output_schema) = &tool.output_schema {
        let Some(structured) = structured else {
            return protocol(Malformed::Result(
                "structuredContent is missing although the tool declares an outputSchema",
            ));
        };
        if let Err(v) = schema::validate(output_schema, structured) {
            return protocol(Malformed::Result(
                "structuredContent does not match the tool's outputSchema",
            ))
            .with(
                Key::OutputViolation,
                Fact::Phrase(v.phrase(Subject::StructuredContent, shown)),
            );
        }
    }
    let texts: Vec<&str> = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    let outcome = expect::check(&functional.expect, structured, &texts, now);
    let mut o = if outcome.failed.is_some() {
        Observation::failed(Status::Unhealthy, Reason::Mcp(McpFailure::Expectation))
    } else {
        Observation::healthy()
    };
    o.evidence.set(Key::ContentBlocks, count);
    if tool.output_schema.is_some() {
        o.evidence.set(Key::OutputSchemaChecked, Fact::Bool(true));
    }
    outcome.record(&mut o.evidence);
    o
}

/// Checks one content block: a non-null object with a string `type` that we recognise, and
/// the required string fields of that type (empty strings and extra fields are fine). An
/// embedded `resource` needs an object with a string `uri` and a string `text` or `blob`; its
/// `mimeType`, if present, must be a string.
pub fn content_block(block: &Value) -> Result<(), &'static str> {
    let Value::Object(block) = block else {
        return Err("content block is not an object");
    };
    let has = |map: &Map<String, Value>, key: &str| map.get(key).is_some_and(Value::is_string);
    let required: &[(&str, &'static str)] = match block.get("type") {
        Some(Value::String(t)) => match t.as_str() {
            "text" => &[("text", "text block lacks a string text")],
            "image" => &[
                ("data", "image block lacks a string data"),
                ("mimeType", "image block lacks a string mimeType"),
            ],
            "audio" => &[
                ("data", "audio block lacks a string data"),
                ("mimeType", "audio block lacks a string mimeType"),
            ],
            "resource_link" => &[
                ("uri", "resource_link block lacks a string uri"),
                ("name", "resource_link block lacks a string name"),
            ],
            "resource" => return embedded_resource(block.get("resource")),
            _ => return Err("content block type is not recognised"),
        },
        _ => return Err("content block type is not a string"),
    };
    for (field, why) in required {
        if !has(block, field) {
            return Err(why);
        }
    }
    Ok(())
}

fn embedded_resource(resource: Option<&Value>) -> Result<(), &'static str> {
    let Some(Value::Object(resource)) = resource else {
        return Err("resource block lacks a resource object");
    };
    let string = |key: &str| resource.get(key).is_some_and(Value::is_string);
    if !string("uri") {
        return Err("embedded resource lacks a string uri");
    }
    if !string("text") && !string("blob") {
        return Err("embedded resource lacks a string text or blob");
    }
    if resource.contains_key("mimeType") && !string("mimeType") {
        return Err("embedded resource mimeType is not a string");
    }
    Ok(())
}

#[cfg(test)]
mod tests;
