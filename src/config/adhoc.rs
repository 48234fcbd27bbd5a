//! Ad-hoc targets for `ping`/`doctor <type> <endpoint>`: the same [`Config`] a file would give.

use super::{
    Config, DEFAULT_CONCURRENCY, DEFAULT_RETRY_DELAY_MS, DEFAULT_TIMEOUT_MS, Target, TargetType,
};

/// Options a person can give on the command line instead of writing a file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AdhocOptions {
    /// `--timeout <ms>`.
    pub timeout_ms: Option<u64>,
    /// `--bearer-env <NAME>`.
    pub bearer_env: Option<String>,
}

/// A one-target configuration named `name` (`ping` or `doctor`) with passive defaults.
pub fn single(name: &str, kind: TargetType, endpoint: &str, opts: &AdhocOptions) -> Config {
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
        mcp: None,
        path: "targets[0]".into(),
    };
    Config {
        concurrency: DEFAULT_CONCURRENCY,
        nodes: vec![target],
        roots: vec![0],
    }
}
