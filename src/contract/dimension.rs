//! Health dimensions: what a check looks at, in the order the engine runs them.

/// A health dimension. The declaration order is the order in which the engine runs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dimension {
    /// Offline validation of the target's configuration and credentials.
    Configuration,
    /// Can the target be reached at all.
    Reachability,
    /// Are our credentials accepted.
    Authentication,
    /// Does the target speak the expected protocol.
    Protocol,
    /// Does the target offer what we need (inventories, requirements).
    Capability,
    /// An explicitly opted-in active probe.
    Functional,
    /// Reachability latency against a threshold (no request of its own).
    Latency,
    /// Summary of the dependencies' contributions.
    Dependency,
}

impl Dimension {
    /// Every dimension, in execution order.
    pub const ALL: [Dimension; 8] = [
        Dimension::Configuration,
        Dimension::Reachability,
        Dimension::Authentication,
        Dimension::Protocol,
        Dimension::Capability,
        Dimension::Functional,
        Dimension::Latency,
        Dimension::Dependency,
    ];

    /// The configuration and result spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Dimension::Configuration => "configuration",
            Dimension::Reachability => "reachability",
            Dimension::Authentication => "authentication",
            Dimension::Protocol => "protocol",
            Dimension::Capability => "capability",
            Dimension::Functional => "functional",
            Dimension::Latency => "latency",
            Dimension::Dependency => "dependency",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dimensions_round_trip() {
        for d in Dimension::ALL {
            assert_eq!(Dimension::parse(d.as_str()), Some(d));
        }
        assert_eq!(Dimension::parse("Latency"), None);
    }
}
