//! [`LowArgs`]: the command line as typed, after the lexopt loop and before the verb is
//! dispatched, and the choices a flag can record in it.
//!
//! Nothing here reads a file or the environment (ripgrep's low/high split): `--bearer-env`
//! records a variable's name, never its value, so parsing cannot fail or differ because of the
//! environment, and `--help` works with any environment.

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
    pub(crate) format: Option<Recorded<OutputFormat>>,
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
}

/// `--format`: how the results are written. The command line's own choice, mapped to the
/// renderer by `lib.rs`, so the parser knows nothing of output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum OutputFormat {
    /// Text for a person.
    #[default]
    Terminal,
    /// The v1 result document as JSON.
    Json,
    /// The same document as YAML.
    Yaml,
}

impl OutputFormat {
    /// Every format, in the order help and messages list them.
    pub(crate) const ALL: [OutputFormat; 3] = [
        OutputFormat::Terminal,
        OutputFormat::Json,
        OutputFormat::Yaml,
    ];

    /// The spelling on the command line.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            OutputFormat::Terminal => "terminal",
            OutputFormat::Json => "json",
            OutputFormat::Yaml => "yaml",
        }
    }

    /// Parses the spelling (exact, lower case).
    pub(crate) fn parse(s: &str) -> Option<OutputFormat> {
        OutputFormat::ALL.into_iter().find(|f| f.as_str() == s)
    }
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
    /// terminal and `NO_COLOR` is unset or empty (<https://no-color.org>). The caller passes
    /// both facts in, so the choice stays free of I/O.
    pub(crate) fn enabled(
        self,
        stdout_is_terminal: bool,
        no_color: Option<&std::ffi::OsStr>,
    ) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => stdout_is_terminal && no_color.is_none_or(|v| v.is_empty()),
        }
    }
}

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

    #[test]
    fn choices_round_trip_and_are_exact() {
        for f in OutputFormat::ALL {
            assert_eq!(OutputFormat::parse(f.as_str()), Some(f));
        }
        for c in ColorChoice::ALL {
            assert_eq!(ColorChoice::parse(c.as_str()), Some(c));
        }
        assert_eq!(OutputFormat::parse("JSON"), None);
        assert_eq!(ColorChoice::parse("Auto"), None);
    }
}
