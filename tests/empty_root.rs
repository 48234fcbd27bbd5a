//! The static binary in an empty root, as in a `scratch` image: no `/etc/resolv.conf`, no
//! `/etc/hosts`, nothing but the binary.
//!
//! The binary is the one `make static` builds (`x86_64-unknown-linux-musl`, release), built
//! here first so it is the current source's (incremental: a second or two when up to date).
//! The root is entered with `unshare --user --map-root-user chroot`, which needs no
//! privileges where unprivileged user namespaces are allowed. When the musl target, `unshare`
//! or user namespaces are missing the test fails, saying which: it never passes unrun.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::fake_mcp::FakeServer;
use crate::util::TempDir;

const MUSL: &str = "x86_64-unknown-linux-musl";

/// The static binary of the current source.
fn static_binary() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let status = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--quiet",
            "--target",
            MUSL,
            "--bin",
            "agenthealth",
        ])
        .current_dir(root)
        .env("CC_x86_64_unknown_linux_musl", "gcc")
        .env("CARGO_TARGET_DIR", &target_dir)
        .status()
        .expect("run cargo");
    assert!(
        status.success(),
        "the static build failed (`make static` needs the {MUSL} target: rustup target add {MUSL})"
    );
    target_dir.join(MUSL).join("release").join("agenthealth")
}

/// `program` found on `PATH`.
fn on_path(program: &str) -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} (util-linux, coreutils) must be installed"))
}

/// Runs `/agenthealth ARGS` in a root that holds only the binary, with an empty environment.
fn in_empty_root(binary: &Path, args: &[&str]) -> (i32, String, Duration) {
    let root = TempDir::new("empty-root");
    std::fs::copy(binary, root.0.join("agenthealth")).expect("copy the binary");
    let started = Instant::now();
    let out = Command::new(on_path("unshare"))
        .args(["--user", "--map-root-user"])
        .arg(on_path("chroot"))
        .arg(&root.0)
        .arg("/agenthealth")
        .args(args)
        .env_clear()
        .output()
        .expect("run unshare");
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("unshare:") && !stderr.contains("chroot:"),
        "cannot enter an empty root without privileges here (user namespaces?): {stderr}"
    );
    let code = out.status.code().unwrap_or(-1);
    (
        code,
        String::from_utf8_lossy(&out.stdout).into_owned(),
        elapsed,
    )
}

/// Without a resolver configuration a host name fails at once as the DNS failure it is,
/// not as "communication failed" after the whole timeout; IP addresses and `localhost` need
/// no resolver and still work.
#[test]
fn without_resolv_conf_a_name_fails_at_once_and_says_why() {
    let binary = static_binary();
    let (code, stdout, elapsed) = in_empty_root(
        &binary,
        &[
            "ping",
            "http",
            "http://mcp.example.test:8080/health",
            "--timeout",
            "10000",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 3, "{stdout}");
    assert!(elapsed < Duration::from_secs(3), "at once: {elapsed:?}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("a JSON document");
    let reach = &doc["checks"]["reachability"];
    assert_eq!(reach["status"], "UNREACHABLE", "{doc}");
    assert_eq!(reach["evidence"]["failure"], "dns_no_resolver", "{doc}");
    assert_eq!(
        reach["evidence"]["address"], "mcp.example.test:8080",
        "{doc}"
    );
    assert_eq!(reach["steps"]["dns"], "UNREACHABLE", "{doc}");

    let (_, doctor, _) = in_empty_root(
        &binary,
        &[
            "doctor",
            "mcp",
            "http://mcp.example.test/mcp",
            "--color",
            "never",
        ],
    );
    assert!(
        doctor.contains("no resolver configuration (no /etc/resolv.conf"),
        "{doctor}"
    );

    let server = FakeServer::start(Default::default());
    for url in [
        server.url_for("/health"),
        format!("http://localhost:{}/health", server.port()),
    ] {
        let (code, stdout, _) = in_empty_root(&binary, &["ping", "http", &url]);
        assert_eq!(code, 0, "{url}: {stdout}");
    }
}
