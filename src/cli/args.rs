//! [`LowArgs`]: the command line as typed, after the lexopt loop and before the verb is
//! dispatched, and the choices a flag can record in it.
//!
//! Nothing here reads a file or the environment (ripgrep's low/high split): `--bearer-env`
//! records a variable's name, never its value, so parsing cannot fail or differ because of the
//! environment, and `--help` works with any environment.

use crate::contract::Format;

/// A flag's value as its `update` recorded it: the value, or why it was refused, worded to
/// follow the flag's name (`must be one of …`).
///
/// A refusal is recorded, not raised, because which error a person sees first is part of the
/// contract: a flag that does not apply to the verb, or positionals of the wrong shape, are
/// reported before a bad value; and only the last occurrence of a repeated flag counts, so an
/// earlier bad value is no error. The parser raises the refusal when it uses the value.
pub(crate) type Recorded<T> = Result<T, String>;

/// The command line as typed: positionals and what each flag recorded.
#[derive(Debug, Default)]
pub(crate) struct LowArgs {
    /// Positional arguments in order; `--version` adds the verb `version`.
    pub(crate) positional: Vec<String>,
    /// How many positionals came before a `--`, if there was one: after it, everything is
    /// positional, as typed (for `--stdio`, the server's command line).
    pub(crate) before_dash: Option<usize>,
    /// `-h`/`--help`: usage instead of anything else, whatever follows.
    pub(crate) help: bool,
    /// `--format`.
    pub(crate) format: Option<Recorded<Format>>,
    /// `--color`.
    pub(crate) color: Option<Recorded<ColorChoice>>,
    /// `--timeout`, in milliseconds.
    pub(crate) timeout_ms: Option<Recorded<u64>>,
    /// `--deadline`, in milliseconds.
    pub(crate) deadline_ms: Option<Recorded<u64>>,
    /// `--bearer-env`: the name of the variable, not its value.
    pub(crate) bearer_env: Option<Recorded<String>>,
    /// `--stdio`.
    pub(crate) stdio: bool,
    /// `--quiet`/`-q`: nothing on stdout, only the exit code.
    pub(crate) quiet: bool,
    /// `--listen`.
    pub(crate) listen: Option<Recorded<std::net::SocketAddr>>,
    /// `--token-env`: the name of the variable, not its value.
    pub(crate) token_env: Option<Recorded<String>>,
    /// `--probe-concurrency`: `/probe` runs at once.
    pub(crate) probe_concurrency: Option<Recorded<u64>>,
    /// `--interval-ms` (hidden; tests): the pause between `serve`'s runs.
    pub(crate) interval_ms: Option<Recorded<u64>>,
    /// `--oauth-details` (doctor).
    pub(crate) oauth_details: bool,
    /// `--register` (login).
    pub(crate) register: bool,
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum ColorChoice {
    /// Colour when stdout is a terminal and `NO_COLOR` is unset.
    #[default]
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

impl ColorChoice {
    /// Every choice, in the order help and messages list them.
    pub(crate) const ALL: [ColorChoice; 3] =
        [ColorChoice::Auto, ColorChoice::Always, ColorChoice::Never];

    /// The spelling on the command line.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ColorChoice::Auto => "auto",
            ColorChoice::Always => "always",
            ColorChoice::Never => "never",
        }
    }

    /// Parses the spelling (exact, lower case).
    pub(crate) fn parse(s: &str) -> Option<ColorChoice> {
        ColorChoice::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// Whether to colour: `always` and `never` say so; `auto` colours only when stdout is a
    /// terminal, `NO_COLOR` is unset or empty (<https://no-color.org>) and `TERM` is not
    /// `dumb` (a terminal that shows escape codes as text). The caller passes the facts in,
    /// so the choice stays free of I/O.
    pub(crate) fn enabled(self, stdout_is_terminal: bool, env: &TerminalEnv) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => stdout_is_terminal && env.wants_color(),
        }
    }
}

/// The environment variables that say whether a terminal wants escape codes.
#[derive(Clone, Debug, Default)]
pub(crate) struct TerminalEnv {
    /// `NO_COLOR`.
    pub(crate) no_color: Option<std::ffi::OsString>,
    /// `TERM`.
    pub(crate) term: Option<std::ffi::OsString>,
    /// `COLUMNS`.
    pub(crate) columns: Option<std::ffi::OsString>,
}

impl TerminalEnv {
    /// From the process environment.
    pub(crate) fn from_env() -> TerminalEnv {
        TerminalEnv {
            no_color: std::env::var_os("NO_COLOR"),
            term: std::env::var_os("TERM"),
            columns: std::env::var_os("COLUMNS"),
        }
    }

    /// The width to fill lines to on a terminal: `COLUMNS` when it is a number from 20 to
    /// 1000 (what a person sets beats what is measured, as `ls` does), else `measured` (the
    /// terminal's own size), else 80.
    pub(crate) fn width(&self, measured: Option<usize>) -> usize {
        self.columns
            .as_deref()
            .and_then(|c| c.to_str())
            .and_then(|c| c.parse::<usize>().ok())
            .filter(|c| (20..=1000).contains(c))
            .or(measured.filter(|c| *c > 0))
            .unwrap_or(80)
    }

    /// Whether colour is welcome: `NO_COLOR` unset or empty, and the terminal not dumb.
    pub(crate) fn wants_color(&self) -> bool {
        self.no_color.as_deref().is_none_or(|v| v.is_empty()) && !self.is_dumb()
    }

    /// `TERM=dumb`: a terminal that shows escape codes as text (no colour, no cursor moves).
    pub(crate) fn is_dumb(&self) -> bool {
        self.term.as_deref() == Some(std::ffi::OsStr::new("dumb"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(no_color: Option<&str>, term: Option<&str>) -> TerminalEnv {
        TerminalEnv {
            no_color: no_color.map(Into::into),
            term: term.map(Into::into),
            columns: None,
        }
    }

    #[test]
    fn columns_overrides_the_measured_width_within_reason() {
        let with = |columns: Option<&str>| TerminalEnv {
            columns: columns.map(Into::into),
            ..env(None, None)
        };
        assert_eq!(with(Some("60")).width(Some(120)), 60);
        assert_eq!(with(None).width(Some(120)), 120);
        for nonsense in ["", "0", "19", "1001", "wide", "80x"] {
            assert_eq!(with(Some(nonsense)).width(Some(100)), 100, "{nonsense}");
        }
        assert_eq!(with(None).width(None), 80);
        assert_eq!(with(None).width(Some(0)), 80);
    }

    #[test]
    fn color_auto_needs_a_terminal_no_no_color_and_no_dumb_term() {
        let none = env(None, Some("xterm-256color"));
        assert!(ColorChoice::Auto.enabled(true, &none));
        assert!(
            ColorChoice::Auto.enabled(true, &env(Some(""), None)),
            "an empty NO_COLOR is unset"
        );
        assert!(!ColorChoice::Auto.enabled(true, &env(Some("1"), None)));
        assert!(!ColorChoice::Auto.enabled(true, &env(None, Some("dumb"))));
        assert!(ColorChoice::Auto.enabled(true, &env(None, Some("dumber"))));
        assert!(!ColorChoice::Auto.enabled(false, &none));
        for flag_wins in [env(Some("1"), None), env(None, Some("dumb"))] {
            assert!(
                ColorChoice::Always.enabled(false, &flag_wins),
                "the flag wins over NO_COLOR and TERM"
            );
        }
        assert!(!ColorChoice::Never.enabled(true, &none));
    }

    #[test]
    fn color_choices_round_trip_and_are_exact() {
        for c in ColorChoice::ALL {
            assert_eq!(ColorChoice::parse(c.as_str()), Some(c));
        }
        assert_eq!(ColorChoice::parse("Auto"), None);
    }
}
