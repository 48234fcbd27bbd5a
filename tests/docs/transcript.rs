//! A console block's steps (commands with their shown output, `echo $?`), the command
//! grammar, and how a command runs (with a browser for `agenthealth login`).

use std::path::Path;
use std::process::{Command, Stdio};

use super::markdown::Fence;
use super::with_port;
use crate::util::bin;

pub(super) enum Step {
    /// A command and the output the block shows for it.
    Run {
        line: usize,
        command: Shown,
        expected: String,
    },
    /// `$ echo $?` and the code shown.
    ExitCode { line: usize, code: i32 },
}

/// A command as the block writes it.
pub(super) struct Shown {
    pub(super) shown: String,
    env: Vec<(String, String)>,
    args: Vec<String>,
    with_stderr: bool,
}

impl Shown {
    /// Runs the command in `dir` with `path` as `PATH`; returns its exit code and its output
    /// (stdout, then stderr with `2>&1`). With `browser`, a login URL it prints is visited.
    pub(super) fn run(
        &self,
        dir: &Path,
        path: &std::ffi::OsStr,
        port: &str,
        browser: bool,
    ) -> (i32, String) {
        let mut cmd = Command::new(bin());
        cmd.args(self.args.iter().map(|a| with_port(a, port)))
            .current_dir(dir)
            .env_clear()
            .env("PATH", path)
            .env("LANG", "C.UTF-8")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(home) = std::env::var_os("HOME") {
            cmd.env("HOME", home);
        }
        for (k, v) in &self.env {
            cmd.env(k, with_port(v, port));
        }
        if browser {
            return play_browser(cmd, self.with_stderr);
        }
        let out = cmd.output().expect("run agenthealth");
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        if self.with_stderr {
            text.push_str(&String::from_utf8_lossy(&out.stderr));
        }
        (out.status.code().unwrap_or(-1), text)
    }
}

/// Runs `cmd`; when it prints a login URL, fetches it and follows one redirect (to the
/// login's callback), as a browser would.
fn play_browser(mut cmd: Command, with_stderr: bool) -> (i32, String) {
    use std::io::{BufRead, BufReader, Read};
    let mut child = cmd.spawn().expect("run agenthealth");
    let stdout = child.stdout.take().expect("stdout");
    let mut text = String::new();
    let mut lines = BufReader::new(stdout).lines();
    let mut url_next = false;
    while let Some(Ok(line)) = lines.next() {
        text.push_str(&line);
        text.push('\n');
        if url_next && let Some(location) = http_get(&line).and_then(|(_, loc)| loc) {
            let _ = http_get(&location);
        }
        url_next = line == "Open this URL to authorize AgentHealth:";
    }
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    let code = child.wait().ok().and_then(|s| s.code()).unwrap_or(-1);
    if with_stderr {
        text.push_str(&stderr);
    }
    (code, text)
}

/// A GET of an `http://127.0.0.1:PORT/…` URL: its status and `Location`.
fn http_get(url: &str) -> Option<(u16, Option<String>)> {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://")?;
    let (authority, target) = rest.split_at(rest.find('/')?);
    let mut s = std::net::TcpStream::connect(authority).ok()?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .ok()?;
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    let status = answer.split(' ').nth(1)?.parse().ok()?;
    let location = answer
        .lines()
        .find_map(|l| {
            l.strip_prefix("Location: ")
                .or_else(|| l.strip_prefix("location: "))
        })
        .map(|l| l.trim().to_string());
    Some((status, location))
}

/// The steps of a console block.
pub(super) fn transcript(fence: &Fence) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    let mut lines = fence
        .body
        .iter()
        .enumerate()
        .map(|(i, l)| (fence.line + 1 + i, l.as_str()))
        .peekable();
    while let Some((n, line)) = lines.next() {
        let Some(command) = line.strip_prefix("$ ") else {
            return Err(format!("{n}: output before the first command: {line}"));
        };
        if command.trim() == "echo $?" {
            let code = match lines.next() {
                Some((_, code)) => code.trim().parse().ok(),
                None => None,
            };
            let code =
                code.ok_or_else(|| format!("{n}: `echo $?` must be followed by a number"))?;
            steps.push(Step::ExitCode { line: n, code });
            continue;
        }
        let command = parse_command(command).map_err(|e| format!("{n}: {e}: {line}"))?;
        let mut expected = String::new();
        while let Some((_, l)) = lines.next_if(|(_, l)| !l.starts_with("$ ")) {
            expected.push_str(l);
            expected.push('\n');
        }
        steps.push(Step::Run {
            line: n,
            command,
            expected,
        });
    }
    if steps.is_empty() {
        return Err(format!("{}: an empty console block", fence.line));
    }
    Ok(steps)
}

/// Parses `[NAME=value …] agenthealth ARG… [2>&1]`.
fn parse_command(line: &str) -> Result<Shown, String> {
    let mut words = words(line)?;
    let with_stderr = words
        .last()
        .is_some_and(|(w, quoted)| w == "2>&1" && !quoted);
    if with_stderr {
        words.pop();
    }
    let mut env = Vec::new();
    let mut words = words.into_iter().peekable();
    while let Some((name, value)) = words.peek().and_then(|(w, quoted)| {
        let (name, value) = w.split_once('=')?;
        let is_name = !quoted
            && !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        is_name.then(|| (name.to_string(), value.to_string()))
    }) {
        env.push((name, value));
        words.next();
    }
    match words.next() {
        Some((program, false)) if program == "agenthealth" => {}
        Some((program, _)) => return Err(format!("only agenthealth runs, not `{program}`")),
        None => return Err("no command".into()),
    }
    let args: Vec<String> = words.map(|(w, _)| w).collect();
    Ok(Shown {
        shown: line.to_string(),
        env,
        args,
        with_stderr,
    })
}

/// Splits `line` into words (each with whether any part of it was quoted), refusing the
/// shell syntax the harness does not run.
fn words(line: &str) -> Result<Vec<(String, bool)>, String> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.next_if(|c| *c == ' ').is_some() {}
        if chars.peek().is_none() {
            return Ok(out);
        }
        let mut word = String::new();
        let mut quoted = false;
        while let Some(c) = chars.next_if(|c| *c != ' ') {
            match c {
                '\'' | '"' => {
                    quoted = true;
                    loop {
                        match chars.next() {
                            Some(q) if q == c => break,
                            Some('$' | '`' | '\\') if c == '"' => {
                                return Err("no expansion or escapes inside \"…\"".into());
                            }
                            Some(x) => word.push(x),
                            None => return Err("unterminated quote".into()),
                        }
                    }
                }
                '#' if word.is_empty() => return Err("no comments".into()),
                '|' | ';' | '<' | '$' | '`' | '(' | ')' | '\\' | '*' | '?' => {
                    return Err(format!("`{c}` is shell syntax the harness does not run"));
                }
                '>' | '&' if !(word == "2" || word == "2>") => {
                    return Err(format!("`{c}` is shell syntax the harness does not run"));
                }
                _ => word.push(c),
            }
        }
        if !quoted && (word.starts_with("2>") && word != "2>&1") {
            return Err(format!("only 2>&1 is supported, not `{word}`"));
        }
        out.push((word, quoted));
    }
}

#[test]
fn commands_are_agenthealth_with_environment_and_nothing_else() {
    let c =
        parse_command("API_TOKEN=x agenthealth doctor http 'a b' --bearer-env API_TOKEN").unwrap();
    assert_eq!(c.env, [("API_TOKEN".to_string(), "x".to_string())]);
    assert_eq!(
        c.args,
        ["doctor", "http", "a b", "--bearer-env", "API_TOKEN"]
    );
    assert!(!c.with_stderr);
    assert!(
        parse_command("agenthealth validate bad.yaml 2>&1")
            .unwrap()
            .with_stderr
    );
    for bad in [
        "curl http://x",
        "agenthealth check a.yaml | jq .",
        "agenthealth check a.yaml > out",
        "agenthealth check $FILE",
        "agenthealth check a.yaml # comment",
        "agenthealth check a.yaml; echo",
        "agenthealth check a.yaml 2>/dev/null",
        "agenthealth check \"$X\"",
    ] {
        assert!(parse_command(bad).is_err(), "{bad}");
    }
}
