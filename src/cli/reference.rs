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

fn bash() -> String {
    let mut out = String::from(
        "# bash completion for agenthealth (generated from its flag table)\n\
         _agenthealth() {\n\
         \x20   local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n\
         \x20   case \"$prev\" in\n",
    );
    for f in FLAGS {
        match (choices(f), f.value_name()) {
            (Some(words), _) => out.push_str(&format!(
                "        --{}) COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); return ;;\n",
                f.long,
                words.join(" ")
            )),
            (None, Some(_)) => out.push_str(&format!("        --{}) return ;;\n", f.long)),
            (None, None) => {}
        }
    }
    out.push_str("    esac\n    if [[ $COMP_CWORD -eq 1 ]]; then\n");
    let first: Vec<String> = verbs()
        .map(str::to_string)
        .chain(
            FLAGS
                .iter()
                .filter(|f| f.verbs.is_empty())
                .map(|f| format!("--{}", f.long)),
        )
        .collect();
    out.push_str(&format!(
        "        COMPREPLY=($(compgen -W \"{}\" -- \"$cur\"))\n        return\n    fi\n",
        first.join(" ")
    ));
    out.push_str("    local flags\n    case \"${COMP_WORDS[1]}\" in\n");
    for verb in verbs() {
        out.push_str(&format!(
            "        {verb}) flags=\"{}\" ;;\n",
            flag_words(verb)
        ));
    }
    out.push_str(
        "    esac\n\
         \x20   if [[ $cur == -* ]]; then\n\
         \x20       COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n\
         \x20   else\n\
         \x20       COMPREPLY=($(compgen -f -- \"$cur\"))\n\
         \x20   fi\n\
         }\n\
         complete -o default -F _agenthealth agenthealth\n",
    );
    out
}

/// `text` for a zsh `_arguments` or `_describe` description inside single quotes.
fn zsh_text(text: &str) -> String {
    text.replace('\'', "'\\''")
        .replace('[', "\\[")
        .replace(']', "\\]")
        .replace(':', "\\:")
}

fn zsh() -> String {
    let mut out = String::from(
        "#compdef agenthealth\n# zsh completion for agenthealth (generated from its flag table)\n\n_agenthealth() {\n    local -a verbs\n    verbs=(\n",
    );
    for (name, _, summary) in VERBS {
        out.push_str(&format!("        '{name}:{}'\n", zsh_text(summary)));
    }
    out.push_str("    )\n    if (( CURRENT == 2 )); then\n        _describe 'command' verbs\n        return\n    fi\n    case $words[2] in\n");
    for verb in verbs() {
        out.push_str(&format!("        {verb})\n            _arguments \\\n"));
        for f in FLAGS.iter().filter(|f| applies(f, verb)) {
            let value = match (choices(f), f.value_name()) {
                (Some(words), _) => format!(":{}:({})", f.long, words.join(" ")),
                (None, Some(v)) => format!(":{}:", zsh_text(v)),
                (None, None) => String::new(),
            };
            out.push_str(&format!(
                "                '--{}[{}]{value}' \\\n",
                f.long,
                zsh_text(f.doc)
            ));
        }
        out.push_str("                '*:file:_files'\n            ;;\n");
    }
    out.push_str("    esac\n}\n\n_agenthealth \"$@\"\n");
    out
}

/// `text` inside fish single quotes.
fn fish_text(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\'', "\\'")
}

fn fish() -> String {
    let mut out = String::from(
        "# fish completion for agenthealth (generated from its flag table)\ncomplete -c agenthealth -f\n",
    );
    let all: Vec<&str> = verbs().collect();
    for (name, _, summary) in VERBS {
        out.push_str(&format!(
            "complete -c agenthealth -n '__fish_use_subcommand' -a {name} -d '{}'\n",
            fish_text(summary)
        ));
    }
    out.push_str(
        "complete -c agenthealth -n '__fish_seen_subcommand_from check doctor validate serve login' -F\n",
    );
    for f in FLAGS {
        let scope: Vec<&str> = if f.verbs.is_empty() {
            all.clone()
        } else {
            f.verbs.to_vec()
        };
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
        out.push_str(&line);
        if f.verbs.is_empty() {
            // Before any verb too (`agenthealth --help`).
            let mut first = format!(
                "complete -c agenthealth -n '__fish_use_subcommand' -l {}",
                f.long
            );
            if let Some(s) = f.short {
                first.push_str(&format!(" -s {s}"));
            }
            first.push_str(&format!(" -d '{}'\n", fish_text(f.doc)));
            out.push_str(&first);
        }
    }
    out
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
                "        serve) flags=\"--deadline --listen --token-env --help --version\" ;;\n"
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
