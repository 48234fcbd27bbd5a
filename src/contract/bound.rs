//! Which setting bounds a wait: the word a timed-out check's reason carries, so `doctor` can
//! name the setting to change (`timeout_ms`, `budget_ms`, `--deadline`, …) and never one that
//! did not cut the attempt. The runtime's [`crate::runtime::Deadline`] carries it.

/// Which bound set a deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bound {
    /// The target's `timeout_ms`.
    TimeoutMs,
    /// The target's `check_timeouts_ms` entry for the dimension.
    CheckTimeoutMs,
    /// `--timeout` of an ad-hoc `ping`/`doctor`.
    TimeoutFlag,
    /// The node's `budget_ms`.
    BudgetMs,
    /// The run deadline of the configuration file (`deadline_ms`): the whole run ends by it.
    DeadlineMs,
    /// `--deadline` of `ping`, `check` or `doctor`: the whole run ends by it.
    DeadlineFlag,
    /// The cap on every run, whatever the configuration says.
    RunCap,
    /// A scraper's timeout for `serve`'s `/probe` (`X-Prometheus-Scrape-Timeout-Seconds`, less
    /// a margin): the whole probe ends by it, so the scraper never times out first.
    ScrapeTimeout,
    /// The end-of-run cleanup budget (MCP `DELETE`, stdio shutdown).
    Cleanup,
}

impl Bound {
    /// The setting that sets this bound, as a person would change it.
    pub fn setting(self) -> &'static str {
        match self {
            Bound::TimeoutMs => "timeout_ms",
            Bound::CheckTimeoutMs => "check_timeouts_ms",
            Bound::TimeoutFlag => "--timeout",
            Bound::BudgetMs => "budget_ms",
            Bound::DeadlineMs => "deadline_ms",
            Bound::DeadlineFlag => "--deadline",
            Bound::RunCap => "the 60 s run cap",
            Bound::ScrapeTimeout => "the scrape's timeout (Prometheus's scrape_timeout)",
            Bound::Cleanup => "the cleanup budget",
        }
    }
}
