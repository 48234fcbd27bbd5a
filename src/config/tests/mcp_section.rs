//! The `mcp` section: its defaults, the protocol pin, the transport and the requirements on
//! the inventory. Its `stdio`, `oauth` and `functional` blocks have files of their own.

use super::*;

#[test]
fn an_empty_mcp_section_is_streamable_http_with_nothing_else() {
    let m = root(&one("mcp", "mcp: {}")).mcp.unwrap();
    assert_eq!(m.transport, McpTransport::Http);
    assert!(m.functional.is_none() && m.stdio.is_none() && m.oauth.is_none());
}

#[test]
fn a_pin_and_requirements_are_kept_as_written() {
    let m = root(&one(
        "mcp",
        "mcp:\n  protocol_version: 2025-06-18\n  required_tools: [search]",
    ))
    .mcp
    .unwrap();
    assert_eq!(m.protocol_version.as_deref(), Some("2025-06-18"));
    assert_eq!(m.required_tools, vec!["search"]);
    let m = root(&one("mcp", "mcp: {protocol_version: '2026-07-28'}"))
        .mcp
        .unwrap();
    assert_eq!(m.protocol_version.as_deref(), Some("2026-07-28"));
}

#[test]
fn a_pinned_revision_is_any_non_blank_string() {
    // Upstream makes an unknown revision a load failure; the spec makes it a MISCONFIGURED
    // result at run time, so it loads here.
    let m = root(&one("mcp", "mcp: {protocol_version: '2024-11-05'}"))
        .mcp
        .unwrap();
    assert_eq!(m.protocol_version.as_deref(), Some("2024-11-05"));
    refuses(&[
        (
            one("mcp", "mcp: {protocol_version: ' '}"),
            "targets[0].mcp.protocol_version",
            "expected a protocol revision such as `2025-11-25`, found a blank string",
        ),
        (
            one("mcp", "mcp: {protocol_version: 2025}"),
            "targets[0].mcp.protocol_version",
            "expected a protocol revision such as `2025-11-25`, found an integer",
        ),
    ]);
}

#[test]
fn the_mcp_section_is_a_mapping_of_its_own_keys_on_mcp_targets() {
    refuses(&[
        (
            one("mcp", "mcp: null"),
            "targets[0].mcp",
            "expected a mapping of MCP options, found null",
        ),
        (
            one("mcp", "mcp: {required_tool: [a]}"),
            "targets[0].mcp.required_tool",
            "unknown key; expected one of transport, protocol_version, required_tools, \
             required_resources, required_prompts, functional, stdio, oauth (did you mean \
             `required_tools`?)",
        ),
        (
            one("http", "mcp: {}"),
            "targets[0].mcp",
            "`mcp` options are only allowed on mcp targets",
        ),
    ]);
}

#[test]
fn the_transport_is_http_or_stdio() {
    refuses(&[
        (
            one("mcp", &format!("mcp: {{transport: {CANARY}}}")),
            "targets[0].mcp.transport",
            "expected `http` or `stdio`",
        ),
        (
            one("mcp", "mcp: {transport: null}"),
            "targets[0].mcp.transport",
            "expected `http` or `stdio`, found null",
        ),
    ]);
    assert_eq!(
        root(&one("mcp", "mcp: {transport: ''}"))
            .mcp
            .unwrap()
            .transport,
        McpTransport::Http
    );
}

#[test]
fn requirements_are_unique_non_blank_names() {
    refuses(&[
        (
            one("mcp", "mcp: {required_tools: [search, search]}"),
            "targets[0].mcp.required_tools[1]",
            "duplicate tool name",
        ),
        (
            one("mcp", "mcp: {required_resources: [' ']}"),
            "targets[0].mcp.required_resources[0]",
            "expected a non-blank resource URI, found a blank string",
        ),
        (
            one("mcp", "mcp: {required_prompts: [a, '']}"),
            "targets[0].mcp.required_prompts[1]",
            "expected a non-blank prompt name, found a blank string",
        ),
        (
            one("mcp", "mcp: {required_tools: [123]}"),
            "targets[0].mcp.required_tools[0]",
            "expected a non-blank tool name, found an integer",
        ),
    ]);
}

#[test]
fn requirements_are_lists_and_need_capability_in_explicit_checks() {
    rejects(
        &one("mcp", "mcp: {required_tools: search}"),
        "targets[0].mcp.required_tools",
        "expected a list of tool names, found a string",
    );
    rejects_at(
        &one(
            "mcp",
            "checks: [reachability]\nmcp:\n  required_tools: [search]",
        ),
        "targets[0].mcp.required_tools",
        "requires `capability` in the explicit `checks`",
        8,
    );
    // Empty lists are no requirement, so explicit checks need not include capability.
    root(&one(
        "mcp",
        "checks: [reachability]\nmcp: {required_tools: []}",
    ));
    let m = root(&one(
        "mcp",
        "checks: [capability]\nmcp: {required_resources: ['file:///a'], required_prompts: [p]}",
    ))
    .mcp
    .unwrap();
    assert_eq!(m.required_resources, vec!["file:///a"]);
    assert_eq!(m.required_prompts, vec!["p"]);
}
