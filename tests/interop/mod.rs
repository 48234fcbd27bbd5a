//! Interop harness: starts the real MCP servers that `.ci/interop-setup` installs
//! into `$AGENTHEALTH_INTEROP_DIR` (default `target/interop`), so tests can point the
//! built `agenthealth` binary at them. See `tests/interop/README.md` for what each
//! server is and which protocol revisions it speaks.
//!
//! * HTTP servers: [`Server::start`] spawns the server on 127.0.0.1 with an ephemeral
//!   port, waits for its `listening on http://127.0.0.1:PORT/mcp` line on stdout
//!   (no sleeps, bounded by [`READY_TIMEOUT`]) and returns its MCP URL. Dropping the
//!   [`Server`] kills its whole process group and reaps it.
//! * stdio servers: agenthealth spawns those itself, so [`StdioServer::prepare`] only
//!   returns the command line (plus a scratch directory it owns, where the server
//!   needs one).
//! * The OAuth lab ([`oauth`]): a real authorization server, MCP servers protected by the
//!   SDKs' own auth pieces and the conformance suite; every HTTP process here is a
//!   [`Process`].
//!
//! Not installed: the test fails (panics) with what is missing and "run
//! .ci/interop-setup", with or without `CI`. A test that did not run never passes:
//! `make test` runs `.ci/interop-setup` first, so a fresh clone gets the servers.
//!
//! Std only; the process-group kill goes through `/bin/kill` so this stays free of
//! `unsafe` and of extra crates.

use std::ffi::OsString;
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;

use agenthealth_testkit::lock;

pub mod oauth;
mod oauth_selftest;
mod selftest;

/// The handshake revisions agenthealth supports, oldest first: the values a
/// pinned Python server ([`Kind::PyHttp`] / [`StdioKind::Py`] `pin`) can take.
/// `"2024-11-05"` also works as a pin, for "unsupported revision" tests.
pub const LEGACY_REVISIONS: [&str; 3] = ["2025-03-26", "2025-06-18", "2025-11-25"];
/// The stateless revision, reached with `server/discover`.
pub const MODERN_REVISION: &str = "2026-07-28";

/// Upper bound on the wait for an HTTP server's readiness line. Python servers
/// take about 1 s to start, Node ones about 0.3 s; the margin covers a loaded
/// 2-core CI machine running tests in parallel.
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// The line prefix our fixture scripts and `servers/loopback.cjs` print once bound.
const READY_PREFIX: &str = "listening on ";
/// Bytes of a server's stderr kept for failure messages.
const STDERR_TAIL: usize = 16 * 1024;

/// How the Python server answers Streamable HTTP POSTs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpMode {
    /// Sessions (`Mcp-Session-Id`), answers as `text/event-stream`.
    Sse,
    /// Sessions, answers as `application/json`.
    Json,
    /// No sessions, answers as `application/json`.
    Stateless,
    /// No sessions, answers as `text/event-stream`.
    StatelessSse,
}

impl HttpMode {
    fn flag(self) -> &'static str {
        match self {
            HttpMode::Sse => "sse",
            HttpMode::Json => "json",
            HttpMode::Stateless => "stateless",
            HttpMode::StatelessSse => "stateless-sse",
        }
    }
}

/// An MCP server reached over Streamable HTTP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Our `servers/py_server.py` on the Python SDK `mcp` 2.3.0. Unpinned it
    /// speaks every revision; `pin: Some(rev)` makes it a server of that one
    /// handshake revision that refuses 2026-07-28 requests like an old server.
    PyHttp {
        mode: HttpMode,
        pin: Option<&'static str>,
    },
    /// `@modelcontextprotocol/server-everything streamableHttp` (TS SDK 1.32.2,
    /// sessions, SSE answers): handshake revisions only.
    Everything,
    /// Our `servers/ts1_server.mjs` on `@modelcontextprotocol/sdk` 1.32.2 with
    /// sessions and `enableJsonResponse`: handshake revisions only.
    Ts1Json,
    /// Our `servers/ts2_server.mjs` on `@modelcontextprotocol/server` 2.4.0.
    /// `legacy_reject: false`: both eras, stateless. `true`: 2026-07-28 only;
    /// `initialize` gets HTTP 400 / -32022.
    Ts2 { legacy_reject: bool },
}

/// An MCP server reached over stdio (agenthealth spawns it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StdioKind {
    /// Our `servers/py_server.py --transport stdio`; `pin` as in [`Kind::PyHttp`].
    Py { pin: Option<&'static str> },
    /// `mcp-server-time --local-timezone UTC` from `PyPI` (on `mcp` 2.3.0): both eras.
    Time,
    /// `@modelcontextprotocol/server-filesystem` on a fresh empty directory: handshake only.
    Filesystem,
    /// `@modelcontextprotocol/server-memory` with its store in a fresh directory: handshake only.
    Memory,
    /// `@modelcontextprotocol/server-everything stdio`: handshake only.
    Everything,
    /// Our `servers/ts2_server.mjs --transport stdio`; `legacy_reject` as in [`Kind::Ts2`].
    Ts2 { legacy_reject: bool },
}

/// What a server was observed to answer (tests/interop/README.md has the table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Eras {
    /// `server/discover` at 2026-07-28 succeeds.
    pub modern: bool,
    /// The version `initialize` negotiates when the client offers 2025-11-25;
    /// `None` when `initialize` is rejected (2026-07-28-only servers).
    pub legacy: Option<&'static str>,
}

/// Answers `server/discover` and negotiates 2025-11-25 in `initialize`.
const BOTH_ERAS: Eras = Eras {
    modern: true,
    legacy: Some("2025-11-25"),
};
/// `server/discover` fails; `initialize` negotiates 2025-11-25.
const HANDSHAKE_ONLY: Eras = Eras {
    modern: false,
    legacy: Some("2025-11-25"),
};
/// Answers `server/discover`; `initialize` gets -32022.
const MODERN_ONLY: Eras = Eras {
    modern: true,
    legacy: None,
};

/// A server pinned to one handshake revision.
fn pinned(revision: &'static str) -> Eras {
    Eras {
        modern: false,
        legacy: Some(revision),
    }
}

impl Kind {
    /// The revisions this server answers, as observed with curl.
    pub fn eras(self) -> Eras {
        match self {
            Kind::PyHttp { pin: None, .. }
            | Kind::Ts2 {
                legacy_reject: false,
            } => BOTH_ERAS,
            Kind::PyHttp { pin: Some(pin), .. } => pinned(pin),
            Kind::Everything | Kind::Ts1Json => HANDSHAKE_ONLY,
            Kind::Ts2 {
                legacy_reject: true,
            } => MODERN_ONLY,
        }
    }
}

impl StdioKind {
    /// The revisions this server answers, as observed over stdio.
    pub fn eras(self) -> Eras {
        match self {
            StdioKind::Py { pin: None }
            | StdioKind::Time
            | StdioKind::Ts2 {
                legacy_reject: false,
            } => BOTH_ERAS,
            StdioKind::Py { pin: Some(pin) } => pinned(pin),
            StdioKind::Filesystem | StdioKind::Memory | StdioKind::Everything => HANDSHAKE_ONLY,
            StdioKind::Ts2 {
                legacy_reject: true,
            } => MODERN_ONLY,
        }
    }
}

/// Where `.ci/interop-setup` installed the servers.
pub fn interop_dir() -> PathBuf {
    match std::env::var_os("AGENTHEALTH_INTEROP_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/interop"),
    }
}

/// A running HTTP MCP server. Dropping it kills the server's process group.
pub struct Server {
    process: Process,
}

impl Server {
    /// Starts `kind` and waits until it accepts requests. Panics when it is not
    /// installed ([`NotInstalled`]) or does not come up within [`READY_TIMEOUT`].
    pub fn start(kind: Kind) -> Server {
        Server::try_start(kind).unwrap_or_else(|missing| panic!("{missing}"))
    }

    /// [`Server::start`], with a missing install as an error instead of a panic.
    pub fn try_start(kind: Kind) -> Result<Server, NotInstalled> {
        let dir = interop_dir();
        let servers = dir.join("servers");
        let command = match kind {
            Kind::PyHttp { mode, pin } => {
                let python = require_python(&format!("{kind:?}"), &dir)?;
                let mut command = Command::new(python);
                command.arg(servers.join("py_server.py"));
                command.args(["--transport", "http", "--mode", mode.flag()]);
                if let Some(pin) = pin {
                    command.args(["--pin", pin]);
                }
                command
            }
            Kind::Everything => {
                let node = require_node(&format!("{kind:?}"), &dir)?;
                let entry = require(&format!("{kind:?}"), everything_entry(&dir))?;
                let mut command = Command::new(node);
                // The preload binds 127.0.0.1 and prints the readiness line; with
                // PORT=0 the kernel picks the port, so there is no port race.
                command
                    .arg("-r")
                    .arg(servers.join("loopback.cjs"))
                    .arg(entry)
                    .arg("streamableHttp");
                command
                    .env("PORT", "0")
                    .env("INTEROP_ANNOUNCE_PATH", "/mcp");
                command
            }
            Kind::Ts1Json => {
                let node = require_node(&format!("{kind:?}"), &dir)?;
                let mut command = Command::new(node);
                command
                    .arg("--preserve-symlinks-main")
                    .arg(servers.join("ts1_server.mjs"));
                command.args(["--transport", "http", "--mode", "json"]);
                command
            }
            Kind::Ts2 { legacy_reject } => {
                let node = require_node(&format!("{kind:?}"), &dir)?;
                let mut command = Command::new(node);
                command
                    .arg("--preserve-symlinks-main")
                    .arg(servers.join("ts2_server.mjs"));
                command.args(["--transport", "http"]);
                if legacy_reject {
                    command.args(["--legacy", "reject"]);
                }
                command
            }
        };
        Ok(Server {
            process: Process::spawn(&format!("{kind:?}"), command),
        })
    }

    /// The MCP endpoint, e.g. `http://127.0.0.1:41234/mcp`.
    pub fn url(&self) -> &str {
        self.process.url()
    }
}

/// A fixture process that announces `listening on URL` on stdout once it accepts
/// requests (every HTTP server here, the OAuth lab's included). Dropping it kills its
/// process group and reaps it.
pub struct Process {
    url: String,
    /// The stdout lines before the readiness line (what a server announces besides its
    /// URL, e.g. the Python SDK lab's `issuer …`).
    preamble: Vec<String>,
    child: Child,
    /// Held open: our servers exit by themselves when it closes (see
    /// `INTEROP_EXIT_ON_STDIN_EOF`), so even a test process killed before Drop
    /// leaves no server behind.
    stdin: Option<ChildStdin>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_reader: Option<JoinHandle<()>>,
}

impl Process {
    /// Spawns `command` in its own process group and waits (at most [`READY_TIMEOUT`])
    /// for its readiness line, which must name a `http://127.0.0.1:` URL. Panics, with
    /// the process's stderr, when it exits or times out first. `label` names it in
    /// messages.
    pub fn spawn(label: &str, mut command: Command) -> Process {
        command
            .env("INTEROP_EXIT_ON_STDIN_EOF", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group, so Drop can kill anything it started too.
            .process_group(0);
        let mut child = command
            .spawn()
            .unwrap_or_else(|err| panic!("interop: cannot start {label} ({command:?}): {err}"));
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut stderr_pipe = child.stderr.take().expect("stderr is piped");

        let stderr = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&stderr);
        let stderr_reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = stderr_pipe.read(&mut buf) {
                let mut tail = lock(&sink);
                tail.extend_from_slice(&buf[..n]);
                let excess = tail.len().saturating_sub(STDERR_TAIL);
                tail.drain(..excess);
            }
        });

        // Reads stdout to its end (so the server never blocks on a full pipe) and
        // reports the first readiness line. The channel closes when stdout does,
        // which is how an early exit shows up below.
        let (ready_tx, ready_rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut ready_tx = Some(ready_tx);
            let mut before = Vec::new();
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix(READY_PREFIX) {
                    if let Some(tx) = ready_tx.take() {
                        let _ = tx.send((url.trim().to_owned(), std::mem::take(&mut before)));
                    }
                } else if ready_tx.is_some() {
                    before.push(line);
                }
            }
        });

        let mut process = Process {
            url: String::new(),
            preamble: Vec::new(),
            stdin: child.stdin.take(),
            child,
            stderr,
            stderr_reader: Some(stderr_reader),
        };
        match ready_rx.recv_timeout(READY_TIMEOUT) {
            Ok((url, preamble)) => {
                assert!(
                    url.starts_with("http://127.0.0.1:"),
                    "interop: {label} announced {url:?}, expected a 127.0.0.1 URL"
                );
                process.url = url;
                process.preamble = preamble;
                process
            }
            Err(reason) => {
                let what = match reason {
                    mpsc::RecvTimeoutError::Timeout => format!("not ready after {READY_TIMEOUT:?}"),
                    mpsc::RecvTimeoutError::Disconnected => "exited before it was ready".to_owned(),
                };
                // Stop it and collect all of its stderr before reporting.
                process.stop();
                panic!(
                    "interop: {label} {what}; its stderr:\n{}",
                    process.stderr_tail()
                );
            }
        }
    }

    /// The URL of the readiness line.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The value of the `NAME value` line printed before the readiness line, if any.
    pub fn announced(&self, name: &str) -> Option<&str> {
        self.preamble.iter().find_map(|line| {
            line.strip_prefix(name)
                .and_then(|rest| rest.strip_prefix(' '))
                .map(str::trim)
        })
    }

    /// The last 16 KiB the process wrote to stderr, for assertion messages.
    pub fn stderr_tail(&self) -> String {
        String::from_utf8_lossy(&lock(&self.stderr)).into_owned()
    }

    /// Kills the process group, reaps the child and waits for the stderr reader.
    /// Safe to call twice.
    fn stop(&mut self) {
        drop(self.stdin.take());
        if matches!(self.child.try_wait(), Ok(None)) {
            let group = format!("-{}", self.child.id());
            let killed = Command::new("kill")
                .args(["-s", "KILL", "--", &group])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|status| status.success());
            if !killed {
                let _ = self.child.kill();
            }
        }
        let _ = self.child.wait();
        if let Some(reader) = self.stderr_reader.take() {
            let _ = reader.join();
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The command line of a stdio MCP server, for agenthealth to spawn. Owns the
/// scratch directory some servers need; it is removed on Drop.
#[derive(Debug)]
pub struct StdioServer {
    kind: StdioKind,
    program: PathBuf,
    args: Vec<OsString>,
    scratch: Option<PathBuf>,
}

impl StdioServer {
    /// The command for `kind`; panics when it is not installed ([`NotInstalled`]).
    /// The command line needs no environment of its own: where a server reads a
    /// variable, it is set through `/usr/bin/env` at the front of the command.
    pub fn prepare(kind: StdioKind) -> StdioServer {
        StdioServer::try_prepare(kind).unwrap_or_else(|missing| panic!("{missing}"))
    }

    /// [`StdioServer::prepare`], with a missing install as an error instead of a panic.
    pub fn try_prepare(kind: StdioKind) -> Result<StdioServer, NotInstalled> {
        let dir = interop_dir();
        let servers = dir.join("servers");
        let nm = dir.join("node_modules/@modelcontextprotocol");
        let name = format!("{kind:?}");
        let mut scratch = None;
        let (program, args): (PathBuf, Vec<OsString>) = match kind {
            StdioKind::Py { pin } => {
                let python = require_python(&name, &dir)?;
                let mut args = vec![
                    servers.join("py_server.py").into(),
                    "--transport".into(),
                    "stdio".into(),
                ];
                if let Some(pin) = pin {
                    args.extend(["--pin".into(), pin.into()]);
                }
                (python, args)
            }
            StdioKind::Time => {
                require_python(&name, &dir)?;
                let time = require(&name, dir.join("venv/bin/mcp-server-time"))?;
                (time, vec!["--local-timezone".into(), "UTC".into()])
            }
            StdioKind::Filesystem => {
                let node = require_node(&name, &dir)?;
                let entry = require(&name, nm.join("server-filesystem/dist/index.js"))?;
                let root = scratch_dir();
                let args = vec![entry.into(), root.clone().into()];
                scratch = Some(root);
                (node, args)
            }
            StdioKind::Memory => {
                let node = require_node(&name, &dir)?;
                let entry = require(&name, nm.join("server-memory/dist/index.js"))?;
                let env = require(&name, PathBuf::from("/usr/bin/env"))?;
                let root = scratch_dir();
                let mut store = OsString::from("MEMORY_FILE_PATH=");
                store.push(root.join("memory.jsonl"));
                scratch = Some(root);
                (env, vec![store, node.into(), entry.into()])
            }
            StdioKind::Everything => {
                let node = require_node(&name, &dir)?;
                let entry = require(&name, everything_entry(&dir))?;
                (node, vec![entry.into(), "stdio".into()])
            }
            StdioKind::Ts2 { legacy_reject } => {
                let node = require_node(&name, &dir)?;
                let mut args = vec![
                    "--preserve-symlinks-main".into(),
                    servers.join("ts2_server.mjs").into(),
                    "--transport".into(),
                    "stdio".into(),
                ];
                if legacy_reject {
                    args.extend(["--legacy".into(), "reject".into()]);
                }
                (node, args)
            }
        };
        Ok(StdioServer {
            kind,
            program,
            args,
            scratch,
        })
    }

    pub fn kind(&self) -> StdioKind {
        self.kind
    }

    /// Program then arguments, e.g. for `agenthealth ping mcp --stdio -- <argv…>`.
    pub fn argv(&self) -> Vec<OsString> {
        std::iter::once(self.program.clone().into_os_string())
            .chain(self.args.iter().cloned())
            .collect()
    }

    /// A `Command` running the server directly, for tests that talk to it themselves.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        command
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        if let Some(dir) = self.scratch.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn everything_entry(dir: &Path) -> PathBuf {
    dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// The venv's python, once `.ci/interop-setup` finished the Python half.
fn require_python(name: &str, dir: &Path) -> Result<PathBuf, NotInstalled> {
    require(name, dir.join(".venv-stamp"))?;
    require(name, dir.join("servers/py_server.py"))?;
    require(name, dir.join("venv/bin/python"))
}

/// `node` from PATH, once `.ci/interop-setup` finished the npm half.
fn require_node(name: &str, dir: &Path) -> Result<PathBuf, NotInstalled> {
    require(name, dir.join(".npm-stamp"))?;
    require(name, dir.join("servers/loopback.cjs"))?;
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join("node"))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| NotInstalled::new(name, "`node` on PATH"))
}

fn require(name: &str, path: PathBuf) -> Result<PathBuf, NotInstalled> {
    if path.exists() {
        Ok(path)
    } else {
        Err(NotInstalled::new(name, &path.display().to_string()))
    }
}

/// A server a test needs is not installed: the test fails with this message. It is
/// never a pass, with or without `CI`.
#[derive(Debug)]
pub struct NotInstalled {
    server: String,
    missing: String,
}

impl NotInstalled {
    fn new(server: &str, missing: &str) -> NotInstalled {
        NotInstalled {
            server: server.to_owned(),
            missing: missing.to_owned(),
        }
    }
}

impl fmt::Display for NotInstalled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "interop server {} is not installed: {} not found (run .ci/interop-setup; \
             it installs into {})",
            self.server,
            self.missing,
            interop_dir().display()
        )
    }
}

/// A fresh, empty directory under the system temp dir.
fn scratch_dir() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "agenthealth-interop-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|err| panic!("interop: cannot create {}: {err}", dir.display()));
    dir
}
