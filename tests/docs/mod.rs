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
//!
//! `markdown`: fenced blocks and markers; `transcript`: the steps of a console block and how a
//! command runs; `compare`: snapbox's comparison and the redactions; `tables`: the evidence
//! and exit-code tables. Running a document is here.

mod compare;
mod markdown;
mod tables;
mod transcript;

use std::path::Path;

use agenthealth_testkit::fake_mcp::{FakeServer, preset};

use crate::interop::{NotInstalled, StdioKind, StdioServer, interop_dir};
use crate::util::TempDir;
use compare::compare;
pub(crate) use compare::mask;
use markdown::{Fence, Item, Marker, item_text, items};
use transcript::{Step, transcript};

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
