//! The empty root: the stand-in for `FROM scratch`, shared by the deployment tests and the
//! tests of what a bare root changes (no resolver configuration).
//!
//! There is no container engine here, so [`EmptyRoot`] builds what a container of the image
//! would see and runs the static musl binary in it, without root privileges:
//! `unshare --user --map-root-user --mount` gives a mount namespace in which the ConfigMaps
//! and volumes are bind-mounted where the manifest mounts them and the root is remounted
//! read-only (`readOnlyRootFilesystem`); a second `unshare --user --map-user=65532
//! --map-group=65532 --root=… --wd=/` enters it as uid/gid 65532 with no capability, as
//! `USER 65532:65532` does. The root holds the binary, the mount points and nothing else: no
//! `/etc/hosts`, `/etc/ssl`, `/etc/passwd`, no libc, no shell. Network namespaces are not
//! separated: the servers the configurations check run on the host's 127.0.0.1 (a pod's
//! containers share one loopback too). Needs util-linux's `unshare` and `mount` and
//! unprivileged user namespaces; the binary is built for `x86_64-unknown-linux-musl` into
//! `target/musl-test` once per test run, or is `AGENTHEALTH_TEST_BIN` (`make test-aarch64`:
//! the arm64 static binary, which the kernel hands to qemu-aarch64 even in the empty root,
//! where there is no emulator to find: `.ci/with-qemu` registers it with flag F).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::util::{Outcome, TempDir};
use agenthealth_testkit::fake_mcp::FakeServer;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The static binary, built once per test run (or the one `AGENTHEALTH_TEST_BIN` names).
pub fn static_binary() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        if let Some(bin) = std::env::var_os("AGENTHEALTH_TEST_BIN") {
            return PathBuf::from(bin);
        }
        let triple = "x86_64-unknown-linux-musl";
        let target_dir = Path::new(ROOT).join("target/musl-test");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let out = Command::new(cargo)
            .current_dir(ROOT)
            .args([
                "build",
                "--offline",
                "--locked",
                "--quiet",
                "--bin",
                "agenthealth",
                "--target",
                triple,
            ])
            .env("CARGO_TARGET_DIR", &target_dir)
            .env("CC_x86_64_unknown_linux_musl", "gcc")
            .output()
            .expect("run cargo");
        assert!(
            out.status.success(),
            "cannot build the static binary (rustup target add {triple}):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        target_dir.join(triple).join("debug/agenthealth")
    })
}

/// A container's view: a root holding only the binary and mount points, plus what the pod
/// mounts there (host directories, bound at their mount paths).
pub struct EmptyRoot {
    dir: TempDir,
    /// (host directory, mount path, writable)
    mounts: Vec<(PathBuf, String, bool)>,
}

impl EmptyRoot {
    pub fn new(tag: &str) -> EmptyRoot {
        let dir = TempDir::new(tag);
        let root = dir.0.join("root");
        let bin_dir = root.join("usr/local/bin");
        std::fs::create_dir_all(&bin_dir).expect("root");
        std::fs::copy(static_binary(), bin_dir.join("agenthealth")).expect("copy the binary");
        EmptyRoot {
            dir,
            mounts: Vec::new(),
        }
    }

    pub fn root(&self) -> PathBuf {
        self.dir.0.join("root")
    }

    /// A volume at `mount_path` holding `files`, its directory's mode `mode` (what the
    /// kubelet makes of a ConfigMap or an emptyDir), read-only unless `writable`; returns its
    /// directory on the host.
    pub fn volume(
        &mut self,
        mount_path: &str,
        files: &[(&str, &str)],
        mode: u32,
        writable: bool,
    ) -> PathBuf {
        let host = self.dir.0.join(format!("volume{}", self.mounts.len()));
        std::fs::create_dir_all(&host).expect("volume");
        for (name, text) in files {
            std::fs::write(host.join(name), text).expect("volume file");
        }
        std::fs::set_permissions(&host, std::fs::Permissions::from_mode(mode)).expect("mode");
        let point = self.root().join(mount_path.trim_start_matches('/'));
        std::fs::create_dir_all(point).expect("mount point");
        self.mounts
            .push((host.clone(), mount_path.to_string(), writable));
        host
    }

    /// The command that runs `argv` (argv[0] an absolute path inside the root) in it, with
    /// exactly the environment `env`.
    pub fn command(&self, argv: &[String], env: &[(&str, &str)]) -> Command {
        let root = self.root();
        for forbidden in [
            "etc/hosts",
            "etc/ssl",
            "etc/passwd",
            "etc/resolv.conf",
            "bin/sh",
            "lib",
        ] {
            assert!(
                !root.join(forbidden).exists(),
                "the root must not hold /{forbidden}"
            );
        }
        let r = root.display();
        // The root becomes a mount of its own, the volumes are mounted in it, and then it is
        // made read-only (the volumes keep their own flags).
        let mut script = format!("set -e\nmount --bind '{r}' '{r}'\n");
        for (host, path, writable) in &self.mounts {
            let point = root.join(path.trim_start_matches('/'));
            let (host, point) = (host.display(), point.display());
            script.push_str(&format!("mount --bind '{host}' '{point}'\n"));
            if !writable {
                script.push_str(&format!("mount -o remount,bind,ro '{point}'\n"));
            }
        }
        script.push_str(&format!(
            "mount -o remount,bind,ro '{r}'\n\
             exec unshare --user --map-user=65532 --map-group=65532 --root='{r}' --wd=/ -- \"$@\"\n"
        ));
        let mut cmd = Command::new("unshare");
        cmd.args([
            "--user",
            "--map-root-user",
            "--mount",
            "--",
            "sh",
            "-c",
            &script,
            "sh",
        ])
        .args(argv)
        .env_clear()
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        cmd
    }

    pub fn run(&self, argv: &[String], env: &[(&str, &str)]) -> Outcome {
        let started = Instant::now();
        let out = self.command(argv, env).output().expect("run unshare");
        Outcome {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            elapsed: started.elapsed(),
        }
    }
}

/// `/usr/local/bin/agenthealth ARGS` in a fresh empty root with an empty environment.
fn agenthealth(args: &[&str]) -> Outcome {
    let argv: Vec<String> = std::iter::once("/usr/local/bin/agenthealth")
        .chain(args.iter().copied())
        .map(String::from)
        .collect();
    EmptyRoot::new("empty-root").run(&argv, &[])
}

/// The binary starts with nothing around it: no libc, no /proc, no /etc, an empty environment
/// (under `make test-aarch64` also no emulator in the root).
#[test]
fn the_binary_starts_in_an_empty_root() {
    let o = agenthealth(&["--version"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    let version = concat!("agenthealth ", env!("CARGO_PKG_VERSION"), " (commit ");
    assert!(o.stdout.starts_with(version), "{}", o.stdout);
    assert_eq!(o.stdout.lines().count(), 1, "{}", o.stdout);
    assert!(o.stderr.is_empty(), "{}", o.stderr);
}

/// Without a resolver configuration a host name fails at once as the DNS failure it is,
/// not as "communication failed" after the whole timeout; IP addresses and `localhost` need
/// no resolver and still work.
#[test]
fn without_resolv_conf_a_name_fails_at_once_and_says_why() {
    let o = agenthealth(&[
        "ping",
        "http",
        "http://mcp.example.test:8080/health",
        "--timeout",
        "10000",
        "--format",
        "json",
    ]);
    assert_eq!(o.code, 3, "{}{}", o.stdout, o.stderr);
    assert!(
        o.elapsed < Duration::from_secs(3),
        "at once: {:?}",
        o.elapsed
    );
    let doc = o.json();
    let reach = &doc["checks"]["reachability"];
    assert_eq!(reach["status"], "UNREACHABLE", "{doc}");
    assert_eq!(reach["evidence"]["failure"], "dns_no_resolver", "{doc}");
    assert_eq!(
        reach["evidence"]["address"], "mcp.example.test:8080",
        "{doc}"
    );
    assert_eq!(reach["steps"]["dns"], "UNREACHABLE", "{doc}");

    let doctor = agenthealth(&[
        "doctor",
        "mcp",
        "http://mcp.example.test/mcp",
        "--color",
        "never",
    ]);
    assert!(
        doctor
            .stdout
            .contains("no resolver configuration (no /etc/resolv.conf"),
        "{}",
        doctor.stdout
    );

    let server = FakeServer::start(Default::default());
    for url in [
        server.url_for("/health"),
        format!("http://localhost:{}/health", server.port()),
    ] {
        let o = agenthealth(&["ping", "http", &url]);
        assert_eq!(o.code, 0, "{url}: {}{}", o.stdout, o.stderr);
    }
}
