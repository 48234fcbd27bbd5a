//! `agenthealth`: can this MCP server, and what it depends on, do its work right now?
//!
//! The data flows one way: `cli` (flags → a command) → `config` (load, validate) → `plan`
//! (environment and credentials resolved once) → `engine` (graph, scheduling, deadlines,
//! aggregation; no protocol) → `adapter` (http; mcp with its transports) over `net` and
//! `process` → `result` (typed reasons, evidence, the v1 document) → `output` (terminal,
//! json, yaml, doctor, one redaction pass). [`vocab`] is the bottom layer every module
//! shares. Imports point the same way; `docs/contributing.md` has the table. This file is
//! the only place that wires the layers together and picks the exit code; `main.rs` only
//! calls [`run`].
//!
//! The public modules are what the integration tests drive directly: the child-process
//! layer ([`process`]) and the vocabulary it speaks ([`vocab`], [`result`]); and, hidden,
//! `fuzzing`: every parser of untrusted input, for the fuzz targets in `fuzz/`.

#![deny(unsafe_code)]
#![warn(missing_docs)]

mod adapter;
mod cli;
mod config;
mod engine;
mod error;
mod exit;
#[doc(hidden)]
pub mod fuzzing;
mod login;
mod net;
mod oauth;
mod output;
mod plan;
pub mod process;
pub mod result;
mod signals;
pub mod vocab;

use std::ffi::OsString;
use std::io::{IsTerminal, Write};

use cli::{Command, OutputFormat, RunArgs, Source};
use error::Error;
use output::{Format, Redactor, Style};

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
        Err((e, redactor)) => {
            let redactor = redactor.unwrap_or(redactor_for_errors);
            let line = e.line(&|piece| redactor.apply(piece));
            let _ = writeln!(std::io::stderr().lock(), "{line}");
            exit::TOOL_FAILURE
        }
    }
}

type Failure = (Error, Option<Redactor>);

fn dispatch<I>(args: I) -> Result<i32, Failure>
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    let command = cli::parse(args).map_err(|e| (Error::from(e), None))?;
    match command {
        Command::Help(verb) => write_stdout(&cli::help::usage(verb.as_deref())).map(|_| 0),
        Command::Version => {
            write_stdout(concat!("agenthealth ", env!("CARGO_PKG_VERSION"), "\n")).map(|_| 0)
        }
        Command::Validate(path) => {
            config::load_file(&path).map_err(|e| (Error::from(e), None))?;
            Ok(0)
        }
        Command::Run(args) => run_checks(args),
        Command::Login { config, target } => {
            let cancel = engine::Cancel::new();
            signals::install(&cancel);
            login::run(&config, &target, &cancel).map_err(|e| (e, None))?;
            Ok(0)
        }
    }
}

fn run_checks(args: RunArgs) -> Result<i32, Failure> {
    let mut config = match &args.source {
        Source::File(path) => config::load_file(path).map_err(|e| (Error::from(e), None))?,
        Source::Adhoc {
            name,
            kind,
            endpoint,
            options,
        } => config::adhoc::single(name, *kind, endpoint, options),
    };
    if let Some(ms) = args.deadline_ms {
        config.deadline = Some(config::RunDeadline {
            ms,
            origin: config::Origin::CommandLine,
        });
    }
    let cancel = engine::Cancel::new();
    signals::install(&cancel);
    let plan = plan::Plan::from_env(config);
    let progress = output::progress::Progress::stderr();
    let mut doc = engine::run(&plan, &cancel, &|done, total| progress.update(done, total));
    progress.finish();
    // After the run: the secrets include every token learned during it.
    let secrets = plan.secrets();
    let redactor = Redactor::new(secrets.iter().map(vocab::Secret::expose));
    doc.map_strings(&|s| redactor.apply(s), &|id| redactor.apply_to_id(id));
    let format = output_format(args.format);
    let style = Style {
        color: args.color.enabled(
            std::io::stdout().is_terminal(),
            std::env::var_os("NO_COLOR").as_deref(),
        ),
        unicode: format == Format::Terminal && locale_is_utf8(),
    };
    let text = output::render(&doc, format, style, args.doctor)
        .map_err(|_| (Error::Write, Some(redactor.clone())))?;
    write_stdout(&text).map_err(|(e, _)| (e, Some(redactor)))?;
    Ok(exit::for_status(doc.worst()))
}

/// The renderer for the command line's `--format` (the CLI knows no renderer).
fn output_format(format: OutputFormat) -> Format {
    match format {
        OutputFormat::Terminal => Format::Terminal,
        OutputFormat::Json => Format::Json,
        OutputFormat::Yaml => Format::Yaml,
    }
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
fn write_stdout(text: &str) -> Result<(), Failure> {
    if STDOUT.with(std::cell::Cell::get) == Stdout::ClosedAtStart {
        return Err((Error::Write, None));
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(_) => Err((Error::Write, None)),
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
