//! Strict loading of a v1 configuration file.
//!
//! Loading happens in three steps, each in its own module:
//!
//! 1. `yaml.rs` parses exactly one YAML document into an untyped tree that keeps key
//!    order, duplicate keys, non-string keys and each scalar's YAML type;
//! 2. `section/` reads that tree strictly into targets, one reader per mapping: unknown keys
//!    (with a "did you mean"), duplicate keys, `null`s, wrong scalar types (no coercion:
//!    `'200'` is not a number, `yes` is not a boolean), the ranges and name rules of
//!    `rules.rs`, and cross-field rules;
//! 3. `graph.rs` builds the node arena and validates ids, references and size bounds.
//!
//! Any failure is a [`LoadError`] naming the key path, what was expected and, when known, the
//! line. Messages never contain a value from the file: a secret pasted in the wrong place must
//! not be printed back. The line of a semantic error is found by re-parsing the text up to the
//! failing node (see `yaml::line_of`), so it is the parser's own position.
//!
//! Decisions beyond the contract:
//! - YAML aliases (`*a`) are accepted and expand to copies; the expanded tree is bounded.
//!   Merge keys (`<<`) are rejected: `yaml_serde` does not apply them, and silently treating
//!   them as data would be worse.
//! - Nesting is bounded at 128 levels of lists and mappings (the contract's bound is 140),
//!   by a linear pre-scan before the parser runs (`prescan.rs`): the parser's own cost grows
//!   with the square of the depth.
//! - YAML 1.1 forms that JSON does not have — `0b` integers, `!!` tags — are refused with the
//!   key path, like every other scalar that is not JSON-compatible (`yes`, `010`, `1_000`).
//! - Values under `mcp.functional.expect.json` may be `null`: there `null` is an expected JSON
//!   value, not a missing setting. `null` anywhere else is rejected.
//! - `mcp.protocol_version` accepts any non-blank string: an unknown revision is a
//!   MISCONFIGURED result at run time (the normative spec), not a load failure.
//! - The contract's `agent` and `a2a` sections have no types here yet; they are rejected by
//!   name ("not supported by this version") rather than as unknown keys.

use std::fmt;
use std::fs::OpenOptions;
use std::io::{ErrorKind, Read};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

use super::reader::{At, Fail, KeyPath};
use super::{Config, DEFAULT_CONCURRENCY, Module, RunDeadline, graph, rules, section, yaml};
use crate::contract::Bound;

/// Largest configuration file accepted.
pub(crate) const MAX_FILE_BYTES: u64 = 4 << 20;

/// A configuration that cannot be loaded: names the key path and what was expected, never
/// the value.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadError {
    /// Key path such as `targets[1].timeout_ms` (empty for the document itself).
    pub(crate) path: String,
    /// 1-based line, when known.
    pub(crate) line: Option<usize>,
    /// What was expected, in our words.
    pub(crate) expected: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&str::to_owned))
    }
}

impl std::error::Error for LoadError {}

impl LoadError {
    /// `path: expected (line N)`, with `piece` applied to the path and to the expectation
    /// separately. The redaction pass goes through here: a path ending in a key such as
    /// `auth.token` followed by our own `: ` separator is a name, not a credential
    /// assignment, and must not be redacted as one.
    pub(crate) fn render(&self, piece: &dyn Fn(&str) -> String) -> String {
        let mut out = String::new();
        if !self.path.is_empty() {
            out.push_str(&piece(&self.path));
            out.push_str(": ");
        }
        out.push_str(&piece(&self.expected));
        if let Some(line) = self.line {
            out.push_str(&format!(" (line {line})"));
        }
        out
    }

    /// A file of modules only, given to a command that runs targets.
    pub fn no_targets() -> LoadError {
        LoadError::document("no targets: this file's modules run through serve's /probe")
    }

    fn document(expected: &str) -> LoadError {
        LoadError {
            path: String::new(),
            line: None,
            expected: expected.to_string(),
        }
    }
}

/// Loads a configuration file: a regular file, or a pipe or FIFO (`check <(render)`, whose
/// path is `/dev/fd/N`), which is read as standard input is ([`load_stdin`]), for at most
/// `wait`. A directory or device is refused without blocking (the file is opened
/// non-blocking and checked before any read). Files over `MAX_FILE_BYTES` and files that are
/// not UTF-8 are refused. A file that cannot be opened is named, with the operating system's
/// reason (the path came from the command line, not from the file).
pub fn load_file(path: &Path, wait: Duration) -> Result<Config, LoadError> {
    let cannot_open = |e: std::io::Error| {
        LoadError::document(&format!(
            "cannot open configuration file `{}`: {}",
            path.display(),
            os_reason(&e)
        ))
    };
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)
        .map_err(cannot_open)?;
    let meta = file.metadata().map_err(cannot_open)?;
    if !meta.is_file() && !meta.file_type().is_fifo() {
        return Err(LoadError::document(&format!(
            "configuration path `{}` is not a regular file or a pipe",
            path.display()
        )));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_large());
    }
    let from = format!("`{}`", path.display());
    load_bytes(read_within(&file, wait, &from)?)
}

/// Loads a configuration from standard input (`check -`, `validate -`, `serve -`), with the
/// rules of a file: at most `MAX_FILE_BYTES`, UTF-8, and all of it within `wait`.
pub fn load_stdin(wait: Duration) -> Result<Config, LoadError> {
    load_bytes(read_within(&std::io::stdin(), wait, "standard input")?)
}

fn too_large() -> LoadError {
    LoadError::document(&format!(
        "configuration file is larger than {} MiB",
        MAX_FILE_BYTES >> 20
    ))
}

/// Reads `input` to its end, at most `MAX_FILE_BYTES` (one byte more, to tell a longer
/// input), within `wait`. Each read follows a `poll` that says data or the end is there: a
/// writer that never writes, or never closes, costs `wait` and no more, and a FIFO with no
/// writer yet (whose non-blocking read says 0, a false end) is waited for, not read empty.
fn read_within<F>(input: &F, wait: Duration, from: &str) -> Result<Vec<u8>, LoadError>
where
    F: AsFd,
    for<'a> &'a F: Read,
{
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let until = Instant::now() + wait;
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 64 << 10];
    loop {
        let left = until.saturating_duration_since(Instant::now());
        let ms = u16::try_from(left.as_micros().div_ceil(1000)).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(input.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(ms)) {
            Ok(0) if left.is_zero() => return Err(not_arrived(from, wait)),
            Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
            Ok(_) => {}
            Err(e) => return Err(cannot_read(&e.into())),
        }
        let mut reader = input;
        match reader.read(&mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
            Err(e) => return Err(cannot_read(&e)),
        }
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(too_large());
        }
    }
}

fn cannot_read(e: &std::io::Error) -> LoadError {
    LoadError::document(&format!("cannot read configuration file: {}", os_reason(e)))
}

/// `configuration from `X` did not arrive within 300 ms` (or `60 s`).
fn not_arrived(from: &str, wait: Duration) -> LoadError {
    let ms = wait.as_millis();
    let within = if ms % 1000 == 0 {
        format!("{} s", ms / 1000)
    } else {
        format!("{ms} ms")
    };
    LoadError::document(&format!(
        "configuration from {from} did not arrive within {within}"
    ))
}

/// Loads UTF-8 bytes read from a file or a stream.
fn load_bytes(bytes: Vec<u8>) -> Result<Config, LoadError> {
    let text = String::from_utf8(bytes)
        .map_err(|_| LoadError::document("configuration file is not valid UTF-8"))?;
    load_str(&text)
}

/// The operating system's description of an I/O error, without Rust's `(os error N)`.
fn os_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// Loads a configuration from YAML text. A leading UTF-8 byte-order mark (some Windows
/// editors write one) is not part of the document.
pub(crate) fn load_str(text: &str) -> Result<Config, LoadError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let root = yaml::parse(text).map_err(|e| LoadError {
        path: e.path,
        line: e.line,
        expected: e.message,
    })?;
    let (mut config, unusable) = config(&root).map_err(|fail| locate(fail, text))?;
    config.unusable_endpoint = unusable.map(|fail| locate(fail, text));
    Ok(config)
}

/// Turns a [`Fail`] into a [`LoadError`], finding the line of the failing node.
fn locate(fail: Fail, text: &str) -> LoadError {
    let line = if fail.path.is_root() {
        None
    } else {
        yaml::line_of(text, &fail.path.steps(), fail.at_key)
    };
    LoadError {
        path: fail.path.render(),
        line,
        expected: fail.expected,
    }
}

/// The document root: `version`, `targets`, `modules`, `concurrency`, `deadline_ms`; with the
/// first endpoint that cannot work. A file with `modules` may have no `targets` (a probe-only
/// `serve`); without `modules`, `targets` is required and not empty, as it always was.
fn config(root: &yaml::Node) -> Result<(Config, Option<Fail>), Fail> {
    let path = KeyPath::default();
    let doc = At {
        node: root,
        path: &path,
    }
    .section(
        "a mapping with `version` and `targets`",
        &[
            "version",
            "targets",
            "modules",
            "concurrency",
            "deadline_ms",
        ],
    )?;

    let v = doc.require("version")?;
    if v.at().str("the string `v1`")? != "v1" {
        return Err(v
            .path
            .fail("unsupported configuration version; expected `v1`"));
    }
    let concurrency = match doc.get("concurrency") {
        Some(c) => {
            usize::try_from(c.at().whole(rules::CONCURRENCY)?).unwrap_or(DEFAULT_CONCURRENCY)
        }
        None => DEFAULT_CONCURRENCY,
    };
    let deadline = match doc.get("deadline_ms") {
        Some(d) => Some(RunDeadline {
            ms: d.at().whole(rules::DEADLINE_MS)?,
            bound: Bound::DeadlineMs,
        }),
        None => None,
    };
    let mut decls = Vec::new();
    if doc.get("targets").is_some() || doc.get("modules").is_none() {
        let t = doc.require("targets")?;
        let items = t.at().list("a list of targets")?;
        if items.is_empty() {
            return Err(t.path.fail("expected at least one target"));
        }
        for (path, node) in &items {
            decls.push(section::top_level_target(At { node, path })?);
        }
    }
    let modules = match doc.get("modules") {
        Some(m) => modules(m.at())?,
        None => Vec::new(),
    };
    let unusable = decls.iter().find_map(|d| d.first_unusable()).cloned();
    let mut config = graph::assemble(decls, concurrency)?;
    config.deadline = deadline;
    config.modules = modules;
    Ok((config, unusable))
}

/// `modules`: at least one, names unique.
fn modules(at: At<'_, '_>) -> Result<Vec<Module>, Fail> {
    let items = at.list("a list of modules")?;
    if items.is_empty() {
        return Err(at.fail("expected at least one module"));
    }
    let mut out: Vec<Module> = Vec::with_capacity(items.len());
    for (path, node) in &items {
        let module = section::module(At { node, path }, &out)?;
        out.push(module);
    }
    Ok(out)
}
