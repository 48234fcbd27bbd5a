//! The validated configuration: what a run will check.
//!
//! [`load_file`] turns YAML into these types (`yaml.rs` → one reader per section in
//! `section/` → `graph.rs`), rejecting anything malformed with a [`LoadError`] that names the
//! key path (exit 6). `adhoc.rs` builds the same types for `ping`/`doctor` without a file.
//! The bounds and name rules both apply live in `rules.rs`, which the command line reuses.
//! Once a [`Config`] exists it is known to be well-formed; problems that depend on the
//! environment (a missing credential, an endpoint the adapter cannot use) are reported later
//! as MISCONFIGURED results, never as load errors. An endpoint that cannot work on any host
//! is found while loading all the same ([`Config::unusable_endpoint`]), for `validate`.

pub(crate) mod adhoc;
mod graph;
mod load;
mod prescan;
mod reader;
pub(crate) mod rules;
mod section;
mod yaml;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use crate::contract::{
    AllowList, AuthMethod, Bound, Dimension, OAuthGrant, Relationship, TargetType,
};

pub(crate) use load::load_str;
pub use load::{LoadError, load_file, load_stdin};

/// Default per-attempt deadline.
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 5_000;
/// Default delay between retries.
pub(crate) const DEFAULT_RETRY_DELAY_MS: u64 = 100;
/// Default bound on in-flight targets.
pub(crate) const DEFAULT_CONCURRENCY: usize = 16;
/// Default body limit of the HTTP functional check.
pub(crate) const DEFAULT_MAX_BODY_BYTES: u64 = 65_536;

/// A whole configuration: the targets as a graph of nodes.
#[derive(Clone, Debug)]
pub struct Config {
    /// Bound on simultaneously running nodes (1–256).
    pub concurrency: usize,
    /// Every node, each run at most once per run. Top-level targets and inline dependencies
    /// each get their own node; `ref` entries point at an existing node.
    pub nodes: Vec<Target>,
    /// The top-level targets, in declaration order (indices into `nodes`).
    pub roots: Vec<NodeId>,
    /// The run deadline: `deadline_ms`, or `--deadline`, which replaces it.
    pub deadline: Option<RunDeadline>,
    /// Target templates that `serve`'s `/probe?module=…&target=URL` checks at the URL it is
    /// given, in declaration order.
    pub modules: Vec<Module>,
    /// The first endpoint (in declaration order) that cannot work whatever the host — it does
    /// not parse, or its scheme is one the target's type cannot use — with its key path and
    /// line. `validate` reports it (exit 6); a check reports it as a MISCONFIGURED result
    /// (exit 4), as the Go reference does, so it is no load error.
    pub unusable_endpoint: Option<LoadError>,
}

/// A `modules:` entry: a target without an endpoint (the probe's URL becomes it) and the
/// allow list that URL must pass.
#[derive(Clone, Debug)]
pub struct Module {
    /// The module's name (the `module` parameter, and the probed target's name).
    pub name: String,
    /// The target a probe checks, its endpoint empty and its `allow` set.
    pub template: Target,
}

impl Config {
    /// The configuration that runs only `roots` (and what they depend on): the nodes they
    /// reach, in their order, with edges renumbered. The environment of a plan built from
    /// it is read for those nodes alone.
    pub fn subgraph(&self, roots: &[NodeId]) -> Config {
        let mut old_to_new: Vec<Option<NodeId>> = vec![None; self.nodes.len()];
        let mut order: Vec<NodeId> = Vec::new();
        let mut stack: Vec<NodeId> = roots.iter().rev().copied().collect();
        while let Some(n) = stack.pop() {
            if n >= self.nodes.len() || old_to_new[n].is_some() {
                continue;
            }
            old_to_new[n] = Some(order.len());
            order.push(n);
            stack.extend(self.nodes[n].dependencies.iter().rev().map(|e| e.node));
        }
        let nodes = order
            .iter()
            .map(|&n| {
                let mut node = self.nodes[n].clone();
                for edge in &mut node.dependencies {
                    edge.node = old_to_new[edge.node].unwrap_or(0);
                }
                node
            })
            .collect();
        Config {
            concurrency: self.concurrency,
            nodes,
            roots: roots
                .iter()
                .filter_map(|&r| old_to_new.get(r).copied().flatten())
                .collect(),
            deadline: self.deadline,
            modules: Vec::new(),
            unusable_endpoint: None,
        }
    }

    /// The configuration that runs `module`'s template at `endpoint`.
    pub fn of_module(&self, module: &Module, endpoint: &str) -> Config {
        let mut target = module.template.clone();
        target.endpoint = endpoint.to_string();
        Config {
            concurrency: self.concurrency,
            nodes: vec![target],
            roots: vec![0],
            deadline: self.deadline,
            modules: Vec::new(),
            unusable_endpoint: None,
        }
    }
}

/// How long a whole run may take — checks, retries, dependencies and cleanup — and where
/// that was said. The engine ends everything by it (and by the 60 s cap on every run).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunDeadline {
    /// Milliseconds from the start of the run (1–60000).
    pub ms: u64,
    /// Where it was said, as the bound a deadline it sets reports: `deadline_ms` in the file,
    /// `--deadline` on the command line, or a scraper's timeout (`/probe`).
    pub bound: Bound,
}

/// Index of a node in [`Config::nodes`].
pub type NodeId = usize;

/// One target: something to check.
#[derive(Clone, Debug)]
pub struct Target {
    /// Optional graph id (`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`, unique).
    pub id: Option<String>,
    /// Display name.
    pub name: String,
    /// The target type; selects the adapter.
    pub kind: TargetType,
    /// The endpoint, as written (validated by the adapter's configuration check).
    pub endpoint: String,
    /// Requested dimensions; `None` means the adapter's passive defaults. `Some(vec![])` is
    /// meaningful: no checks, so the result is UNKNOWN. Repeats in the file are tolerated and
    /// dropped here (first occurrence kept).
    pub checks: Option<Vec<Dimension>>,
    /// Latency threshold in ms (`thresholds.latency_ms`).
    pub latency_threshold_ms: Option<f64>,
    /// Per-attempt deadline.
    pub timeout_ms: u64,
    /// Per-dimension deadline overrides.
    pub check_timeouts_ms: Vec<(Dimension, u64)>,
    /// Extra attempts for passive checks that got no response.
    pub retries: u32,
    /// Delay between attempts.
    pub retry_delay_ms: u64,
    /// Bound on this node's own checks, retries and queue waits.
    pub budget_ms: Option<u64>,
    /// Name of the env var holding a bearer token (`auth.bearer_env`).
    pub bearer_env: Option<String>,
    /// Edges to dependencies, in declaration order.
    pub dependencies: Vec<Edge>,
    /// Options of the `http` family.
    pub http: Option<HttpOptions>,
    /// Options of `mcp` targets.
    pub mcp: Option<McpOptions>,
    /// What the target may reach, for a `/probe` module's target (`None`: anything, as
    /// configured).
    pub allow: Option<Arc<AllowList>>,
    /// Where the target was declared (`targets[0].dependencies[1]`), for messages.
    pub path: String,
    /// Whether the target came from a file or from the command line (which settings a person
    /// can change: `timeout_ms`, or `--timeout`).
    pub origin: Origin,
}

/// Where a target was declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Origin {
    /// A configuration file.
    #[default]
    File,
    /// `ping`/`doctor <type> <endpoint>` (or `--stdio -- cmd`).
    CommandLine,
}

impl Target {
    /// The attempt deadline for a dimension, and the setting it comes from: its
    /// `check_timeouts_ms` override, else `timeout_ms` (`--timeout` on the command line).
    pub(crate) fn timeout_for(&self, dim: Dimension) -> (u64, Bound) {
        match self.check_timeouts_ms.iter().find(|(d, _)| *d == dim) {
            Some((_, ms)) => (*ms, Bound::CheckTimeoutMs),
            None if self.origin == Origin::CommandLine => (self.timeout_ms, Bound::TimeoutFlag),
            None => (self.timeout_ms, Bound::TimeoutMs),
        }
    }

    /// Every environment variable this target reads, as (role, name).
    pub(crate) fn env_refs(&self) -> Vec<&str> {
        let mut refs = Vec::new();
        if let Some(b) = &self.bearer_env {
            refs.push(b.as_str());
        }
        if let Some(m) = &self.mcp {
            if let Some(s) = &m.stdio {
                refs.extend(s.env.iter().map(|(_, host)| host.as_str()));
            }
            if let Some(o) = &m.oauth {
                refs.extend(o.client_secret_env.as_deref());
                refs.extend(o.refresh_token_env.as_deref());
            }
        }
        refs
    }
}

/// An edge from a node to a dependency.
#[derive(Clone, Debug)]
pub struct Edge {
    /// The dependency node.
    pub node: NodeId,
    /// Critical edges make the parent UNHEALTHY/UNKNOWN; optional ones only DEGRADED.
    pub critical: bool,
    /// Optional label.
    pub relationship: Option<Relationship>,
}

/// HTTP methods allowed for the passive probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpMethod {
    /// `HEAD`
    Head,
    /// `GET`
    Get,
}

/// The `http` section.
#[derive(Clone, Debug, Default)]
pub struct HttpOptions {
    /// Passive method override.
    pub method: Option<HttpMethod>,
    /// Accepted statuses; `None` means any 2xx.
    pub expected_status: Option<Vec<u16>>,
    /// Required response headers (name as written, exact value).
    pub headers: Vec<(String, String)>,
    /// Text the functional GET body must contain.
    pub body_contains: Option<String>,
    /// Body read limit for the functional check.
    pub max_body_bytes: u64,
}

/// MCP transports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum McpTransport {
    /// Streamable HTTP (the default).
    #[default]
    Http,
    /// A local subprocess speaking newline-delimited JSON-RPC.
    Stdio,
}

/// The `mcp` section.
#[derive(Clone, Debug, Default)]
pub struct McpOptions {
    /// Transport.
    pub transport: McpTransport,
    /// A pinned revision as written; validated by the adapter (MISCONFIGURED when unknown).
    pub protocol_version: Option<String>,
    /// Tool names that must be advertised.
    pub required_tools: Vec<String>,
    /// Resource URIs that must be advertised.
    pub required_resources: Vec<String>,
    /// Prompt names that must be advertised.
    pub required_prompts: Vec<String>,
    /// The opted-in functional probe.
    pub functional: Option<McpFunctional>,
    /// Subprocess settings.
    pub stdio: Option<StdioOptions>,
    /// OAuth token acquisition.
    pub oauth: Option<OAuthOptions>,
}

/// `mcp.functional`.
#[derive(Clone, Debug, Default)]
pub struct McpFunctional {
    /// The tool to call.
    pub tool: String,
    /// The operator's declaration that the call is safe (must be `true`).
    pub safe: bool,
    /// The arguments, exactly as written (a JSON object, ≤ 64 KiB).
    pub arguments_json: String,
    /// Expectations on the result.
    pub expect: McpExpect,
}

/// `mcp.functional.expect`.
#[derive(Clone, Debug, Default)]
pub struct McpExpect {
    /// JSON Pointer → expected JSON value (as canonical JSON text).
    pub json: Vec<(String, serde_json::Value)>,
    /// Text some text block must contain.
    pub text_contains: Option<String>,
    /// JSON Pointer → maximum age in seconds of the RFC 3339 timestamp found there.
    pub fresh_within_s: Vec<(String, f64)>,
}

/// `mcp.stdio`.
#[derive(Clone, Debug, Default)]
pub struct StdioOptions {
    /// Executable (looked up on `PATH` when it has no slash). Never run through a shell.
    pub command: String,
    /// Arguments.
    pub args: Vec<String>,
    /// Working directory.
    pub directory: Option<String>,
    /// Child env name → host env var name.
    pub env: Vec<(String, String)>,
}

/// `mcp.oauth`, as configured (the plan resolves its variables).
#[derive(Clone, Debug)]
pub struct OAuthOptions {
    /// Trusted issuer.
    pub issuer: String,
    /// Pre-registered client id; `None` (grant `authorization_code` only): the client
    /// `agenthealth login --register` registered and saved in the token file.
    pub client_id: Option<String>,
    /// Grant type.
    pub grant: OAuthGrant,
    /// Env var holding the client secret.
    pub client_secret_env: Option<String>,
    /// Env var holding a refresh token.
    pub refresh_token_env: Option<String>,
    /// Token persistence file.
    pub token_file: Option<String>,
    /// Requested scopes.
    pub scopes: Vec<String>,
    /// Loopback callback port for login (0 = ephemeral).
    pub redirect_port: Option<u16>,
    /// How the client authenticates at the token endpoint; `None`: chosen from the
    /// server's metadata.
    pub token_endpoint_auth_method: Option<AuthMethod>,
}
