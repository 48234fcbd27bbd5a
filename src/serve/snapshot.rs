//! What the refresh loop publishes and requests read: the last run, rendered once.
//!
//! Requests never run checks and never wait for a run: the loop renders each completed run's
//! bodies once (the detailed envelope, the metrics) and swaps them in under a short lock; a
//! request clones a few `Arc`s and answers from them. A new run replaces the old one whole,
//! so memory stays that of one run however long `serve` lives.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::contract::Status;
use crate::runtime::sync::lock;

/// One completed run, rendered.
#[derive(Debug)]
pub struct Snapshot {
    /// The worst top-level status.
    pub status: Status,
    /// When the run finished, RFC 3339 in UTC.
    pub observed_at: String,
    /// The same instant on the monotonic clock, for freshness.
    pub taken: Instant,
    /// The whole body of the detailed paths.
    pub detailed: Arc<str>,
}

/// What a request sees: a consistent copy of the published state.
#[derive(Clone, Debug)]
pub struct View {
    /// Whether the refresh loop runs.
    pub running: bool,
    /// The last completed run, if any.
    pub latest: Option<Arc<Snapshot>>,
    /// The `/metrics` body.
    pub metrics: Arc<str>,
    /// How old a run may be and still count.
    pub max_age: Duration,
}

impl View {
    /// The last run while the loop runs and it is no older than the maximum age.
    pub fn fresh(&self, now: Instant) -> Option<&Snapshot> {
        self.latest
            .as_deref()
            .filter(|s| self.running && now.saturating_duration_since(s.taken) <= self.max_age)
    }
}

/// The published state, shared by the refresh loop (writer) and the server (reader).
#[derive(Debug)]
pub struct Board(Mutex<View>);

impl Board {
    /// Nothing published yet: not running, no run, the metrics before any run.
    pub fn new(max_age: Duration, metrics: String) -> Board {
        Board(Mutex::new(View {
            running: false,
            latest: None,
            metrics: Arc::from(metrics),
            max_age,
        }))
    }

    /// A copy of the current state.
    pub fn view(&self) -> View {
        lock(&self.0).clone()
    }

    /// Marks the refresh loop as running or stopped.
    pub fn set_running(&self, running: bool) {
        lock(&self.0).running = running;
    }

    /// Replaces the last run and the metrics.
    pub fn publish(&self, snapshot: Snapshot, metrics: String) {
        let (snapshot, metrics) = (Arc::new(snapshot), Arc::from(metrics));
        let mut view = lock(&self.0);
        view.latest = Some(snapshot);
        view.metrics = metrics;
    }
}
