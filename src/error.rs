//! Tool failures: everything that ends a run with exit 6 and one line on stderr.

use std::fmt;

use crate::cli::UsageError;
use crate::config::LoadError;
use crate::output::Invalid;
use crate::text::clean;

/// A failure of the tool itself (never a health result).
#[derive(Debug)]
pub enum Error {
    /// The command line was misused.
    Usage(UsageError),
    /// The configuration could not be loaded.
    Config(LoadError),
    /// Results could not be written.
    Write,
    /// The run's document breaks the v1 contract's rules, so none was written.
    InvalidDocument(Invalid),
    /// `login` did not save credentials.
    Login(LoginError),
    /// `serve` could not start, or failed.
    Serve(crate::serve::ServeError),
}

/// Why `login` did not save credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginError {
    /// No top-level target has that name.
    NotFound,
    /// The target has no `mcp.oauth` with `grant: authorization_code`.
    NotAuthorizationCode,
    /// Referenced variables are unset or empty (their names).
    MissingEnv(Vec<String>),
    /// A step of the login failed.
    Failed {
        /// The step's word.
        step: &'static str,
        /// The authorization server's RFC 6749 `error` code, when it sent one we know.
        code: Option<&'static str>,
        /// What to change, in doctor's words, when the step has advice.
        advice: Option<String>,
    },
    /// `--register` with a configured `mcp.oauth.client_id`.
    RegisterWithClientId,
    /// No `mcp.oauth.client_id`, no `--register`, and no registered client saved.
    NoClient,
    /// A signal ended the wait for the browser.
    Cancelled,
}

impl fmt::Display for LoginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoginError::NotFound => f.write_str("login target not found in configuration"),
            LoginError::NotAuthorizationCode => {
                f.write_str("login needs a target whose mcp.oauth grant is authorization_code")
            }
            LoginError::MissingEnv(names) => write!(
                f,
                "OAuth login failed: set the environment variable(s) {}",
                names.join(", ")
            ),
            LoginError::Cancelled => f.write_str("OAuth login cancelled; nothing was saved"),
            LoginError::Failed { step, code, advice } => {
                let code = code.map(|c| format!(": {c}")).unwrap_or_default();
                let advice = advice.as_ref().map(|a| format!(": {a}")).unwrap_or_default();
                // The reference's closing words stay last: scripts may match them.
                write!(
                    f,
                    "OAuth login failed ({step}{code}){advice}; verify issuer, client registration, callback and token file configuration"
                )
            }
            LoginError::RegisterWithClientId => f.write_str(
                "login --register registers a new client: remove mcp.oauth.client_id (the registered one is saved in the token file), or log in without --register",
            ),
            LoginError::NoClient => f.write_str(
                "mcp.oauth names no client_id and the token file holds no registered client: run `agenthealth login CONFIG TARGET --register`",
            ),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(e) => write!(f, "{e}"),
            Error::Config(e) => write!(f, "invalid configuration: {e}"),
            Error::Write => f.write_str("cannot write health results"),
            Error::InvalidDocument(why) => write!(
                f,
                "the result document breaks the v1 contract ({why}); nothing was written"
            ),
            Error::Login(e) => write!(f, "{e}"),
            Error::Serve(e) => write!(f, "{e}"),
        }
    }
}

impl Error {
    /// The one stderr line: `agenthealth: <message>`, every piece that came from the user
    /// (arguments, key paths) through `redact` (the output layer's redaction pass), control
    /// characters replaced.
    pub fn line(&self, redact: &dyn Fn(&str) -> String) -> String {
        let message = match self {
            Error::Config(e) => format!("invalid configuration: {}", e.render(redact)),
            // Our own words only (login's advice included): nothing to redact, nothing a
            // short secret may garble. Only a login's unset variables are the user's names.
            Error::Write | Error::InvalidDocument(_) => self.to_string(),
            Error::Login(e) if !matches!(e, LoginError::MissingEnv(_)) => self.to_string(),
            other => redact(&other.to_string()),
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
