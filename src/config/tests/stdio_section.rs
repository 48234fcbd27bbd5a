//! `mcp.stdio`: the command, its arguments, directory and environment, and the rules that
//! tie it to `transport: stdio`.

use super::*;

/// A target on the stdio transport whose `mcp.stdio` is `block`.
fn stdio(block: &str) -> String {
    one(
        "mcp",
        &format!("mcp:\n  transport: stdio\n  stdio: {block}"),
    )
}

#[test]
fn a_stdio_server_keeps_its_command_args_and_env() {
    let m = root(&one(
        "mcp",
        "mcp:\n  transport: stdio\n  stdio:\n    command: npx\n    args: [-y, server]\n    env: {API_KEY: HOST_API_KEY}",
    ))
    .mcp
    .unwrap();
    assert_eq!(m.transport, McpTransport::Stdio);
    let s = m.stdio.unwrap();
    assert_eq!(s.command, "npx");
    assert_eq!(s.args, vec!["-y", "server"]);
    assert_eq!(
        s.env,
        vec![("API_KEY".to_string(), "HOST_API_KEY".to_string())]
    );
    assert_eq!(s.directory, None);
}

#[test]
fn an_empty_directory_and_no_args_are_none() {
    let s = root(&stdio("{command: x, directory: '', args: []}"))
        .mcp
        .unwrap()
        .stdio
        .unwrap();
    assert_eq!(s.directory, None);
    assert!(s.args.is_empty());
}

#[test]
fn the_stdio_transport_and_the_stdio_block_need_each_other() {
    rejects_at(
        &one("mcp", "mcp:\n  transport: stdio"),
        "targets[0].mcp.transport",
        "the stdio transport requires an `mcp.stdio` block with a command",
        7,
    );
    refuses(&[
        (
            one("mcp", "mcp:\n  stdio: {command: x}"),
            "targets[0].mcp.stdio",
            "requires `transport: stdio`",
        ),
        (
            one("mcp", "mcp:\n  transport: http\n  stdio: {command: x}"),
            "targets[0].mcp.stdio",
            "requires `transport: stdio`",
        ),
    ]);
}

#[test]
fn the_stdio_block_is_a_mapping_of_its_own_keys() {
    refuses(&[
        (
            stdio("null"),
            "targets[0].mcp.stdio",
            "expected a mapping with `command`, found null",
        ),
        (
            stdio("{command: x, cwd: /}"),
            "targets[0].mcp.stdio.cwd",
            "unknown key; expected one of command, args, directory, env",
        ),
    ]);
}

#[test]
fn the_command_args_and_directory_are_strings_without_nul() {
    refuses(&[
        (
            stdio("{args: [a]}"),
            "targets[0].mcp.stdio",
            "missing required key `command`",
        ),
        (
            stdio("{command: '  '}"),
            "targets[0].mcp.stdio.command",
            "expected a non-blank command, found a blank string",
        ),
        (
            stdio("{command: \"x\\0y\"}"),
            "targets[0].mcp.stdio.command",
            "expected a non-blank command; NUL is not allowed",
        ),
        (
            stdio(&format!("{{command: x, args: [a, \"{CANARY}\\0\"]}}")),
            "targets[0].mcp.stdio.args[1]",
            "expected a string; NUL is not allowed",
        ),
        (
            stdio("{command: x, args: [1]}"),
            "targets[0].mcp.stdio.args[0]",
            "expected a string, found an integer",
        ),
        (
            stdio("{command: x, directory: \"/a\\0\"}"),
            "targets[0].mcp.stdio.directory",
            "expected a directory path; NUL is not allowed",
        ),
    ]);
}

#[test]
fn env_maps_child_names_to_host_variable_names() {
    let name = "expected the name of an environment variable (not blank, no `=` or NUL)";
    refuses(&[
        (
            stdio("{command: x, env: {'A=B': C}}"),
            "targets[0].mcp.stdio.env[\"A=B\"]",
            name,
        ),
        (
            stdio("{command: x, env: {' ': C}}"),
            "targets[0].mcp.stdio.env.<key #1>",
            name,
        ),
        (
            stdio(&format!("{{command: x, env: {{A: '{CANARY}=1'}}}}")),
            "targets[0].mcp.stdio.env.A",
            "expected the name of an environment variable; `=` and NUL are not allowed",
        ),
        (
            stdio("{command: x, env: {A: ''}}"),
            "targets[0].mcp.stdio.env.A",
            "expected the name of an environment variable, found a blank string",
        ),
        (
            stdio("{command: x, env: {A: null}}"),
            "targets[0].mcp.stdio.env.A",
            "expected the name of an environment variable, found null",
        ),
        (
            stdio("{command: x, env: {A: 1}}"),
            "targets[0].mcp.stdio.env.A",
            "expected the name of an environment variable, found an integer",
        ),
    ]);
}

#[test]
fn a_stdio_server_takes_no_auth_and_no_oauth() {
    let pre = "mcp:\n  transport: stdio\n  stdio:";
    rejects_at(
        &one(
            "mcp",
            &format!("auth: {{bearer_env: T}}\n{pre} {{command: x}}"),
        ),
        "targets[0].auth",
        "cannot be used with the stdio transport; pass credentials with `mcp.stdio.env`",
        6,
    );
    rejects(
        &one(
            "mcp",
            &format!(
                "{pre} {{command: x}}\n  oauth: {{issuer: i, client_id: c, grant: client_credentials, client_secret_env: S}}"
            ),
        ),
        "targets[0].mcp.oauth",
        "cannot be used with the stdio transport",
    );
}
