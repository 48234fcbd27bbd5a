//! Ad-hoc targets for `ping`/`doctor <type> <endpoint>` and `ping`/`doctor mcp --stdio --
//! <command> [args…]`: the same [`Config`] a file would give.

use super::{
    Config, DEFAULT_CONCURRENCY, DEFAULT_RETRY_DELAY_MS, DEFAULT_TIMEOUT_MS, McpOptions,
    McpTransport, Origin, StdioOptions, Target, TargetType,
};

/// Options a person can give on the command line instead of writing a file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct AdhocOptions {
    /// `--timeout <ms>`.
    pub(crate) timeout_ms: Option<u64>,
    /// `--bearer-env <NAME>`.
    pub(crate) bearer_env: Option<String>,
    /// `--stdio -- <command> [args…]`: the command line of an MCP server to start (command
    /// first, never empty when set). Run without a shell, exactly like `mcp.stdio`.
    pub(crate) stdio: Option<Vec<String>>,
}

/// The endpoint naming an ad-hoc stdio target: `stdio://` and the command's file name, with
/// characters other than ASCII letters, digits, `.`, `_` and `-` replaced by `-` (`server`
/// when nothing is left). It only names the target.
pub(crate) fn stdio_endpoint(command: &str) -> String {
    let base = command
        .rsplit('/')
        .find(|part| !part.is_empty())
        .unwrap_or_default();
    let name: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if name.is_empty() {
        "stdio://server".into()
    } else {
        format!("stdio://{name}")
    }
}

/// A one-target configuration named `name` (`ping` or `doctor`) with passive defaults.
pub(crate) fn single(name: &str, kind: TargetType, endpoint: &str, opts: &AdhocOptions) -> Config {
    let target = Target {
        id: None,
        name: name.to_string(),
        kind,
        endpoint: endpoint.to_string(),
        checks: None,
        latency_threshold_ms: None,
        timeout_ms: opts.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS),
        check_timeouts_ms: Vec::new(),
        retries: 0,
        retry_delay_ms: DEFAULT_RETRY_DELAY_MS,
        budget_ms: None,
        bearer_env: opts.bearer_env.clone(),
        dependencies: Vec::new(),
        http: None,
        mcp: opts
            .stdio
            .as_ref()
            .and_then(|argv| stdio_options(kind, argv)),
        allow: None,
        path: "targets[0]".into(),
        origin: Origin::CommandLine,
    };
    Config {
        unusable_endpoint: None,
        concurrency: DEFAULT_CONCURRENCY,
        nodes: vec![target],
        roots: vec![0],
        deadline: None,
        modules: Vec::new(),
    }
}

/// The `mcp` section of an ad-hoc stdio target (`None` for other types or an empty command).
fn stdio_options(kind: TargetType, argv: &[String]) -> Option<McpOptions> {
    let (command, args) = argv.split_first()?;
    (kind == TargetType::Mcp).then(|| McpOptions {
        transport: McpTransport::Stdio,
        stdio: Some(StdioOptions {
            command: command.clone(),
            args: args.to_vec(),
            directory: None,
            env: Vec::new(),
        }),
        ..McpOptions::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdio_endpoints_name_the_command() {
        assert_eq!(stdio_endpoint("mcp-server-time"), "stdio://mcp-server-time");
        assert_eq!(stdio_endpoint("/usr/bin/python3.12"), "stdio://python3.12");
        assert_eq!(stdio_endpoint("./bin/my server"), "stdio://my-server");
        assert_eq!(stdio_endpoint("dir/"), "stdio://dir");
        assert_eq!(stdio_endpoint("/"), "stdio://server");
        assert_eq!(stdio_endpoint("sérveur"), "stdio://s-rveur");
    }

    #[test]
    fn a_stdio_target_is_a_one_target_config() {
        let argv = vec!["uvx".to_string(), "mcp-server-time".into(), "--x".into()];
        let opts = AdhocOptions {
            timeout_ms: Some(900),
            bearer_env: None,
            stdio: Some(argv),
        };
        let c = single("ping", TargetType::Mcp, &stdio_endpoint("uvx"), &opts);
        assert_eq!(c.nodes.len(), 1);
        let t = &c.nodes[0];
        assert_eq!(
            (t.name.as_str(), t.endpoint.as_str()),
            ("ping", "stdio://uvx")
        );
        assert_eq!(t.timeout_ms, 900);
        let mcp = t.mcp.as_ref().expect("mcp section");
        assert_eq!(mcp.transport, McpTransport::Stdio);
        let stdio = mcp.stdio.as_ref().expect("stdio section");
        assert_eq!(stdio.command, "uvx");
        assert_eq!(stdio.args, ["mcp-server-time", "--x"]);
        assert!(stdio.directory.is_none() && stdio.env.is_empty());
        assert!(t.env_refs().is_empty());
    }
}
