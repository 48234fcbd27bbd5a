//! Tool failures: everything that ends a run with exit 6 and one line on stderr.

use std::fmt;

use crate::cli::UsageError;
use crate::config::LoadError;
use crate::output::Redactor;
use crate::vocab::text::clean;

/// A failure of the tool itself (never a health result).
#[derive(Debug)]
pub enum Error {
    /// The command line was misused.
    Usage(UsageError),
    /// The configuration could not be loaded.
    Config(LoadError),
    /// Results could not be written.
    Write,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(e) => write!(f, "{e}"),
            Error::Config(e) => write!(f, "invalid configuration: {e}"),
            Error::Write => f.write_str("cannot write health results"),
        }
    }
}

impl Error {
    /// The one stderr line: `agenthealth: <message>`, every piece that came from the user
    /// (arguments, key paths) through the redaction pass, control characters replaced.
    pub fn line(&self, redactor: &Redactor) -> String {
        let message = match self {
            Error::Config(e) => format!(
                "invalid configuration: {}",
                e.render(&|piece| redactor.apply(piece))
            ),
            other => redactor.apply(&other.to_string()),
        };
        clean(&format!("agenthealth: {message}"))
    }
}

impl From<UsageError> for Error {
    fn from(e: UsageError) -> Error {
        Error::Usage(e)
    }
}

impl From<LoadError> for Error {
    fn from(e: LoadError) -> Error {
        Error::Config(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_error(path: &str, expected: &str) -> Error {
        Error::Config(LoadError {
            path: path.into(),
            line: Some(7),
            expected: expected.into(),
        })
    }

    #[test]
    fn a_key_path_ending_in_a_credential_word_is_not_an_assignment() {
        let r = Redactor::default();
        for key in [
            "auth.token",
            "http.headers.Authorization",
            "password",
            "X-Api-Key",
        ] {
            let e = config_error(&format!("targets[0].{key}"), "unknown key");
            assert_eq!(
                e.line(&r),
                format!(
                    "agenthealth: invalid configuration: targets[0].{key}: unknown key (line 7)"
                )
            );
        }
    }

    #[test]
    fn every_piece_is_still_redacted() {
        let r = Redactor::new(["s3cr3t"]);
        let e = config_error("targets[0][\"token=abc\"].s3cr3t", "expected \u{1b}x");
        let line = e.line(&r);
        assert!(!line.contains("abc") && !line.contains("s3cr3t"), "{line}");
        assert!(!line.contains('\u{1b}'), "{line}");
        let e = Error::Usage(UsageError("unknown option `--x` https://u:pw@h/".into()));
        assert!(!e.line(&r).contains("pw@"));
    }
}
