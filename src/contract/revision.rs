//! The MCP protocol revisions agenthealth speaks: the one list ([`Revision::ALL`]) that era
//! selection, the evidence's grammar and doctor's advice all read.

/// A supported MCP revision. Its spelling ([`Revision::as_str`]) is our own fixed word, so it
/// may appear in evidence once a server's answer has been matched against it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Revision {
    /// `2025-03-26` (legacy).
    V2025_03_26,
    /// `2025-06-18` (legacy).
    V2025_06_18,
    /// `2025-11-25` (legacy; the revision a legacy negotiation offers).
    V2025_11_25,
    /// `2026-07-28` (modern, stateless).
    V2026_07_28,
}

impl Revision {
    /// Every supported revision, oldest first.
    pub const ALL: [Revision; 4] = [
        Revision::V2025_03_26,
        Revision::V2025_06_18,
        Revision::V2025_11_25,
        Revision::V2026_07_28,
    ];

    /// Every supported revision's spelling, oldest first ([`Revision::ALL`] spelt out).
    pub const SPELLINGS: [&'static str; 4] = {
        let mut out = [""; 4];
        let mut i = 0;
        while i < out.len() {
            out[i] = Revision::ALL[i].as_str();
            i += 1;
        }
        out
    };

    /// The modern revision.
    pub const MODERN: Revision = Revision::V2026_07_28;

    /// The revision an unpinned legacy negotiation offers.
    pub const LEGACY_OFFER: Revision = Revision::V2025_11_25;

    /// The protocol spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Revision::V2025_03_26 => "2025-03-26",
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
        }
    }

    /// Whether this is the stateless revision.
    pub fn is_modern(self) -> bool {
        self == Revision::MODERN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_round_trip_and_only_the_listed_ones_parse() {
        for v in Revision::ALL {
            assert_eq!(Revision::parse(v.as_str()), Some(v));
        }
        for bad in ["2024-11-05", "2099-01-01", "", " 2025-06-18", "2025-06-18 "] {
            assert_eq!(Revision::parse(bad), None, "{bad}");
        }
        assert!(Revision::MODERN.is_modern() && !Revision::LEGACY_OFFER.is_modern());
        let spelled = Revision::ALL.map(Revision::as_str);
        assert!(spelled.is_sorted(), "oldest first: {spelled:?}");
    }
}
