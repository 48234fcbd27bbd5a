//! The refresh loop: runs every check at start, then `interval` after each run completes,
//! and publishes each completed run. Runs never overlap and requests never trigger one
//! (`/probe` runs a target on demand, apart from this loop: [`super::probe`]). A file of
//! modules only has nothing to run here; the loop then only keeps `/live` answering.
//!
//! Each run gets a fresh [`RunPlan`] (the environment read again, nothing carried over from the
//! previous run: no session, no process, no token beyond a configured token file), is
//! redacted with the run's secrets and the server's own token, and is rendered once. A run
//! ended by cancellation (SIGTERM) is not published, as in the reference.

use std::time::{Duration, Instant};

use super::ahp;
use super::snapshot::{Board, Snapshot};
use crate::config::Config;
use crate::contract::Format;
use crate::contract::Secret;
use crate::engine;
use crate::output::metrics::{self, Dialect, LastRun, Runs};
use crate::output::{self, Style};
use crate::result::document::Document;
use crate::run_plan::RunPlan;
use crate::runtime::Cancel;
use crate::text::rfc3339::{self, Timestamp};

/// Runs until `cancel`, publishing to `board`.
pub fn run(
    config: &Config,
    token: Option<&Secret>,
    interval: Duration,
    board: &Board,
    cancel: &Cancel,
) {
    let mut runs = 0u64;
    repeat(
        interval,
        |pause| cancel.sleep(pause),
        || {
            if config.roots.is_empty() {
                // Modules only: nothing to run on a schedule (`/probe` runs them).
                return true;
            }
            let plan = RunPlan::from_env(config.clone());
            let mut doc = cycle(&plan, cancel);
            if cancel.is_cancelled() {
                return false;
            }
            let last = LastRun::of(&doc);
            super::redact(&mut doc, &plan, token);
            // A document the contract forbids is not published; the previous run stays (and
            // goes stale), as a run that failed to render does in the reference.
            if let Ok(pretty) = output::render(&doc, Format::Json, Style::default(), false, last) {
                let evidence = compact(&pretty);
                runs += 1;
                let status = doc.worst();
                let observed_at = rfc3339::format(Timestamp::from_system(last.finished_at));
                let detailed = ahp::detailed_body(status, &observed_at, &evidence);
                let runs = Runs {
                    total: Some(runs),
                    last: Some(last),
                };
                let metrics = metrics::render(Some(&doc), &runs, Dialect::Prometheus);
                let snapshot = Snapshot {
                    status,
                    observed_at,
                    taken: Instant::now(),
                    detailed: detailed.into(),
                };
                board.publish(snapshot, metrics);
            }
            true
        },
    );
}

/// The schedule: `run` at once, then again `interval` after each completes, for as long as
/// `run` says to go on and `pause` (which waits, and is false once cancelled) lets it. One
/// loop on one thread makes every run, so two never overlap, and a slow run delays the next
/// instead of piling up behind it.
fn repeat(interval: Duration, pause: impl Fn(Duration) -> bool, mut run: impl FnMut() -> bool) {
    while run() && pause(interval) {}
}

/// `check --format json`'s document without its layout: every space and line break outside
/// strings dropped, as the reference's encoder writes the embedded document. (Rendering the
/// one pretty form and stripping it keeps a second serializer out of the binary.)
fn compact(pretty: &str) -> String {
    let mut out = String::with_capacity(pretty.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in pretty.chars() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_ascii_whitespace() {
            out.push(c);
        }
    }
    out
}

/// One run of the checks. It ends by the run deadline the plan's configuration carries
/// (`deadline_ms`, or `--deadline`, which replaced it), as every run does, and never later
/// than the engine's 60 s cap.
fn cycle(plan: &RunPlan, cancel: &Cancel) -> Document {
    engine::run(plan, cancel, &|_, _| {})
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[derive(Debug, PartialEq)]
    enum Scheduled {
        Run,
        Pause(Duration),
    }

    /// What `repeat` does with `interval` when the `cancel_at`-th pause is cancelled.
    fn schedule(interval: Duration, cancel_at: usize) -> Vec<Scheduled> {
        let steps = RefCell::new(Vec::new());
        let pause = |d| {
            let mut steps = steps.borrow_mut();
            steps.push(Scheduled::Pause(d));
            steps
                .iter()
                .filter(|s| matches!(s, Scheduled::Pause(_)))
                .count()
                < cancel_at
        };
        repeat(interval, pause, || {
            steps.borrow_mut().push(Scheduled::Run);
            true
        });
        steps.into_inner()
    }

    #[test]
    fn a_run_at_once_then_the_next_an_interval_after_each_completes() {
        // Each run is called only once the pause after the previous one has returned, so
        // runs never overlap, however long one takes.
        let thirty = || Scheduled::Pause(Duration::from_secs(30));
        assert_eq!(
            schedule(super::super::INTERVAL, 3),
            [
                Scheduled::Run,
                thirty(),
                Scheduled::Run,
                thirty(),
                Scheduled::Run,
                thirty()
            ]
        );
        // A cancelled run is the last: no pause after it.
        let pauses = RefCell::new(0);
        let pause = |_| {
            *pauses.borrow_mut() += 1;
            true
        };
        repeat(Duration::from_secs(30), pause, || false);
        assert_eq!(pauses.into_inner(), 0);
    }

    #[test]
    fn compact_keeps_strings_and_drops_layout() {
        let pretty = "{\n  \"a b\": \"x \\\" y\\\\\",\n  \"c\": [\n    1,\n    null\n  ]\n}\n";
        assert_eq!(compact(pretty), "{\"a b\":\"x \\\" y\\\\\",\"c\":[1,null]}");
        let value: serde_json::Value = serde_json::from_str(pretty).unwrap_or_default();
        assert_eq!(compact(pretty), value.to_string(), "the same document");
    }
}
