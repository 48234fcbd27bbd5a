//! The shell completions (`agenthealth::reference::completion`, shipped in the release
//! archive) exercised in the real shells, non-interactively: bash through `COMP_WORDS` and
//! the completion function, fish through `complete --do-complete`, zsh in a pseudo-terminal
//! (`zsh/zpty`) with a Tab-bound widget that records what `compadd` is given. Each case
//! asserts what must and must not be offered: types after `ping`, types and configuration
//! files after `doctor`, verbs after `help`, configuration files (`*.yaml`, `*.yml`,
//! directories, `-`) after `check`, `validate`, `serve` and `login`, the targets `login`
//! accepts after `login FILE` (from the hidden `agenthealth __complete login-targets`), flag
//! values, and a command after `--stdio --`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use agenthealth::reference::{Shell, completion};

use crate::util::{TempDir, bin};

/// A directory to complete in: configurations, another file, a subdirectory, and the binary
/// (as `agenthealth`) in `bin/` for the shells' PATH.
struct Scene {
    dir: TempDir,
}

const CONFIG: &str = "version: v1
targets:
  - name: user-mcp
    type: mcp
    endpoint: http://127.0.0.1:1/mcp
    mcp:
      oauth:
        issuer: http://127.0.0.1:1
        client_id: c
        grant: authorization_code
        token_file: t.json
  - name: robot-mcp
    type: mcp
    endpoint: http://127.0.0.1:1/mcp
    mcp:
      oauth:
        issuer: http://127.0.0.1:1
        client_id: c
        grant: client_credentials
        client_secret_env: NEVER_READ
  - name: plain
    type: http
    endpoint: http://127.0.0.1:1/
";

impl Scene {
    fn new(tag: &str) -> Scene {
        let dir = TempDir::new(tag);
        dir.file("c.yaml", CONFIG);
        dir.file("other.yml", "version: v1\n");
        dir.file("notes.txt", "not a configuration\n");
        std::fs::create_dir_all(dir.0.join("sub")).expect("sub/");
        std::fs::create_dir_all(dir.0.join("bin")).expect("bin/");
        std::os::unix::fs::symlink(bin(), dir.0.join("bin/agenthealth")).expect("link");
        for shell in Shell::ALL {
            let file = dir.0.join("completions").join(shell.file_name());
            std::fs::create_dir_all(file.parent().expect("dir")).expect("completions/");
            std::fs::write(file, completion(shell)).expect("completion");
        }
        Scene { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.0.join(rel)
    }

    /// A shell in the scene's directory with its `bin/` first on PATH.
    fn shell(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        let path = std::env::var("PATH").unwrap_or_default();
        cmd.current_dir(&self.dir.0)
            .env("PATH", format!("{}:{path}", self.path("bin").display()))
            .env("HOME", &self.dir.0);
        cmd
    }
}

fn output(mut cmd: Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what} ({e}): .ci/run installs bash, zsh and fish"));
    assert!(
        out.status.success(),
        "{what} ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// bash: `words` as typed (the last is the one being completed) → COMPREPLY.
fn bash(scene: &Scene, words: &[&str]) -> BTreeSet<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let script = format!(
        "source completions/agenthealth.bash; COMP_WORDS=({}); COMP_CWORD={}; _agenthealth; \
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        quoted.join(" "),
        words.len() - 1
    );
    let mut cmd = scene.shell("bash");
    cmd.args(["--norc", "-c", &script]);
    output(cmd, "bash")
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// fish: the command line up to the cursor → the candidates (without descriptions).
fn fish(scene: &Scene, line: &str) -> BTreeSet<String> {
    let mut cmd = scene.shell("fish");
    cmd.args([
        "--no-config",
        "-c",
        &format!("source completions/agenthealth.fish; complete --do-complete '{line}'"),
    ]);
    output(cmd, "fish")
        .lines()
        .map(|l| l.split('\t').next().unwrap_or_default().to_string())
        .collect()
}

/// zsh: each command line typed in an interactive `zsh -f` on a pseudo-terminal, then Tab:
/// the candidates `compadd` was given, per line. The widget prints a marker when done, which
/// the driver waits for (`zpty -r … '*DONE*'`): no sleeps.
fn zsh(scene: &Scene, lines: &[&str]) -> Vec<BTreeSet<String>> {
    let out = scene.path("zsh.out");
    let mut driver = format!(
        "zmodload zsh/zpty\n\
         zpty z zsh -f -i\n\
         zpty -w z 'LISTMAX=1000000; fpath=(completions $fpath); autoload -U compinit; compinit -u -D'\n\
         zpty -w z 'comptest() {{ compadd() {{ local -a __r; builtin compadd -O __r \"$@\"; \
         print -r -l -- $__r >> {out}; builtin compadd \"$@\" }}; _main_complete; unfunction compadd }}'\n\
         zpty -w z 'zle -C comptest-c complete-word comptest'\n\
         zpty -w z 'comptab() {{ zle comptest-c; BUFFER=\"print DO\\\"\\\"NE\"; zle accept-line }}'\n\
         zpty -w z 'zle -N comptab; bindkey \"^I\" comptab'\n\
         zpty -w z 'print RE\"\"ADY'\n\
         zpty -r z line '*READY*'\n",
        out = out.display()
    );
    // Tab completes, then replaces the line with a command that prints the marker: nothing
    // is typed ahead of the completion.
    for line in lines {
        driver.push_str(&format!(
            "print -r -- '=== case' >> {out}\n\
             zpty -n -w z '{line}'$'\\t'\n\
             zpty -r z line '*DONE*'\n",
            out = out.display()
        ));
    }
    driver.push_str("zpty -d z\n");
    let file = scene.path("driver.zsh");
    std::fs::write(&file, driver).expect("driver");
    let mut cmd = scene.shell("timeout");
    cmd.args(["60", "zsh", "-f"]).arg(&file);
    output(cmd, "zsh");
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let cases: Vec<BTreeSet<String>> = text
        .split("=== case\n")
        .skip(1)
        .map(|c| c.lines().map(str::to_string).collect())
        .collect();
    assert_eq!(cases.len(), lines.len(), "{text}");
    cases
}

const TYPES: [&str; 3] = ["http", "mcp", "a2a"];
const VERBS: [&str; 4] = ["check", "doctor", "validate", "login"];

/// One expectation: what the line must offer and what it must not.
struct Case {
    words: &'static [&'static str],
    has: &'static [&'static str],
    lacks: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        words: &["agenthealth", "va"],
        has: &["validate"],
        lacks: &["c.yaml"],
    },
    Case {
        words: &["agenthealth", "ping", ""],
        has: &TYPES,
        lacks: &["c.yaml", "sub/", "notes.txt"],
    },
    Case {
        words: &["agenthealth", "doctor", ""],
        has: &["http", "mcp", "c.yaml"],
        lacks: &["notes.txt"],
    },
    Case {
        words: &["agenthealth", "help", ""],
        has: &VERBS,
        lacks: &["c.yaml", "http"],
    },
    Case {
        words: &["agenthealth", "check", ""],
        has: &["c.yaml", "other.yml", "-"],
        lacks: &["notes.txt", "http"],
    },
    Case {
        words: &["agenthealth", "validate", "--", ""],
        has: &[],
        lacks: &["http", "check"],
    },
    Case {
        words: &["agenthealth", "serve", ""],
        has: &["c.yaml"],
        lacks: &["notes.txt"],
    },
    Case {
        words: &["agenthealth", "login", "c.yaml", ""],
        has: &["user-mcp"],
        lacks: &["robot-mcp", "plain", "c.yaml"],
    },
    Case {
        words: &["agenthealth", "check", "--format", ""],
        has: &["openmetrics", "json"],
        lacks: &["c.yaml"],
    },
    Case {
        words: &["agenthealth", "ping", "--timeout", "50", ""],
        has: &TYPES,
        lacks: &["c.yaml"],
    },
    Case {
        words: &["agenthealth", "ping", "mcp", "--stdio", "--", "bas"],
        has: &["bash"],
        lacks: &["http"],
    },
];

fn check(shell: &str, case: &Case, got: &BTreeSet<String>) {
    // Shells differ in how they show a directory (`sub/` or `sub`); compare names.
    let names: BTreeSet<&str> = got.iter().map(|c| c.trim_end_matches('/')).collect();
    for want in case.has {
        assert!(
            names.contains(want.trim_end_matches('/')),
            "{shell} {:?}: no `{want}` in {got:?}",
            case.words
        );
    }
    for not in case.lacks {
        assert!(
            !names.contains(not.trim_end_matches('/')),
            "{shell} {:?}: `{not}` in {got:?}",
            case.words
        );
    }
}

#[test]
fn bash_completes_each_position() {
    let scene = Scene::new("comp-bash");
    for case in CASES {
        check("bash", case, &bash(&scene, case.words));
    }
    // Directories are offered as places to look for configurations.
    assert!(bash(&scene, &["agenthealth", "check", "su"]).contains("sub"));
    let syntax = scene
        .shell("bash")
        .arg("-n")
        .arg("completions/agenthealth.bash")
        .status();
    assert!(syntax.expect("bash -n").success());
}

#[test]
fn fish_completes_each_position() {
    let scene = Scene::new("comp-fish");
    for case in CASES {
        check("fish", case, &fish(&scene, &case.words.join(" ")));
    }
    assert!(fish(&scene, "agenthealth check su").contains("sub/"));
}

#[test]
fn zsh_completes_each_position() {
    let scene = Scene::new("comp-zsh");
    let lines: Vec<String> = CASES.iter().map(|c| c.words.join(" ")).collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    for (case, got) in CASES.iter().zip(zsh(&scene, &lines)) {
        check("zsh", case, &got);
    }
}

/// The hidden verb the completions call prints only the names of the targets `login` takes
/// (never reading the environment), and nothing at all, exit 0, for anything else.
#[test]
fn the_hidden_login_targets_verb_prints_names_and_nothing_else() {
    let scene = Scene::new("comp-verb");
    let run = |args: &[&str]| {
        let mut cmd = scene.shell(&bin().to_string_lossy());
        cmd.args(args);
        let out = cmd.output().expect("run");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            out.stderr,
        )
    };
    assert_eq!(
        run(&["__complete", "login-targets", "c.yaml"]),
        (Some(0), "user-mcp\n".into(), vec![])
    );
    for args in [
        &["__complete", "login-targets", "missing.yaml"][..],
        &["__complete", "login-targets", "notes.txt"],
        &["__complete"],
        &["__complete", "other", "c.yaml"],
    ] {
        assert_eq!(run(args), (Some(0), String::new(), vec![]), "{args:?}");
    }
    let help = run(&["--help"]).1;
    assert!(!help.contains("__complete"));
    for shell in Shell::ALL {
        let script = completion(shell);
        assert!(
            !script.contains("'__complete") && !script.contains(" __complete:"),
            "{}",
            shell.name()
        );
    }
    let _: &Path = scene.dir.0.as_path();
}
