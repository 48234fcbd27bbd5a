//! Tool failures: everything that ends a run with exit 6 and one line on stderr.

use std::fmt;

use crate::cli::UsageError;
use crate::config::LoadError;

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
