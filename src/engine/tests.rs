//! Engine behaviour with scripted adapters: gates, retries, deadlines, aggregation,
//! concurrency. The target's endpoint is the script: `dim=behaviour` pairs separated by `,`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::adapter::{Adapter, TargetRun};
use crate::result::Key;
use crate::run_plan::{RunPlan, TargetPlan};

use crate::config::{Config, Edge, Target, adhoc};
use crate::contract::TargetType;
use crate::contract::{Dimension, Status};
use crate::engine::{RUN_CAP, run_capped, run_with};
use crate::result::Observation;
use crate::result::document::{Document, NodeResult};
use crate::runtime::Attempt;
use crate::runtime::Cancel;
use crate::runtime::sync::lock;

struct ScriptedAdapter;

static SCRIPTED: ScriptedAdapter = ScriptedAdapter;

fn calls() -> &'static Mutex<HashMap<String, Vec<Dimension>>> {
    static CALLS: OnceLock<Mutex<HashMap<String, Vec<Dimension>>>> = OnceLock::new();
    CALLS.get_or_init(Default::default)
}

static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn lookup(kind: TargetType) -> Option<&'static dyn Adapter> {
    match kind {
        TargetType::Custom => None,
        _ => Some(&SCRIPTED),
    }
}

impl Adapter for ScriptedAdapter {
    /// Every dimension that sends something of its own: reachability to functional (not the
    /// offline configuration check, nor latency and dependency, which add no request).
    fn dimensions(&self) -> &'static [Dimension] {
        &Dimension::ALL[1..6]
    }
    fn start(&self, ctx: Arc<TargetPlan>) -> Box<dyn TargetRun> {
        Box::new(Run {
            script: ctx.target.endpoint.clone(),
        })
    }
}

struct Run {
    script: String,
}

impl Run {
    fn behaviour(&self, dim: Dimension) -> &str {
        self.script
            .split(',')
            .filter_map(|kv| kv.split_once('='))
            .find(|(d, _)| *d == dim.as_str())
            .map_or("ok", |(_, b)| b)
    }
}

fn block_until_abort(attempt: &Attempt) {
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let p2 = pair.clone();
    attempt.on_abort(move || {
        *lock(&p2.0) = true;
        p2.1.notify_all();
    });
    let g = lock(&pair.0);
    let _g = pair.1.wait_while(g, |done| !*done);
}

impl TargetRun for Run {
    fn configure(&mut self) -> Observation {
        match self.behaviour(Dimension::Configuration) {
            "misconf" => Observation::new(Status::Misconfigured),
            _ => Observation::healthy(),
        }
    }
    fn check(&mut self, dim: Dimension, attempt: &Attempt) -> Observation {
        lock(calls())
            .entry(self.script.clone())
            .or_default()
            .push(dim);
        let now = IN_FLIGHT.fetch_add(1, Ordering::SeqCst) + 1;
        PEAK.fetch_max(now, Ordering::SeqCst);
        let obs = match self.behaviour(dim) {
            "ok" => Observation::healthy(),
            "unhealthy" => Observation::new(Status::Unhealthy).responded(),
            "misconf" => Observation::new(Status::Misconfigured).responded(),
            "noresp" => Observation::new(Status::Unreachable),
            // Reports the deadline it was given, in whole ms from now.
            "deadline" => Observation::healthy().with(
                Key::DeadlineMs,
                crate::result::Fact::Int(attempt.remaining().as_millis() as i64),
            ),
            "rejected" => Observation::failed(
                Status::Misconfigured,
                crate::result::Reason::Http(crate::result::reason::HttpFailure::AuthRejected),
            )
            .responded(),
            // What a real adapter answers when its attempt is aborted: a timeout, with its
            // deadline's bound (it cannot tell a cancellation from a deadline; the engine can).
            "hang" => {
                block_until_abort(attempt);
                Observation::failed(
                    Status::Unreachable,
                    crate::result::Reason::Engine(crate::result::Note::TimedOut {
                        bound: attempt.bound(),
                        response_seen: false,
                    }),
                )
            }
            "partial" => {
                attempt.mark_response();
                block_until_abort(attempt);
                Observation::new(Status::Unknown)
            }
            "slow" => {
                std::thread::sleep(Duration::from_millis(30));
                Observation::healthy()
            }
            // An uncooperative adapter: ignores its abort.
            "deaf" => {
                std::thread::sleep(Duration::from_secs(3));
                Observation::healthy()
            }
            _ => Observation::new(Status::Unknown),
        };
        IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
        obs
    }
    fn close(&mut self, attempt: &Attempt) {
        if self.behaviour(Dimension::Dependency) == "close-hang" {
            block_until_abort(attempt);
        }
    }
    fn unanswered(&mut self) -> crate::result::Evidence {
        let mut facts = crate::result::Evidence::default();
        if self.script.contains("unanswered") {
            facts.set(Key::StdoutBytes, crate::result::Fact::Int(0));
        }
        facts
    }
}

fn target(name: &str, script: &str) -> Target {
    let mut c = adhoc::single(name, TargetType::Http, script, &Default::default());
    c.nodes.remove(0)
}

fn config(nodes: Vec<Target>, roots: Vec<usize>) -> Config {
    Config {
        concurrency: 16,
        nodes,
        roots,
        deadline: None,
        modules: Vec::new(),
        unusable_endpoint: None,
    }
}

/// A plan of `c` in which no referenced variable is set.
fn plan(c: &Config) -> RunPlan {
    RunPlan::resolve(c.clone(), |_| None)
}

fn run(c: &Config) -> Document {
    run_with(&plan(c), &Cancel::new(), &|_, _| {}, lookup)
}

fn calls_for(script: &str) -> Vec<Dimension> {
    lock(calls()).get(script).cloned().unwrap_or_default()
}

fn shown(r: &NodeResult) -> Vec<&'static str> {
    let mut v: Vec<_> = r.checks.keys().map(|d| d.as_str()).collect();
    v.sort();
    v
}

#[test]
fn defaults_hide_nothing_and_call_in_order() {
    let s = "t1,";
    let doc = run(&config(vec![target("a", s)], vec![0]));
    let r = &doc.results[0];
    assert_eq!(r.status, Status::Healthy);
    assert!(r.latency_ms.is_some());
    assert_eq!(
        shown(r),
        vec![
            "authentication",
            "capability",
            "configuration",
            "latency",
            "protocol",
            "reachability"
        ]
    );
    use Dimension::*;
    assert_eq!(
        calls_for(s),
        vec![Reachability, Authentication, Protocol, Capability]
    );
}

#[test]
fn failed_gate_is_shown_and_blocks_the_rest() {
    let s = "t2,authentication=misconf";
    let mut t = target("a", s);
    t.checks = Some(vec![
        Dimension::Functional,
        Dimension::Protocol,
        Dimension::Latency,
    ]);
    let doc = run(&config(vec![t], vec![0]));
    let r = &doc.results[0];
    assert_eq!(shown(r), vec!["authentication", "latency", "protocol"]);
    assert_eq!(r.status, Status::Misconfigured);
    assert!(!calls_for(s).contains(&Dimension::Functional));
}

#[test]
fn passing_gates_are_hidden() {
    let s = "t3,";
    let mut t = target("a", s);
    t.checks = Some(vec![Dimension::Functional]);
    let doc = run(&config(vec![t], vec![0]));
    assert_eq!(shown(&doc.results[0]), vec!["functional"]);
    use Dimension::*;
    assert_eq!(calls_for(s), vec![Reachability, Authentication, Functional]);
}

#[test]
fn empty_checks_is_unknown_with_no_calls() {
    let s = "t4,";
    let mut t = target("a", s);
    t.checks = Some(vec![]);
    let doc = run(&config(vec![t], vec![0]));
    assert_eq!(doc.results[0].status, Status::Unknown);
    assert!(doc.results[0].checks.is_empty());
    assert!(calls_for(s).is_empty());
}

#[test]
fn retries_only_no_response_passive() {
    let s = "t5,reachability=noresp";
    let mut t = target("a", s);
    t.retries = 3;
    t.retry_delay_ms = 0;
    let doc = run(&config(vec![t], vec![0]));
    assert_eq!(doc.results[0].status, Status::Unreachable);
    assert!(doc.results[0].latency_ms.is_none());
    assert_eq!(calls_for(s).len(), 4);

    let s = "t5b,functional=noresp";
    let mut t = target("a", s);
    t.retries = 3;
    t.retry_delay_ms = 0;
    t.checks = Some(vec![Dimension::Functional]);
    run(&config(vec![t], vec![0]));
    assert_eq!(
        calls_for(s)
            .iter()
            .filter(|d| **d == Dimension::Functional)
            .count(),
        1
    );
}

#[test]
fn deadline_without_response_is_unreachable_with_response_unknown() {
    for (s, want) in [
        ("t6,reachability=hang", Status::Unreachable),
        ("t6b,reachability=partial", Status::Unknown),
    ] {
        let mut t = target("a", s);
        t.timeout_ms = 20;
        t.retries = 3;
        let start = Instant::now();
        let doc = run(&config(vec![t], vec![0]));
        assert!(start.elapsed() < Duration::from_secs(2));
        assert_eq!(doc.results[0].status, want, "{s}");
        assert_eq!(
            doc.results[0].checks[&Dimension::Reachability]
                .evidence
                .get(Key::DeadlineMs),
            Some(&crate::result::Fact::Ms(20.0)),
            "{s}: the deadline is evidence"
        );
        if want == Status::Unknown {
            assert_eq!(calls_for(s).len(), 1, "partial responses are never retried");
        }
    }
}

#[test]
fn check_timeouts_override_timeout() {
    let s = "t7,protocol=hang";
    let mut t = target("a", s);
    t.timeout_ms = 60_000;
    t.check_timeouts_ms = vec![(Dimension::Protocol, 20)];
    let start = Instant::now();
    let doc = run(&config(vec![t], vec![0]));
    assert!(start.elapsed() < Duration::from_secs(2));
    assert_eq!(
        doc.results[0].checks[&Dimension::Protocol].status,
        Status::Unreachable
    );
}

/// What the adapter knew of the request its cut attempt left unanswered is in the timed-out
/// check's evidence, although the watchdog cut the call (and discards its answer).
#[test]
fn a_cut_attempt_keeps_what_the_adapter_knew_of_the_unanswered_request() {
    let mut t = target("a", "t7u,protocol=hang,unanswered");
    t.check_timeouts_ms = vec![(Dimension::Protocol, 20)];
    let doc = run(&config(vec![t], vec![0]));
    let protocol = &doc.results[0].checks[&Dimension::Protocol];
    assert_eq!(protocol.status, Status::Unreachable);
    assert_eq!(
        protocol.evidence.get(Key::StdoutBytes),
        Some(&crate::result::Fact::Int(0))
    );
    assert!(protocol.evidence.get(Key::DeadlineMs).is_some());
}

#[test]
fn latency_threshold_zero_degrades() {
    let mut t = target("a", "t8,");
    t.latency_threshold_ms = Some(0.0);
    let doc = run(&config(vec![t], vec![0]));
    assert_eq!(doc.results[0].status, Status::Degraded);
    let l = &doc.results[0].checks[&Dimension::Latency];
    assert!(
        l.message
            .as_deref()
            .is_some_and(|m| m.starts_with("latency exceeds threshold 0.00ms"))
    );
}

#[test]
fn missing_adapter_and_credentials_are_misconfigured_without_calls() {
    let mut t = target("a", "t9,");
    t.kind = TargetType::Custom;
    let doc = run(&config(vec![t], vec![0]));
    assert_eq!(doc.results[0].status, Status::Misconfigured);

    let s = "t9b,";
    let mut t = target("a", s);
    t.bearer_env = Some("AGENTHEALTH_TEST_SURELY_UNSET".into());
    let doc = run(&config(vec![t], vec![0]));
    assert_eq!(doc.results[0].status, Status::Misconfigured);
    assert!(calls_for(s).is_empty());
}

#[test]
fn dependency_contributions_and_shared_nodes_run_once() {
    let shared = "t10-shared,protocol=unhealthy";
    let mut parent = target("parent", "t10-parent,");
    parent.dependencies = vec![
        Edge {
            node: 1,
            critical: false,
            relationship: None,
        },
        Edge {
            node: 1,
            critical: true,
            relationship: None,
        },
    ];
    parent.checks = Some(vec![Dimension::Protocol, Dimension::Dependency]);
    let mut child = target("child", shared);
    child.id = Some("child".into());
    let doc = run(&config(vec![parent, child], vec![0]));
    let r = &doc.results[0];
    assert_eq!(r.status, Status::Unhealthy);
    assert_eq!(r.dependencies.len(), 2);
    assert_eq!(r.dependencies[0].critical, Some(false));
    assert_eq!(r.checks[&Dimension::Dependency].status, Status::Unhealthy);
    let protocol_calls = calls_for(shared)
        .iter()
        .filter(|d| **d == Dimension::Protocol)
        .count();
    assert_eq!(protocol_calls, 1, "a shared node runs once per run");

    // Optional edge only: DEGRADED.
    let mut parent = target("parent", "t10b-parent,");
    parent.dependencies = vec![Edge {
        node: 1,
        critical: false,
        relationship: None,
    }];
    let doc = run(&config(
        vec![parent, target("child", "t10b,reachability=noresp")],
        vec![0],
    ));
    assert_eq!(doc.results[0].status, Status::Degraded);
}

#[test]
fn parent_misconfigured_with_unknown_child_is_unknown() {
    let mut parent = target("parent", "t11,configuration=misconf");
    parent.dependencies = vec![Edge {
        node: 1,
        critical: true,
        relationship: None,
    }];
    let mut child = target("child", "t11-child,");
    child.checks = Some(vec![]);
    let doc = run(&config(vec![parent, child], vec![0]));
    assert_eq!(doc.results[0].status, Status::Unknown);
    assert!(!doc.results[0].checks.contains_key(&Dimension::Dependency));
}

#[test]
fn cancellation_makes_in_flight_checks_unknown() {
    let mut t = target("a", "t12,protocol=hang");
    t.timeout_ms = 60_000;
    let c = config(vec![t], vec![0]);
    let cancel = Cancel::new();
    let c2 = cancel.clone();
    let watcher = std::thread::spawn(move || {
        // Cancel as soon as the protocol attempt is in flight.
        while !calls_for("t12,protocol=hang").contains(&Dimension::Protocol) {
            std::thread::yield_now();
        }
        c2.cancel();
    });
    let start = Instant::now();
    let doc = run_with(&plan(&c), &cancel, &|_, _| {}, lookup);
    let _ = watcher.join();
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(doc.results[0].status, Status::Unknown);
    // The cut is the watchdog's cancellation, not the adapter's timeout guess.
    let protocol = &doc.results[0].checks[&Dimension::Protocol];
    assert_eq!(
        protocol.reason,
        Some(crate::result::Reason::Engine(
            crate::result::Note::Cancelled
        ))
    );
    assert_eq!(
        protocol.message.as_deref(),
        Some("check cancelled before it completed")
    );
    assert!(protocol.evidence.get(Key::DeadlineMs).is_none());
}

#[test]
fn budget_bounds_a_node() {
    let mut t = target("a", "t13,protocol=hang");
    t.budget_ms = Some(30);
    let start = Instant::now();
    let doc = run(&config(vec![t], vec![0]));
    assert!(start.elapsed() < Duration::from_secs(2));
    assert_ne!(doc.results[0].status, Status::Healthy);
}

#[test]
fn a_call_that_ignores_its_deadline_is_abandoned_and_the_node_goes_on() {
    let s = "t14,protocol=deaf";
    let mut t = target("a", s);
    t.timeout_ms = 20;
    let start = Instant::now();
    let doc = run(&config(vec![t], vec![0]));
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    let r = &doc.results[0];
    assert_eq!(r.status, Status::Unreachable);
    assert_eq!(
        r.checks[&Dimension::Protocol].message.as_deref(),
        Some("communication failed")
    );
    // The node continued on another worker with a fresh adapter state.
    assert_eq!(r.checks[&Dimension::Capability].status, Status::Healthy);
    use Dimension::*;
    assert_eq!(
        calls_for(s),
        vec![Reachability, Authentication, Protocol, Capability]
    );
}

#[test]
fn a_parent_budget_never_cuts_a_shared_dependency() {
    // parent (budget 30 ms, hangs) → shared; other → shared. The shared node is slower than
    // the parent's whole budget and still HEALTHY everywhere.
    let mut parent = target("parent", "t15-parent,protocol=hang");
    parent.budget_ms = Some(30);
    parent.dependencies = vec![Edge {
        node: 2,
        critical: true,
        relationship: None,
    }];
    let mut other = target("other", "t15-other,");
    other.dependencies = vec![Edge {
        node: 2,
        critical: true,
        relationship: None,
    }];
    let mut shared = target("shared", "t15-shared,protocol=slow,capability=slow");
    shared.id = Some("shared".into());
    let start = Instant::now();
    let doc = run(&config(vec![parent, other, shared], vec![0, 1]));
    assert!(start.elapsed() < Duration::from_secs(2));
    let (p, o) = (&doc.results[0], &doc.results[1]);
    assert_ne!(p.checks[&Dimension::Protocol].status, Status::Healthy);
    assert_eq!(p.dependencies[0].status, Status::Healthy);
    assert_eq!(o.status, Status::Healthy);
    assert_eq!(o.dependencies[0].status, Status::Healthy);
    let protocol_calls = calls_for("t15-shared,protocol=slow,capability=slow")
        .iter()
        .filter(|d| **d == Dimension::Protocol)
        .count();
    assert_eq!(protocol_calls, 1);
}

#[test]
fn a_credential_rejection_names_the_variable() {
    let s = "t-cred,authentication=rejected";
    let mut t = target("a", s);
    t.bearer_env = Some("AH_API_TOKEN".into());
    let c = config(vec![t], vec![0]);
    let planned = RunPlan::resolve(c, |_| Some("tok-value".into()));
    let doc = run_with(&planned, &Cancel::new(), &|_, _| {}, lookup);
    let auth = &doc.results[0].checks[&Dimension::Authentication];
    assert_eq!(auth.status, Status::Misconfigured);
    assert_eq!(
        auth.evidence.get(Key::CredentialEnv),
        Some(&crate::result::Fact::Config("AH_API_TOKEN".into()))
    );
    // Without a configured credential there is no variable to name.
    let s = "t-cred-none,authentication=rejected";
    let doc = run(&config(vec![target("a", s)], vec![0]));
    let auth = &doc.results[0].checks[&Dimension::Authentication];
    assert_eq!(auth.status, Status::Misconfigured);
    assert!(auth.evidence.get(Key::CredentialEnv).is_none());
    assert!(auth.evidence.get(Key::CredentialKind).is_none());
}

#[test]
fn the_run_cap_bounds_every_deadline() {
    assert_eq!(RUN_CAP, Duration::from_secs(60));
    // A per-attempt deadline far beyond the cap (and retries) is cut by the cap.
    let s = "t-cap,reachability=hang";
    let mut t = target("a", s);
    t.timeout_ms = 300_000;
    t.retries = 3;
    let start = Instant::now();
    let c = config(vec![t], vec![0]);
    let doc = run_capped(
        &plan(&c),
        &Cancel::new(),
        &|_, _| {},
        lookup,
        Duration::from_millis(100),
    );
    assert!(
        start.elapsed() < Duration::from_millis(1100),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(doc.results[0].status, Status::Unreachable);
}

/// `--deadline`/`deadline_ms` ends everything: a check and its retries, a dependency's
/// checks, the cleanup — and names itself as the bound that cut them.
#[test]
fn the_run_deadline_ends_checks_retries_dependencies_and_cleanup() {
    use crate::config::RunDeadline;
    use crate::contract::Bound;
    use crate::result::{Note, Reason};
    let mut a = target("a", "t-dl-a,protocol=hang,dependency=close-hang");
    a.timeout_ms = 5_000;
    a.retries = 3;
    let mut b = target("b", "t-dl-b,reachability=hang");
    b.timeout_ms = 5_000;
    b.retries = 3;
    a.dependencies = vec![Edge {
        node: 1,
        critical: true,
        relationship: None,
    }];
    for bound in [Bound::DeadlineFlag, Bound::DeadlineMs] {
        let mut c = config(vec![a.clone(), b.clone()], vec![0]);
        c.deadline = Some(RunDeadline { ms: 200, bound });
        let bound = c.deadline.map(|d| d.bound);
        let start = Instant::now();
        let doc = run(&c);
        let took = start.elapsed();
        assert!(took < Duration::from_millis(200 + 1000), "{took:?}");
        assert!(took >= Duration::from_millis(200), "{took:?}");
        let r = &doc.results[0];
        let cut = |check: &crate::result::document::Check| match check.reason {
            Some(Reason::Engine(Note::TimedOut { bound, .. })) => Some(bound),
            _ => None,
        };
        assert_eq!(r.checks[&Dimension::Protocol].status, Status::Unreachable);
        assert_eq!(cut(&r.checks[&Dimension::Protocol]), bound);
        let dep = &r.dependencies[0];
        assert_eq!(
            dep.checks[&Dimension::Reachability].status,
            Status::Unreachable
        );
        assert_eq!(cut(&dep.checks[&Dimension::Reachability]), bound);
        assert_eq!(r.status, Status::Unreachable);
    }
}

#[test]
fn a_longer_check_timeout_is_not_capped_by_the_default() {
    let s = "t-long,reachability=deadline,protocol=deadline";
    let mut t = target("a", s);
    assert_eq!(t.timeout_ms, 5_000, "the ad-hoc default");
    t.check_timeouts_ms = vec![(Dimension::Reachability, 7_000)];
    let doc = run(&config(vec![t], vec![0]));
    let deadline = |d: Dimension| match doc.results[0].checks[&d].evidence.get(Key::DeadlineMs) {
        Some(crate::result::Fact::Int(ms)) => *ms,
        other => panic!("{d}: {other:?}"),
    };
    let reach = deadline(Dimension::Reachability);
    assert!(
        (6_500..=7_000).contains(&reach),
        "reachability got {reach} ms"
    );
    let proto = deadline(Dimension::Protocol);
    assert!((4_500..=5_000).contains(&proto), "protocol got {proto} ms");
}

#[test]
fn a_run_cancelled_before_it_starts_is_unknown_without_calls() {
    let s = "t-precancel,";
    let c = config(vec![target("a", s)], vec![0]);
    let cancel = Cancel::new();
    cancel.cancel();
    let doc = run_with(&plan(&c), &cancel, &|_, _| {}, lookup);
    assert_eq!(doc.results[0].status, Status::Unknown);
    assert!(calls_for(s).is_empty());
}

#[test]
fn a_run_that_can_start_no_worker_is_unknown_for_want_of_threads() {
    let (a, b) = ("t40", "t41");
    let _refused = crate::runtime::threads::refusal::after(0);
    let start = Instant::now();
    let doc = run(&config(vec![target("a", a), target("b", b)], vec![0, 1]));
    // At once: no worker is waited for that never started.
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    for r in &doc.results {
        assert_eq!(r.status, Status::Unknown, "never blamed on the target");
        let why = &r.checks[&Dimension::Configuration];
        assert_eq!(why.status, Status::Unknown);
        assert_eq!(
            why.evidence.get(Key::LocalResource),
            Some(&crate::result::Fact::Word("threads"))
        );
    }
    assert!(calls_for(a).is_empty() && calls_for(b).is_empty());
}

#[test]
fn fewer_workers_than_asked_for_still_run_every_node() {
    let scripts = ["t43", "t44", "t45"];
    let nodes = scripts.iter().map(|s| target(s, s)).collect();
    let _refused = crate::runtime::threads::refusal::after(1);
    let doc = run(&config(nodes, vec![0, 1, 2]));
    assert!(doc.results.iter().all(|r| r.status == Status::Healthy));
    assert!(
        scripts
            .iter()
            .all(|s| calls_for(s).contains(&Dimension::Reachability))
    );
}

#[test]
fn a_node_with_no_thread_to_go_on_is_unknown_for_want_of_threads() {
    // The first worker starts; the one that would continue the node after its abandoned
    // call cannot.
    let s = "t42,protocol=deaf";
    let mut t = target("a", s);
    t.timeout_ms = 20;
    let _refused = crate::runtime::threads::refusal::after(1);
    let start = Instant::now();
    let doc = run(&config(vec![t], vec![0]));
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    let r = &doc.results[0];
    assert_eq!(r.checks[&Dimension::Protocol].status, Status::Unreachable);
    // The check it would have made next says why, and blames no one; the rest is not run.
    let next = &r.checks[&Dimension::Capability];
    assert_eq!(next.status, Status::Unknown);
    assert_eq!(
        next.evidence.get(Key::LocalResource),
        Some(&crate::result::Fact::Word("threads"))
    );
    assert!(!r.checks.contains_key(&Dimension::Functional));
    use Dimension::*;
    assert_eq!(calls_for(s), vec![Reachability, Authentication, Protocol]);
}
