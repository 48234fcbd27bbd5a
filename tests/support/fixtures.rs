//! The stdio fixture scripts and the real Python interpreter, for the integration tests and
//! (through `#[path]`) the child-process layer's unit tests.

/// The directory of the stdio fixture scripts.
pub(crate) fn fixtures() -> String {
    format!("{}/tests/fixtures/stdio", env!("CARGO_MANIFEST_DIR"))
}

/// A script under `tests/fixtures/stdio/`.
pub(crate) fn fixture(name: &str) -> String {
    format!("{}/{name}", fixtures())
}

/// The real interpreter: `python3` on `PATH` may be a wrapper script (pyenv) that adds
/// variables of its own to the environment.
pub(crate) fn python_bin() -> &'static str {
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
