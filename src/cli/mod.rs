//! Command line: the verbs and the one flag table that both the parser and the help text read.

pub mod help;
pub mod parse;

use std::path::PathBuf;

use crate::config::adhoc::AdhocOptions;
use crate::output::Format;
use crate::vocab::TargetType;

pub use parse::parse;

/// What the user asked for, as typed (no files read, no environment consulted).
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Usage text, optionally for one verb.
    Help(Option<String>),
    /// `version`.
    Version,
    /// `validate <config.yaml>`: load only.
    Validate(PathBuf),
    /// `ping`, `check` or `doctor`.
    Run(RunArgs),
}

/// Arguments of the running verbs.
#[derive(Clone, Debug, PartialEq)]
pub struct RunArgs {
    /// `doctor` adds advice.
    pub doctor: bool,
    /// What to check.
    pub source: Source,
    /// Output format.
    pub format: Format,
    /// Colour choice.
    pub color: ColorChoice,
}

/// Where the targets come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// A configuration file.
    File(PathBuf),
    /// One ad-hoc target (`ping <type> <endpoint>`, or `ping mcp --stdio -- <command>
    /// [args…]`); named after the verb.
    Adhoc {
        /// `ping` or `doctor`.
        name: &'static str,
        /// Target type.
        kind: TargetType,
        /// Endpoint as typed; `stdio://<command basename>` for the stdio form.
        endpoint: String,
        /// `--timeout`, `--bearer-env`, and the `--stdio` command line.
        options: AdhocOptions,
    },
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ColorChoice {
    /// Colour when stdout is a terminal and `NO_COLOR` is unset.
    #[default]
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

impl ColorChoice {
    /// Whether to colour: `always` and `never` say so; `auto` colours only when stdout is a
    /// terminal and `NO_COLOR` is unset or empty (<https://no-color.org>).
    pub fn enabled(self, stdout_is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => stdout_is_terminal && no_color.is_none_or(|v| v.is_empty()),
        }
    }
}

/// A misuse of the command line: one line on stderr, exit 6.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One command-line flag.
pub struct Flag {
    /// Long name without dashes.
    pub long: &'static str,
    /// Short name, if any.
    pub short: Option<char>,
    /// Value placeholder, for flags that take one.
    pub value: Option<&'static str>,
    /// Verbs that accept it (empty = all).
    pub verbs: &'static [&'static str],
    /// One line of help.
    pub doc: &'static str,
}

/// Every flag. The parser and the help text both read this table.
pub const FLAGS: &[Flag] = &[
    Flag {
        long: "format",
        short: None,
        value: Some("terminal|json|yaml"),
        verbs: &["ping", "check", "doctor", "version"],
        doc: "output format (default terminal)",
    },
    Flag {
        long: "color",
        short: None,
        value: Some("auto|always|never"),
        verbs: &["ping", "check", "doctor"],
        doc: "colour terminal output (auto: on a terminal, unless NO_COLOR is set)",
    },
    Flag {
        long: "timeout",
        short: None,
        value: Some("MS"),
        verbs: &["ping", "doctor"],
        doc: "per-attempt deadline of an ad-hoc target, 1-300000 (default 5000)",
    },
    Flag {
        long: "bearer-env",
        short: None,
        value: Some("NAME"),
        verbs: &["ping", "doctor"],
        doc: "send `Authorization: Bearer $NAME` to an ad-hoc target",
    },
    Flag {
        long: "stdio",
        short: None,
        value: None,
        verbs: &["ping", "doctor"],
        doc: "mcp server to start, no shell: ping mcp --stdio -- CMD [ARG...]",
    },
    Flag {
        long: "help",
        short: Some('h'),
        value: None,
        verbs: &[],
        doc: "print usage and exit",
    },
    Flag {
        long: "version",
        short: None,
        value: None,
        verbs: &[],
        doc: "print the version and exit",
    },
];

/// Verbs with their synopsis and summary.
pub const VERBS: &[(&str, &str, &str)] = &[
    (
        "ping",
        "ping <type> <endpoint>",
        "check one target with the passive default checks",
    ),
    (
        "check",
        "check <config.yaml>",
        "run every target of a configuration file",
    ),
    (
        "doctor",
        "doctor <config.yaml> | doctor <type> <endpoint>",
        "like check/ping, with advice for what did not pass",
    ),
    (
        "validate",
        "validate <config.yaml>",
        "load and validate a configuration without any network traffic",
    ),
    ("version", "version", "print the version"),
    ("help", "help [verb]", "print usage"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn color_auto_needs_a_terminal_and_no_no_color() {
        let set = Some(OsStr::new("1"));
        let empty = Some(OsStr::new(""));
        assert!(ColorChoice::Auto.enabled(true, None));
        assert!(
            ColorChoice::Auto.enabled(true, empty),
            "an empty NO_COLOR is unset"
        );
        assert!(!ColorChoice::Auto.enabled(true, set));
        assert!(!ColorChoice::Auto.enabled(false, None));
        assert!(
            ColorChoice::Always.enabled(false, set),
            "the flag wins over NO_COLOR"
        );
        assert!(!ColorChoice::Never.enabled(true, None));
    }
}
