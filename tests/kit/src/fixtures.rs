//! The stdio fixture scripts (`tests/fixtures/stdio/`) and the real Python interpreter, for
//! the integration tests and the child-process layer's unit tests.

use std::path::Path;

/// The repository's root: this crate is `tests/kit/`.
fn repository() -> &'static Path {
    let kit = Path::new(env!("CARGO_MANIFEST_DIR"));
    kit.parent()
        .and_then(Path::parent)
        .expect("tests/kit is two levels below the repository root")
}

/// The directory of the stdio fixture scripts.
pub fn fixtures() -> String {
    format!("{}/tests/fixtures/stdio", repository().display())
}

/// A script under `tests/fixtures/stdio/`.
pub fn fixture(name: &str) -> String {
    format!("{}/{name}", fixtures())
}

/// The real interpreter: `python3` on `PATH` may be a wrapper script (pyenv) that adds
/// variables of its own to the environment.
pub fn python_bin() -> &'static str {
    static BIN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        let out = std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3");
        String::from_utf8(out.stdout)
            .expect("utf-8")
            .trim()
            .to_string()
    })
}
