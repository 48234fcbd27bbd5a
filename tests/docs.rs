//! The documentation runs as shown: every fenced block of README.md and docs/*.md whose info
//! string is `console` is executed against the built binary and its output compared with the
//! text in the block; the evidence tables list each key once; and the exit-code tables are
//! the binary's.
//!
//! # The console-block convention
//!
//! A `console` block is a transcript. A line starting with `$ ` is a command; the lines after
//! it, up to the next command or the end of the block, are its expected stdout.
//!
//! * A command is `[NAME=value …] agenthealth ARG…`, words separated by spaces, `'…'` and
//!   `"…"` quoting a word literally (no expansion, no escapes). The leading `NAME=value`
//!   words set environment variables for that command only. A final `2>&1` compares stdout
//!   followed by stderr. Anything else — another program, a pipe, `;`, `&`, a redirection,
//!   `$`, a backtick, a `#` comment — fails the test.
//! * `$ echo $?` followed by one line holding a number checks the exit code of the command
//!   before it. A command without it is not checked for its exit code.
//! * The comparison is snapbox's: a line that is exactly `...` matches any number of output
//!   lines (none included), and `[..]` any text within a line.
//! * Redactions, applied to the text in the block and to the output alike (snapbox
//!   placeholders): the port after `127.0.0.1:` (`127.0.0.1:PORT` in a block) is `[PORT]`; a
//!   number right before `ms` or ` ms` (`1.23 ms`, `tcp 0.09ms`) or a decimal number right
//!   before ` s` (`1.24 s`) is `[DURATION]`, one placeholder for both units (a run that takes
//!   0.98 s in the document may take 1.02 s when it runs); the value of a timing key
//!   (`latency_ms`, `duration_ms`, `dns_ms`, `tcp_ms`, `tls_ms`, `http_ms`, after `": `, `: `
//!   or `=`) is `[TIMING]`; a login URL's `state` and `code_challenge` are `[NONCE]`.
//!
//! Where a command runs:
//!
//! * **Server.** One fake MCP server (`tests/kit/src/fake_mcp`, the one `make demo` runs) per
//!   document, on 127.0.0.1 and a port the system picks. [`ROUTES`] says what it serves. In
//!   commands and in written files, `127.0.0.1:PORT` becomes its address.
//! * **Working directory.** A fresh temporary directory per document, laid out like the
//!   repository root for the examples: a copy of `examples/` (with `PORT` replaced in its
//!   `.yaml` files) and a link `tests` to the repository's `tests/` (the stdio fixtures).
//! * **Files.** `<!-- file: NAME -->` on the line right before a `yaml` block writes that
//!   block to `NAME`. ``<!-- file: NAME from BASE: `OLD` => `NEW` -->``, on a line of its
//!   own, writes `NAME` as the file `BASE` (written earlier in the same document) with every
//!   `OLD` replaced by `NEW`; `OLD` must occur. Every file of a document is written before
//!   its first command runs.
//! * **Environment.** Cleared, then `PATH`, `HOME` and `LANG=C.UTF-8` (the `·` between
//!   evidence items and the tree's box-drawing characters); stdin is `/dev/null`, stdout a
//!   pipe, so there is no colour and no progress line.
//! * **Real servers.** `<!-- console: interop -->` on the line right before a `console`
//!   block runs it with the bin directories of the servers `.ci/interop-setup` installs
//!   (`$AGENTHEALTH_INTEROP_DIR/venv/bin`, `…/node_modules/.bin`) first on `PATH`. When they
//!   are not installed the test fails, naming the block and what is missing (run
//!   `.ci/interop-setup`), as `tests/interop` does.
//! * **A browser.** `<!-- console: browser -->` before a `console` block plays the browser
//!   for `agenthealth login`: when a command prints `Open this URL to authorize
//!   AgentHealth:` and a URL, the harness fetches the URL and follows its redirect to the
//!   login's loopback callback (the documents' fake server approves at once). The URL's
//!   random `state` and `code_challenge` values are redacted (the block shows them as `…`).
//!
//! A block the harness cannot run is a failure, never a skip: a block whose servers are not
//! installed, an unknown marker, a marker not followed by the block it needs, a transcript
//! line before the first command, and a `$ ` line inside a fenced block that is not a
//! `console` block (a transcript must be executable to be shown).

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use regex::Regex;
use snapbox::Redactions;

// The crate's registries the tables must equal (one line each to change when they move).
use agenthealth::EXIT_CODES;
use agenthealth::result::Key;

use crate::interop::{NotInstalled, StdioKind, StdioServer, interop_dir};
use crate::util::{TempDir, bin};
use agenthealth_testkit::fake_mcp::{FakeServer, preset};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// What the documents' fake server serves, besides its built-in paths (`/health` answers
/// 200 to `HEAD` and `GET`, any other unrouted path 404): path → preset.
const ROUTES: &[(&str, &str)] = &[
    // A legacy 2025-11-25 server with sessions and the default inventory (18 tools).
    ("/mcp", "healthy"),
    // The same without its `echo` tool.
    ("/broken", "missing-tool"),
    // A stateless 2026-07-28 server.
    ("/modern", "modern"),
    // Healthy, but only for `Authorization: Bearer demo-token` (401 otherwise, HEAD too);
    // the server's toy authorization server issues that token (docs/oauth.md).
    ("/private", "auth"),
    // What real servers answer on day one (docs/mcp.md): a gateway's 404 −32601 to
    // server/discover, an older Python SDK's 200 −32602, a 200 `{}`, a 2024-11-05-only
    // server, a 307 to the path with a trailing slash, a 403 without a challenge.
    ("/gateway", "gateway"),
    ("/stateless", "stateless-legacy"),
    ("/anything", "discover-empty"),
    ("/old", "legacy-2024-11-05"),
    ("/moved", "redirect-slash"),
    ("/forbidden", "forbidden-host"),
    // Answers `HEAD`, reads every `POST` and never answers it (the run deadline's example).
    ("/hang", "hang"),
];

/// The documents, each with its own test below; `every_document_has_a_test` keeps this list
/// and the files on disk the same.
const DOCUMENTS: &[&str] = &[
    "README.md",
    "docs/configuration.md",
    "docs/contributing.md",
    "docs/deployment.md",
    "docs/graph.md",
    "docs/mcp.md",
    "docs/oauth.md",
    "docs/output.md",
    "docs/performance.md",
];

macro_rules! document_test {
    ($($name:ident => $path:literal,)*) => {
        $(
            #[test]
            fn $name() {
                run_document($path);
            }
        )*
        const TESTED: &[&str] = &[$($path),*];
    };
}

document_test! {
    readme_examples_run_as_shown => "README.md",
    configuration_examples_run_as_shown => "docs/configuration.md",
    contributing_examples_run_as_shown => "docs/contributing.md",
    deployment_examples_run_as_shown => "docs/deployment.md",
    graph_examples_run_as_shown => "docs/graph.md",
    mcp_examples_run_as_shown => "docs/mcp.md",
    oauth_examples_run_as_shown => "docs/oauth.md",
    output_examples_run_as_shown => "docs/output.md",
    performance_examples_run_as_shown => "docs/performance.md",
}

/// README.md and every `docs/*.md` have a test here, so no document's examples go unrun.
#[test]
fn every_document_has_a_test() {
    let mut on_disk = vec!["README.md".to_string()];
    for entry in std::fs::read_dir(Path::new(ROOT).join("docs")).expect("docs/") {
        let name = entry.expect("docs/ entry").file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".md") {
            on_disk.push(format!("docs/{name}"));
        }
    }
    on_disk.sort();
    let mut listed: Vec<String> = DOCUMENTS.iter().map(|d| d.to_string()).collect();
    listed.sort();
    assert_eq!(
        on_disk, listed,
        "DOCUMENTS must name README.md and every docs/*.md"
    );
    let mut tested: Vec<&str> = TESTED.to_vec();
    tested.sort_unstable();
    assert_eq!(
        tested, DOCUMENTS,
        "each document needs its document_test! entry"
    );
}

/// The evidence tables (tables under a heading containing "Evidence" in docs/output.md and
/// docs/mcp.md) and the registry of evidence keys (`Key::ALL`, src/result/evidence.rs) agree:
/// one key per row, in backticks in the first column; no key listed twice; every listed key
/// is a key of the registry, and every key of the registry is listed.
#[test]
fn the_evidence_tables_list_every_key_once() {
    let mut listed: Vec<(String, String)> = Vec::new();
    let mut problems = Vec::new();
    for doc in ["docs/output.md", "docs/mcp.md"] {
        let text = read(doc);
        for (line, row) in evidence_rows(&text) {
            let first = row.split('|').nth(1).unwrap_or("").trim();
            let key = first
                .strip_prefix('`')
                .and_then(|k| k.strip_suffix('`'))
                .filter(|k| {
                    !k.is_empty() && k.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
                });
            match key {
                Some(key) => listed.push((key.to_string(), format!("{doc}:{line}"))),
                None => problems.push(format!(
                    "{doc}:{line}: the first column must be one key in backticks: {row}"
                )),
            }
        }
    }
    assert!(listed.len() > 20, "no evidence tables found: {listed:?}");
    // The code declares every key once, with its meaning, in one registry.
    let registry: Vec<&str> = Key::ALL.iter().map(|k| k.as_str()).collect();
    for (i, (key, at)) in listed.iter().enumerate() {
        if let Some((_, first)) = listed[..i].iter().find(|(k, _)| k == key) {
            problems.push(format!("{at}: `{key}` is already listed at {first}"));
        }
        if !registry.contains(&key.as_str()) {
            problems.push(format!(
                "{at}: `{key}` is not in the evidence-key registry (src/result/evidence.rs)"
            ));
        }
    }
    for key in &registry {
        if !listed.iter().any(|(k, _)| k == key) {
            problems.push(format!(
                "src/result/evidence.rs: evidence key `{key}` is in no evidence table of docs/"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The exit-code tables — tables whose header is `| Exit | Status | Meaning |`: one in
/// README.md, one in docs/output.md, none elsewhere — are `src/exit.rs`'s `CODES` (which the
/// help text and the man page print), row for row: the code; the status in backticks, or the
/// tool failure by its name; the meaning as a sentence (capitalised, with a full stop).
#[test]
fn the_exit_code_tables_are_the_binarys() {
    let want: Vec<String> = EXIT_CODES
        .iter()
        .map(|c| {
            let status = match c.status {
                Some(_) => format!("`{}`", c.name()),
                None => c.name().to_string(),
            };
            format!("| {} | {status} | {}. |", c.code, sentence(c.meaning))
        })
        .collect();
    assert_eq!(want.len(), 7, "{want:?}");
    for doc in DOCUMENTS {
        let tables = exit_code_tables(&read(doc));
        let expected = usize::from(["README.md", "docs/output.md"].contains(doc));
        assert_eq!(tables.len(), expected, "{doc}: exit-code tables");
        for rows in tables {
            assert_eq!(
                rows, want,
                "{doc}: the exit-code table is src/exit.rs's CODES"
            );
        }
    }
}

/// `text` with its first letter capitalised.
fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// The body rows of each table of `text` whose header is `| Exit | Status | Meaning |`.
fn exit_code_tables(text: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.trim() == "| Exit | Status | Meaning |")
        .map(|(i, _)| {
            lines
                .iter()
                .skip(i + 2)
                .take_while(|l| l.starts_with('|'))
                .map(|l| l.trim().to_string())
                .collect()
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Running a document

/// Runs every console block of `doc` (relative to the repository root); panics listing every
/// block whose output differs, after all have run.
fn run_document(doc: &str) {
    let text = read(doc);
    let items = items(&text).unwrap_or_else(|e| panic!("{doc}:{e}"));
    let server = docs_server();
    let port = server.port().to_string();
    let dir = TempDir::new("docs");
    copy_examples(
        &Path::new(ROOT).join("examples"),
        &dir.0.join("examples"),
        &port,
    );
    std::os::unix::fs::symlink(Path::new(ROOT).join("tests"), dir.0.join("tests"))
        .expect("link tests/");

    let mut problems = Vec::new();
    for item in &items {
        let (name, text) = match item {
            Item::Fence(Fence {
                marker: Some(Marker::File(name)),
                ..
            }) => (name, with_port(&item_text(item), &port)),
            Item::Derived {
                line,
                name,
                base,
                old,
                new,
            } => match std::fs::read_to_string(dir.0.join(base)) {
                Ok(base_text) if base_text.contains(old.as_str()) => {
                    let text = base_text.replace(old.as_str(), new);
                    (name, with_port(&text, &port))
                }
                Ok(_) => panic!("{doc}:{line}: `{old}` does not occur in {base}"),
                Err(_) => panic!("{doc}:{line}: {base} is not written before this line"),
            },
            Item::Fence(_) => continue,
        };
        let path = dir.0.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("file's directory");
        }
        std::fs::write(&path, text).expect("write file");
    }
    let consoles = items.iter().filter_map(|item| match item {
        Item::Fence(fence) if fence.info == "console" => Some(fence),
        _ => None,
    });
    for fence in consoles {
        // Parsed first, so that a malformed block is reported as such wherever it is.
        let steps = transcript(fence).unwrap_or_else(|e| panic!("{doc}:{e}"));
        let interop = matches!(fence.marker, Some(Marker::Interop));
        let path = if interop {
            interop_path().unwrap_or_else(|missing| {
                panic!(
                    "{doc}:{}: the block needs the interop servers: {missing}",
                    fence.line
                )
            })
        } else {
            std::env::var_os("PATH").unwrap_or_default()
        };
        let browser = matches!(fence.marker, Some(Marker::Browser));
        let mut last: Option<(usize, i32)> = None;
        for step in steps {
            match step {
                Step::Run {
                    line,
                    command,
                    expected,
                } => {
                    let (code, got) = command.run(&dir.0, &path, &port, browser);
                    last = Some((line, code));
                    if let Err(diff) = compare(&expected, &got) {
                        problems.push(format!(
                            "{doc}:{line}: `{}` printed something else (exit {code}).\n{diff}",
                            command.shown
                        ));
                    }
                }
                Step::ExitCode { line, code } => match last {
                    Some((_, got)) if got == code => {}
                    Some((at, got)) => problems.push(format!(
                        "{doc}:{line}: the command at line {at} exited {got}, the block shows {code}"
                    )),
                    None => panic!("{doc}:{line}: `echo $?` before any command"),
                },
            }
        }
    }
    drop(server);
    assert!(
        problems.is_empty(),
        "{} example(s) of {doc} differ from the binary:\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

/// The fake MCP server of [`ROUTES`].
fn docs_server() -> FakeServer {
    let named = |name: &str| preset(name).unwrap_or_else(|| panic!("no preset {name}"));
    let mut config = named("healthy");
    config.routes = ROUTES
        .iter()
        .filter(|(path, _)| *path != "/mcp")
        .map(|(path, name)| (path.to_string(), named(name)))
        .collect();
    assert_eq!(ROUTES[0], ("/mcp", "healthy"), "the main route comes first");
    FakeServer::start(config)
}

/// `PATH` with the interop servers' bin directories first, or what is not installed.
fn interop_path() -> Result<std::ffi::OsString, NotInstalled> {
    // The two kinds the documents use: a Python server from PyPI and a Node one from npm.
    StdioServer::try_prepare(StdioKind::Time)?;
    StdioServer::try_prepare(StdioKind::Filesystem)?;
    let dir = interop_dir();
    let mut dirs = vec![dir.join("venv/bin"), dir.join("node_modules/.bin")];
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    Ok(std::env::join_paths(dirs).expect("PATH"))
}

/// Copies `from` to `to` recursively, with `127.0.0.1:PORT` filled in in `.yaml` files.
fn copy_examples(from: &Path, to: &Path, port: &str) {
    std::fs::create_dir_all(to).expect("examples copy");
    for entry in std::fs::read_dir(from).expect("examples/") {
        let entry = entry.expect("examples/ entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_examples(&entry.path(), &target, port);
        } else if entry.path().extension().is_some_and(|e| e == "yaml") {
            let text = std::fs::read_to_string(entry.path()).expect("example");
            std::fs::write(&target, with_port(&text, port)).expect("example copy");
        } else {
            std::fs::copy(entry.path(), &target).expect("example copy");
        }
    }
}

fn with_port(text: &str, port: &str) -> String {
    text.replace("127.0.0.1:PORT", &format!("127.0.0.1:{port}"))
}

fn read(doc: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(doc)).unwrap_or_else(|e| panic!("{doc}: {e}"))
}

// ---------------------------------------------------------------------------------------
// Fenced blocks and markers

/// What the harness reads in a document, in document order.
enum Item {
    /// A fenced block.
    Fence(Fence),
    /// ``<!-- file: NAME from BASE: `OLD` => `NEW` -->``, a line of its own.
    Derived {
        line: usize,
        name: String,
        base: String,
        old: String,
        new: String,
    },
}

/// A fenced block: its info string, the marker on the line before it, its first line's
/// number (1-based, the opening fence) and its lines.
struct Fence {
    info: String,
    marker: Option<Marker>,
    line: usize,
    body: Vec<String>,
}

/// A fence's text, with a final newline.
fn item_text(item: &Item) -> String {
    match item {
        Item::Fence(fence) => {
            let mut text = fence.body.join("\n");
            text.push('\n');
            text
        }
        Item::Derived { .. } => String::new(),
    }
}

/// A harness marker: an HTML comment on a line of its own.
#[derive(Debug)]
enum Marker {
    /// `<!-- file: NAME -->`, right before a `yaml` block.
    File(String),
    /// ``<!-- file: NAME from BASE: `OLD` => `NEW` -->``, on its own.
    Derived {
        name: String,
        base: String,
        old: String,
        new: String,
    },
    /// `<!-- console: interop -->`, right before a `console` block.
    Interop,
    /// `<!-- console: browser -->`, right before a `console` block.
    Browser,
}

/// The fenced blocks and derived files of `text`, with the markers checked: `file:` and
/// `console:` markers must be followed at once by the kind of block they apply to, and `$ `
/// lines may only appear in console blocks.
fn items(text: &str) -> Result<Vec<Item>, String> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    // The marker on the line before, waiting for its block.
    let mut pending: Option<(usize, Marker)> = None;
    while let Some((n, line)) = lines.next() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            let info = info.trim().to_string();
            if info == "console" && trimmed.len() != line.len() {
                return Err(format!("{n}: a console block must start at column 0"));
            }
            let mut body = Vec::new();
            loop {
                match lines.next() {
                    Some((_, l)) if l.trim_start() == "```" => break,
                    Some((_, l)) => body.push(l.to_string()),
                    None => return Err(format!("{n}: the block never closes")),
                }
            }
            let marker = pending.take().map(|(_, m)| m);
            match (&marker, info.as_str()) {
                (None, _)
                | (Some(Marker::File(_)), "yaml")
                | (Some(Marker::Interop | Marker::Browser), "console") => {}
                (Some(m), _) => {
                    return Err(format!(
                        "{}: {m:?} cannot apply to a ```{info} block",
                        n - 1
                    ));
                }
            }
            if info != "console"
                && let Some(l) = body.iter().find(|l| l.starts_with("$ "))
            {
                return Err(format!(
                    "{n}: a ```{info} block shows a command (`{l}`): transcripts go in `console` blocks"
                ));
            }
            out.push(Item::Fence(Fence {
                info,
                marker,
                line: n,
                body,
            }));
            continue;
        }
        if let Some((at, m)) = pending.take() {
            return Err(format!("{at}: {m:?} is not followed by its block"));
        }
        match marker(line).map_err(|e| format!("{n}: {e}"))? {
            Some(Marker::Derived {
                name,
                base,
                old,
                new,
            }) => out.push(Item::Derived {
                line: n,
                name,
                base,
                old,
                new,
            }),
            Some(m) => pending = Some((n, m)),
            None => {}
        }
    }
    match pending {
        None => Ok(out),
        Some((at, m)) => Err(format!("{at}: {m:?} is not followed by its block")),
    }
}

/// The harness marker on `line`, if it is one.
fn marker(line: &str) -> Result<Option<Marker>, String> {
    let Some(inner) = line
        .trim()
        .strip_prefix("<!--")
        .and_then(|l| l.strip_suffix("-->"))
        .map(str::trim)
    else {
        return Ok(None);
    };
    if let Some(spec) = inner.strip_prefix("file:") {
        let spec = spec.trim();
        let Some((name, derived)) = spec.split_once(" from ") else {
            return file_name(spec).map(|name| Some(Marker::File(name)));
        };
        let bad = || format!("expected <!-- file: NAME from BASE: `OLD` => `NEW` -->: {line}");
        let (base, change) = derived.split_once(':').ok_or_else(bad)?;
        let (old, new) = change.split_once("=>").ok_or_else(bad)?;
        let ticked = |s: &str| {
            s.trim()
                .strip_prefix('`')
                .and_then(|s| s.strip_suffix('`'))
                .map(str::to_string)
        };
        let (old, new) = (ticked(old).ok_or_else(bad)?, ticked(new).ok_or_else(bad)?);
        if old.is_empty() {
            return Err(bad());
        }
        Ok(Some(Marker::Derived {
            name: file_name(name.trim())?,
            base: file_name(base.trim())?,
            old,
            new,
        }))
    } else if let Some(kind) = inner.strip_prefix("console:") {
        match kind.trim() {
            "interop" => Ok(Some(Marker::Interop)),
            "browser" => Ok(Some(Marker::Browser)),
            other => Err(format!("unknown console marker `{other}`")),
        }
    } else if inner.starts_with("file") || inner.starts_with("console") {
        Err(format!("malformed marker: {line}"))
    } else {
        Ok(None)
    }
}

/// A relative path inside the working directory.
fn file_name(name: &str) -> Result<String, String> {
    let ok = !name.is_empty()
        && !name.starts_with('/')
        && !name.split('/').any(|part| part.is_empty() || part == "..")
        && !name.contains(char::is_whitespace);
    if ok {
        Ok(name.to_string())
    } else {
        Err(format!("not a relative file name: `{name}`"))
    }
}

// ---------------------------------------------------------------------------------------
// Transcripts

enum Step {
    /// A command and the output the block shows for it.
    Run {
        line: usize,
        command: Shown,
        expected: String,
    },
    /// `$ echo $?` and the code shown.
    ExitCode { line: usize, code: i32 },
}

/// A command as the block writes it.
struct Shown {
    shown: String,
    env: Vec<(String, String)>,
    args: Vec<String>,
    with_stderr: bool,
}

impl Shown {
    /// Runs the command in `dir` with `path` as `PATH`; returns its exit code and its output
    /// (stdout, then stderr with `2>&1`). With `browser`, a login URL it prints is visited.
    fn run(&self, dir: &Path, path: &std::ffi::OsStr, port: &str, browser: bool) -> (i32, String) {
        let mut cmd = Command::new(bin());
        cmd.args(self.args.iter().map(|a| with_port(a, port)))
            .current_dir(dir)
            .env_clear()
            .env("PATH", path)
            .env("LANG", "C.UTF-8")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(home) = std::env::var_os("HOME") {
            cmd.env("HOME", home);
        }
        for (k, v) in &self.env {
            cmd.env(k, with_port(v, port));
        }
        if browser {
            return play_browser(cmd, self.with_stderr);
        }
        let out = cmd.output().expect("run agenthealth");
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        if self.with_stderr {
            text.push_str(&String::from_utf8_lossy(&out.stderr));
        }
        (out.status.code().unwrap_or(-1), text)
    }
}

/// Runs `cmd`; when it prints a login URL, fetches it and follows one redirect (to the
/// login's callback), as a browser would.
fn play_browser(mut cmd: Command, with_stderr: bool) -> (i32, String) {
    use std::io::{BufRead, BufReader, Read};
    let mut child = cmd.spawn().expect("run agenthealth");
    let stdout = child.stdout.take().expect("stdout");
    let mut text = String::new();
    let mut lines = BufReader::new(stdout).lines();
    let mut url_next = false;
    while let Some(Ok(line)) = lines.next() {
        text.push_str(&line);
        text.push('\n');
        if url_next && let Some(location) = http_get(&line).and_then(|(_, loc)| loc) {
            let _ = http_get(&location);
        }
        url_next = line == "Open this URL to authorize AgentHealth:";
    }
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    let code = child.wait().ok().and_then(|s| s.code()).unwrap_or(-1);
    if with_stderr {
        text.push_str(&stderr);
    }
    (code, text)
}

/// A GET of an `http://127.0.0.1:PORT/…` URL: its status and `Location`.
fn http_get(url: &str) -> Option<(u16, Option<String>)> {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://")?;
    let (authority, target) = rest.split_at(rest.find('/')?);
    let mut s = std::net::TcpStream::connect(authority).ok()?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .ok()?;
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    let status = answer.split(' ').nth(1)?.parse().ok()?;
    let location = answer
        .lines()
        .find_map(|l| {
            l.strip_prefix("Location: ")
                .or_else(|| l.strip_prefix("location: "))
        })
        .map(|l| l.trim().to_string());
    Some((status, location))
}

/// The steps of a console block.
fn transcript(fence: &Fence) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    let mut lines = fence
        .body
        .iter()
        .enumerate()
        .map(|(i, l)| (fence.line + 1 + i, l.as_str()))
        .peekable();
    while let Some((n, line)) = lines.next() {
        let Some(command) = line.strip_prefix("$ ") else {
            return Err(format!("{n}: output before the first command: {line}"));
        };
        if command.trim() == "echo $?" {
            let code = match lines.next() {
                Some((_, code)) => code.trim().parse().ok(),
                None => None,
            };
            let code =
                code.ok_or_else(|| format!("{n}: `echo $?` must be followed by a number"))?;
            steps.push(Step::ExitCode { line: n, code });
            continue;
        }
        let command = parse_command(command).map_err(|e| format!("{n}: {e}: {line}"))?;
        let mut expected = String::new();
        while let Some((_, l)) = lines.next_if(|(_, l)| !l.starts_with("$ ")) {
            expected.push_str(l);
            expected.push('\n');
        }
        steps.push(Step::Run {
            line: n,
            command,
            expected,
        });
    }
    if steps.is_empty() {
        return Err(format!("{}: an empty console block", fence.line));
    }
    Ok(steps)
}

/// Parses `[NAME=value …] agenthealth ARG… [2>&1]`.
fn parse_command(line: &str) -> Result<Shown, String> {
    let mut words = words(line)?;
    let with_stderr = words
        .last()
        .is_some_and(|(w, quoted)| w == "2>&1" && !quoted);
    if with_stderr {
        words.pop();
    }
    let mut env = Vec::new();
    let mut words = words.into_iter().peekable();
    while let Some((name, value)) = words.peek().and_then(|(w, quoted)| {
        let (name, value) = w.split_once('=')?;
        let is_name = !quoted
            && !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        is_name.then(|| (name.to_string(), value.to_string()))
    }) {
        env.push((name, value));
        words.next();
    }
    match words.next() {
        Some((program, false)) if program == "agenthealth" => {}
        Some((program, _)) => return Err(format!("only agenthealth runs, not `{program}`")),
        None => return Err("no command".into()),
    }
    let args: Vec<String> = words.map(|(w, _)| w).collect();
    Ok(Shown {
        shown: line.to_string(),
        env,
        args,
        with_stderr,
    })
}

/// Splits `line` into words (each with whether any part of it was quoted), refusing the
/// shell syntax the harness does not run.
fn words(line: &str) -> Result<Vec<(String, bool)>, String> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.next_if(|c| *c == ' ').is_some() {}
        if chars.peek().is_none() {
            return Ok(out);
        }
        let mut word = String::new();
        let mut quoted = false;
        while let Some(c) = chars.next_if(|c| *c != ' ') {
            match c {
                '\'' | '"' => {
                    quoted = true;
                    loop {
                        match chars.next() {
                            Some(q) if q == c => break,
                            Some('$' | '`' | '\\') if c == '"' => {
                                return Err("no expansion or escapes inside \"…\"".into());
                            }
                            Some(x) => word.push(x),
                            None => return Err("unterminated quote".into()),
                        }
                    }
                }
                '#' if word.is_empty() => return Err("no comments".into()),
                '|' | ';' | '<' | '$' | '`' | '(' | ')' | '\\' | '*' | '?' => {
                    return Err(format!("`{c}` is shell syntax the harness does not run"));
                }
                '>' | '&' if !(word == "2" || word == "2>") => {
                    return Err(format!("`{c}` is shell syntax the harness does not run"));
                }
                _ => word.push(c),
            }
        }
        if !quoted && (word.starts_with("2>") && word != "2>&1") {
            return Err(format!("only 2>&1 is supported, not `{word}`"));
        }
        out.push((word, quoted));
    }
}

// ---------------------------------------------------------------------------------------
// Comparing

/// Keys whose values are measured durations.
const TIMING_KEYS: &[&str] = &[
    "latency_ms",
    "duration_ms",
    "dns_ms",
    "tcp_ms",
    "tls_ms",
    "http_ms",
];

/// What differs from run to run, as snapbox redactions (see the module doc): the port after
/// `127.0.0.1:` (or `%3A`), a login URL's `state` and `code_challenge`, the value of a timing
/// key, and a duration in `ms` or `s` (one placeholder for both units). Numbers are whole: a
/// digit right after a letter, `_` or `.` starts none.
fn redactions() -> &'static Redactions {
    static REDACTIONS: OnceLock<Redactions> = OnceLock::new();
    REDACTIONS.get_or_init(|| {
        let number = r"\d+(?:\.\d+)?";
        let before = r"(?:^|[^A-Za-z0-9_.])";
        let after = r"(?:$|[^A-Za-z0-9_])";
        let patterns = [
            (
                "[PORT]",
                r"127\.0\.0\.1(?::|%3A)(?<redacted>\d+|PORT)".to_string(),
            ),
            (
                "[NONCE]",
                r"(?:^|[?&])(?:state|code_challenge)=(?<redacted>[^&\n ]*)".into(),
            ),
            (
                "[TIMING]",
                format!(
                    r#"\b(?:{})(?:": |: |=)(?<redacted>{number})"#,
                    TIMING_KEYS.join("|")
                ),
            ),
            (
                "[DURATION]",
                format!(r"{before}(?<redacted>{number} ?ms|\d+\.\d+ s){after}"),
            ),
        ];
        let mut redactions = Redactions::new();
        for (placeholder, pattern) in patterns {
            let regex = Regex::new(&pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
            redactions
                .insert(placeholder, regex)
                .unwrap_or_else(|e| panic!("{placeholder}: {e}"));
        }
        redactions
    })
}

/// `text` with durations, ports and nonces redacted (see [`redactions`]). The golden outputs
/// of `tests/layout.rs` compare through it too.
pub(crate) fn mask(text: &str) -> String {
    redactions().redact(text)
}

/// Compares what a command printed with what the block shows, through snapbox: the block's
/// own values redacted like the output's, `...` on a line of its own matching any number of
/// lines, `[..]` any text within a line. The difference, when there is one, as a diff.
fn compare(expected: &str, got: &str) -> Result<(), String> {
    // Lines compare as lines: a last line without its newline is a line.
    let mut got = got.to_string();
    if !got.is_empty() && !got.ends_with('\n') {
        got.push('\n');
    }
    snapbox::Assert::new()
        .redact_with(redactions().clone())
        .normalize_paths(false)
        .palette(snapbox::report::Palette::plain())
        .try_eq(Some(&"printed"), got.into(), mask(expected).into())
        .map_err(|e| e.to_string())
}

// ---------------------------------------------------------------------------------------
// Evidence tables

/// The body rows (line number, text) of the tables under headings that contain "Evidence":
/// a table's first line is its header and its second the separator.
fn evidence_rows(text: &str) -> Vec<(usize, String)> {
    let mut rows = Vec::new();
    let mut under_evidence = false;
    let mut in_fence = false;
    let mut row_of_table = 0;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        let in_table = !in_fence && line.starts_with('|');
        row_of_table = if in_table { row_of_table + 1 } else { 0 };
        if in_fence {
            continue;
        }
        if line.starts_with('#') {
            under_evidence = line.contains("Evidence");
        } else if under_evidence && row_of_table > 2 {
            rows.push((i + 1, line.to_string()));
        }
    }
    rows
}

#[test]
fn masks_durations_ports_and_timing_keys() {
    assert_eq!(
        mask(
            "ping (http): HEALTHY  0.45 ms\n  reachability HEALTHY http_status=200 · tcp 0.09ms http 12ms"
        ),
        "ping (http): HEALTHY  [DURATION]\n  reachability HEALTHY http_status=200 · tcp [DURATION] http [DURATION]"
    );
    // Milliseconds and seconds are one mask; whole seconds are not durations of ours.
    assert_eq!(
        mask("latency 0.40 ms · run 5.01 s\n12 targets · 980.00 ms\nolder than 300 s, 1.5 steps"),
        "latency [DURATION] · run [DURATION]\n12 targets · [DURATION]\nolder than 300 s, 1.5 steps"
    );
    assert_eq!(mask("\"duration_ms\": 12.5,"), "\"duration_ms\": [TIMING],");
    assert_eq!(
        mask(
            "\"latency_ms\": 1.234,\n  tcp_ms: 0.065\nlatency_ms=3 deadline_ms=300 x_latency_ms: 4"
        ),
        "\"latency_ms\": [TIMING],\n  tcp_ms: [TIMING]\nlatency_ms=[TIMING] deadline_ms=300 x_latency_ms: 4"
    );
    assert_eq!(
        mask("at 127.0.0.1:45123/mcp, 2026-07-28, msg 5 msgs, v1.5 ms"),
        "at 127.0.0.1:[PORT]/mcp, 2026-07-28, msg 5 msgs, v1.5 ms"
    );
    assert_eq!(mask("\"latency_ms\": null"), "\"latency_ms\": null");
    // A document's `127.0.0.1:PORT` and a login URL's random values, as shown or as printed.
    assert_eq!(
        mask("http://127.0.0.1:PORT/a?state=Xy_1&code_challenge=…&x=1 127.0.0.1%3A80"),
        mask("http://127.0.0.1:4242/a?state=…&code_challenge=abc-9&x=1 127.0.0.1%3A8080")
    );
}

#[test]
fn ellipsis_lines_match_any_number_of_lines() {
    assert!(compare("a\n...\nd\n", "a\nb\nc\nd\n").is_ok());
    assert!(compare("a\n...\nd\n", "a\nd\n").is_ok());
    assert!(compare("a\n...\nd\n", "a\nb\n").is_err());
    assert!(compare("a\nb\n", "a\nb\nc\n").is_err());
    // Within a line, `[..]` is any text; durations are redacted on both sides.
    assert!(compare("took [..] in all\n", "took 3 tries in all\n").is_ok());
    assert!(compare("run 0.98 s\n", "run 1.02 s").is_ok());
    assert!(compare("run 0.98 s\n", "run 1.02 s\nmore\n").is_err());
}

#[test]
fn commands_are_agenthealth_with_environment_and_nothing_else() {
    let c =
        parse_command("API_TOKEN=x agenthealth doctor http 'a b' --bearer-env API_TOKEN").unwrap();
    assert_eq!(c.env, [("API_TOKEN".to_string(), "x".to_string())]);
    assert_eq!(
        c.args,
        ["doctor", "http", "a b", "--bearer-env", "API_TOKEN"]
    );
    assert!(!c.with_stderr);
    assert!(
        parse_command("agenthealth validate bad.yaml 2>&1")
            .unwrap()
            .with_stderr
    );
    for bad in [
        "curl http://x",
        "agenthealth check a.yaml | jq .",
        "agenthealth check a.yaml > out",
        "agenthealth check $FILE",
        "agenthealth check a.yaml # comment",
        "agenthealth check a.yaml; echo",
        "agenthealth check a.yaml 2>/dev/null",
        "agenthealth check \"$X\"",
    ] {
        assert!(parse_command(bad).is_err(), "{bad}");
    }
}

#[test]
fn markers_are_strict() {
    assert!(matches!(
        marker("<!-- file: a.yaml -->"),
        Ok(Some(Marker::File(_)))
    ));
    match marker("<!-- file: b.yaml from a.yaml: `x: '{\"k\": 1}'` => `x: '{}'` -->") {
        Ok(Some(Marker::Derived {
            name,
            base,
            old,
            new,
        })) => {
            assert_eq!((name.as_str(), base.as_str()), ("b.yaml", "a.yaml"));
            assert_eq!((old.as_str(), new.as_str()), ("x: '{\"k\": 1}'", "x: '{}'"));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        marker("<!-- console: interop -->"),
        Ok(Some(Marker::Interop))
    ));
    assert!(matches!(marker("<!-- a comment -->"), Ok(None)));
    for bad in [
        "<!-- console: server -->",
        "<!-- file: /etc/passwd -->",
        "<!-- file: ../x.yaml -->",
        "<!-- files: a.yaml -->",
        "<!-- file: b.yaml from a.yaml: x => y -->",
    ] {
        assert!(marker(bad).is_err(), "{bad}");
    }
    assert!(items("<!-- file: a.yaml -->\n\n```yaml\nx: 1\n```\n").is_err());
    assert!(items("<!-- file: a.yaml -->\n```json\n{}\n```\n").is_err());
    assert!(items("<!-- console: interop -->\n```yaml\nx: 1\n```\n").is_err());
    assert!(items("```text\n$ agenthealth version\n```\n").is_err());
    assert!(items("```console\n$ agenthealth version\n").is_err());
    assert!(items("<!-- file: a.yaml -->\n```yaml\nx: 1\n```\n<!-- file: b.yaml from a.yaml: `1` => `2` -->\n").is_ok());
}
