//! Tests that run inside a private network namespace of their own (`unshare -rn`: a user
//! namespace whose root may configure it), where they can add addresses and links that the
//! host's network must not see: a kernel-visible far link (`tests/fixtures/net/tun_delay.py`)
//! and, for the SSRF tests, the cloud metadata addresses.
//!
//! A process cannot move itself into a new network namespace once it has threads, so the
//! outer test re-runs this test binary under `unshare -rn` with only the inner test selected
//! ([`run_inside`]); the inner test is `#[ignore]`d so it never runs on the host, and checks
//! [`inside`] first. Without `unshare`, user namespaces or `/dev/net/tun` the outer test
//! fails saying what is missing, in CI and everywhere else: it never passes unrun.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const INSIDE: &str = "AGENTHEALTH_TEST_NETNS";

/// Runs the `#[ignore]`d test `name` (its full path, `lanes::…`) of this binary in a private
/// network namespace and fails with its output unless it passed.
pub fn run_inside(name: &str) {
    let exe = std::env::current_exe().expect("the test binary");
    let out = Command::new("unshare")
        .args(["--user", "--map-root-user", "--net", "--"])
        .arg(exe)
        .args([
            "--exact",
            name,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(INSIDE, "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot run unshare (util-linux) for {name}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && text.contains("1 passed"),
        "{name} in a private network namespace (unshare --user --map-root-user --net; needs \
         unprivileged user namespaces):\n{text}"
    );
}

/// Whether this process is the inner run of [`run_inside`]; panics when an inner test is
/// run on the host (`--ignored` alone).
pub fn inside() {
    assert!(
        std::env::var_os(INSIDE).is_some(),
        "this test runs only inside the network namespace its outer test makes"
    );
    ip(&["link", "set", "lo", "up"]);
}

/// Runs `ip ARGS` and fails unless it succeeds.
pub fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .output()
        .expect("run ip (iproute2)");
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A far link: 10.77.0.2 is 10.77.0.1 (tun0) seen across `delay_ms` each way, which the
/// kernel's round trip shows. Ends with the value.
pub struct FarLink(Child);

/// Where a server on the far side binds, and the address that reaches it across the link.
pub const FAR_BIND: [u8; 4] = [10, 77, 0, 1];
pub const FAR_ADDR: &str = "10.77.0.2";

impl FarLink {
    pub fn up(delay_ms: u32) -> FarLink {
        let script = Path::new(ROOT).join("tests/fixtures/net/tun_delay.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(delay_ms.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start tun_delay.py");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        let _ = BufReader::new(stdout).read_line(&mut line);
        assert_eq!(
            line.trim(),
            "ready",
            "tun_delay.py did not bring the link up (needs /dev/net/tun)"
        );
        FarLink(child)
    }
}

impl Drop for FarLink {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
