//! What a person reads, through the binary: the terminal, doctor and line layouts as golden
//! outputs (timings and ports masked as in the documentation tests), `--quiet`, colour and
//! what switches it off, configurations from stdin, and the short-secret redaction rule.

use std::io::Read;
use std::process::{Command, Stdio};

use crate::docs::mask;
use crate::util::{Outcome, TempDir, bin, run, run_env, run_stdin};
use agenthealth_testkit::fake_mcp::{FakeConfig, FakeServer, preset};

const UTF8: (&str, &str) = ("LANG", "C.UTF-8");

/// `got` equals `want` once timings and ports are masked.
fn golden(got: &Outcome, want: &str) {
    assert_eq!(
        mask(&got.stdout),
        mask(want),
        "printed:\n{}\nstderr: {}",
        got.stdout,
        got.stderr
    );
}

/// The documentation's server: healthy at `/mcp`, the `auth` preset at `/private`, the
/// `forbidden-host` one at `/forbidden`, `hang` at `/hang`.
fn server() -> FakeServer {
    let named = |n: &str| preset(n).unwrap_or_else(|| panic!("no preset {n}"));
    let mut cfg = named("healthy");
    cfg.routes = [
        ("/private", "auth"),
        ("/forbidden", "forbidden-host"),
        ("/hang", "hang"),
    ]
    .iter()
    .map(|(p, n)| (p.to_string(), named(n)))
    .collect();
    FakeServer::start(cfg)
}

/// A configuration of `notes` (the healthy MCP server, protocol only) and two HTTP targets
/// on a port nothing listens on.
fn two_down(server: &FakeServer) -> String {
    format!(
        "version: v1\ntargets:\n  - name: orders\n    type: http\n    endpoint: http://127.0.0.1:1/health\n  - name: billing\n    type: http\n    endpoint: http://127.0.0.1:1/health\n  - name: notes\n    type: mcp\n    endpoint: {}\n    checks: [protocol]\n",
        server.url()
    )
}

const NOTES_PROTOCOL: &str = "era=legacy · fallback=true · discover_http_status=400 · discover_rpc_code=-32000 · response_mode=json · session_id_issued=true · negotiated_version=2025-11-25";

/// One target: the header labels the reachability latency and the run's wall time.
#[test]
fn one_target_labels_latency_and_run_time() {
    let s = server();
    let o = run_env(&["ping", "mcp", &s.url()], &[UTF8]);
    assert_eq!(o.code, 0, "{}", o.stdout);
    golden(
        &o,
        &format!(
            "ping (mcp): HEALTHY  latency 1.00 ms · run 9.00 ms
  authentication HEALTHY        {NOTES_PROTOCOL}
  capability     HEALTHY        tools_count=18 · resources_count=2 · prompts_count=1
  configuration  HEALTHY
  latency        HEALTHY
  protocol       HEALTHY
  reachability   HEALTHY        http_status=200 · tcp 0.10ms http 0.50ms
"
        ),
    );
    // A server that answers HEAD at once and then hangs no longer looks fast: the run's wall
    // time covers the deadline the hang used up (once: later checks share that outcome), the
    // latency only HEAD.
    let o = run_env(
        &["ping", "mcp", &s.url_for("/hang"), "--timeout", "300"],
        &[UTF8],
    );
    assert_eq!(o.code, 3, "{}", o.stdout);
    let header = o.stdout.lines().next().unwrap_or_default();
    assert_eq!(
        mask(header),
        mask("ping (mcp): UNREACHABLE  latency 1.00 ms · run 301.00 ms")
    );
    let json = run(&[
        "ping",
        "mcp",
        &s.url_for("/hang"),
        "--timeout",
        "300",
        "--format",
        "json",
    ])
    .json();
    let (latency, run_ms) = (json["latency_ms"].as_f64(), json["duration_ms"].as_f64());
    assert!(
        run_ms.is_some_and(|r| r >= 300.0) && latency.is_some_and(|l| l < 300.0),
        "latency {latency:?}, run {run_ms:?}"
    );
}

/// Several targets: no run time in the headers, a last line counting them by status; the
/// evidence of a refused connection names the host and port, and the message that only
/// restates the status is not repeated.
#[test]
fn several_targets_end_with_a_summary_line() {
    let s = server();
    let dir = TempDir::new("layout");
    let f = dir.file("c.yaml", &two_down(&s));
    let f = f.to_str().unwrap_or_default();
    let o = run_env(&["check", f], &[UTF8]);
    assert_eq!(o.code, 3, "{}", o.stdout);
    let want = format!(
        "orders (http): UNREACHABLE
  configuration  HEALTHY        method=HEAD
  reachability   UNREACHABLE    failure=connect_refused · address=127.0.0.1:1 · tcp UNREACHABLE

billing (http): UNREACHABLE
  configuration  HEALTHY        method=HEAD
  reachability   UNREACHABLE    failure=connect_refused · address=127.0.0.1:1 · tcp UNREACHABLE

notes (mcp): HEALTHY  latency 1.00 ms
  protocol       HEALTHY        {NOTES_PROTOCOL}

3 targets: 1 HEALTHY, 2 UNREACHABLE · 9.00 ms
"
    );
    golden(&o, &want);
    // Without a UTF-8 locale the separators are ASCII.
    let ascii = run(&["check", f]);
    golden(&ascii, &want.replace(" · ", "; "));
    // The document keeps the contract's message and carries the run's duration.
    let json = run(&["check", f, "--format", "json"]).json();
    assert!(json["duration_ms"].is_number(), "{json}");
    let reach = &json["results"][0]["checks"]["reachability"];
    assert_eq!(reach["message"], "UNREACHABLE in reachability");
    assert_eq!(reach["evidence"]["address"], "127.0.0.1:1");
}

/// doctor: the contract's line per status and type (the two unreachable HTTP targets share
/// one), then each distinct piece of advice once, naming the targets it applies to.
#[test]
fn doctor_gives_each_advice_once_naming_its_targets() {
    let s = server();
    let dir = TempDir::new("layout");
    let f = dir.file("c.yaml", &two_down(&s));
    let o = run_env(&["doctor", f.to_str().unwrap_or_default()], &[UTF8]);
    assert_eq!(o.code, 3, "{}", o.stdout);
    let advice = o
        .stdout
        .split("\n\nDoctor: ")
        .nth(1)
        .map(|rest| format!("Doctor: {rest}"))
        .unwrap_or_default();
    assert_eq!(
        advice,
        "Doctor: orders and billing (http) are UNREACHABLE. Verify the endpoint, service availability, network access, and timeout policy.
Doctor: notes (mcp) is HEALTHY. Checks passed. Review the check list to confirm it covers your readiness requirements.
  - orders, billing (reachability): nothing is listening at `127.0.0.1:1`
",
        "{}",
        o.stdout
    );
}

/// An ad-hoc target's advice names flags, a file's its keys; a 403 without a challenge and
/// without a credential is an allow-list.
#[test]
fn adhoc_advice_names_flags_and_file_advice_names_keys() {
    let s = server();
    let adhoc = run_env(&["doctor", "mcp", &s.url_for("/private")], &[UTF8]);
    assert_eq!(adhoc.code, 4, "{}", adhoc.stdout);
    assert!(
        adhoc.stdout.contains(
            "  - authentication, protocol: HTTP 401 on server/discover: the server uses OAuth (its challenge names protected-resource metadata): run `agenthealth doctor mcp URL --oauth-details` to print the mcp.oauth block to paste under the target, or set --bearer-env to a variable holding a token you already have\n"
        ),
        "{}",
        adhoc.stdout
    );
    let dir = TempDir::new("layout");
    let f = dir.file(
        "c.yaml",
        &format!(
            "version: v1\ntargets:\n  - name: private\n    type: mcp\n    endpoint: {}\n",
            s.url_for("/private")
        ),
    );
    let file = run_env(&["doctor", f.to_str().unwrap_or_default()], &[UTF8]);
    assert!(
        file.stdout
            .contains("run `agenthealth doctor CONFIG --oauth-details`")
            && file
                .stdout
                .contains("set auth.bearer_env to a variable holding a token"),
        "{}",
        file.stdout
    );
    assert!(!file.stdout.contains("--bearer-env"), "{}", file.stdout);
    let forbidden = run_env(&["doctor", "mcp", &s.url_for("/forbidden")], &[UTF8]);
    assert_eq!(forbidden.code, 4, "{}", forbidden.stdout);
    assert!(
        forbidden
            .stdout
            .contains("check its Host and Origin allow-lists")
            && forbidden.stdout.contains("auth_challenge=false")
            && !forbidden.stdout.contains("bearer"),
        "{}",
        forbidden.stdout
    );
}

/// `--format line`: one line per target, `name STATUS code · reason`, bounded.
#[test]
fn the_line_format_is_one_bounded_line_per_target() {
    let s = server();
    let dir = TempDir::new("layout");
    let long = "n".repeat(300);
    let text = format!(
        "{}  - name: {long}\n    type: mcp\n    endpoint: {}\n",
        two_down(&s),
        s.url_for("/forbidden")
    );
    let f = dir.file("c.yaml", &text);
    let o = run(&["check", f.to_str().unwrap_or_default(), "--format", "line"]);
    assert_eq!(o.code, 4, "{}", o.stdout);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(
        lines[..3],
        [
            "orders UNREACHABLE connect_refused · reachability",
            "billing UNREACHABLE connect_refused · reachability",
            "notes HEALTHY",
        ],
        "{}",
        o.stdout
    );
    assert_eq!(lines.len(), 4, "{}", o.stdout);
    assert_eq!(lines[3].chars().count(), 200, "{}", lines[3]);
    assert!(lines[3].starts_with("nnnn") && lines[3].ends_with('…'));
    assert!(o.stdout.len() <= 10 * 1024);
}

/// `--quiet`: nothing at all, and the exit code of the same run.
#[test]
fn quiet_prints_nothing_and_keeps_the_exit_code() {
    let s = server();
    let dir = TempDir::new("layout");
    let f = dir.file("c.yaml", &two_down(&s));
    let f = f.to_str().unwrap_or_default();
    for args in [&["check", f, "--quiet"][..], &["doctor", f, "-q"]] {
        let o = run(args);
        assert_eq!(o.code, 3, "{args:?}");
        assert!(
            o.stdout.is_empty() && o.stderr.is_empty(),
            "{args:?}: {}",
            o.stdout
        );
    }
    let o = run(&["ping", "mcp", &s.url(), "-q"]);
    assert_eq!((o.code, o.stdout.as_str()), (0, ""));
    run(&["check", f, "--quiet", "--format", "json"]).assert_tool_failure();
}

/// What the binary writes to stdout when stdout is a terminal (a pseudo-terminal of ours),
/// with `env` (the rest cleared).
fn on_a_terminal(args: &[&str], env: &[(&str, &str)]) -> String {
    on_a_terminal_of(args, env, None)
}

/// [`on_a_terminal`] on a terminal `columns` wide, its line ends as `\n`.
fn on_a_terminal_of(args: &[&str], env: &[(&str, &str)], columns: Option<u16>) -> String {
    let size = columns.map(|ws_col| nix::pty::Winsize {
        ws_row: 24,
        ws_col,
        ws_xpixel: 0,
        ws_ypixel: 0,
    });
    let pty = nix::pty::openpty(size.as_ref(), None).expect("a pseudo-terminal");
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::from(std::fs::File::from(pty.slave)))
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("run agenthealth");
    // Our copy of the terminal's other end goes with the command, so reading ends (EIO) when
    // the child has exited.
    drop(cmd);
    let mut master = std::fs::File::from(pty.master);
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = master.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    let _ = child.wait();
    String::from_utf8_lossy(&out).replace("\r\n", "\n")
}

/// The words of a text, whatever its line breaks and item separators: wrapping changes
/// where lines end, never a word.
fn words(text: &str) -> Vec<&str> {
    text.split_whitespace().filter(|w| *w != "·").collect()
}

/// On a terminal, lines are filled to its width at word boundaries (80 or 60 columns, or
/// `COLUMNS`), continuation lines hanging under the details; the words are the same as in
/// the unwrapped output a pipe gets, which `COLUMNS` does not change.
#[test]
fn terminal_output_wraps_at_word_boundaries_to_the_terminal_width() {
    let s = server();
    let dir = TempDir::new("layout-wrap");
    let f = dir.file("c.yaml", &two_down(&s));
    let f = f.to_str().unwrap_or_default();
    let env = [UTF8, ("TERM", "xterm"), ("NO_COLOR", "1")];
    let piped = run_env(&["doctor", f], &[UTF8]);
    assert!(
        piped.stdout.lines().any(|l| l.chars().count() > 150),
        "{}",
        piped.stdout
    );
    for (columns, env_columns) in [(80, None), (60, None), (200, Some("60"))] {
        let mut env = env.to_vec();
        if let Some(c) = env_columns {
            env.push(("COLUMNS", c));
        }
        let shown = on_a_terminal_of(&["doctor", f], &env, Some(columns));
        let width = env_columns.map_or(columns.into(), |c| c.parse().unwrap_or(0));
        for line in shown.lines() {
            assert!(
                line.chars().count() <= width,
                "{width}: {line:?}
{shown}"
            );
        }
        assert!(
            shown.lines().count() > piped.stdout.lines().count(),
            "{shown}"
        );
        assert_eq!(words(&mask(&shown)), words(&mask(&piped.stdout)), "{shown}");
    }
    // At 80 columns the details' column (32) is left of the middle: continuation lines hang
    // under it; at 60 they hang four columns past the tree's rule.
    let eighty = on_a_terminal_of(&["doctor", f], &env, Some(80));
    assert!(
        eighty.contains("\n                                negotiated_version=2025-11-25"),
        "{eighty}"
    );
    let sixty = on_a_terminal_of(&["doctor", f], &env, Some(60));
    assert!(sixty.contains("\n      "), "{sixty}");
    // A pipe is never wrapped, COLUMNS or not.
    let with_columns = run_env(&["doctor", f], &[UTF8, ("COLUMNS", "60")]);
    assert_eq!(mask(&with_columns.stdout), mask(&piped.stdout));
}

/// On a terminal, `auto` colours; `NO_COLOR` and `TERM=dumb` each switch it off; `--color
/// always` wins over both.
#[test]
fn no_color_and_a_dumb_terminal_disable_colour() {
    let s = server();
    let url = s.url_for("/health");
    let ping = ["ping", "http", url.as_str()];
    let coloured = |text: &str| text.contains("\u{1b}[");
    let xterm = ("TERM", "xterm-256color");
    assert!(
        coloured(&on_a_terminal(&ping, &[xterm])),
        "auto colours a terminal"
    );
    let plain = on_a_terminal(&ping, &[xterm, ("NO_COLOR", "1")]);
    assert!(!coloured(&plain) && plain.contains("HEALTHY"), "{plain:?}");
    let dumb = on_a_terminal(&ping, &[("TERM", "dumb")]);
    assert!(!coloured(&dumb) && dumb.contains("HEALTHY"), "{dumb:?}");
    let mut always = ping.to_vec();
    always.extend(["--color", "always"]);
    assert!(coloured(&on_a_terminal(
        &always,
        &[("TERM", "dumb"), ("NO_COLOR", "1")]
    )));
}

/// `check -` and `validate -` read the configuration from stdin, a byte-order mark included;
/// a file that cannot be opened is named with the reason.
#[test]
fn configurations_come_from_stdin_and_missing_files_say_why() {
    let s = server();
    let text = format!(
        "version: v1\ntargets:\n  - name: notes\n    type: mcp\n    endpoint: {}\n    checks: [protocol]\n",
        s.url()
    );
    let o = run_stdin(&["check", "-", "--format", "line"], &[], text.as_bytes());
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (0, "notes HEALTHY\n"),
        "{}",
        o.stderr
    );
    let with_bom = format!("\u{feff}{text}");
    let o = run_stdin(&["validate", "-"], &[], with_bom.as_bytes());
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
    let o = run_stdin(&["doctor", "-"], &[UTF8], with_bom.as_bytes());
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("Doctor: notes (mcp) is HEALTHY."),
        "{}",
        o.stdout
    );
    let o = run_stdin(&["validate", "-"], &[], b"version: v2\ntargets: []\n");
    o.assert_tool_failure();
    assert!(o.stderr.contains("version"), "{}", o.stderr);
    let dir = TempDir::new("layout");
    let missing = dir.0.join("nope.yaml");
    let o = run(&["check", missing.to_str().unwrap_or_default()]);
    o.assert_tool_failure();
    assert_eq!(
        o.stderr,
        format!(
            "agenthealth: invalid configuration: cannot open configuration file `{}`: No such file or directory\n",
            missing.display()
        )
    );
}

/// A credential of one or two characters never garbles our words and never appears: the
/// name holding it is replaced whole, the messages and advice are left as they are.
#[test]
fn a_short_secret_neither_garbles_nor_appears() {
    let s = FakeServer::start(FakeConfig {
        require_bearer: Some("the-right-token".into()),
        ..FakeConfig::default()
    });
    let dir = TempDir::new("layout");
    let f = dir.file(
        "c.yaml",
        &format!(
            "version: v1\ntargets:\n  - name: api-x1\n    type: mcp\n    endpoint: {}\n    auth:\n      bearer_env: T\n",
            s.url()
        ),
    );
    let f = f.to_str().unwrap_or_default();
    for (secret, absent) in [("x1", "x1"), ("e", "[REDACTED]ntication")] {
        let o = run_env(&["doctor", f], &[UTF8, ("T", secret)]);
        assert_eq!(o.code, 4, "{}", o.stdout);
        assert!(!o.stdout.contains(absent), "{secret:?}: {}", o.stdout);
        assert!(
            o.stdout
                .contains("MCP authentication rejected (401 or 403)")
                && o.stdout
                    .contains("the token in $T was rejected; check its value and scope"),
            "{secret:?}: {}",
            o.stdout
        );
    }
    // The name that holds the secret is replaced whole, in every format.
    let o = run_env(&["check", f, "--format", "json"], &[("T", "x1")]);
    assert_eq!(o.json()["target"]["name"], "[REDACTED]");
    assert!(!o.stdout.contains("x1"), "{}", o.stdout);
    let o = run_env(&["check", f, "--format", "line"], &[("T", "x1")]);
    assert!(
        o.stdout.starts_with("[REDACTED] MISCONFIGURED mcp_auth"),
        "{}",
        o.stdout
    );
    // A long one is spliced out and the rest stays readable.
    let o = run_env(&["check", f, "--format", "line"], &[("T", "api-")]);
    assert!(
        o.stdout.starts_with("[REDACTED]x1 MISCONFIGURED"),
        "{}",
        o.stdout
    );
}
