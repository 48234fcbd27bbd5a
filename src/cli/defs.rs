//! The one flag table, and the verbs: the parser, the help text and the tests all read
//! [`FLAGS`] and [`VERBS`], so what is accepted and what is documented cannot drift apart.
//!
//! Each flag is defined once: its names, its value's placeholder, one line of help, the verbs
//! that accept it, and an `update` that records and validates its value into [`LowArgs`].
//! The update contract is ripgrep's: record and validate only — no files, no environment —
//! and word a refusal to follow the flag's name; the parser, not the flag, puts the name into
//! the error (so every message about a flag starts the same way). The bounds and name rules
//! are the configuration's own ([`rules`]), so `--timeout` and `timeout_ms` agree.

use super::args::{ColorChoice, LowArgs, Recorded};
use crate::config::rules;
use crate::contract::Format;

/// One command-line flag.
#[derive(Debug)]
pub(crate) struct Flag {
    /// Long name without dashes.
    pub(crate) long: &'static str,
    /// Short name, if any.
    pub(crate) short: Option<char>,
    /// Whether it takes a value, and how it records what it was given.
    pub(crate) takes: Takes,
    /// Verbs that accept it (empty = all).
    pub(crate) verbs: &'static [&'static str],
    /// It describes the ad-hoc target of `ping`/`doctor <type> <endpoint>`, so a form that
    /// reads a configuration file refuses it (the file says the same per target).
    pub(crate) adhoc: bool,
    /// One line of help.
    pub(crate) doc: &'static str,
}

/// What a flag takes, with its `update`.
#[derive(Debug)]
pub(crate) enum Takes {
    /// Nothing: a switch.
    Nothing(fn(&mut LowArgs)),
    /// A value, shown in help and messages as the placeholder.
    Value(&'static str, fn(&mut LowArgs, &str)),
}

impl Flag {
    /// The value's placeholder, for flags that take one.
    pub(crate) fn value_name(&self) -> Option<&'static str> {
        match self.takes {
            Takes::Nothing(_) => None,
            Takes::Value(name, _) => Some(name),
        }
    }
}

/// Every flag, in the order help lists them.
pub(crate) const FLAGS: &[Flag] = &[
    Flag {
        long: "format",
        short: None,
        takes: Takes::Value("terminal|json|yaml|line|openmetrics", update_format),
        verbs: &["ping", "check", "doctor"],
        adhoc: false,
        doc: "output format (default terminal; line: one line per target)",
    },
    Flag {
        long: "quiet",
        short: Some('q'),
        takes: Takes::Nothing(|low| low.quiet = true),
        verbs: &["ping", "check", "doctor"],
        adhoc: false,
        doc: "print nothing; only the exit code tells the result",
    },
    Flag {
        long: "color",
        short: None,
        takes: Takes::Value("auto|always|never", update_color),
        verbs: &["ping", "check", "doctor"],
        adhoc: false,
        doc: "colour terminal output (auto: a terminal, no NO_COLOR, not TERM=dumb)",
    },
    Flag {
        long: "timeout",
        short: None,
        takes: Takes::Value("MS", update_timeout),
        verbs: &["ping", "doctor"],
        adhoc: true,
        doc: "per-attempt deadline of an ad-hoc target, 1-300000 (default 5000)",
    },
    Flag {
        long: "deadline",
        short: None,
        takes: Takes::Value("MS", update_deadline),
        verbs: &["ping", "check", "doctor", "serve"],
        adhoc: false,
        doc: "end each run by this deadline, 1-60000 (replaces deadline_ms)",
    },
    Flag {
        long: "bearer-env",
        short: None,
        takes: Takes::Value("NAME", update_bearer_env),
        verbs: &["ping", "doctor"],
        adhoc: true,
        doc: "send `Authorization: Bearer $NAME` to an ad-hoc target",
    },
    Flag {
        long: "stdio",
        short: None,
        takes: Takes::Nothing(|low| low.stdio = true),
        verbs: &["ping", "doctor"],
        adhoc: true,
        doc: "mcp server to start, no shell: ping mcp --stdio -- CMD [ARG...]",
    },
    Flag {
        long: "oauth-details",
        short: None,
        takes: Takes::Nothing(|low| low.oauth_details = true),
        verbs: &["doctor"],
        adhoc: false,
        doc: "print what OAuth-protected servers publish, as an mcp.oauth block",
    },
    Flag {
        long: "register",
        short: None,
        takes: Takes::Nothing(|low| low.register = true),
        verbs: &["login"],
        adhoc: false,
        doc: "register a client first (RFC 7591); the config omits client_id",
    },
    Flag {
        long: "listen",
        short: None,
        takes: Takes::Value("HOST:PORT", update_listen),
        verbs: &["serve"],
        adhoc: false,
        doc: "address to serve on (default 127.0.0.1:8080; :PORT: every interface)",
    },
    Flag {
        long: "token-env",
        short: None,
        takes: Takes::Value("NAME", update_token_env),
        verbs: &["serve"],
        adhoc: false,
        doc: "bearer token of the detailed paths, /metrics and /probe, from $NAME",
    },
    Flag {
        long: "probe-concurrency",
        short: None,
        takes: Takes::Value("N", update_probe_concurrency),
        verbs: &["serve"],
        adhoc: false,
        doc: "/probe runs at once, 1-256, as many queued (default 16/CPU, 16-128)",
    },
    Flag {
        long: "help",
        short: Some('h'),
        takes: Takes::Nothing(|low| low.help = true),
        verbs: &[],
        adhoc: false,
        doc: "print usage and exit",
    },
    Flag {
        long: "version",
        short: None,
        // The same as the verb: `--version` anywhere is `version` among the positionals.
        takes: Takes::Nothing(|low| low.positional.push("version".into())),
        verbs: &[],
        adhoc: false,
        doc: "print the version and exit",
    },
];

/// Flags that work but are not documented: help, the man page and the completions leave
/// them out. For tests only.
pub(crate) const HIDDEN: &[Flag] = &[Flag {
    long: "interval-ms",
    short: None,
    takes: Takes::Value("MS", update_interval_ms),
    verbs: &["serve"],
    adhoc: false,
    doc: "pause after each of serve's runs, 1-30000 ms (default 30000)",
}];

/// `serve`'s address when `--listen` is not given.
pub(crate) const DEFAULT_LISTEN: std::net::SocketAddr = std::net::SocketAddr::V4(
    std::net::SocketAddrV4::new(std::net::Ipv4Addr::LOCALHOST, 8080),
);

/// Verbs with their forms (one synopsis each, without the options) and summary.
pub(crate) const VERBS: &[(&str, &[&str], &str)] = &[
    (
        "ping",
        &[
            "ping <type> <endpoint>",
            "ping mcp --stdio -- <command> [args...]",
        ],
        "check one target with the passive default checks",
    ),
    (
        "check",
        &["check <config.yaml|->"],
        "run every target of a configuration file (- reads it from stdin)",
    ),
    (
        "doctor",
        &[
            "doctor <config.yaml|->",
            "doctor <type> <endpoint>",
            "doctor mcp --stdio -- <command> [args...]",
        ],
        "like check/ping, with advice for what did not pass",
    ),
    (
        "validate",
        &["validate <config.yaml|->"],
        "load and validate a configuration without any network traffic",
    ),
    (
        "serve",
        &["serve <config.yaml|->"],
        "run the checks every 30 s and serve AHP v1, /metrics and /probe over HTTP",
    ),
    (
        "login",
        &["login <config.yaml|-> <target>"],
        "authorize an OAuth target in a browser and save its token file",
    ),
    ("version", &["version"], "print the version"),
    ("help", &["help [verb]"], "print usage"),
];

/// The hidden verb the shell completions call (`__complete login-targets FILE`): in no help,
/// man page or completion list.
pub(crate) const COMPLETE: &str = "__complete";

/// A form with its options' place: before the `--` of a server's command line, else last.
pub(crate) fn with_options(form: &str) -> String {
    match form.split_once(" -- ") {
        Some((before, command)) => format!("{before} [options] -- {command}"),
        None => format!("{form} [options]"),
    }
}

/// The verbs' names, in help order.
pub(crate) fn verb_names() -> impl Iterator<Item = &'static str> + Clone {
    VERBS.iter().map(|(name, _, _)| *name)
}

/// Flags a verb accepts without documenting them (help, the man page and the completions
/// leave them out): `version --format json` parses and is ignored, as the Go reference does,
/// so scripts written for it keep working.
const UNDOCUMENTED: &[(&str, &str)] = &[("format", "version")];

impl Flag {
    /// Whether `verb` takes this flag, documented or not.
    pub(crate) fn accepted_by(&self, verb: &str) -> bool {
        self.verbs.is_empty()
            || self.verbs.contains(&verb)
            || UNDOCUMENTED.contains(&(self.long, verb))
    }
}

/// The flag named `--long`, hidden ones included.
pub(crate) fn by_long(long: &str) -> Option<&'static Flag> {
    FLAGS.iter().chain(HIDDEN).find(|f| f.long == long)
}

/// The flag named `-short`.
pub(crate) fn by_short(short: char) -> Option<&'static Flag> {
    FLAGS.iter().find(|f| f.short == Some(short))
}

/// `must be one of a, b, c`: the refusal of a value outside a fixed set.
fn must_be_one_of(names: &[&str]) -> String {
    format!("must be {}", rules::one_of(names))
}

fn update_format(low: &mut LowArgs, value: &str) {
    low.format = Some(Format::parse(value).ok_or_else(|| {
        let names = Format::ALL.map(Format::as_str);
        must_be_one_of(&names)
    }));
}

fn update_color(low: &mut LowArgs, value: &str) {
    low.color = Some(ColorChoice::parse(value).ok_or_else(|| {
        let names = ColorChoice::ALL.map(ColorChoice::as_str);
        must_be_one_of(&names)
    }));
}

fn update_timeout(low: &mut LowArgs, value: &str) {
    low.timeout_ms = Some(milliseconds(value, rules::TIMEOUT_MS));
}

fn update_deadline(low: &mut LowArgs, value: &str) {
    low.deadline_ms = Some(milliseconds(value, rules::DEADLINE_MS));
}

/// A whole number of milliseconds within `range`, or the refusal that says so.
fn milliseconds(value: &str, range: rules::Range) -> Recorded<u64> {
    value
        .parse::<u64>()
        .ok()
        .filter(|ms| range.contains(*ms))
        .ok_or_else(|| {
            format!(
                "must be a whole number of milliseconds from {} to {}",
                range.min, range.max
            )
        })
}

fn update_bearer_env(low: &mut LowArgs, value: &str) {
    low.bearer_env = Some(env_name(value));
}

/// The name of an environment variable (`--bearer-env`, `--token-env`), never its value.
fn env_name(value: &str) -> Recorded<String> {
    if rules::is_env_name(value) {
        Ok(value.to_string())
    } else {
        Err("must name an environment variable (non-blank, no `=`)".into())
    }
}

fn update_listen(low: &mut LowArgs, value: &str) {
    low.listen = Some(parse_listen(value).ok_or_else(|| {
        "must be IP:PORT, [IPv6]:PORT, localhost:PORT or :PORT (every interface)".into()
    }));
}

/// `HOST:PORT` where HOST is an IP address, a bracketed IPv6 address, `localhost`, or empty
/// for every IPv4 interface (Go's `:8080`). No other name: `serve` resolves nothing, so the
/// address it binds is the one written.
fn parse_listen(value: &str) -> Option<std::net::SocketAddr> {
    use std::net::{IpAddr, Ipv4Addr, SocketAddr};
    if let Ok(addr) = value.parse::<SocketAddr>() {
        return Some(addr);
    }
    let (host, port) = value.rsplit_once(':')?;
    let port = port.parse::<u16>().ok()?;
    let ip = match host {
        "" => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        "localhost" => IpAddr::V4(Ipv4Addr::LOCALHOST),
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

fn update_token_env(low: &mut LowArgs, value: &str) {
    low.token_env = Some(env_name(value));
}

fn update_probe_concurrency(low: &mut LowArgs, value: &str) {
    let range = rules::CONCURRENCY;
    low.probe_concurrency = Some(
        value
            .parse::<u64>()
            .ok()
            .filter(|n| range.contains(*n))
            .ok_or_else(|| format!("must be a whole number from {} to {}", range.min, range.max)),
    );
}

fn update_interval_ms(low: &mut LowArgs, value: &str) {
    low.interval_ms = Some(
        value
            .parse::<u64>()
            .ok()
            .filter(|ms| (1..=30_000).contains(ms))
            .ok_or_else(|| "must be a whole number of milliseconds from 1 to 30000".into()),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DEFAULT_TIMEOUT_MS;

    /// Applies `flag` to fresh low args with `value`.
    fn update(long: &str, value: &str) -> LowArgs {
        let mut low = LowArgs::default();
        match by_long(long).map(|f| &f.takes) {
            Some(Takes::Value(_, update)) => update(&mut low, value),
            Some(Takes::Nothing(update)) => update(&mut low),
            None => panic!("no flag --{long}"),
        }
        low
    }

    #[test]
    fn format() {
        assert_eq!(update("format", "yaml").format, Some(Ok(Format::Yaml)));
        assert_eq!(
            update("format", "xml").format,
            Some(Err(
                "must be one of terminal, json, yaml, line, openmetrics".into()
            ))
        );
        assert_eq!(update("format", "line").format, Some(Ok(Format::Line)));
        let names = Format::ALL.map(Format::as_str).join("|");
        assert_eq!(by_long("format").and_then(Flag::value_name), Some(&*names));
    }

    #[test]
    fn color() {
        assert_eq!(update("color", "never").color, Some(Ok(ColorChoice::Never)));
        assert_eq!(
            update("color", "pink").color,
            Some(Err("must be one of auto, always, never".into()))
        );
        let names = ColorChoice::ALL.map(ColorChoice::as_str).join("|");
        assert_eq!(by_long("color").and_then(Flag::value_name), Some(&*names));
    }

    #[test]
    fn timeout() {
        let range = rules::TIMEOUT_MS;
        for ok in [range.min, 900, range.max] {
            assert_eq!(update("timeout", &ok.to_string()).timeout_ms, Some(Ok(ok)));
        }
        let refused = Some(Err(
            "must be a whole number of milliseconds from 1 to 300000".to_string(),
        ));
        for bad in ["0", "300001", "-1", "x", "", "1.5"] {
            assert_eq!(update("timeout", bad).timeout_ms, refused, "{bad:?}");
        }
        // The help line states the same range and default as the configuration.
        let doc = by_long("timeout").map_or("", |f| f.doc);
        let stated = format!("{}-{} (default {DEFAULT_TIMEOUT_MS})", range.min, range.max);
        assert!(doc.contains(&stated), "{doc}");
    }

    #[test]
    fn deadline() {
        let range = rules::DEADLINE_MS;
        for ok in [range.min, 500, range.max] {
            assert_eq!(
                update("deadline", &ok.to_string()).deadline_ms,
                Some(Ok(ok))
            );
        }
        let refused = Some(Err(
            "must be a whole number of milliseconds from 1 to 60000".to_string(),
        ));
        for bad in ["0", "60001", "-1", "x", "", "0.5"] {
            assert_eq!(update("deadline", bad).deadline_ms, refused, "{bad:?}");
        }
        let doc = by_long("deadline").map_or("", |f| f.doc);
        assert!(
            doc.contains("1-60000") && doc.contains("deadline_ms"),
            "{doc}"
        );
    }

    #[test]
    fn bearer_env() {
        assert_eq!(
            update("bearer-env", "TOKEN").bearer_env,
            Some(Ok("TOKEN".into()))
        );
        for bad in ["", " ", "A=B", "A\0"] {
            assert!(
                matches!(update("bearer-env", bad).bearer_env, Some(Err(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn listen() {
        let addr = |v: &str| update("listen", v).listen.and_then(Result::ok);
        assert_eq!(addr("127.0.0.1:8080"), Some(DEFAULT_LISTEN));
        assert_eq!(addr("localhost:8080"), Some(DEFAULT_LISTEN));
        assert_eq!(
            addr(":9090").map(|a| a.to_string()),
            Some("0.0.0.0:9090".into())
        );
        assert_eq!(addr("[::]:0").map(|a| a.to_string()), Some("[::]:0".into()));
        assert_eq!(addr("0.0.0.0:1").map(|a| a.port()), Some(1));
        for bad in [
            "",
            "8080",
            "example.com:80",
            "127.0.0.1",
            "127.0.0.1:x",
            ":65536",
            "::1:80",
        ] {
            assert!(
                matches!(update("listen", bad).listen, Some(Err(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn token_env_and_interval() {
        assert_eq!(
            update("token-env", "AHP_TOKEN").token_env,
            Some(Ok("AHP_TOKEN".into()))
        );
        assert!(matches!(update("token-env", "A=B").token_env, Some(Err(_))));
        assert_eq!(update("interval-ms", "5").interval_ms, Some(Ok(5)));
        for bad in ["0", "30001", "x", "-1"] {
            assert!(
                matches!(update("interval-ms", bad).interval_ms, Some(Err(_))),
                "{bad:?}"
            );
        }
        assert!(
            FLAGS.iter().all(|f| f.long != "interval-ms"),
            "hidden from help, man page and completions"
        );
    }

    #[test]
    fn switches() {
        assert!(update("stdio", "").stdio);
        assert!(update("quiet", "").quiet);
        assert_eq!(by_short('q').map(|f| f.long), Some("quiet"));
        assert!(update("help", "").help);
        assert_eq!(update("version", "").positional, ["version"]);
        assert_eq!(by_short('h').map(|f| f.long), Some("help"));
    }

    #[test]
    fn the_table_is_consistent() {
        let mut names: Vec<&str> = FLAGS.iter().chain(HIDDEN).map(|f| f.long).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(
            names.len(),
            FLAGS.len() + HIDDEN.len(),
            "duplicate long names"
        );
        let verbs: Vec<&str> = VERBS.iter().map(|(v, _, _)| *v).collect();
        for f in FLAGS.iter().chain(HIDDEN) {
            for v in f.verbs {
                assert!(verbs.contains(v), "--{} names unknown verb {v}", f.long);
            }
            if f.adhoc {
                assert!(
                    f.verbs.iter().all(|v| matches!(*v, "ping" | "doctor")),
                    "--{} describes an ad-hoc target, which only ping and doctor take",
                    f.long
                );
            }
            assert!(!f.doc.is_empty() && !f.doc.contains('\n'), "--{}", f.long);
        }
    }
}
