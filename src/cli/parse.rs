//! The lexopt loop: arguments → [`Command`]. Options may come before or after positionals;
//! `--` ends options (everything after it is positional, as typed: for `--stdio`, the server's
//! command line). Nothing here reads files or the environment.

use std::ffi::OsString;
use std::path::PathBuf;

use super::{ColorChoice, Command, FLAGS, RunArgs, Source, UsageError};
use crate::config::adhoc::AdhocOptions;
use crate::output::Format;
use crate::vocab::TargetType;

/// Parses the arguments after the program name.
pub fn parse<I>(args: I) -> Result<Command, UsageError>
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    use lexopt::prelude::*;
    let mut p = lexopt::Parser::from_args(args);
    let mut positionals: Vec<String> = Vec::new();
    let mut values: Vec<(&'static str, String)> = Vec::new();
    // How many positionals came before a `--`, if there was one.
    let mut dash: Option<usize> = None;
    loop {
        if let Some(mut raw) = p.try_raw_args() {
            if raw.peek() == Some(std::ffi::OsStr::new("--")) {
                raw.next();
                dash = Some(positionals.len());
                for v in raw {
                    let v = v
                        .into_string()
                        .map_err(|_| UsageError("arguments must be UTF-8 text".into()))?;
                    positionals.push(v);
                }
                break;
            }
        }
        let arg = match p.next() {
            Ok(Some(arg)) => arg,
            Ok(None) => break,
            Err(e) => return Err(lexopt_error(e)),
        };
        match arg {
            Short('h') | Long("help") => {
                let verb = positionals.first().cloned();
                return Ok(Command::Help(verb.filter(|v| v != "help")));
            }
            Long("version") => positionals.push("version".into()),
            Long(name) => {
                let Some(flag) = FLAGS.iter().find(|f| f.long == name) else {
                    return Err(unknown_option(&format!("--{name}")));
                };
                if flag.value.is_none() {
                    values.push((flag.long, String::new()));
                    continue;
                }
                let value = p.value().map_err(|_| {
                    UsageError(format!(
                        "--{} needs a value ({})",
                        flag.long,
                        flag.value.unwrap_or("value")
                    ))
                })?;
                let value = value
                    .into_string()
                    .map_err(|_| UsageError(format!("--{} takes UTF-8 text", flag.long)))?;
                values.push((flag.long, value));
            }
            Short(c) => return Err(unknown_option(&format!("-{c}"))),
            Value(v) => {
                let v = v
                    .into_string()
                    .map_err(|_| UsageError("arguments must be UTF-8 text".into()))?;
                positionals.push(v);
            }
        }
    }
    let Some(verb) = positionals.first().cloned() else {
        return Err(UsageError("missing command; use --help".into()));
    };
    let rest = &positionals[1..];
    for (name, _) in &values {
        let flag = FLAGS.iter().find(|f| f.long == *name);
        if let Some(flag) = flag
            && !flag.verbs.is_empty()
            && !flag.verbs.contains(&verb.as_str())
        {
            return Err(UsageError(format!(
                "--{name} does not apply to `{verb}`; use --help"
            )));
        }
    }
    let get = |name: &str| {
        values
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    };
    let format = match get("format") {
        None => Format::Terminal,
        Some(f) => Format::parse(f)
            .ok_or_else(|| UsageError("--format must be one of terminal, json, yaml".into()))?,
    };
    let color = match get("color") {
        None | Some("auto") => ColorChoice::Auto,
        Some("always") => ColorChoice::Always,
        Some("never") => ColorChoice::Never,
        Some(_) => {
            return Err(UsageError(
                "--color must be one of auto, always, never".into(),
            ));
        }
    };
    let adhoc_options = || -> Result<AdhocOptions, UsageError> {
        let timeout_ms = match get("timeout") {
            None => None,
            Some(t) => Some(
                t.parse::<u64>()
                    .ok()
                    .filter(|ms| (1..=300_000).contains(ms))
                    .ok_or_else(|| {
                        UsageError(
                            "--timeout must be a whole number of milliseconds from 1 to 300000"
                                .into(),
                        )
                    })?,
            ),
        };
        let bearer_env = match get("bearer-env") {
            None => None,
            Some(n) if n.trim().is_empty() || n.contains('=') || n.contains('\0') => {
                return Err(UsageError(
                    "--bearer-env must name an environment variable (non-blank, no `=`)".into(),
                ));
            }
            Some(n) => Some(n.to_string()),
        };
        Ok(AdhocOptions {
            timeout_ms,
            bearer_env,
            stdio: None,
        })
    };
    if get("stdio").is_some() {
        let name = match verb.as_str() {
            "ping" => "ping",
            _ => "doctor",
        };
        let mut options = adhoc_options()?;
        let source = stdio_source(name, &positionals, dash, &mut options)?;
        return Ok(Command::Run(RunArgs {
            doctor: name == "doctor",
            source,
            format,
            color,
        }));
    }
    let run = |doctor: bool, source: Source| {
        Ok(Command::Run(RunArgs {
            doctor,
            source,
            format,
            color,
        }))
    };
    match (verb.as_str(), rest) {
        ("version", []) => Ok(Command::Version),
        ("version", _) => Err(usage("version")),
        ("help", []) => Ok(Command::Help(None)),
        ("help", [v]) if super::VERBS.iter().any(|(name, _, _)| name == v) => {
            Ok(Command::Help(Some(v.clone())))
        }
        ("help", [_]) => Err(UsageError("unknown command; use --help".into())),
        ("help", _) => Err(usage("help [verb]")),
        ("validate", [file]) => Ok(Command::Validate(PathBuf::from(file))),
        ("validate", _) => Err(usage("validate <config.yaml>")),
        ("check", [file]) => {
            reject_adhoc_flags(&values, "check")?;
            run(false, Source::File(PathBuf::from(file)))
        }
        ("check", _) => Err(usage("check <config.yaml>")),
        ("doctor", [file]) => {
            reject_adhoc_flags(&values, "doctor <config.yaml>")?;
            run(true, Source::File(PathBuf::from(file)))
        }
        ("doctor", [kind, endpoint]) => {
            run(true, adhoc("doctor", kind, endpoint, adhoc_options()?)?)
        }
        ("doctor", _) => Err(usage("doctor <config.yaml> | doctor <type> <endpoint>")),
        ("ping", [kind, endpoint]) => run(false, adhoc("ping", kind, endpoint, adhoc_options()?)?),
        ("ping", _) => Err(usage("ping <type> <endpoint>")),
        _ => Err(UsageError("unknown command; use --help".into())),
    }
}

fn adhoc(
    name: &'static str,
    kind: &str,
    endpoint: &str,
    options: AdhocOptions,
) -> Result<Source, UsageError> {
    let kind = TargetType::parse(kind)
        .filter(|_| !endpoint.trim().is_empty())
        .ok_or_else(|| {
            UsageError(
                "invalid target; use a specification target type and a nonempty endpoint".into(),
            )
        })?;
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
    positionals: &[String],
    dash: Option<usize>,
    options: &mut AdhocOptions,
) -> Result<Source, UsageError> {
    let form = format!("usage: agenthealth {name} mcp --stdio -- <command> [args...]");
    let (Some(2), [_, kind, argv @ ..]) = (dash, positionals) else {
        return Err(UsageError(format!(
            "--stdio takes the server's command after `--`; {form}"
        )));
    };
    if kind != "mcp" {
        return Err(UsageError(format!(
            "--stdio applies to mcp targets only; {form}"
        )));
    }
    let Some(command) = argv.first().filter(|c| !c.trim().is_empty()) else {
        return Err(UsageError(format!("--stdio needs a command; {form}")));
    };
    if options.bearer_env.is_some() {
        return Err(UsageError(
            "--bearer-env cannot be combined with --stdio; a stdio server takes no HTTP credentials"
                .into(),
        ));
    }
    options.stdio = Some(argv.to_vec());
    Ok(Source::Adhoc {
        name,
        kind: TargetType::Mcp,
        endpoint: crate::config::adhoc::stdio_endpoint(command),
        options: options.clone(),
    })
}

fn reject_adhoc_flags(values: &[(&'static str, String)], form: &str) -> Result<(), UsageError> {
    match values
        .iter()
        .find(|(n, _)| matches!(*n, "timeout" | "bearer-env" | "stdio"))
    {
        Some((n, _)) => Err(UsageError(format!(
            "--{n} applies to ad-hoc targets only, not `{form}`; set it in the configuration file"
        ))),
        None => Ok(()),
    }
}

fn usage(synopsis: &str) -> UsageError {
    UsageError(format!("usage: agenthealth {synopsis}"))
}

fn unknown_option(opt: &str) -> UsageError {
    let bare = opt.trim_start_matches('-');
    let near = crate::vocab::text::suggest(bare, FLAGS.iter().map(|f| f.long));
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
                source: Source::File(PathBuf::from("--help")),
                format: Format::Json,
                color: ColorChoice::Auto,
            }))
        );
        assert!(p(&["check", "--", "a.yaml", "--format", "json"]).is_err());
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
    }
}
