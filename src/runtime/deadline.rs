//! Deadlines that know why they end (the [`Bound`] that set each one is a word of the
//! contract: [`crate::contract::bound`]).
//!
//! Every wait of a run — a socket read, a child's exit, an authorization server, cleanup —
//! ends by a [`Deadline`]. The engine computes each attempt's deadline as the earliest of the
//! bounds that apply (the target's timeout, its `budget_ms`, the run deadline, the run cap,
//! the cleanup budget)
//! and keeps the [`Bound`] that set it, so a check that ran out of time can say which setting
//! to change: `doctor` never tells an operator to raise `timeout_ms` when `budget_ms` or the
//! 60 s run cap cut the attempt, nor names a config key to the user of an ad-hoc `ping`.
//!
//! Cancellation is not a bound: it has no instant. The engine's watchdog, the only thing that
//! aborts an attempt, records whether the deadline or a cancellation cut it, and the check's
//! reason is then `Note::TimedOut { bound, .. }` or `Note::Cancelled` — one value each
//! (docs/contributing.md, "Why an attempt ended").

use std::time::{Duration, Instant};

use crate::contract::Bound;

/// An instant, and the bound that put it there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadline {
    at: Instant,
    bound: Bound,
}

impl Deadline {
    /// A deadline at `at`, set by `bound`.
    pub fn new(at: Instant, bound: Bound) -> Deadline {
        Deadline { at, bound }
    }

    /// A deadline `after` from now.
    pub fn after(after: Duration, bound: Bound) -> Deadline {
        Deadline::new(Instant::now() + after, bound)
    }

    /// When it ends.
    pub fn at(self) -> Instant {
        self.at
    }

    /// Which bound set it.
    pub fn bound(self) -> Bound {
        self.bound
    }

    /// Time left (zero when past).
    pub fn remaining(self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }

    /// Whether it has passed.
    pub fn passed(self) -> bool {
        Instant::now() >= self.at
    }

    /// The earlier of two deadlines; on a tie, `self` (the more specific bound) is kept.
    pub fn min(self, other: Deadline) -> Deadline {
        if other.at < self.at { other } else { self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_earlier_deadline_keeps_its_bound() {
        let now = Instant::now();
        let timeout = Deadline::new(now + Duration::from_millis(300), Bound::TimeoutMs);
        let budget = Deadline::new(now + Duration::from_millis(200), Bound::BudgetMs);
        let cap = Deadline::new(now + Duration::from_secs(60), Bound::RunCap);
        assert_eq!(timeout.min(budget).min(cap).bound(), Bound::BudgetMs);
        assert_eq!(timeout.min(cap).bound(), Bound::TimeoutMs);
        let tie = Deadline::new(timeout.at(), Bound::RunCap);
        assert_eq!(
            timeout.min(tie).bound(),
            Bound::TimeoutMs,
            "a tie keeps self"
        );
    }
}
