//! The documentation runs as shown: every fenced block of README.md and docs/*.md whose info
//! string is `console` is pasted, line by line, into a shell as a reader would, and what each
//! line prints is compared with the text in the block; the evidence tables list each key once;
//! and the exit-code tables are the binary's.
//!
//! # The console-block convention
//!
//! A `console` block is a transcript. A line starting with `$ ` is a command (a trailing `\`
//! continues it on the next line, as in a shell); the lines after it, up to the next command
//! or the end of the block, are its expected stdout.
//!
//! * A command is any shell line: it runs verbatim in the document's one `bash`, so pipes,
//!   redirections, `export`, `&` and `$(…)` work as they do for a reader, and `$ echo $?`
//!   prints the exit status of the line before. Nothing in a command or a file is rewritten.
//! * Only stdout is compared (`2>&1` shows stderr); stderr is shown when a line differs.
//! * The comparison is snapbox's: a line that is exactly `...` matches any number of output
//!   lines (none included), and `[..]` any text within a line.
//! * Redactions, applied to the text in the block and to the output alike (snapbox
//!   placeholders): the port after `127.0.0.1:` is `[PORT]` (a login's callback port differs
//!   from run to run); a number right before `ms` or ` ms` (`1.23 ms`, `tcp 0.09ms`) or a
//!   decimal number right before ` s` (`1.24 s`) is `[DURATION]`, one placeholder for both
//!   units (a run that takes 0.98 s in the document may take 1.02 s when it runs); the value
//!   of a timing key (`latency_ms`, `duration_ms`, `dns_ms`, `tcp_ms`, `tls_ms`, `http_ms`,
//!   after `": `, `: ` or `=`) is `[TIMING]`; a login URL's `state` and `code_challenge` are
//!   `[NONCE]`.
//!
//! Where a command runs:
//!
//! * **A network of its own.** Each document runs in a fresh user and network namespace
//!   (`unshare --user --map-root-user --net`, loopback up): the fake server's fixed port
//!   cannot collide with anything on the host, and documents run in parallel. The test runs
//!   this binary again in it ([`document_in_its_own_network_namespace`]). Without user
//!   namespaces (or root) the test fails, saying so; it never skips.
//! * **The fake server.** `$ cargo run [--release] --example fake_mcp_server [-- ARGS] &`
//!   starts the bundled fake MCP server (`tests/kit/src/fake_mcp`, the one `make demo` runs)
//!   in the harness, through the example's own command line (`fake_mcp::cli`), and compares
//!   its `listening on` line. With no arguments it listens on 127.0.0.1:3000 and serves the
//!   routes the README's tour lists. It stops at the document's end. A page that needs it
//!   shows the line itself.
//! * **Working directory.** A fresh temporary directory per document, laid out like the
//!   checkout: a copy of `examples/`, a link `tests` to the repository's `tests/` (the stdio
//!   fixtures) and `target/interop` to the installed interop servers.
//! * **Files.** `<!-- file: NAME -->` on the line right before a `yaml` block writes that
//!   block to `NAME` when the document reaches it; the paragraph before it must name the file
//!   (`` `NAME` ``), since a reader cannot see the comment. A file made from another is a
//!   command the page shows (`$ sed … a.yaml > b.yaml`).
//! * **Environment.** Cleared, then `PATH` (the directory of the binary under test first),
//!   `HOME` and `LANG=C.UTF-8` (the `·` between evidence items and the tree's box-drawing
//!   characters); stdin is `/dev/null`, stdout a pipe, so there is no colour and no progress
//!   line. Each line may run 60 s; then the document fails.
//! * **Real servers.** `<!-- console: interop -->` on the line right before a `console`
//!   block says it needs the servers `.ci/interop-setup` installs (the block itself puts them
//!   on `PATH`, as the page tells a reader to). When they are not installed the test fails,
//!   naming the block and what is missing, as `tests/interop` does.
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
//! `markdown`: fenced blocks and markers; `transcript`: the steps of a console block;
//! `shell`: the document's bash; `compare`: snapbox's comparison and the redactions; `tables`:
//! the evidence and exit-code tables. Running a document, and its namespace, is here.

mod compare;
mod markdown;
mod shell;
mod tables;
mod transcript;

use std::path::Path;
use std::process::Command;

use agenthealth_testkit::fake_mcp::FakeServer;
use agenthealth_testkit::fake_mcp::cli::{self, Parsed};

use crate::interop::{StdioKind, StdioServer, interop_dir};
use crate::util::{TempDir, bin};
use compare::compare;
pub(crate) use compare::mask;
use markdown::{Fence, Marker, fences, unnamed_programs};
use shell::Shell;
use transcript::{Step, transcript};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

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
                in_its_own_network($path);
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

/// A command shown without output that starts a server program names what it needs: the
/// program is in a `Needs:` paragraph before the block (`uvx`, `npx`, …), unless it is one
/// of the repository's fixtures.
#[test]
fn every_server_a_page_starts_is_named_as_a_prerequisite() {
    let mut problems = Vec::new();
    for doc in DOCUMENTS {
        let fences = fences(&read(doc)).unwrap_or_else(|e| panic!("{doc}:{e}"));
        for fence in fences.iter().filter(|f| f.info == "sh") {
            for program in unnamed_programs(fence) {
                problems.push(format!(
                    "{doc}:{}: `{program}` is started but no `Needs:` paragraph before the block names it",
                    fence.line
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------------------
// A namespace per document

/// The variable that tells [`document_in_its_own_network_namespace`] which document to run.
const DOCUMENT_VAR: &str = "AGENTHEALTH_DOCS_DOCUMENT";

/// Runs `doc`'s examples in this test binary, re-run in a fresh user and network namespace
/// (loopback only, so port 3000 is this document's alone); panics with what it reported.
fn in_its_own_network(doc: &str) {
    let test = format!(
        "{}::document_in_its_own_network_namespace",
        module_path!().split_once("::").map_or("docs", |(_, m)| m)
    );
    let exe = std::env::current_exe().expect("the test binary");
    let out = Command::new("unshare")
        .args(["--user", "--map-root-user", "--net", "--"])
        .arg(exe)
        .args([
            &test,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(DOCUMENT_VAR, doc)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run unshare (util-linux)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !stdout.contains("running 1 test") {
        panic!(
            "{doc}: cannot run in a network namespace of its own (`unshare --user \
             --map-root-user --net`: root or unprivileged user namespaces needed): {stderr}"
        );
    }
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{doc}:\n{stderr}"
    );
}

/// The document [`DOCUMENT_VAR`] names, run here: [`in_its_own_network`] starts this test in
/// its namespace. Run by hand (`--ignored`) without the variable, it does nothing.
#[test]
#[ignore = "the document tests run it, each in a network namespace of its own"]
fn document_in_its_own_network_namespace() {
    let Some(doc) = std::env::var_os(DOCUMENT_VAR) else {
        return;
    };
    loopback_up().expect("bring up the namespace's loopback");
    run_document(&doc.to_string_lossy());
}

/// Sets `lo` up in this network namespace (a new one has it down).
#[allow(unsafe_code)]
fn loopback_up() -> std::io::Result<()> {
    use nix::libc;
    use std::os::fd::AsRawFd;
    let socket = std::net::UdpSocket::bind("0.0.0.0:0")?;
    // SAFETY: `ifreq` is plain data (all zeroes is a valid value), the name fits its array,
    // and both ioctls read and write only that struct.
    unsafe {
        let mut req: libc::ifreq = std::mem::zeroed();
        for (to, from) in req.ifr_name.iter_mut().zip(b"lo") {
            *to = *from as libc::c_char;
        }
        if libc::ioctl(socket.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        if libc::ioctl(socket.as_raw_fd(), libc::SIOCSIFFLAGS, &req) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Running a document

/// Runs every console block of `doc` (relative to the repository root) in one shell, writing
/// its files as it reaches them; panics listing every line whose output differs, after all
/// have run (or at the first line that never finishes).
fn run_document(doc: &str) {
    let text = read(doc);
    let fences = fences(&text).unwrap_or_else(|e| panic!("{doc}:{e}"));
    let dir = TempDir::new("docs");
    let work = dir.0.join("work");
    lay_out(&work);
    // The binary under test first on PATH, as `make install` puts it there for a reader.
    let bin_dir = dir.0.join("bin");
    std::fs::create_dir_all(&bin_dir).expect("bin/");
    std::os::unix::fs::symlink(bin(), bin_dir.join("agenthealth")).expect("link the binary");
    let mut path = vec![bin_dir];
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let mut shell = Shell::start(&work, &std::env::join_paths(path).expect("PATH"));
    let mut servers: Vec<FakeServer> = Vec::new();
    let mut problems = Vec::new();
    for fence in &fences {
        if let Some(Marker::File(name)) = &fence.marker {
            let path = work.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).expect("file's directory");
            }
            std::fs::write(&path, fence.text()).expect("write file");
        }
        if fence.info != "console" {
            continue;
        }
        // Parsed first, so that a malformed block is reported as such wherever it is.
        let steps = transcript(fence).unwrap_or_else(|e| panic!("{doc}:{e}"));
        if matches!(fence.marker, Some(Marker::Interop)) {
            interop_installed(doc, fence);
        }
        let browser = matches!(fence.marker, Some(Marker::Browser));
        for step in steps {
            let (line, shown, expected, ran) = match step {
                Step::StartFake {
                    line,
                    args,
                    expected,
                } => {
                    let ran = start_fake(args, &mut servers);
                    (line, "the fake server's start".to_string(), expected, ran)
                }
                Step::Run {
                    line,
                    command,
                    expected,
                } => match shell.run(&command, browser) {
                    Ok(ran) => (line, format!("`{command}`"), expected, ran),
                    Err(e) => {
                        problems.push(format!("{doc}:{line}: `{command}` {e}"));
                        return report(doc, &problems);
                    }
                },
            };
            if let Err(diff) = compare(&expected, &ran.stdout) {
                problems.push(format!(
                    "{doc}:{line}: {shown} printed something else (exit {}).\n{diff}\nstderr:\n{}",
                    ran.code, ran.stderr
                ));
            }
        }
    }
    drop(shell);
    drop(servers);
    report(doc, &problems);
}

fn report(doc: &str, problems: &[String]) {
    assert!(
        problems.is_empty(),
        "{} example(s) of {doc} differ from the binary:\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

/// The fake server of `cargo run --example fake_mcp_server -- ARGS &`, started as the example
/// starts it; what the example prints, on stdout or stderr.
fn start_fake(args: Vec<String>, servers: &mut Vec<FakeServer>) -> shell::Ran {
    let failed = |line: String| shell::Ran {
        code: 1,
        stdout: String::new(),
        stderr: format!("fake_mcp_server: {line}\n"),
    };
    match cli::parse(args) {
        Ok(Parsed::Serve(options)) => match options.start() {
            Ok(server) => {
                let stdout = format!("listening on {}\n", server.base());
                servers.push(server);
                shell::Ran {
                    code: 0,
                    stdout,
                    stderr: String::new(),
                }
            }
            Err(line) => failed(line),
        },
        Ok(Parsed::Print(text)) => shell::Ran {
            code: 0,
            stdout: text,
            stderr: String::new(),
        },
        Err(line) => failed(line),
    }
}

/// Panics unless the interop servers the documents use are installed.
fn interop_installed(doc: &str, fence: &Fence) {
    // The two kinds the documents use: a Python server from PyPI and a Node one from npm.
    for kind in [StdioKind::Time, StdioKind::Filesystem] {
        if let Err(missing) = StdioServer::try_prepare(kind) {
            panic!(
                "{doc}:{}: the block needs the interop servers: {missing}",
                fence.line
            );
        }
    }
}

/// The working directory, laid out like a checkout for the pages' relative paths: a copy of
/// `examples/`, `tests` (the stdio fixtures) and `target/interop` (the installed servers).
fn lay_out(work: &Path) {
    copy_dir(&Path::new(ROOT).join("examples"), &work.join("examples"));
    std::os::unix::fs::symlink(Path::new(ROOT).join("tests"), work.join("tests"))
        .expect("link tests/");
    std::fs::create_dir_all(work.join("target")).expect("target/");
    std::os::unix::fs::symlink(interop_dir(), work.join("target/interop"))
        .expect("link target/interop");
}

/// Copies `from` to `to` recursively.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("examples copy");
    for entry in std::fs::read_dir(from).expect("examples/") {
        let entry = entry.expect("examples/ entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("example copy");
        }
    }
}

fn read(doc: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(doc)).unwrap_or_else(|e| panic!("{doc}: {e}"))
}
