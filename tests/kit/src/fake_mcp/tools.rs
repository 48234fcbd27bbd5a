//! Default inventories (tools, resources, prompts) and what each tool does
//! when called.

use serde_json::{Value, json};
use std::time::Duration;

use super::mcp::{Leg, RpcError};
use super::util::{b64_encode, rfc3339_now};

/// `observed_at` reported by the faulty Memory Core healthcheck: a cached,
/// stale value.
pub const STALE_OBSERVED_AT: &str = "2020-01-01T00:00:00Z";

fn safe() -> Value {
    json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
}

fn tool(name: &str, description: &str, schema: Value) -> Value {
    json!({"name": name, "description": description, "inputSchema": schema, "annotations": safe()})
}

/// Content kinds accepted by the `content` tool's `kind` argument. The ones
/// starting with `bad_` are invalid on purpose (missing or mistyped field).
pub const CONTENT_KINDS: [&str; 15] = [
    "text",
    "empty_text",
    "image",
    "audio",
    "resource_link",
    "resource",
    "resource_blob",
    "bad_text_missing",
    "bad_text_null",
    "bad_image_no_mime",
    "bad_audio_data_number",
    "bad_link_no_name",
    "bad_resource_no_body",
    "bad_resource_mime_null",
    "bad_unknown_type",
];

/// The default tool inventory.
///
/// | name | purpose |
/// |---|---|
/// | `echo` | safe (`readOnlyHint: true`, `destructiveHint: false`), echoes `text` |
/// | `memory_core_healthcheck_faulty` | empty schema, ignores arguments, stale `observed_at` |
/// | `memory_core_healthcheck_fixed` | declares the diagnostic options, fresh `observed_at` |
/// | `header_search` | valid `x-mcp-header` bindings (`Query`, `Region`, nested `Limit`/`Verbose`) |
/// | `header_bad_number`, `header_bad_name`, `header_bad_duplicate`, `header_bad_unreachable`, `header_bad_root` | invalid `x-mcp-header` annotations |
/// | `structured` | has an `outputSchema`; `{"mismatch":true}` returns non-conforming `structuredContent` |
/// | `delete_everything` | destructive (`readOnlyHint: false`, `destructiveHint: true`) |
/// | `unannotated` | no annotations at all |
/// | `fails` | returns `isError: true` |
/// | `content_all` | one block of every content type |
/// | `content` | one block of `kind` (see [`CONTENT_KINDS`]) |
/// | `needs_input` | modern: `resultType: input_required`; legacy: `isError` |
/// | `needs_sampling` | modern: `-32021` unless the client declares `sampling` |
/// | `slow` | waits `ms` milliseconds (default 1000) |
pub fn default_tools() -> Vec<Value> {
    vec![
        json!({
            "name": "echo",
            "title": "Echo",
            "description": "Returns its text argument.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
            "annotations": safe(),
        }),
        tool(
            "memory_core_healthcheck_faulty",
            "Memory Core healthcheck as deployed: empty schema, ignores arguments, cached payload.",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        ),
        tool(
            "memory_core_healthcheck_fixed",
            "Memory Core healthcheck exposing its diagnostic options.",
            json!({
                "type": "object",
                "properties": {
                    "freshObservability": {"type": "boolean"},
                    "chromaProbeTimeoutMs": {"type": "integer", "minimum": 0},
                    "embeddingWriteCanaryTimeoutMs": {"type": "integer", "minimum": 0}
                },
                "additionalProperties": false
            }),
        ),
        tool(
            "header_search",
            "Search with arguments mirrored into Mcp-Param-* headers.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "x-mcp-header": "Query"},
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "options": {
                        "type": "object",
                        "properties": {
                            "limit": {"type": "integer", "x-mcp-header": "Limit"},
                            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"}
                        }
                    }
                }
            }),
        ),
        tool(
            "header_bad_number",
            "Invalid: x-mcp-header on a number property.",
            json!({"type": "object", "properties": {"ratio": {"type": "number", "x-mcp-header": "Ratio"}}}),
        ),
        tool(
            "header_bad_name",
            "Invalid: x-mcp-header value is not an HTTP token.",
            json!({"type": "object", "properties": {"q": {"type": "string", "x-mcp-header": "bad name"}}}),
        ),
        tool(
            "header_bad_duplicate",
            "Invalid: two x-mcp-header names equal ignoring case.",
            json!({"type": "object", "properties": {
                "a": {"type": "string", "x-mcp-header": "Name"},
                "b": {"type": "string", "x-mcp-header": "name"}
            }}),
        ),
        tool(
            "header_bad_unreachable",
            "Invalid: x-mcp-header inside anyOf.",
            json!({"type": "object", "anyOf": [
                {"type": "object", "properties": {"q": {"type": "string", "x-mcp-header": "Q"}}}
            ]}),
        ),
        tool(
            "header_bad_root",
            "Invalid: x-mcp-header on the root schema.",
            json!({"type": "object", "x-mcp-header": "Root", "properties": {}}),
        ),
        json!({
            "name": "structured",
            "description": "Returns structuredContent matching its outputSchema.",
            "inputSchema": {"type": "object", "properties": {"mismatch": {"type": "boolean"}}},
            "outputSchema": {
                "type": "object",
                "properties": {"ok": {"type": "boolean"}, "count": {"type": "integer"}},
                "required": ["ok", "count"]
            },
            "annotations": safe(),
        }),
        json!({
            "name": "delete_everything",
            "description": "Destructive (but fake).",
            "inputSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}},
            "annotations": {"readOnlyHint": false, "destructiveHint": true},
        }),
        json!({
            "name": "unannotated",
            "description": "No annotations at all.",
            "inputSchema": {"type": "object"},
        }),
        tool(
            "fails",
            "Always returns isError: true.",
            json!({"type": "object"}),
        ),
        tool(
            "content_all",
            "One content block of every type.",
            json!({"type": "object"}),
        ),
        tool(
            "content",
            "One content block of the requested kind (bad_* kinds are invalid on purpose).",
            json!({
                "type": "object",
                "properties": {"kind": {"type": "string", "enum": CONTENT_KINDS}},
                "required": ["kind"]
            }),
        ),
        tool(
            "needs_input",
            "Needs client input (input_required).",
            json!({"type": "object"}),
        ),
        tool(
            "needs_sampling",
            "Needs the sampling client capability.",
            json!({"type": "object"}),
        ),
        tool(
            "slow",
            "Waits `ms` milliseconds before answering.",
            json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}}}),
        ),
    ]
}

/// The default resources: `health://ready` and `mem://note/1`.
pub fn default_resources() -> Vec<Value> {
    vec![
        json!({"uri": "health://ready", "name": "ready", "title": "Readiness", "mimeType": "text/plain"}),
        json!({"uri": "mem://note/1", "name": "note-1", "mimeType": "text/markdown", "size": 12}),
    ]
}

/// The default prompts: `summary` (optional `topic` argument).
pub fn default_prompts() -> Vec<Value> {
    vec![json!({
        "name": "summary",
        "title": "Summarise",
        "description": "Summarise a topic.",
        "arguments": [{"name": "topic", "description": "What to summarise", "required": false}]
    })]
}

/// A synthetic list entry (for `Pages` / `Entries` / padding faults).
pub(super) fn synthetic(kind: &str, i: usize) -> Value {
    match kind {
        "resources" => {
            json!({"uri": format!("synthetic://resource/{i}"), "name": format!("resource_{i}")})
        }
        "prompts" => json!({"name": format!("prompt_{i}")}),
        "resourceTemplates" => {
            json!({"uriTemplate": format!("synthetic://t/{i}/{{id}}"), "name": format!("template_{i}")})
        }
        _ => json!({"name": format!("tool_{i}"), "inputSchema": {"type": "object"}}),
    }
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

fn ok(content: Vec<Value>) -> Result<Value, RpcError> {
    Ok(json!({"content": content, "isError": false}))
}

/// A 1×1 PNG.
const PNG_1X1: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

fn wav_silence() -> String {
    // 44-byte RIFF/WAVE header with an empty data chunk (8 kHz, 8-bit mono).
    let mut w = Vec::with_capacity(44);
    w.extend_from_slice(b"RIFF");
    w.extend_from_slice(&36u32.to_le_bytes());
    w.extend_from_slice(b"WAVEfmt ");
    w.extend_from_slice(&16u32.to_le_bytes());
    w.extend_from_slice(&1u16.to_le_bytes());
    w.extend_from_slice(&1u16.to_le_bytes());
    w.extend_from_slice(&8000u32.to_le_bytes());
    w.extend_from_slice(&8000u32.to_le_bytes());
    w.extend_from_slice(&1u16.to_le_bytes());
    w.extend_from_slice(&8u16.to_le_bytes());
    w.extend_from_slice(b"data");
    w.extend_from_slice(&0u32.to_le_bytes());
    b64_encode(&w)
}

fn content_block(kind: &str) -> Option<Value> {
    Some(match kind {
        "text" => text("hello from the fake"),
        "empty_text" => text(""),
        "image" => json!({"type": "image", "data": PNG_1X1, "mimeType": "image/png"}),
        "audio" => json!({"type": "audio", "data": wav_silence(), "mimeType": "audio/wav"}),
        "resource_link" => {
            json!({"type": "resource_link", "uri": "mem://note/1", "name": "note-1", "mimeType": "text/markdown"})
        }
        "resource" => {
            json!({"type": "resource", "resource": {"uri": "mem://note/1", "mimeType": "text/markdown", "text": "# note"}})
        }
        "resource_blob" => {
            json!({"type": "resource", "resource": {"uri": "mem://blob/1", "mimeType": "application/octet-stream", "blob": "AAEC"}})
        }
        "bad_text_missing" => json!({"type": "text"}),
        "bad_text_null" => json!({"type": "text", "text": null}),
        "bad_image_no_mime" => json!({"type": "image", "data": PNG_1X1}),
        "bad_audio_data_number" => json!({"type": "audio", "data": 3, "mimeType": "audio/wav"}),
        "bad_link_no_name" => json!({"type": "resource_link", "uri": "mem://note/1"}),
        "bad_resource_no_body" => json!({"type": "resource", "resource": {"uri": "mem://note/1"}}),
        "bad_resource_mime_null" => {
            json!({"type": "resource", "resource": {"uri": "mem://note/1", "text": "x", "mimeType": null}})
        }
        "bad_unknown_type" => json!({"type": "unknown"}),
        _ => return None,
    })
}

/// Runs tool `name` from the `inventory`.
///
/// `wait` sleeps interruptibly (returns `true` if the server is stopping).
pub(super) fn call_tool(
    inventory: &[Value],
    params: &Value,
    leg: Leg,
    client_caps: Option<&Value>,
    wait: &dyn Fn(Duration) -> bool,
) -> Result<Value, RpcError> {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Err(RpcError::new(
            -32602,
            "tools/call requires a string params.name",
        ));
    };
    if !inventory
        .iter()
        .any(|t| t.get("name").and_then(Value::as_str) == Some(name))
    {
        return Err(RpcError::new(-32602, format!("Unknown tool: {name}")));
    }
    let empty = json!({});
    let args = match params.get("arguments") {
        None | Some(Value::Null) => &empty,
        Some(v @ Value::Object(_)) => v,
        Some(_) => {
            return Err(RpcError::new(
                -32602,
                "tools/call arguments must be an object",
            ));
        }
    };
    match name {
        "echo" => match args.get("text") {
            None => ok(vec![text("")]),
            Some(Value::String(s)) => ok(vec![text(s)]),
            Some(_) => Ok(json!({"content": [text("text must be a string")], "isError": true})),
        },
        "memory_core_healthcheck_faulty" => Ok(json!({
            "content": [text("healthy")],
            "structuredContent": {
                "status": "healthy",
                "observed_at": STALE_OBSERVED_AT,
                "cached": true,
                "memoryCount": 0
            },
            "isError": false
        })),
        "memory_core_healthcheck_fixed" => healthcheck_fixed(args),
        "structured" => {
            let sc = if args.get("mismatch") == Some(&Value::Bool(true)) {
                json!({"ok": "yes"})
            } else {
                json!({"ok": true, "count": 3})
            };
            Ok(
                json!({"content": [text(&sc.to_string())], "structuredContent": sc, "isError": false}),
            )
        }
        "delete_everything" => ok(vec![text("nothing was deleted (this is a fake)")]),
        "fails" => Ok(json!({"content": [text("the tool failed on purpose")], "isError": true})),
        "content_all" => ok(["text", "image", "audio", "resource_link", "resource"]
            .iter()
            .filter_map(|k| content_block(k))
            .collect()),
        "content" => {
            let kind = args.get("kind").and_then(Value::as_str).unwrap_or("text");
            match content_block(kind) {
                Some(block) => ok(vec![block]),
                None => Err(RpcError::new(
                    -32602,
                    format!("unknown content kind: {kind}"),
                )),
            }
        }
        "needs_input" => match leg {
            Leg::Modern
                if params.get("requestState").is_some()
                    && params.get("inputResponses").is_some() =>
            {
                ok(vec![text("input received")])
            }
            Leg::Modern => Ok(json!({
                "resultType": "input_required",
                "inputRequests": {"confirm": {"method": "elicitation/create", "params": {
                    "mode": "form",
                    "message": "Confirm the fake operation?",
                    "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
                }}},
                "requestState": "fake-request-state-1"
            })),
            Leg::Legacy => {
                Ok(json!({"content": [text("this tool needs interactive input")], "isError": true}))
            }
        },
        "needs_sampling" => {
            let declared = client_caps.and_then(|c| c.get("sampling")).is_some();
            if leg == Leg::Modern && !declared {
                return Err(
                    RpcError::new(-32021, "Missing required client capability: sampling")
                        .with_data(json!({"requiredCapabilities": {"sampling": {}}})),
                );
            }
            ok(vec![text("sampling is available")])
        }
        "slow" => {
            let ms = args
                .get("ms")
                .and_then(Value::as_u64)
                .unwrap_or(1000)
                .min(600_000);
            if wait(Duration::from_millis(ms)) {
                return Err(RpcError::new(-32603, "server is stopping"));
            }
            ok(vec![text(&format!("waited {ms} ms"))])
        }
        other => ok(vec![text(&format!("{other}: ok"))]),
    }
}

fn healthcheck_fixed(args: &Value) -> Result<Value, RpcError> {
    let mut problems = Vec::new();
    if let Some(map) = args.as_object() {
        for key in map.keys() {
            if !matches!(
                key.as_str(),
                "freshObservability" | "chromaProbeTimeoutMs" | "embeddingWriteCanaryTimeoutMs"
            ) {
                problems.push(format!("unknown option {key}"));
            }
        }
    }
    let fresh = match args.get("freshObservability") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            problems.push("freshObservability must be a boolean".into());
            true
        }
    };
    let mut int = |key: &str, default: u64| match args.get(key) {
        None => default,
        Some(v) => v.as_u64().unwrap_or_else(|| {
            problems.push(format!("{key} must be a non-negative integer"));
            default
        }),
    };
    let chroma = int("chromaProbeTimeoutMs", 1500);
    let canary = int("embeddingWriteCanaryTimeoutMs", 5000);
    if !problems.is_empty() {
        return Ok(json!({"content": [text(&problems.join("; "))], "isError": true}));
    }
    let observed_at = if fresh {
        rfc3339_now()
    } else {
        STALE_OBSERVED_AT.to_string()
    };
    Ok(json!({
        "content": [text("healthy")],
        "structuredContent": {
            "status": "healthy",
            "observed_at": observed_at,
            "cached": !fresh,
            "options": {
                "freshObservability": fresh,
                "chromaProbeTimeoutMs": chroma,
                "embeddingWriteCanaryTimeoutMs": canary
            }
        },
        "isError": false
    }))
}

/// `resources/read`.
pub(super) fn read_resource(
    inventory: &[Value],
    params: &Value,
    leg: Leg,
) -> Result<Value, RpcError> {
    let Some(uri) = params.get("uri").and_then(Value::as_str) else {
        return Err(RpcError::new(
            -32602,
            "resources/read requires a string params.uri",
        ));
    };
    match inventory
        .iter()
        .find(|r| r.get("uri").and_then(Value::as_str) == Some(uri))
    {
        Some(r) => {
            let mime = r
                .get("mimeType")
                .and_then(Value::as_str)
                .unwrap_or("text/plain");
            Ok(
                json!({"contents": [{"uri": uri, "mimeType": mime, "text": format!("contents of {uri}")}]}),
            )
        }
        None => {
            let code = if leg == Leg::Modern { -32602 } else { -32002 };
            Err(RpcError::new(code, "Resource not found").with_data(json!({"uri": uri})))
        }
    }
}

/// `prompts/get`.
pub(super) fn get_prompt(inventory: &[Value], params: &Value) -> Result<Value, RpcError> {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Err(RpcError::new(
            -32602,
            "prompts/get requires a string params.name",
        ));
    };
    if !inventory
        .iter()
        .any(|p| p.get("name").and_then(Value::as_str) == Some(name))
    {
        return Err(RpcError::new(-32602, format!("Unknown prompt: {name}")));
    }
    let topic = params
        .pointer("/arguments/topic")
        .and_then(Value::as_str)
        .unwrap_or("the fake server");
    Ok(json!({
        "description": format!("prompt {name}"),
        "messages": [{"role": "user", "content": {"type": "text", "text": format!("Summarise {topic}.")}}]
    }))
}

/// The default resource template list.
pub(super) fn default_templates() -> Vec<Value> {
    vec![json!({"uriTemplate": "mem://note/{id}", "name": "note", "mimeType": "text/markdown"})]
}
