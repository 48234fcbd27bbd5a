//! One bash per document, fed the document's `$` lines as a reader pastes them: each line is
//! followed by a sentinel command that prints a marker (with the line's exit status) on stdout
//! and one on stderr, and the harness reads each stream up to its marker. The shell's own
//! output is the synchronisation: no sleeps, no guessing when a command is done.

use std::io::{BufRead, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

/// How long one line may run before the document fails.
const LINE_LIMIT: Duration = Duration::from_secs(60);

/// Ends every line: the marker on stdout carries the exit status; `(exit …)` gives `$?` back,
/// so the page's own `echo $?` prints the status of its command.
const SENTINEL: &str = "__ah_rc=$?; printf '\\036%d\\036\\n' \"$__ah_rc\"; \
                        printf '\\036\\036\\n' >&2; (exit \"$__ah_rc\")\n";

/// What a line printed, and its exit status.
pub(super) struct Ran {
    pub(super) code: i32,
    pub(super) stdout: String,
    pub(super) stderr: String,
}

enum Chunk {
    Out(Vec<u8>),
    Err(Vec<u8>),
}

/// A running `bash --norc --noprofile` in a process group of its own (killed, with every
/// background job it started, when dropped). Its commands read `/dev/null`: the lines reach
/// bash on another descriptor, so no command can swallow the lines after it.
pub(super) struct Shell {
    child: Child,
    stdin: ChildStdin,
    chunks: Receiver<Chunk>,
}

impl Shell {
    /// Starts bash in `dir` with an environment of `PATH`, `HOME` and `LANG=C.UTF-8` only.
    pub(super) fn start(dir: &Path, path: &std::ffi::OsStr) -> Shell {
        let mut cmd = Command::new("bash");
        // The outer bash moves the pipe to descriptor 3 and execs the one that reads its
        // script from there, with /dev/null as stdin; that one closes 3 (it reads a dup).
        cmd.args([
            "--norc",
            "--noprofile",
            "-c",
            "exec bash --norc --noprofile /dev/fd/3 3<&0 < /dev/null",
        ])
        .current_dir(dir)
        .env_clear()
        .env("PATH", path)
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
        if let Some(home) = std::env::var_os("HOME") {
            cmd.env("HOME", home);
        }
        let mut child = cmd.spawn().expect("start bash");
        let mut stdin = child.stdin.take().expect("bash's stdin");
        let (tx, chunks) = channel();
        forward(child.stdout.take().expect("stdout"), tx.clone(), Chunk::Out);
        forward(child.stderr.take().expect("stderr"), tx, Chunk::Err);
        stdin.write_all(b"exec 3<&-\n").expect("write to bash");
        Shell {
            child,
            stdin,
            chunks,
        }
    }

    /// Runs `line` (one line, or several joined by `\`-newlines) as typed at a prompt and
    /// waits for it: its output and status, or why it never finished. With `browser`, a login
    /// URL it prints is visited as a browser would (see [`play_browser`]).
    pub(super) fn run(&mut self, line: &str, browser: bool) -> Result<Ran, String> {
        self.stdin
            .write_all(format!("{line}\n{SENTINEL}").as_bytes())
            .map_err(|e| format!("bash is gone: {e}"))?;
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let (mut code, mut err_done, mut visited) = (None, false, 0);
        let until = Instant::now() + LINE_LIMIT;
        while code.is_none() || !err_done {
            let left = until.saturating_duration_since(Instant::now());
            match self.chunks.recv_timeout(left) {
                Ok(Chunk::Out(bytes)) => out.extend_from_slice(&bytes),
                Ok(Chunk::Err(bytes)) => err.extend_from_slice(&bytes),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!(
                        "still running after {} s; it printed:\n{}{}",
                        LINE_LIMIT.as_secs(),
                        String::from_utf8_lossy(&out),
                        String::from_utf8_lossy(&err)
                    ));
                }
                Err(RecvTimeoutError::Disconnected) => return Err("bash exited".into()),
            }
            if browser {
                visited = play_browser(&out, visited);
            }
            if code.is_none() {
                code = take_status(&mut out);
            }
            if !err_done && let Some(at) = find(&err, b"\x1e\x1e\n") {
                err.truncate(at);
                err_done = true;
            }
        }
        Ok(Ran {
            code: code.unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out).into_owned(),
            stderr: String::from_utf8_lossy(&err).into_owned(),
        })
    }
}

impl Drop for Shell {
    fn drop(&mut self) {
        let group = nix::unistd::Pid::from_raw(-(self.child.id() as i32));
        let _ = nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

/// Sends what `from` produces, chunk by chunk, until it closes.
fn forward(mut from: impl Read + Send + 'static, to: Sender<Chunk>, wrap: fn(Vec<u8>) -> Chunk) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n @ 1..) = from.read(&mut buf) {
            if to.send(wrap(buf[..n].to_vec())).is_err() {
                return;
            }
        }
    });
}

/// The status in the stdout marker, with the marker cut off `out`, once it has arrived.
fn take_status(out: &mut Vec<u8>) -> Option<i32> {
    let start = out.iter().rposition(|b| *b == 0x1e)?;
    if !out[start..].ends_with(b"\n") {
        return None;
    }
    let opening = out[..start].iter().rposition(|b| *b == 0x1e)?;
    let code = std::str::from_utf8(&out[opening + 1..start])
        .ok()?
        .parse()
        .ok()?;
    out.truncate(opening);
    Some(code)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The line a login prints before its authorization URL.
const OPEN_URL: &str = "Open this URL to authorize AgentHealth:";

/// Plays the browser for `agenthealth login`: when `out` holds a complete URL line after
/// [`OPEN_URL`] beyond the first `done` bytes, fetches it and follows its redirect (to the
/// login's loopback callback). Returns how far `out` has been read.
fn play_browser(out: &[u8], done: usize) -> usize {
    let text = String::from_utf8_lossy(&out[done..]);
    let Some(at) = text.find(OPEN_URL) else {
        return done;
    };
    let rest = &text[at + OPEN_URL.len()..];
    let mut lines = rest.split_inclusive('\n');
    let (Some("\n"), Some(url)) = (lines.next(), lines.next()) else {
        return done;
    };
    if !url.ends_with('\n') {
        return done;
    }
    if let Some((_, Some(location))) = http_get(url.trim()) {
        let _ = http_get(&location);
    }
    done + at + OPEN_URL.len() + 1 + url.len()
}

/// A GET of an `http://127.0.0.1:PORT/…` URL: its status and `Location`.
fn http_get(url: &str) -> Option<(u16, Option<String>)> {
    let rest = url.strip_prefix("http://")?;
    let (authority, target) = rest.split_at(rest.find('/')?);
    let mut s = std::net::TcpStream::connect(authority).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    let mut lines = answer.lines().map_while(Result::ok);
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let location = lines.take_while(|l| !l.is_empty()).find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("location")
            .then(|| value.trim().to_string())
    });
    Some((status, location))
}

#[test]
fn a_shell_runs_lines_in_order_and_keeps_its_state() {
    let dir = crate::util::TempDir::new("docs-shell");
    let mut sh = Shell::start(&dir.0, &std::env::var_os("PATH").unwrap_or_default());
    let ran = sh
        .run("export X=1; echo \"x=$X\"; echo oops >&2; false", false)
        .unwrap();
    assert_eq!(
        (ran.code, ran.stdout.as_str(), ran.stderr.as_str()),
        (1, "x=1\n", "oops\n")
    );
    // `$?` is the last line's status; the environment and the directory carry over.
    let ran = sh.run("echo $?", false).unwrap();
    assert_eq!(ran.stdout, "1\n");
    let ran = sh
        .run("printf no-newline; cat; echo \"$X\"", false)
        .unwrap();
    assert_eq!((ran.code, ran.stdout.as_str()), (0, "no-newline1\n"));
    let ran = sh.run("echo a \\\nb", false).unwrap();
    assert_eq!(ran.stdout, "a b\n");
}
