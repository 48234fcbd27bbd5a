//! Health statuses, in the contract's severity order.

/// A health status, ordered from best to worst (`Ord` follows the contract's severity order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    /// Every requested check passed.
    Healthy,
    /// Working, but impaired (latency over threshold, optional dependency down).
    Degraded,
    /// The target answered and is not fit for use.
    Unhealthy,
    /// No response from the target.
    Unreachable,
    /// The configuration or credentials cannot work.
    Misconfigured,
    /// Inconclusive evidence.
    Unknown,
}

impl Status {
    /// Every status, best first.
    pub const ALL: [Status; 6] = [
        Status::Healthy,
        Status::Degraded,
        Status::Unhealthy,
        Status::Unreachable,
        Status::Misconfigured,
        Status::Unknown,
    ];

    /// The contract spelling (`HEALTHY`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Healthy => "HEALTHY",
            Status::Degraded => "DEGRADED",
            Status::Unhealthy => "UNHEALTHY",
            Status::Unreachable => "UNREACHABLE",
            Status::Misconfigured => "MISCONFIGURED",
            Status::Unknown => "UNKNOWN",
        }
    }

    /// HEALTHY and DEGRADED count as passed for gates.
    pub fn passed(self) -> bool {
        matches!(self, Status::Healthy | Status::Degraded)
    }

    /// The worst of a set of statuses; an empty set is UNKNOWN.
    pub fn worst<I: IntoIterator<Item = Status>>(statuses: I) -> Status {
        statuses.into_iter().max().unwrap_or(Status::Unknown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_order_follows_the_contract() {
        let mut v = Status::ALL.to_vec();
        v.reverse();
        v.sort();
        assert_eq!(v, Status::ALL.to_vec());
        assert_eq!(Status::worst([]), Status::Unknown);
        assert_eq!(
            Status::worst([Status::Healthy, Status::Unreachable, Status::Degraded]),
            Status::Unreachable
        );
        assert!(Status::Degraded.passed() && !Status::Unhealthy.passed());
    }
}
