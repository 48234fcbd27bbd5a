//! A console block's steps: each `$ ` line (with the lines a trailing `\` continues it onto)
//! is a shell line a reader pastes, followed by the stdout the block shows for it.

use super::markdown::Fence;

pub(super) enum Step {
    /// A line for the document's shell, and the output the block shows for it.
    Run {
        line: usize,
        command: String,
        expected: String,
    },
    /// `cargo run [--release] --example fake_mcp_server [-- ARGS] &`: the bundled fake server,
    /// started in the harness through its own command line (a nested `cargo run` would wait
    /// for the build lock the running `cargo test` holds), with the line it prints.
    StartFake {
        line: usize,
        args: Vec<String>,
        expected: String,
    },
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
        let Some(first) = line.strip_prefix("$ ") else {
            return Err(format!("{n}: output before the first command: {line}"));
        };
        let mut command = first.to_string();
        while command.ends_with('\\') {
            let Some((_, more)) = lines.next() else {
                return Err(format!("{n}: the command's last line ends with `\\`"));
            };
            command.push('\n');
            command.push_str(more);
        }
        let mut expected = String::new();
        while let Some((_, l)) = lines.next_if(|(_, l)| !l.starts_with("$ ")) {
            expected.push_str(l);
            expected.push('\n');
        }
        steps.push(match fake_server_args(&command) {
            Some(args) => Step::StartFake {
                line: n,
                args: args.map_err(|e| format!("{n}: {e}: {command}"))?,
                expected,
            },
            None => Step::Run {
                line: n,
                command,
                expected,
            },
        });
    }
    if steps.is_empty() {
        return Err(format!("{}: an empty console block", fence.line));
    }
    Ok(steps)
}

/// The fake server's arguments if `command` starts it; an error if it names the fake server
/// in any other form (a foreground start would block the reader's shell).
fn fake_server_args(command: &str) -> Option<Result<Vec<String>, String>> {
    if !command.contains("fake_mcp_server") {
        return None;
    }
    let words: Vec<&str> = command.split_whitespace().collect();
    let rest = match words.as_slice() {
        [
            "cargo",
            "run",
            "--release",
            "--example",
            "fake_mcp_server",
            rest @ ..,
        ]
        | ["cargo", "run", "--example", "fake_mcp_server", rest @ ..] => rest,
        _ => {
            return Some(Err(
                "the fake server starts as `cargo run [--release] --example fake_mcp_server [-- ARGS] &`"
                    .into(),
            ));
        }
    };
    let Some((&"&", rest)) = rest.split_last() else {
        return Some(Err(
            "the fake server must be started in the background (`&`)".into(),
        ));
    };
    Some(match rest {
        [] => Ok(Vec::new()),
        ["--", args @ ..] => Ok(args.iter().map(|a| a.to_string()).collect()),
        _ => Err("the fake server's arguments follow `--`".into()),
    })
}

#[test]
fn the_fake_server_line_is_recognised_and_strict() {
    let args = |c: &str| fake_server_args(c).map(|r| r.map_err(|_| ()));
    assert_eq!(args("agenthealth check a.yaml"), None);
    assert_eq!(
        args("cargo run --release --example fake_mcp_server &"),
        Some(Ok(vec![]))
    );
    assert_eq!(
        args("cargo run --example fake_mcp_server -- --route /x=hang &"),
        Some(Ok(vec!["--route".into(), "/x=hang".into()]))
    );
    for bad in [
        "cargo run --example fake_mcp_server",
        "cargo run --example fake_mcp_server --port 1 &",
        "target/release/examples/fake_mcp_server &",
    ] {
        assert_eq!(args(bad), Some(Err(())), "{bad}");
    }
}
