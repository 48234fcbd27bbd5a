//! Test helpers shared by this layer's tests and the stdio transport's: fixture scripts and
//! the real interpreter (from the test kit, `tests/kit`, shared with the integration tests).

use super::ChildSpec;

pub(crate) use agenthealth_testkit::fixtures::{fixture, fixtures, python_bin};

/// The real interpreter running the fixture `script`, with no mapped variables.
pub(crate) fn python(script: &str) -> ChildSpec {
    ChildSpec {
        program: python_bin().into(),
        args: vec![fixture(script)],
        ..ChildSpec::default()
    }
}

/// [`python`] with arguments after the script.
pub(crate) fn python_with(script: &str, args: &[&str]) -> ChildSpec {
    let mut command = python(script);
    command.args.extend(args.iter().map(|a| a.to_string()));
    command
}
