//! The ad-hoc form (`ping|doctor mcp --stdio -- ARGV…`): a one-target configuration that runs
//! no shell, and doctor's words for what a server process did.

use agenthealth_testkit::fixtures::{fixture, python_bin};
use agenthealth_testkit::processes::assert_unmarked;

use super::harness::{doctor, evidence, ms, within};
use crate::util::{Outcome, TempDir, run_env};

/// `VERB mcp --stdio --format json EXTRA… -- ARGV…`.
fn adhoc(verb: &str, extra: &[&str], argv: &[&str]) -> Outcome {
    let args = [
        &[verb, "mcp", "--stdio", "--format", "json"],
        extra,
        &["--"],
        argv,
    ]
    .concat();
    run_env(&args, &[])
}

#[test]
fn the_adhoc_form_is_a_one_target_config() {
    let mark = format!("agenthealth-mark-adhoc-{}", std::process::id());
    let fake = fixture("fake_server.py");
    for verb in ["ping", "doctor"] {
        let o = adhoc(
            verb,
            &[],
            &[python_bin(), &fake, "--era", "legacy", "--mark", &mark],
        );
        assert_eq!(o.code, 0, "{verb}: {}", o.stdout);
        let v = o.json();
        assert_eq!(v["target"]["name"], verb);
        assert_eq!(v["target"]["type"], "mcp");
        assert_eq!(evidence(&v, "protocol", "era"), "legacy");
        within(verb, &o, ms(4 * 5_000));
        assert_unmarked(&mark);
    }
    // Hostile children through the ad-hoc form, with its --timeout.
    let silent = fixture("silent.py");
    let o = adhoc(
        "ping",
        &["--timeout", "400"],
        &[python_bin(), &silent, &mark],
    );
    assert_eq!(o.code, 3, "{}", o.stdout);
    within("adhoc silent", &o, ms(400));
    let o = adhoc("ping", &[], &[&fixture("exit.sh"), &mark]);
    assert_eq!(o.code, 3, "{}", o.stdout);
    assert_eq!(evidence(&o.json(), "reachability", "exit_code"), 3);
    assert_unmarked(&mark);
}

/// Shell syntax is passed through as plain arguments: `;` and `$(...)` mean nothing, and a
/// command with shell syntax in its name is looked up as a file, and not found.
#[test]
fn the_adhoc_form_runs_no_shell() {
    let scratch = TempDir::new("stdio-noshell");
    let canary = scratch.0.join("canary").display().to_string();
    let injected = format!("$(touch {canary})");
    let argv = [&fixture("exit.sh"), ";", &injected, "&&", "touch", &canary];
    let o = adhoc("ping", &["--timeout", "2000"], &argv);
    assert_eq!(o.code, 3, "{}", o.stdout);
    assert!(!std::path::Path::new(&canary).exists(), "a shell ran");
    let o = adhoc("doctor", &["--format", "terminal"], &["true;touch x"]);
    assert_eq!(o.code, 4, "{}", o.stdout);
    assert!(o.stdout.contains("not found on PATH"), "{}", o.stdout);
}

/// Doctor names each stdio protocol fault in words that fit a process, not a URL.
#[test]
fn doctor_explains_protocol_faults_of_a_stdio_server() {
    let fake = fixture("fake_server.py");
    let half = fixture("half_answer.sh");
    let cases: [(&[&str], &str); 4] = [
        (
            &[python_bin(), &fake, "--wrong-id"],
            "the server answered with an id that does not match the request it was sent",
        ),
        (
            &[python_bin(), &fake, "--era", "modern", "--server-request"],
            "the server sent a request of its own during a 2026-07-28 exchange",
        ),
        (
            &[python_bin(), &fake, "--banner"],
            "to stdout; stdio servers must log to stderr",
        ),
        (
            &[&half],
            "the server process's output ended part-way through an answer",
        ),
    ];
    for (argv, says) in cases {
        let o = doctor(argv);
        assert_eq!(o.code, 2, "{}", o.stdout);
        assert!(o.stdout.contains(says), "{}", o.stdout);
        assert!(!o.stdout.contains("URL"), "{}", o.stdout);
    }
}

#[test]
fn doctor_explains_a_process_that_exited() {
    let o = run_env(
        &["doctor", "mcp", "--stdio", "--", &fixture("exit.sh")],
        &[],
    );
    assert_eq!(o.code, 3, "{}", o.stdout);
    let says = "exited with status 3 before answering";
    assert!(o.stdout.contains(says), "{}", o.stdout);
}
