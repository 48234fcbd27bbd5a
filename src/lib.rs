//! `agenthealth`: can this MCP server, and what it depends on, do its work right now?
//!
//! The data flows one way: `cli` (flags → a command) → `config` (load, validate) → `run_plan`
//! (environment and credentials resolved once) → `engine` (graph, scheduling, deadlines,
//! aggregation; no protocol) → `adapter` (http; mcp with its transports and OAuth) over `net`
//! and `process` → `result` (typed reasons, evidence, the v1 document) → `output` (terminal,
//! json, yaml, line, openmetrics, doctor, one redaction pass); `serve` runs the engine and
//! output in a loop behind its HTTP server. At the bottom, every layer may use the contract's
//! words (`contract`), the text helpers (`text`) and the runtime's machinery of waiting
//! (`runtime`). Imports point the same way; `docs/contributing.md` has the table. This file is
//! the only place that wires the layers together and picks the exit code; `main.rs` only
//! calls [`run`].
//!
//! The public surface is what the binary and the fuzz targets need: [`run`] and
//! [`run_with`] for `main.rs`, [`reference`] (the man page and completions generated from the
//! flag table, for `make dist`), and, hidden, `fuzzing` (every parser of untrusted input, for
//! the fuzz targets in `fuzz/`). The tests go through the binary; the only other doors are
//! hidden ones to the data the documentation tests compare the docs against.

#![deny(unsafe_code)]
#![warn(missing_docs)]

mod adapter;
mod cli;
mod config;
mod contract;
mod engine;
mod error;
mod exit;
#[doc(hidden)]
pub mod fuzzing;
mod login;
mod net;
mod oauth;
mod output;
mod process;
mod result;
mod run_plan;
mod runtime;
mod serve;
mod signals;
mod text;

/// The man page and shell completions, generated from the flag table (`make dist` writes
/// them with `cargo run --example reference`).
pub use cli::reference;

/// The exit-code table ([`exit::CODES`]), for the documentation test that keeps the tables of
/// README.md and docs/output.md equal to it; not an API.
#[doc(hidden)]
pub use exit::CODES as EXIT_CODES;

/// The registry of evidence keys (`EvidenceKey::ALL`, each with its spelling and meaning), for
/// the documentation test that keeps the evidence tables of docs/output.md and docs/mcp.md
/// equal to it; not an API.
#[doc(hidden)]
pub use result::Key as EvidenceKey;

use std::ffi::OsString;
use std::io::{IsTerminal, Write};

use cli::{Command, ConfigSource, RunArgs, ServeArgs, Source, TerminalEnv};
use contract::Format;
use error::Error;
use output::{Redactor, Style};

/// What `version` and `--version` print: the version, then the commit the binary was built
/// from (`unknown` when the build had neither git nor `AGENTHEALTH_COMMIT`; see `build.rs`).
/// Scripts that read the second word get the version, as from the Go reference.
pub const VERSION_LINE: &str = concat!(
    "agenthealth ",
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("AGENTHEALTH_COMMIT"),
    ")\n"
);
/// How the process's stdout was when it started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stdout {
    /// Open: writes go wherever it points.
    Open,
    /// Closed (`>&-`): the runtime put `/dev/null` there, and whatever is written is lost, so
    /// every command that prints is a tool failure (exit 6).
    ClosedAtStart,
}

/// Runs the command line and returns the process exit code.
pub fn run<I>(args: I) -> i32
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    run_with(args, Stdout::Open)
}

/// [`run`], told how stdout was at the start (the binary finds out before `main`).
pub fn run_with<I>(args: I, stdout: Stdout) -> i32
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    STDOUT.with(|s| s.set(stdout));
    let redactor_for_errors = Redactor::default();
    match dispatch(args) {
        Ok(code) => code,
        Err(ToolFailure { error, redactor }) => {
            let redactor = redactor.unwrap_or(redactor_for_errors);
            let line = error.line(&|piece| redactor.apply(piece));
            let _ = writeln!(std::io::stderr().lock(), "{line}");
            exit::TOOL_FAILURE
        }
    }
}

/// A tool failure (exit 6): the error for the one stderr line, and the run's redactor once a
/// run has learned secrets that the line must hide too.
struct ToolFailure {
    error: Error,
    redactor: Option<Redactor>,
}

impl From<Error> for ToolFailure {
    fn from(error: Error) -> ToolFailure {
        ToolFailure {
            error,
            redactor: None,
        }
    }
}

impl ToolFailure {
    /// `error`, its line redacted with the run's `redactor`.
    fn redacted(error: Error, redactor: &Redactor) -> ToolFailure {
        ToolFailure {
            error,
            redactor: Some(redactor.clone()),
        }
    }
}

fn dispatch<I>(args: I) -> Result<i32, ToolFailure>
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    let command = cli::parse(args).map_err(Error::from)?;
    match command {
        Command::Help(verb) => {
            write_stdout(&cli::help::usage(verb.as_deref()))?;
            Ok(0)
        }
        Command::Version => {
            write_stdout(VERSION_LINE)?;
            Ok(0)
        }
        Command::Validate(source) => {
            // What would make a check MISCONFIGURED on any host is a load error here.
            match load(&source, None)?.unusable_endpoint {
                Some(unusable) => Err(Error::Config(unusable).into()),
                None => Ok(0),
            }
        }
        Command::Run(args) => run_checks(args),
        Command::Serve(args) => Ok(serve(args)?),
        Command::LoginTargets(source) => {
            login_targets(source.as_ref());
            Ok(0)
        }
        Command::Login {
            config,
            target,
            register,
        } => {
            let config = load(&config, None)?;
            let cancel = runtime::Cancel::new();
            signals::install(&cancel);
            login::run(config, &target, register, &cancel)?;
            Ok(0)
        }
    }
}

/// `__complete login-targets FILE`: the names of the top-level targets `login` accepts (an
/// `mcp.oauth` section with `grant: authorization_code`), for the shell completions. The
/// strict loader only: no environment is read, so nothing but names (which label metrics,
/// and are no secret) can be printed; any failure prints nothing.
fn login_targets(source: Option<&ConfigSource>) {
    let Some(Ok(config)) = source.map(|s| load(s, Some(2000))) else {
        return;
    };
    let mut out = String::new();
    for target in config.roots.iter().filter_map(|&id| config.nodes.get(id)) {
        let oauth = target.mcp.as_ref().and_then(|m| m.oauth.as_ref());
        if oauth.is_some_and(|o| o.grant == contract::OAuthGrant::AuthorizationCode) {
            out.push_str(&text::clean(&target.name));
            out.push('\n');
        }
    }
    let _ = write_stdout(&out);
}

/// The configuration of a file, or of standard input for `-`. One that streams in (stdin, a
/// pipe, `<(…)`) must arrive within the run deadline (`--deadline`, else the run cap), so a
/// writer that never finishes cannot hold the command.
fn load(source: &ConfigSource, deadline_ms: Option<u64>) -> Result<config::Config, Error> {
    let wait = deadline_ms.map_or(engine::RUN_CAP, std::time::Duration::from_millis);
    match source {
        ConfigSource::Path(path) => config::load_file(path, wait),
        ConfigSource::Stdin => config::load_stdin(wait),
    }
    .map_err(Error::from)
}

fn run_checks(args: RunArgs) -> Result<i32, ToolFailure> {
    let terminal = TerminalEnv::from_env();
    let mut config = match &args.source {
        Source::File(source) => {
            let config = load(source, args.deadline_ms)?;
            if config.roots.is_empty() {
                return Err(Error::Config(config::LoadError::no_targets()).into());
            }
            config
        }
        Source::Adhoc {
            name,
            kind,
            endpoint,
            options,
        } => config::adhoc::single(name, *kind, endpoint, options),
    };
    with_deadline_flag(&mut config, args.deadline_ms);
    let cancel = runtime::Cancel::new();
    signals::install(&cancel);
    let plan = run_plan::RunPlan::from_env(config);
    // The progress line moves the cursor: never on a dumb terminal, never when quiet.
    let progress = output::progress::ProgressLine::stderr(!args.quiet && !terminal.is_dumb());
    let mut doc = engine::run(&plan, &cancel, &|done, total| progress.update(done, total));
    let run = output::metrics::LastRun::of(&doc);
    progress.finish();
    // After the run: the secrets include every token learned during it.
    let secrets = plan.secrets();
    let redactor = Redactor::new(secrets.iter().map(contract::Secret::expose));
    doc.map_strings(&|s| redactor.apply(s), &|id| redactor.apply_to_id(id));
    let on_terminal = std::io::stdout().is_terminal();
    let style = Style {
        color: args.color.enabled(on_terminal, &terminal),
        unicode: args.format == Format::Terminal && locale_is_utf8(),
        width: on_terminal.then(|| terminal.width(stdout_columns())),
    };
    let mut text = output::render(&doc, args.format, style, args.doctor, run)
        .map_err(|why| ToolFailure::redacted(Error::InvalidDocument(why), &redactor))?;
    if args.oauth_details && args.format == Format::Terminal {
        // Opt-in server content, after the advice; its URLs are its point, secrets never.
        text.push_str(&redactor.apply_secrets(&oauth_details(&plan)));
    }
    // `--quiet`: the document was built and validated all the same; only the exit code says.
    if !args.quiet {
        write_stdout(&text).map_err(|e| ToolFailure::redacted(e, &redactor))?;
    }
    Ok(exit::for_status(doc.worst()))
}

/// `doctor --oauth-details`: what each MCP target over HTTP publishes about its OAuth, one
/// target after another, each within its `timeout_ms`; targets that show no sign of OAuth
/// (no metadata, nothing configured) are left out.
fn oauth_details(plan: &run_plan::RunPlan) -> String {
    use std::time::Duration;
    let mut all = Vec::new();
    for planned in &plan.targets {
        let target = &planned.target;
        let http = target
            .mcp
            .as_ref()
            .is_none_or(|m| m.transport == config::McpTransport::Http);
        if target.kind != contract::TargetType::Mcp || !http {
            continue;
        }
        let Ok(endpoint) = net::Endpoint::parse(&target.endpoint) else {
            continue;
        };
        let pinned = match &planned.credential {
            run_plan::Credential::OAuth(s) => Some(s.configured.issuer.as_str()),
            _ => None,
        };
        let deadline = runtime::Deadline::after(
            Duration::from_millis(target.timeout_ms),
            contract::Bound::TimeoutMs,
        );
        let mut client = net::Client::new(net::Reuse::KeepAlive);
        let attempt = runtime::Attempt::new(deadline);
        let found = oauth::details::probe(&mut client, &target.name, &endpoint, pinned, &attempt);
        if pinned.is_some() || !found.issuers.is_empty() || found.named_origin.is_some() {
            all.push(found);
        }
    }
    output::doctor::details::render(&all)
}

/// `serve`: load, resolve the token, then serve until SIGINT/SIGTERM (exit 0).
fn serve(args: ServeArgs) -> Result<i32, Error> {
    let mut config = load(&args.config, args.deadline_ms)?;
    with_deadline_flag(&mut config, args.deadline_ms);
    let token = match &args.token_env {
        Some(name) => {
            // Not UTF-8 is not a token either: lossy text fails the charset check.
            let value = std::env::var_os(name).map(|v| v.to_string_lossy().into_owned());
            Some(serve::token(name, value).map_err(Error::Serve)?)
        }
        None => None,
    };
    let probe_concurrency = args
        .probe_concurrency
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or_else(serve::probe::default_concurrency);
    let options = serve::Options {
        listen: args.listen,
        token,
        interval: serve::interval(args.interval_ms),
        probe_concurrency,
    };
    let cancel = runtime::Cancel::new();
    signals::install(&cancel);
    // One line for the operator's log: where to probe (never a token).
    let announce = |addr: std::net::SocketAddr| {
        let paths = serve::ahp::PATHS.join(" ");
        let _ = writeln!(
            std::io::stderr().lock(),
            "agenthealth: serving AHP v1 on http://{addr} ({paths})"
        );
    };
    serve::run(config, options, &cancel, &announce).map_err(Error::Serve)?;
    Ok(0)
}

/// `--deadline` replaces the file's `deadline_ms` (and names itself in doctor's advice).
fn with_deadline_flag(config: &mut config::Config, ms: Option<u64>) {
    if let Some(ms) = ms {
        config.deadline = Some(config::RunDeadline {
            ms,
            bound: contract::Bound::DeadlineFlag,
        });
    }
}

/// The width of the terminal on stdout, as the kernel knows it (`TIOCGWINSZ`).
#[allow(unsafe_code)]
fn stdout_columns() -> Option<usize> {
    use nix::libc;
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize`, which `size` is, and reads nothing else; on
    // failure it writes nothing.
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    (ok && size.ws_col > 0).then_some(usize::from(size.ws_col))
}

fn locale_is_utf8() -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .is_some_and(|v| {
            let v = v.to_ascii_lowercase();
            v.contains("utf-8") || v.contains("utf8")
        })
}

thread_local! {
    /// How stdout was at the start, for [`write_stdout`] (the thread that runs [`run_with`]).
    static STDOUT: std::cell::Cell<Stdout> = const { std::cell::Cell::new(Stdout::Open) };
}

/// Writes to stdout. A closed pipe (`| head`) is not a failure; any other error is, and so is
/// a stdout that was closed when the process started (the text would be lost unseen).
fn write_stdout(text: &str) -> Result<(), Error> {
    if STDOUT.with(std::cell::Cell::get) == Stdout::ClosedAtStart {
        return Err(Error::Write);
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(_) => Err(Error::Write),
    }
}

#[cfg(test)]
mod tests {
    //! The stderr line of a tool failure goes through the redaction pass.
    use super::*;
    use crate::cli::UsageError;
    use crate::config::LoadError;
    use crate::error::Error;

    /// The stderr line of `e` through `r`, as `run` writes it.
    fn line(e: &Error, r: &Redactor) -> String {
        e.line(&|piece| r.apply(piece))
    }

    fn config_error(path: &str, expected: &str) -> Error {
        Error::Config(LoadError {
            path: path.into(),
            line: Some(7),
            expected: expected.into(),
        })
    }

    #[test]
    fn a_key_path_ending_in_a_credential_word_is_not_an_assignment() {
        let r = Redactor::default();
        for key in [
            "auth.token",
            "http.headers.Authorization",
            "password",
            "X-Api-Key",
        ] {
            let e = config_error(&format!("targets[0].{key}"), "unknown key");
            assert_eq!(
                line(&e, &r),
                format!(
                    "agenthealth: invalid configuration: targets[0].{key}: unknown key (line 7)"
                )
            );
        }
    }

    #[test]
    fn an_invalid_document_is_reported_as_one_not_as_a_write_error() {
        let e = Error::InvalidDocument(crate::output::Invalid::TooDeep);
        assert_eq!(
            line(&e, &Redactor::new(["64"])),
            "agenthealth: the result document breaks the v1 contract (dependencies nest deeper \
             than 64 levels); nothing was written"
        );
        assert_ne!(e.to_string(), Error::Write.to_string());
    }

    #[test]
    fn every_piece_is_still_redacted() {
        let r = Redactor::new(["s3cr3t"]);
        let e = config_error("targets[0][\"token=abc\"].s3cr3t", "expected \u{1b}x");
        let text = line(&e, &r);
        assert!(!text.contains("abc") && !text.contains("s3cr3t"), "{text}");
        assert!(!text.contains('\u{1b}'), "{text}");
        let e = Error::Usage(UsageError("unknown option `--x` https://u:pw@h/".into()));
        assert!(!line(&e, &r).contains("pw@"));
    }
}
