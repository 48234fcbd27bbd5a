//! Running the binary and asserting on its outcome.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one run of the binary produced.
pub struct Outcome {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    /// Wall time of the run, for deadline assertions.
    pub elapsed: Duration,
}

/// `doc` without its top-level `duration_ms` (asserted to be a number first).
pub fn untimed(mut doc: serde_json::Value) -> serde_json::Value {
    let ms = doc.as_object_mut().and_then(|m| m.remove("duration_ms"));
    assert!(
        ms.as_ref().is_some_and(serde_json::Value::is_number),
        "duration_ms: {ms:?}"
    );
    doc
}

impl Outcome {
    /// Parses stdout as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }

    /// The JSON document without the run's `duration_ms`, which differs from run to run (it
    /// must be there: a number of milliseconds).
    pub fn json_untimed(&self) -> serde_json::Value {
        untimed(self.json())
    }

    /// Asserts a tool failure: exit 6, nothing on stdout, one line on stderr.
    pub fn assert_tool_failure(&self) -> &Self {
        assert_eq!(self.code, 6, "stderr: {}", self.stderr);
        assert!(self.stdout.is_empty(), "stdout: {}", self.stdout);
        assert_eq!(self.stderr.lines().count(), 1, "stderr: {}", self.stderr);
        self
    }
}

/// The binary under test: the one Cargo built for this run, or `AGENTHEALTH_TEST_BIN` (the
/// arm64 static binary of `make test-aarch64`, which the kernel hands to qemu-aarch64).
pub fn bin() -> PathBuf {
    std::env::var_os("AGENTHEALTH_TEST_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_agenthealth")),
        PathBuf::from,
    )
}

/// The binary with `args` and environment overrides, ready to spawn: the rest of the
/// environment is cleared except PATH/HOME (so tests are not influenced by the developer's
/// shell), stdin is empty, stdout and stderr are piped. Callers change what they need.
pub fn command(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for key in ["PATH", "HOME"] {
        if let Some(v) = std::env::var_os(key) {
            cmd.env(key, v);
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// What a finished run of the binary, started at `start`, produced.
fn outcome(out: std::process::Output, start: Instant) -> Outcome {
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        elapsed: start.elapsed(),
    }
}

/// Runs the binary with `args` and environment overrides (see [`command`]).
pub fn run_env(args: &[&str], env: &[(&str, &str)]) -> Outcome {
    let start = Instant::now();
    let out = command(args, env).output().expect("run agenthealth");
    outcome(out, start)
}

/// Runs the binary with `args`.
pub fn run(args: &[&str]) -> Outcome {
    run_env(args, &[])
}

/// Runs the binary with `args`, `input` on its stdin (then closed) and environment overrides
/// (the rest cleared as in [`run_env`]).
pub fn run_stdin(args: &[&str], env: &[(&str, &str)], input: &[u8]) -> Outcome {
    let start = Instant::now();
    let mut child = command(args, env)
        .stdin(Stdio::piped())
        .spawn()
        .expect("run agenthealth");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    // Written from a thread: a large input must not block on a child that does not read.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait for agenthealth");
    let _ = writer.join();
    outcome(out, start)
}

/// A temporary directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir =
            std::env::temp_dir().join(format!("agenthealth-test-{}-{tag}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    /// Writes a file and returns its path.
    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        let mut f = std::fs::File::create(&p).expect("create");
        f.write_all(text.as_bytes()).expect("write");
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
