//! Test helpers shared by this layer's tests and the stdio transport's: fixture scripts and
//! the real interpreter.

use super::Command;

/// A script under `tests/fixtures/stdio/`.
pub(crate) fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/stdio/{name}", env!("CARGO_MANIFEST_DIR"))
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

/// The real interpreter running the fixture `script`, with no mapped variables.
pub(crate) fn python(script: &str) -> Command {
    Command {
        program: python_bin().into(),
        args: vec![fixture(script)],
        ..Command::default()
    }
}

/// [`python`] with arguments after the script.
pub(crate) fn python_with(script: &str, args: &[&str]) -> Command {
    let mut command = python(script);
    command.args.extend(args.iter().map(|a| a.to_string()));
    command
}
