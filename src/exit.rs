//! The one exit-code map: 0 HEALTHY … 5 UNKNOWN from the worst top-level status, 6 for a tool
//! failure (bad usage, invalid configuration, write error) with no document.

use crate::vocab::Status;

/// Exit code of a tool failure.
pub const TOOL_FAILURE: i32 = 6;

/// The exit code for a document whose worst top-level status is `status`.
pub fn for_status(status: Status) -> i32 {
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
}
