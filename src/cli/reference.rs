//! The man page and the bash, zsh and fish completions, generated from the flag table and
//! the verbs ([`super::defs`]), the exit codes and the target types — as the usage text is —
//! so none of them can list a flag the parser does not have or miss one it has. Hidden
//! flags stay hidden.
//!
//! `make dist` writes them into the release archive (`cargo run --example reference`); the
//! binary itself never calls this module, so it adds nothing to its size.

use super::defs::{FLAGS, Flag, VERBS, with_options};
use crate::contract::TargetType;
use crate::exit;

/// A shell whose completion can be generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shell {
    /// bash (`complete -F`).
    Bash,
    /// zsh (`#compdef`, `_arguments`).
    Zsh,
    /// fish (`complete -c`).
    Fish,
}

impl Shell {
    /// Every shell.
    pub const ALL: [Shell; 3] = [Shell::Bash, Shell::Zsh, Shell::Fish];

    /// Its name, as `reference` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Shell::Bash => "bash",
            Shell::Zsh => "zsh",
            Shell::Fish => "fish",
        }
    }

    /// The completion file's conventional name.
    pub fn file_name(self) -> &'static str {
        match self {
            Shell::Bash => "agenthealth.bash",
            Shell::Zsh => "_agenthealth",
            Shell::Fish => "agenthealth.fish",
        }
    }
}

use super::defs::verb_names as verbs;

/// Whether `flag` applies to `verb`.
fn applies(flag: &Flag, verb: &str) -> bool {
    flag.verbs.is_empty() || flag.verbs.contains(&verb)
}

/// The fixed choices of a flag's value (`terminal|json|yaml`), if it has any.
fn choices(flag: &Flag) -> Option<Vec<&'static str>> {
    let value = flag.value_name()?;
    let words: Vec<&str> = value.split('|').collect();
    let fixed = words.len() > 1
        && words
            .iter()
            .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase()));
    fixed.then_some(words)
}

/// The man page, in roff (`man 1 agenthealth`).
pub fn man_page() -> String {
    let mut out = String::new();
    let version = env!("CARGO_PKG_VERSION");
    out.push_str(&format!(
        ".TH AGENTHEALTH 1 \"\" \"agenthealth {version}\" \"User Commands\"\n"
    ));
    out.push_str(".SH NAME\nagenthealth \\- health checks for MCP servers, HTTP endpoints and what they depend on\n");
    out.push_str(".SH SYNOPSIS\n");
    for form in VERBS.iter().flat_map(|(_, forms, _)| forms.iter()) {
        out.push_str(&format!(
            ".B agenthealth\n{}\n.br\n",
            roff(&with_options(form))
        ));
    }
    out.push_str(".SH DESCRIPTION\n");
    out.push_str(&roff(
        "agenthealth answers one question for an operator: can this MCP server, and what it \
         depends on, do its work right now? It answers with a status, an exit code and evidence. \
         Configurations, result documents, statuses and exit codes follow the AgentHealth v1 \
         contract.",
    ));
    out.push_str("\n.SH COMMANDS\n");
    commands(&mut out);
    out.push_str(
        ".SH OPTIONS\nOptions may come before or after the arguments; \\-\\- ends options.\n",
    );
    options(&mut out);
    out.push_str(".SH TARGET TYPES\n");
    out.push_str(&roff(&format!(
        "{}. Adapters: {}; the other types load and report MISCONFIGURED.",
        TargetType::names(&TargetType::ALL, ", "),
        TargetType::names(&TargetType::CHECKED, ", ")
    )));
    out.push_str("\n.SH EXIT STATUS\n");
    for c in exit::CODES {
        out.push_str(&format!(
            ".TP\n.B {}\n{}: {}\n",
            c.code,
            c.name(),
            roff(c.meaning)
        ));
    }
    out.push_str(".SH ENVIRONMENT\n");
    environment(&mut out);
    out.push_str(".SH SEE ALSO\n");
    out.push_str(&roff(
        "README.md and docs/ in the release archive's source: configuration.md, mcp.md, \
         oauth.md, graph.md, output.md, deployment.md.",
    ));
    out.push('\n');
    out
}

/// The man page's COMMANDS: each verb's synopsis, summary and options.
fn commands(out: &mut String) {
    for (name, forms, summary) in VERBS {
        let forms: Vec<String> = forms.iter().map(|f| roff(f)).collect();
        out.push_str(&format!(
            ".TP\n.B agenthealth {}\n{}",
            forms.join("\n.br\n.B agenthealth "),
            roff(summary)
        ));
        let flags: Vec<String> = FLAGS
            .iter()
            .filter(|f| !f.verbs.is_empty() && f.verbs.contains(name))
            .map(|f| format!("\\-\\-{}", roff(f.long)))
            .collect();
        if !flags.is_empty() {
            out.push_str(&format!(" (options: {})", flags.join(", ")));
        }
        out.push('\n');
    }
}

/// The man page's OPTIONS: every flag, its value and the verbs it applies to.
fn options(out: &mut String) {
    for f in FLAGS {
        let mut name = String::new();
        if let Some(s) = f.short {
            name.push_str(&format!("\\fB\\-{s}\\fR, "));
        }
        name.push_str(&format!("\\fB\\-\\-{}\\fR", roff(f.long)));
        if let Some(v) = f.value_name() {
            name.push_str(&format!(" \\fI{}\\fR", roff(v)));
        }
        out.push_str(&format!(".TP\n{name}\n{}", roff(f.doc)));
        if !f.verbs.is_empty() {
            out.push_str(&format!(" ({})", f.verbs.join(", ")));
        }
        out.push('\n');
    }
}

/// The man page's ENVIRONMENT: the variables agenthealth reads of its own.
fn environment(out: &mut String) {
    for (name, what) in [
        (
            "SSL_CERT_FILE, SSL_CERT_DIR",
            "the trust store for TLS, before the system bundle and the bundled Mozilla roots",
        ),
        (
            "HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY",
            "proxies, as curl reads them",
        ),
        (
            "NO_COLOR",
            "no colour in terminal output (with --color auto)",
        ),
        (
            "COLUMNS",
            "the width terminal output is filled to (20-1000; else the terminal's own)",
        ),
    ] {
        out.push_str(&format!(".TP\n.B {}\n{}\n", roff(name), roff(what)));
    }
}

/// Text made safe for roff: backslashes and dashes escaped, no line starting with a
/// control character.
fn roff(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    match escaped.chars().next() {
        Some('.' | '\'') => format!("\\&{escaped}"),
        _ => escaped,
    }
}

/// The completion script for `shell`.
pub fn completion(shell: Shell) -> String {
    match shell {
        Shell::Bash => bash(),
        Shell::Zsh => zsh(),
        Shell::Fish => fish(),
    }
}

fn flag_words(verb: &str) -> String {
    FLAGS
        .iter()
        .filter(|f| applies(f, verb))
        .map(|f| format!("--{}", f.long))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a positional argument of a verb completes to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Arg {
    /// A target type (`ping <type>`).
    Type,
    /// A target type or a configuration file (`doctor`).
    TypeOrConfig,
    /// A configuration file: `*.yaml`, `*.yml`, a directory, or `-`.
    Config,
    /// A verb (`help <verb>`).
    Verb,
    /// A top-level target `login` accepts, from `agenthealth __complete login-targets FILE`.
    LoginTarget,
}

/// Each verb's positional arguments, by position (an endpoint completes to nothing). After
/// `--` (`--stdio -- <command> [args...]`) every shell completes a command line.
const POSITIONALS: &[(&str, &[Arg])] = &[
    ("ping", &[Arg::Type]),
    ("doctor", &[Arg::TypeOrConfig]),
    ("check", &[Arg::Config]),
    ("validate", &[Arg::Config]),
    ("serve", &[Arg::Config]),
    ("login", &[Arg::Config, Arg::LoginTarget]),
    ("help", &[Arg::Verb]),
];

/// The target types, space-separated.
fn type_words() -> String {
    TargetType::names(&TargetType::ALL, " ")
}

/// The verbs, space-separated.
fn verb_words() -> String {
    verbs().collect::<Vec<_>>().join(" ")
}

/// The flags that take a value (whose value is no positional argument).
fn value_flags() -> impl Iterator<Item = &'static Flag> {
    FLAGS.iter().filter(|f| f.value_name().is_some())
}

/// The bash script around the generated parts: `@VALUE_FLAGS@` (the flags whose value is no
/// positional argument), `@FIRST@` (what the first word completes to), and the cases.
const BASH: &str = r#"# bash completion for agenthealth (generated from its flag table)
_agenthealth_configs() {
    local f
    COMPREPLY=()
    while IFS= read -r f; do
        [[ -d $f || $f == *.yaml || $f == *.yml ]] && COMPREPLY+=("$f")
    done < <(compgen -f -- "$1")
    [[ - == "$1"* ]] && COMPREPLY+=(-)
    compopt -o filenames 2> /dev/null
}
_agenthealth() {
    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
    case "$prev" in
@FLAG_VALUES@    esac
    # The positional arguments so far; after `--`, the server's command line.
    local i w args=() skip=
    for ((i = 2; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        if [[ $w == -- ]]; then
            if ((i == COMP_CWORD - 1)); then
                COMPREPLY=($(compgen -c -- "$cur"))
            else
                COMPREPLY=($(compgen -f -- "$cur"))
            fi
            return
        fi
        if [[ -n $skip ]]; then
            [[ $w == = ]] || skip=
            continue
        fi
        case "$w" in
            @VALUE_FLAGS@|=) skip=1 ;;
            -*) ;;
            *) args+=("$w") ;;
        esac
    done
    if [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W "@FIRST@" -- "$cur"))
        return
    fi
    local flags
    case "${COMP_WORDS[1]}" in
@VERB_FLAGS@    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
        return
    fi
    COMPREPLY=()
    case "${COMP_WORDS[1]}:${#args[@]}" in
@POSITIONALS@    esac
}
complete -F _agenthealth agenthealth
"#;

fn bash() -> String {
    let mut values = String::new();
    for f in FLAGS {
        match (choices(f), f.value_name()) {
            (Some(words), _) => values.push_str(&format!(
                "        --{}) COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); return ;;\n",
                f.long,
                words.join(" ")
            )),
            (None, Some(_)) => values.push_str(&format!("        --{}) return ;;\n", f.long)),
            (None, None) => {}
        }
    }
    let first: Vec<String> = verbs()
        .map(str::to_string)
        .chain(
            FLAGS
                .iter()
                .filter(|f| f.verbs.is_empty())
                .map(|f| format!("--{}", f.long)),
        )
        .collect();
    let verb_flags: String = verbs()
        .map(|verb| format!("        {verb}) flags=\"{}\" ;;\n", flag_words(verb)))
        .collect();
    let mut positionals = String::new();
    for (verb, args) in POSITIONALS {
        for (i, arg) in args.iter().enumerate() {
            let words = |w: String| format!("COMPREPLY=($(compgen -W \"{w}\" -- \"$cur\"))");
            let action = match arg {
                Arg::Type => words(type_words()),
                Arg::TypeOrConfig => format!(
                    "_agenthealth_configs \"$cur\"; COMPREPLY+=($(compgen -W \"{}\" -- \"$cur\"))",
                    type_words()
                ),
                Arg::Config => "_agenthealth_configs \"$cur\"".to_string(),
                Arg::Verb => words(verb_words()),
                Arg::LoginTarget => format!(
                    "local IFS=$'\\n'; {}",
                    words("$(\"${COMP_WORDS[0]}\" __complete login-targets \"${args[0]}\" 2> /dev/null)".into())
                ),
            };
            positionals.push_str(&format!("        {verb}:{i}) {action} ;;\n"));
        }
    }
    let value_flags: Vec<String> = value_flags().map(|f| format!("--{}", f.long)).collect();
    BASH.replace("@FLAG_VALUES@", &values)
        .replace("@VALUE_FLAGS@", &value_flags.join("|"))
        .replace("@FIRST@", &first.join(" "))
        .replace("@VERB_FLAGS@", &verb_flags)
        .replace("@POSITIONALS@", &positionals)
}

/// `text` for a zsh `_arguments` or `_describe` description inside single quotes.
fn zsh_text(text: &str) -> String {
    text.replace('\'', "'\\''")
        .replace('[', "\\[")
        .replace(']', "\\]")
        .replace(':', "\\:")
}

/// The zsh script around the generated parts: `@TYPES@`, `@VERBS@` (with their summaries)
/// and `@CASES@` (each verb's `_arguments`).
const ZSH: &str = r#"#compdef agenthealth
# zsh completion for agenthealth (generated from its flag table)

_agenthealth_configs() {
    _files -g '*.(yaml|yml)'
    compadd -- -
}

_agenthealth_types() {
    local -a types
    types=(@TYPES@)
    _describe -t types 'target type' types
}

_agenthealth_type_or_config() {
    _alternative 'types:target type:_agenthealth_types' 'files:configuration:_agenthealth_configs'
}

_agenthealth_verbs() {
    local -a verbs
    verbs=(
@VERBS@    )
    _describe 'command' verbs
}

_agenthealth_login_targets() {
    local -a targets
    targets=(${(f)"$(_call_program targets $_agenthealth_cmd __complete login-targets ${(Q)line[1]} 2> /dev/null)"})
    compadd -a targets
}

_agenthealth() {
    local _agenthealth_cmd=$words[1]
    if (( CURRENT == 2 )); then
        _agenthealth_verbs
        return
    fi
    # After `--`: the server's command line.
    local dash=${words[(i)--]}
    if (( dash < CURRENT )); then
        words=(${words[dash+1,-1]})
        (( CURRENT -= dash ))
        _normal
        return
    fi
    local verb=$words[2]
    shift words
    (( CURRENT-- ))
    case $verb in
@CASES@    esac
}

_agenthealth "$@"
"#;

fn zsh() -> String {
    let summaries: String = VERBS
        .iter()
        .map(|(name, _, summary)| format!("        '{name}:{}'\n", zsh_text(summary)))
        .collect();
    ZSH.replace("@TYPES@", &type_words())
        .replace("@VERBS@", &summaries)
        .replace("@CASES@", &verbs().map(zsh_case).collect::<String>())
}

/// One verb's `_arguments`: its flags, then its positional arguments.
fn zsh_case(verb: &str) -> String {
    let mut specs: Vec<String> = FLAGS
        .iter()
        .filter(|f| applies(f, verb))
        .map(|f| {
            let value = match (choices(f), f.value_name()) {
                (Some(words), _) => format!(":{}:({})", f.long, words.join(" ")),
                (None, Some(v)) => format!(":{}:", zsh_text(v)),
                (None, None) => String::new(),
            };
            format!("'--{}[{}]{value}'", f.long, zsh_text(f.doc))
        })
        .collect();
    for (i, arg) in positionals(verb).iter().enumerate() {
        let (what, action) = match arg {
            Arg::Type => ("target type", "_agenthealth_types"),
            Arg::TypeOrConfig => (
                "target type or configuration",
                "_agenthealth_type_or_config",
            ),
            Arg::Config => ("configuration", "_agenthealth_configs"),
            Arg::Verb => ("command", "_agenthealth_verbs"),
            Arg::LoginTarget => ("target", "_agenthealth_login_targets"),
        };
        specs.push(format!("'{}:{what}:{action}'", i + 1));
    }
    if matches!(verb, "ping" | "doctor") {
        specs.push("'2:endpoint: '".into());
    }
    format!(
        "        {verb})\n            _arguments \\\n                {}\n            ;;\n",
        specs.join(" \\\n                ")
    )
}

/// A verb's positional arguments ([`POSITIONALS`]).
fn positionals(verb: &str) -> &'static [Arg] {
    POSITIONALS
        .iter()
        .find(|(v, _)| *v == verb)
        .map_or(&[][..], |(_, a)| *a)
}

/// `text` inside fish single quotes.
fn fish_text(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\'', "\\'")
}

/// The fish functions the generated lines call: `@VALUE_FLAGS@` are the flags whose value
/// is no positional argument.
const FISH: &str = r#"# fish completion for agenthealth (generated from its flag table)
# The verb and the positional arguments so far (flags and their values left out).
function __agenthealth_args
    set -l tokens (commandline -opc)
    set -l skip 0
    for t in $tokens[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        switch $t
            case @VALUE_FLAGS@
                set skip 1
            case '-*'
            case '*'
                echo $t
        end
    end
end
# Whether the word being completed is positional argument N of VERB.
function __agenthealth_at -a verb n
    contains -- -- (commandline -opc); and return 1
    set -l args (__agenthealth_args)
    test "$args[1]" = $verb; and test (count $args) -eq $n
end
function __agenthealth_configs
    for f in (commandline -ct)*
        if test -d $f
            echo $f/
        else if string match -qr '\.ya?ml$' -- $f
            echo $f
        end
    end
    echo -
end
function __agenthealth_login_targets
    set -l args (__agenthealth_args)
    set -l program (commandline -opc)[1]
    $program __complete login-targets $args[2] 2> /dev/null
end
complete -c agenthealth -f
# After `--`: the server's command line.
complete -c agenthealth -n 'test (commandline -opc)[-1] = --' -a '(__fish_complete_command)'
complete -c agenthealth -n 'contains -- -- (commandline -opc); and not test (commandline -opc)[-1] = --' -F
"#;

fn fish() -> String {
    let values: Vec<String> = value_flags().map(|f| format!("--{}", f.long)).collect();
    let mut out = FISH.replace("@VALUE_FLAGS@", &values.join(" "));
    for (name, _, summary) in VERBS {
        out.push_str(&format!(
            "complete -c agenthealth -n '__fish_use_subcommand' -a {name} -d '{}'\n",
            fish_text(summary)
        ));
    }
    for (verb, args) in POSITIONALS {
        for (i, arg) in args.iter().enumerate() {
            let mut candidates = match arg {
                Arg::Type | Arg::TypeOrConfig => vec![format!("'{}'", type_words())],
                Arg::Verb => vec![format!("'{}'", verb_words())],
                Arg::Config => vec![],
                Arg::LoginTarget => vec!["'(__agenthealth_login_targets)'".to_string()],
            };
            if matches!(arg, Arg::Config | Arg::TypeOrConfig) {
                candidates.push("'(__agenthealth_configs)'".to_string());
            }
            for c in candidates {
                out.push_str(&format!(
                    "complete -c agenthealth -n '__agenthealth_at {verb} {}' -a {c}\n",
                    i + 1
                ));
            }
        }
    }
    out.extend(FLAGS.iter().map(fish_flag));
    out
}

/// A flag's fish lines: after the verbs that take it, and before any verb for the global ones.
fn fish_flag(f: &Flag) -> String {
    let all: Vec<&str> = verbs().collect();
    let scope: &[&str] = if f.verbs.is_empty() { &all } else { f.verbs };
    let mut line = format!(
        "complete -c agenthealth -n '__fish_seen_subcommand_from {}'",
        scope.join(" ")
    );
    if let Some(s) = f.short {
        line.push_str(&format!(" -s {s}"));
    }
    line.push_str(&format!(" -l {}", f.long));
    match (choices(f), f.value_name()) {
        (Some(words), _) => line.push_str(&format!(" -x -a '{}'", words.join(" "))),
        (None, Some(_)) => line.push_str(" -r"),
        (None, None) => {}
    }
    line.push_str(&format!(" -d '{}'\n", fish_text(f.doc)));
    if f.verbs.is_empty() {
        // Before any verb too (`agenthealth --help`).
        line.push_str(&format!(
            "complete -c agenthealth -n '__fish_use_subcommand' -l {}",
            f.long
        ));
        if let Some(s) = f.short {
            line.push_str(&format!(" -s {s}"));
        }
        line.push_str(&format!(" -d '{}'\n", fish_text(f.doc)));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::defs::HIDDEN;

    #[test]
    fn every_flag_and_verb_is_in_the_man_page_and_every_completion() {
        let man = man_page();
        for f in FLAGS {
            assert!(
                man.contains(&format!("\\-\\-{}", roff(f.long))),
                "man: --{}",
                f.long
            );
            assert!(man.contains(&roff(f.doc)), "man: --{} doc", f.long);
        }
        for verb in verbs() {
            assert!(
                man.contains(&format!(".B agenthealth {verb}")),
                "man: {verb}"
            );
        }
        for c in exit::CODES {
            assert!(
                man.contains(&format!(".B {}\n{}", c.code, c.name())),
                "man: exit {}",
                c.code
            );
        }
        for shell in Shell::ALL {
            let script = completion(shell);
            for f in FLAGS {
                let spelled = match shell {
                    Shell::Fish => format!("-l {}", f.long),
                    _ => format!("--{}", f.long),
                };
                assert!(script.contains(&spelled), "{}: --{}", shell.name(), f.long);
                if let Some(words) = choices(f) {
                    assert!(
                        script.contains(&words.join(" ")),
                        "{}: --{} values",
                        shell.name(),
                        f.long
                    );
                }
            }
            for verb in verbs() {
                assert!(script.contains(verb), "{}: {verb}", shell.name());
            }
            for f in HIDDEN {
                assert!(
                    !script.contains(f.long),
                    "{}: hidden --{}",
                    shell.name(),
                    f.long
                );
            }
        }
        for f in HIDDEN {
            assert!(!man.contains(&roff(f.long)), "man: hidden --{}", f.long);
        }
    }

    #[test]
    fn flags_are_completed_only_after_the_verbs_that_take_them() {
        let bash = completion(Shell::Bash);
        assert!(
            bash.contains(
                "        serve) flags=\"--deadline --listen --token-env --probe-concurrency --help --version\" ;;\n"
            ),
            "{bash}"
        );
        assert!(
            bash.contains(
                "--format) COMPREPLY=($(compgen -W \"terminal json yaml line openmetrics\""
            )
        );
        let fish = completion(Shell::Fish);
        assert!(
            fish.contains("-n '__fish_seen_subcommand_from ping doctor' -l timeout -r"),
            "{fish}"
        );
        let zsh = completion(Shell::Zsh);
        assert!(zsh.contains("'--color[colour terminal output (auto\\: a terminal, no NO_COLOR, not TERM=dumb)]:color:(auto always never)'"), "{zsh}");
        assert!(
            zsh.contains(
                "'--stdio[mcp server to start, no shell\\: ping mcp --stdio -- CMD \\[ARG...\\]]'"
            ),
            "{zsh}"
        );
    }

    #[test]
    fn roff_escapes_what_roff_would_interpret() {
        assert_eq!(roff("a-b \\x"), "a\\-b \\ex");
        assert_eq!(roff(".hidden"), "\\&.hidden");
        assert_eq!(roff("'quoted"), "\\&'quoted");
    }
}
