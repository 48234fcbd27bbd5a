//! The lexopt loop, then verb dispatch: arguments → [`LowArgs`] → [`Command`].
//!
//! Options may come before or after positionals; `--` ends options (everything after it is
//! positional, as typed: for `--stdio`, the server's command line). `-h`/`--help` wins over
//! everything that follows it. Nothing here reads files or the environment.
//!
//! Errors come in a fixed order, whatever the order of the arguments: the form of the
//! arguments (unknown flag, missing value, not UTF-8) as they are met; then a missing verb; a
//! flag the verb does not take; a refused `--format`, `--color`, then `--deadline`; then the shape of the
//! verb's positionals, and only for an ad-hoc target its `--timeout` and `--bearer-env`.

use std::ffi::{OsStr, OsString};

use super::args::{LowArgs, Recorded};
use super::defs::{self, FLAGS, Flag, Takes};
use super::{Command, ConfigSource, RunArgs, ServeArgs, Source, UsageError};
use crate::config::adhoc::{self, AdhocOptions};
use crate::config::rules;
use crate::contract::TargetType;

/// Parses the arguments after the program name.
pub(crate) fn parse<I>(args: I) -> Result<Command, UsageError>
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    let lexed = lex(args)?;
    if lexed.low.help {
        let verb = lexed.low.positional.first().cloned();
        return Ok(Command::Help(verb.filter(|v| v != "help")));
    }
    dispatch(&lexed)
}

/// What the lexopt loop saw: the arguments as typed, and every flag given in order (for the
/// checks of which verb and which form accept it).
struct Lexed {
    low: LowArgs,
    given: Vec<&'static Flag>,
}

/// The lexopt loop: each argument is a positional or goes through its flag's `update`.
/// Stops at `--` (the rest is positional) and at `--help`.
fn lex<I>(args: I) -> Result<Lexed, UsageError>
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    use lexopt::prelude::*;
    let mut p = lexopt::Parser::from_args(args);
    let mut low = LowArgs::default();
    let mut given = Vec::new();
    while !low.help {
        if let Some(mut raw) = p.try_raw_args() {
            if raw.peek() == Some(OsStr::new("--")) {
                raw.next();
                low.before_dash = Some(low.positional.len());
                for v in raw {
                    low.positional.push(utf8(v)?);
                }
                break;
            }
        }
        let flag = match p.next().map_err(lexopt_error)? {
            None => break,
            Some(Value(v)) => {
                low.positional.push(utf8(v)?);
                continue;
            }
            Some(Long(name)) => {
                defs::by_long(name).ok_or_else(|| unknown_option(&format!("--{name}")))?
            }
            Some(Short(c)) => defs::by_short(c).ok_or_else(|| unknown_option(&format!("-{c}")))?,
        };
        match flag.takes {
            Takes::Nothing(update) => update(&mut low),
            Takes::Value(name, update) => {
                let value = p
                    .value()
                    .map_err(|_| UsageError(format!("--{} needs a value ({name})", flag.long)))?;
                let value = value
                    .into_string()
                    .map_err(|_| UsageError(format!("--{} takes UTF-8 text", flag.long)))?;
                update(&mut low, &value);
            }
        }
        given.push(flag);
    }
    Ok(Lexed { low, given })
}

/// From the typed arguments to the command: the verb, the flags it accepts, its form.
fn dispatch(lexed: &Lexed) -> Result<Command, UsageError> {
    let Lexed { low, given } = lexed;
    let Some(verb) = low.positional.first() else {
        return Err(UsageError("missing command; use --help".into()));
    };
    if verb == defs::COMPLETE {
        return Ok(Command::LoginTargets(match &low.positional[1..] {
            [what, file] if what == "login-targets" => Some(ConfigSource::from_arg(file)),
            _ => None,
        }));
    }
    if !defs::verb_names().any(|v| v == verb) {
        return Err(unknown("command", verb, defs::verb_names(), "commands"));
    }
    if let Some(flag) = given.iter().find(|f| !f.accepted_by(verb)) {
        return Err(UsageError(format!(
            "--{} does not apply to `{verb}`; use --help",
            flag.long
        )));
    }
    let format = raise("format", low.format.clone())?;
    if low.quiet && format.is_some() {
        return Err(UsageError(
            "--quiet prints nothing, so it takes no --format; use one or the other".into(),
        ));
    }
    let format = format.unwrap_or_default();
    let color = raise("color", low.color.clone())?.unwrap_or_default();
    let quiet = low.quiet;
    let deadline_ms = raise("deadline", low.deadline_ms.clone())?;
    let run = |doctor: bool, source: Source| {
        Ok(Command::Run(RunArgs {
            doctor,
            source,
            format,
            color,
            quiet,
            deadline_ms,
            oauth_details: low.oauth_details,
        }))
    };
    if low.stdio {
        let name = match verb.as_str() {
            "ping" => "ping",
            _ => "doctor",
        };
        let options = adhoc_options(low)?;
        return run(name == "doctor", stdio_source(name, low, options)?);
    }
    match (verb.as_str(), &low.positional[1..]) {
        ("check", [file]) => run(false, file_source(given, "check", file)?),
        ("check", _) => Err(usage("check <config.yaml|->")),
        ("doctor", [file]) => run(true, file_source(given, "doctor <config.yaml>", file)?),
        ("doctor", [kind, endpoint]) => {
            let options = adhoc_options(low)?;
            run(true, adhoc_source("doctor", kind, endpoint, options)?)
        }
        ("doctor", _) => Err(usage("doctor <config.yaml|-> | doctor <type> <endpoint>")),
        ("ping", [kind, endpoint]) => {
            let options = adhoc_options(low)?;
            run(false, adhoc_source("ping", kind, endpoint, options)?)
        }
        ("ping", _) => Err(usage("ping <type> <endpoint>")),
        (verb, args) => not_a_run(verb, args, low),
    }
}

/// The verbs that run no checks of their own: `version`, `help`, `validate`, `serve` (whose
/// loop does) and `login`; anything else is no verb.
fn not_a_run(verb: &str, args: &[String], low: &LowArgs) -> Result<Command, UsageError> {
    match (verb, args) {
        ("version", []) => Ok(Command::Version),
        ("version", _) => Err(usage("version")),
        ("help", []) => Ok(Command::Help(None)),
        ("help", [v]) if defs::verb_names().any(|name| name == v) => {
            Ok(Command::Help(Some(v.clone())))
        }
        ("help", [v]) => Err(unknown("command", v, defs::verb_names(), "commands")),
        ("help", _) => Err(usage("help [verb]")),
        ("validate", [file]) => Ok(Command::Validate(ConfigSource::from_arg(file))),
        ("validate", _) => Err(usage("validate <config.yaml|->")),
        ("serve", [file]) => Ok(Command::Serve(ServeArgs {
            config: ConfigSource::from_arg(file),
            listen: raise("listen", low.listen.clone())?.unwrap_or(defs::DEFAULT_LISTEN),
            token_env: raise("token-env", low.token_env.clone())?,
            interval_ms: raise("interval-ms", low.interval_ms.clone())?,
            probe_concurrency: raise("probe-concurrency", low.probe_concurrency.clone())?,
            deadline_ms: raise("deadline", low.deadline_ms.clone())?,
        })),
        ("serve", _) => Err(usage(
            "serve <config.yaml|-> [--listen HOST:PORT] [--token-env NAME] [--deadline MS] \
             [--probe-concurrency N]",
        )),
        ("login", [file, target]) => Ok(Command::Login {
            config: ConfigSource::from_arg(file),
            target: target.clone(),
            register: low.register,
        }),
        ("login", _) => Err(usage("login <config.yaml|-> <target> [--register]")),
        (verb, _) => Err(unknown("command", verb, defs::verb_names(), "commands")),
    }
}

/// A recorded value, or its refusal as a usage error led by the flag's name.
fn raise<T>(long: &str, recorded: Option<Recorded<T>>) -> Result<Option<T>, UsageError> {
    recorded
        .transpose()
        .map_err(|why| UsageError(format!("--{long} {why}")))
}

/// `--timeout` and `--bearer-env`, for an ad-hoc target.
fn adhoc_options(low: &LowArgs) -> Result<AdhocOptions, UsageError> {
    Ok(AdhocOptions {
        timeout_ms: raise("timeout", low.timeout_ms.clone())?,
        bearer_env: raise("bearer-env", low.bearer_env.clone())?,
        stdio: None,
    })
}

/// `<verb> <config.yaml>`: the file holds every setting, so a flag describing an ad-hoc
/// target is refused with a pointer to the file.
fn file_source(given: &[&Flag], form: &str, file: &str) -> Result<Source, UsageError> {
    match given.iter().find(|f| f.adhoc) {
        Some(f) => Err(UsageError(format!(
            "--{} applies to ad-hoc targets only, not `{form}`; set it in the configuration file",
            f.long
        ))),
        None => Ok(Source::File(ConfigSource::from_arg(file))),
    }
}

/// `<verb> <type> <endpoint>`.
fn adhoc_source(
    name: &'static str,
    kind: &str,
    endpoint: &str,
    options: AdhocOptions,
) -> Result<Source, UsageError> {
    let names = || TargetType::ALL.into_iter().map(TargetType::as_str);
    let kind =
        TargetType::parse(kind).ok_or_else(|| unknown("target type", kind, names(), "types"))?;
    if rules::is_blank(endpoint) {
        return Err(UsageError(
            "invalid target; use a specification target type and a nonempty endpoint".into(),
        ));
    }
    Ok(Source::Adhoc {
        name,
        kind,
        endpoint: endpoint.to_string(),
        options,
    })
}

/// `<verb> mcp --stdio -- <command> [args…]`: the positionals are the verb and `mcp` before
/// the `--`, and the command line after it. The verb is `ping` or `doctor` (the flag table
/// rejects `--stdio` elsewhere).
fn stdio_source(
    name: &'static str,
    low: &LowArgs,
    mut options: AdhocOptions,
) -> Result<Source, UsageError> {
    let form = format!("usage: agenthealth {name} mcp --stdio -- <command> [args...]");
    let (Some(2), [_, kind, argv @ ..]) = (low.before_dash, low.positional.as_slice()) else {
        return Err(UsageError(format!(
            "--stdio takes the server's command after `--`; {form}"
        )));
    };
    if kind != "mcp" {
        return Err(UsageError(format!(
            "--stdio applies to mcp targets only; {form}"
        )));
    }
    let Some(command) = argv.first().filter(|c| !rules::is_blank(c)) else {
        return Err(UsageError(format!("--stdio needs a command; {form}")));
    };
    if options.bearer_env.is_some() {
        return Err(UsageError(
            "--bearer-env cannot be combined with --stdio; a stdio server takes no HTTP credentials"
                .into(),
        ));
    }
    let endpoint = adhoc::stdio_endpoint(command);
    options.stdio = Some(argv.to_vec());
    Ok(Source::Adhoc {
        name,
        kind: TargetType::Mcp,
        endpoint,
        options,
    })
}

fn usage(synopsis: &str) -> UsageError {
    UsageError(format!("usage: agenthealth {synopsis}"))
}

fn utf8(arg: OsString) -> Result<String, UsageError> {
    arg.into_string()
        .map_err(|_| UsageError("arguments must be UTF-8 text".into()))
}

/// ``unknown command `chek` (did you mean `check`?); commands: ping, check, …``: the word
/// echoed (only when it looks like one: misplaced arguments may put a URL with a password
/// there), its nearest name, and every name.
fn unknown<'n>(
    what: &str,
    word: &str,
    names: impl Iterator<Item = &'n str> + Clone,
    label: &str,
) -> UsageError {
    let list = names.clone().collect::<Vec<_>>().join(", ");
    let looks_like_a_word = (1..=32).contains(&word.len())
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !looks_like_a_word {
        return UsageError(format!("unknown {what}; {label}: {list}"));
    }
    match crate::text::suggest(word, names) {
        Some(near) => UsageError(format!(
            "unknown {what} `{word}` (did you mean `{near}`?); {label}: {list}"
        )),
        None => UsageError(format!("unknown {what} `{word}`; {label}: {list}")),
    }
}

fn unknown_option(opt: &str) -> UsageError {
    let bare = opt.trim_start_matches('-');
    let near = crate::text::suggest(bare, FLAGS.iter().map(|f| f.long));
    match near {
        Some(l) => UsageError(format!(
            "unknown option `{opt}` (did you mean `--{l}`?); use --help"
        )),
        None => UsageError(format!("unknown option `{opt}`; use --help")),
    }
}

fn lexopt_error(e: lexopt::Error) -> UsageError {
    match e {
        lexopt::Error::UnexpectedValue { option, .. } => {
            UsageError(format!("{option} does not take a value; use --help"))
        }
        lexopt::Error::NonUnicodeValue(_) => UsageError("arguments must be UTF-8 text".into()),
        _ => UsageError("invalid arguments; use --help".into()),
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::ColorChoice;
    use crate::contract::Format;

    fn p(args: &[&str]) -> Result<Command, UsageError> {
        parse(args.iter().copied())
    }

    #[test]
    fn options_before_and_after_positionals() {
        let a = p(&["--format", "json", "ping", "http", "http://x"]);
        let b = p(&["ping", "http", "http://x", "--format=json"]);
        assert_eq!(a, b);
        let Ok(Command::Run(r)) = a else {
            panic!("expected run")
        };
        assert_eq!(r.format, Format::Json);
        assert!(matches!(r.source, Source::Adhoc { name: "ping", .. }));
    }

    #[test]
    fn help_and_version() {
        assert_eq!(p(&["--help"]), Ok(Command::Help(None)));
        assert_eq!(p(&["ping", "-h"]), Ok(Command::Help(Some("ping".into()))));
        assert_eq!(
            p(&["help", "check"]),
            Ok(Command::Help(Some("check".into())))
        );
        assert_eq!(p(&["--version"]), Ok(Command::Version));
        assert_eq!(p(&["version"]), Ok(Command::Version));
    }

    #[test]
    fn misuse_is_an_error() {
        for args in [
            &[][..],
            &["bad"],
            &["ping"],
            &["ping", "bad", "http://localhost"],
            &["ping", "http", " "],
            &["version", "extra"],
            &["version", "--format=bad"],
            &["check", "--format"],
            &["--unknown"],
            &["check", "a.yaml", "--timeout", "5"],
            &["ping", "http", "u", "--timeout", "0"],
            &["ping", "http", "u", "--timeout", "x"],
            &["ping", "http", "u", "--bearer-env", "A=B"],
            &["login"],
            &["help", "bogus"],
            &["help", "ping", "check"],
            &["validate"],
            &["ping", "http", "u", "--color", "pink"],
            &["-"],
        ] {
            assert!(p(args).is_err(), "{args:?}");
        }
    }

    #[test]
    fn double_dash_ends_options() {
        let r = p(&["ping", "--", "http", "--weird"]);
        let Ok(Command::Run(run)) = r else {
            panic!("expected a run, got {r:?}")
        };
        assert!(matches!(&run.source, Source::Adhoc { endpoint, .. } if endpoint == "--weird"));
        // After `--`, option-looking words are positionals, `--help` included.
        assert_eq!(
            p(&["check", "--format", "json", "--", "--help"]),
            Ok(Command::Run(RunArgs {
                doctor: false,
                source: Source::File(ConfigSource::Path(std::path::PathBuf::from("--help"))),
                format: Format::Json,
                color: ColorChoice::Auto,
                quiet: false,
                deadline_ms: None,
                oauth_details: false,
            }))
        );
        assert!(p(&["check", "--", "a.yaml", "--format", "json"]).is_err());
    }

    #[test]
    fn the_run_deadline_applies_to_every_running_verb() {
        for args in [
            &["check", "a.yaml", "--deadline", "500"][..],
            &["doctor", "a.yaml", "--deadline", "500"],
            &["ping", "http", "http://x/", "--deadline", "500"],
            &["doctor", "mcp", "http://x/mcp", "--deadline=500"],
            &["ping", "mcp", "--deadline", "500", "--stdio", "--", "srv"],
        ] {
            let r = p(args);
            let Ok(Command::Run(run)) = r else {
                panic!("expected a run, got {r:?}")
            };
            assert_eq!(run.deadline_ms, Some(500), "{args:?}");
        }
        let Err(e) = p(&["check", "a.yaml", "--deadline", "60001"]) else {
            panic!("a deadline past the run cap is refused")
        };
        assert_eq!(
            e.0,
            "--deadline must be a whole number of milliseconds from 1 to 60000"
        );
        assert!(p(&["validate", "a.yaml", "--deadline", "5"]).is_err());
    }

    #[test]
    fn suggestions() {
        let Err(e) = p(&["--formt", "json"]) else {
            panic!("expected error")
        };
        assert!(e.0.contains("--format"), "{e}");
    }

    fn stdio_of(r: Result<Command, UsageError>) -> (RunArgs, Vec<String>, String) {
        let Ok(Command::Run(run)) = r else {
            panic!("expected a run, got {r:?}")
        };
        let Source::Adhoc {
            kind: TargetType::Mcp,
            endpoint,
            options,
            ..
        } = &run.source
        else {
            panic!("expected an ad-hoc mcp target: {run:?}")
        };
        let argv = options.stdio.clone().expect("a stdio command line");
        let endpoint = endpoint.clone();
        (run, argv, endpoint)
    }

    #[test]
    fn stdio_form_takes_the_command_line_after_the_double_dash() {
        let (run, argv, endpoint) = stdio_of(p(&[
            "ping",
            "mcp",
            "--stdio",
            "--format",
            "json",
            "--",
            "/opt/bin/server",
            "--format",
            "x",
            "-h",
            "--",
        ]));
        assert_eq!(argv, ["/opt/bin/server", "--format", "x", "-h", "--"]);
        assert_eq!(endpoint, "stdio://server");
        assert_eq!(run.format, Format::Json, "options before `--` still apply");
        assert!(!run.doctor);
        assert!(matches!(run.source, Source::Adhoc { name: "ping", .. }));

        let (run, argv, _) = stdio_of(p(&[
            "doctor",
            "--stdio",
            "mcp",
            "--timeout",
            "900",
            "--",
            "uvx",
            "mcp-server-time",
        ]));
        assert_eq!(argv, ["uvx", "mcp-server-time"]);
        assert!(run.doctor);
        let Source::Adhoc { name, options, .. } = &run.source else {
            panic!("ad-hoc")
        };
        assert_eq!(*name, "doctor");
        assert_eq!(options.timeout_ms, Some(900));
    }

    #[test]
    fn stdio_misuse_is_an_error() {
        for args in [
            &["ping", "mcp", "--stdio"][..],
            &["ping", "mcp", "--stdio", "server"],
            &["ping", "mcp", "--stdio", "--"],
            &["ping", "mcp", "--stdio", "--", " "],
            &["ping", "http", "--stdio", "--", "server"],
            &["ping", "--stdio", "--", "server"],
            &["ping", "mcp", "x", "--stdio", "--", "server"],
            &["ping", "mcp", "--stdio=yes", "--", "server"],
            &["check", "c.yaml", "--stdio"],
            &["doctor", "c.yaml", "--stdio"],
            &["validate", "c.yaml", "--stdio"],
            &[
                "ping",
                "mcp",
                "--stdio",
                "--bearer-env",
                "T",
                "--",
                "server",
            ],
        ] {
            assert!(p(args).is_err(), "{args:?}");
        }
        let Err(e) = p(&["ping", "mcp", "--stdio", "server"]) else {
            panic!("expected an error")
        };
        assert!(e.0.contains("after `--`"), "{e}");
    }

    #[test]
    fn a_dash_reads_the_configuration_from_stdin() {
        assert_eq!(
            p(&["validate", "-"]),
            Ok(Command::Validate(ConfigSource::Stdin))
        );
        assert!(matches!(
            p(&["check", "-"]),
            Ok(Command::Run(RunArgs {
                source: Source::File(ConfigSource::Stdin),
                ..
            }))
        ));
        assert!(matches!(
            p(&["doctor", "-"]),
            Ok(Command::Run(RunArgs {
                doctor: true,
                source: Source::File(ConfigSource::Stdin),
                ..
            }))
        ));
        assert_eq!(
            p(&["validate", "./-"]),
            Ok(Command::Validate(ConfigSource::Path(
                std::path::PathBuf::from("./-")
            )))
        );
    }

    #[test]
    fn serve_form() {
        let Ok(Command::Serve(s)) = p(&["serve", "c.yaml"]) else {
            panic!("expected serve")
        };
        assert_eq!(s.listen.to_string(), "127.0.0.1:8080");
        assert_eq!((s.token_env, s.interval_ms), (None, None));
        let Ok(Command::Serve(s)) = p(&[
            "--listen",
            ":9000",
            "serve",
            "c.yaml",
            "--token-env",
            "T",
            "--interval-ms=5",
        ]) else {
            panic!("expected serve")
        };
        assert_eq!(s.listen.to_string(), "0.0.0.0:9000");
        let Ok(Command::Serve(d)) = p(&["serve", "c.yaml", "--deadline", "8000"]) else {
            panic!("expected serve")
        };
        assert_eq!(d.deadline_ms, Some(8000));
        assert_eq!(
            (s.token_env.as_deref(), s.interval_ms),
            (Some("T"), Some(5))
        );
        for bad in [
            &["serve"][..],
            &["serve", "a.yaml", "b.yaml"],
            &["serve", "c.yaml", "--format", "json"],
            &["serve", "c.yaml", "--listen", "example.com:80"],
            &["serve", "c.yaml", "--token-env", ""],
            &["serve", "c.yaml", "--timeout", "5"],
            &["serve", "c.yaml", "--deadline", "0"],
            &["check", "c.yaml", "--listen", ":1"],
            &["check", "c.yaml", "--interval-ms", "1"],
        ] {
            assert!(p(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            p(&["serve", "--help"]),
            Ok(Command::Help(Some("serve".into())))
        );
    }

    #[test]
    fn quiet_takes_no_format() {
        let Ok(Command::Run(run)) = p(&["check", "c.yaml", "-q"]) else {
            panic!("expected a run")
        };
        assert!(run.quiet);
        assert!(p(&["ping", "http", "http://x", "--quiet", "--format", "json"]).is_err());
        assert!(p(&["validate", "c.yaml", "--quiet"]).is_err());
        let Ok(Command::Run(run)) = p(&["check", "c.yaml", "--format", "line"]) else {
            panic!("expected a run")
        };
        assert_eq!(run.format, Format::Line);
    }

    #[test]
    fn doctor_forms() {
        assert!(matches!(
            p(&["doctor", "c.yaml"]),
            Ok(Command::Run(RunArgs {
                doctor: true,
                source: Source::File(_),
                ..
            }))
        ));
        assert!(matches!(
            p(&["doctor", "mcp", "http://x/mcp", "--timeout", "100"]),
            Ok(Command::Run(RunArgs {
                doctor: true,
                source: Source::Adhoc { name: "doctor", .. },
                ..
            }))
        ));
        for args in [
            &["doctor", "c.yaml", "--oauth-details"][..],
            &["doctor", "mcp", "http://x/mcp", "--oauth-details"],
        ] {
            assert!(
                matches!(
                    p(args),
                    Ok(Command::Run(RunArgs {
                        oauth_details: true,
                        ..
                    }))
                ),
                "{args:?}"
            );
        }
        assert!(p(&["check", "c.yaml", "--oauth-details"]).is_err());
        assert!(p(&["ping", "mcp", "http://x/mcp", "--oauth-details"]).is_err());
    }

    #[test]
    fn login_may_register_first() {
        assert!(matches!(
            p(&["login", "c.yaml", "t", "--register"]),
            Ok(Command::Login { register: true, .. })
        ));
        assert!(matches!(
            p(&["login", "c.yaml", "t"]),
            Ok(Command::Login {
                register: false,
                ..
            })
        ));
        assert!(p(&["check", "c.yaml", "--register"]).is_err());
    }
}
