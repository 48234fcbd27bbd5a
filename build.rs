//! Build script: the commit the binary is built from, for `agenthealth --version`.
//!
//! `AGENTHEALTH_COMMIT` in the build's environment wins (a container build or a source
//! archive has no `.git`); otherwise `git` is asked, but only about this checkout (a source
//! tree unpacked inside another repository must not take that repository's commit); when
//! neither answers, the commit is `unknown` and the build still succeeds. Cargo re-runs the
//! script when `HEAD` or the branch it names moves, and only then.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=AGENTHEALTH_COMMIT");
    let commit = std::env::var("AGENTHEALTH_COMMIT")
        .ok()
        .filter(|c| is_commit(c))
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=AGENTHEALTH_COMMIT={commit}");
}

/// A commit as `--version` shows it: hexadecimal, 7 to 40 digits.
fn is_commit(c: &str) -> bool {
    (7..=40).contains(&c.len()) && c.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The abbreviated commit of this checkout's `HEAD`, registering the files that move with it.
fn git_commit() -> Option<String> {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    let top = git(&manifest, &["rev-parse", "--show-toplevel"])?;
    if Path::new(&top).canonicalize().ok()? != manifest.canonicalize().ok()? {
        return None;
    }
    let dir = |arg: &str| git(&manifest, &["rev-parse", arg]).map(|d| manifest.join(d));
    let (git_dir, common) = (dir("--git-dir")?, dir("--git-common-dir")?);
    let mut watched = vec![git_dir.join("HEAD"), common.join("packed-refs")];
    if let Some(branch) = git(&manifest, &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(common.join(branch));
    }
    // A path that does not exist would make Cargo re-run the script on every build.
    for path in watched.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    git(&manifest, &["rev-parse", "--short=12", "HEAD"]).filter(|c| is_commit(c))
}

/// `git ARGS` in `dir`: its first line of output, or `None` when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let line = text.lines().next()?.trim().to_string();
    (out.status.success() && !line.is_empty()).then_some(line)
}
