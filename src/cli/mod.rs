//! Command line: arguments → `Command`, and the usage text, both from one flag table.
//!
//! The data flows in two steps, after ripgrep: `parse` runs the lexopt loop, where each
//! flag's `update` records and validates its value into `LowArgs` (as typed, no files, no
//! environment), then dispatches on the verb to a `Command`. Reading the configuration and
//! the environment happens after parsing, in `lib.rs`. Nothing here knows how results are
//! rendered: `--format` is the contract's [`Format`], which the output layer renders. Only
//! [`UsageError`] is public, as part of the crate's error type.

mod args;
mod defs;
pub(crate) mod help;
mod parse;
pub mod reference;

use std::path::PathBuf;

use crate::config::adhoc::AdhocOptions;
use crate::contract::{Format, TargetType};

pub(crate) use args::{ColorChoice, TerminalEnv};
pub(crate) use parse::parse;

/// What the user asked for, as typed (no files read, no environment consulted).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Command {
    /// Usage text, optionally for one verb.
    Help(Option<String>),
    /// `version`.
    Version,
    /// `validate <config.yaml>`: load only.
    Validate(ConfigSource),
    /// `ping`, `check` or `doctor`.
    Run(RunArgs),
    /// `serve <config.yaml>`: the AgentHealth Protocol and metrics over HTTP.
    Serve(ServeArgs),
    /// `__complete login-targets <config.yaml>`, for the shell completions: the top-level
    /// targets `login` accepts, one name a line; hidden, never an error.
    LoginTargets(Option<ConfigSource>),
    /// `login <config.yaml> <target>`: OAuth authorization code for one top-level target.
    Login {
        /// The configuration file (or standard input).
        config: ConfigSource,
        /// The top-level target's name.
        target: String,
        /// `--register`: register a client dynamically (RFC 7591) first.
        register: bool,
    },
}

/// Arguments of the running verbs.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RunArgs {
    /// `doctor` adds advice.
    pub(crate) doctor: bool,
    /// What to check.
    pub(crate) source: Source,
    /// Output format.
    pub(crate) format: Format,
    /// Colour choice.
    pub(crate) color: ColorChoice,
    /// `--deadline`: the run deadline in milliseconds, replacing the file's `deadline_ms`.
    pub(crate) deadline_ms: Option<u64>,
    /// `--quiet`: write nothing, only the exit code.
    pub(crate) quiet: bool,
    /// `--oauth-details` (doctor): ask each OAuth-protected MCP server what it publishes and
    /// print the `mcp.oauth` block to paste.
    pub(crate) oauth_details: bool,
}

/// Where a configuration is read from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ConfigSource {
    /// A file.
    Path(PathBuf),
    /// Standard input (`-`).
    Stdin,
}

impl ConfigSource {
    /// `-` is standard input; anything else a path.
    pub(crate) fn from_arg(arg: &str) -> ConfigSource {
        if arg == "-" {
            ConfigSource::Stdin
        } else {
            ConfigSource::Path(PathBuf::from(arg))
        }
    }
}

/// Arguments of `serve`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ServeArgs {
    /// The configuration file (or standard input).
    pub(crate) config: ConfigSource,
    /// `--listen` (default 127.0.0.1:8080).
    pub(crate) listen: std::net::SocketAddr,
    /// `--token-env`: the variable holding the token of the detailed paths.
    pub(crate) token_env: Option<String>,
    /// `--interval-ms`: the pause after each run, when not the default.
    pub(crate) interval_ms: Option<u64>,
    /// `--probe-concurrency`: `/probe` runs at once, when not the default.
    pub(crate) probe_concurrency: Option<u64>,
    /// `--deadline`: each run's deadline in milliseconds, replacing the file's `deadline_ms`.
    pub(crate) deadline_ms: Option<u64>,
}

/// Where the targets come from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Source {
    /// A configuration file (or standard input).
    File(ConfigSource),
    /// One ad-hoc target (`ping <type> <endpoint>`, or `ping mcp --stdio -- <command>
    /// [args…]`); named after the verb.
    Adhoc {
        /// `ping` or `doctor`.
        name: &'static str,
        /// Target type.
        kind: TargetType,
        /// Endpoint as typed; `stdio://<command basename>` for the stdio form.
        endpoint: String,
        /// `--timeout`, `--bearer-env`, and the `--stdio` command line.
        options: AdhocOptions,
    },
}

/// A misuse of the command line: one line on stderr, exit 6.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageError(pub(crate) String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
