//! The one exit-code map: 0 HEALTHY … 5 UNKNOWN from the worst top-level status, 6 for a tool
//! failure (bad usage, invalid configuration, write error) with no document.
//!
//! [`CODES`] is the table a script branching on `$?` reads; the help text renders it, so the
//! codes and their prose are written here once.

use crate::contract::Status;

/// Exit code of a tool failure.
pub const TOOL_FAILURE: i32 = 6;

/// One exit code and what it tells a script.
#[derive(Clone, Copy, Debug)]
pub struct ExitCodeRow {
    /// The process exit code.
    pub code: i32,
    /// The worst top-level status it stands for; `None` for the tool failure.
    pub status: Option<Status>,
    /// What it means, in one line.
    pub meaning: &'static str,
}

impl ExitCodeRow {
    /// The status's contract name (`HEALTHY`, …), or `tool failure`.
    pub fn name(&self) -> &'static str {
        match self.status {
            Some(s) => s.as_str(),
            None => "tool failure",
        }
    }
}

/// Every exit code, in order: the statuses in severity order, then the tool failure.
pub const CODES: [ExitCodeRow; 7] = [
    status(Status::Healthy, "every requested check passed"),
    status(
        Status::Degraded,
        "working but impaired: latency over threshold, an optional dependency failing",
    ),
    status(
        Status::Unhealthy,
        "the target answered and is not fit for use",
    ),
    status(
        Status::Unreachable,
        "no response: DNS, refused, reset, untrusted TLS, or no byte before the deadline",
    ),
    status(
        Status::Misconfigured,
        "the configuration or credentials cannot work",
    ),
    status(
        Status::Unknown,
        "inconclusive: a response did not complete, the run was cancelled, or no checks were requested",
    ),
    ExitCodeRow {
        code: TOOL_FAILURE,
        status: None,
        meaning: "a usage, configuration or output error",
    },
];

/// The row of a status, its code from [`for_status`].
const fn status(status: Status, meaning: &'static str) -> ExitCodeRow {
    ExitCodeRow {
        code: for_status(status),
        status: Some(status),
        meaning,
    }
}

/// The exit code for a document whose worst top-level status is `status`.
pub const fn for_status(status: Status) -> i32 {
    match status {
        Status::Healthy => 0,
        Status::Degraded => 1,
        Status::Unhealthy => 2,
        Status::Unreachable => 3,
        Status::Misconfigured => 4,
        Status::Unknown => 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severity_order_is_exit_order() {
        for (i, s) in Status::ALL.into_iter().enumerate() {
            assert_eq!(for_status(s), i as i32);
        }
    }

    #[test]
    fn the_table_lists_every_code_once_in_order() {
        for (i, c) in CODES.iter().enumerate() {
            assert_eq!(c.code, i as i32);
            assert!(!c.meaning.is_empty() && !c.meaning.contains('\n'));
        }
        let statuses: Vec<Status> = CODES.iter().filter_map(|c| c.status).collect();
        assert_eq!(statuses, Status::ALL);
        assert_eq!(CODES.last().map(|c| c.code), Some(TOOL_FAILURE));
    }
}
