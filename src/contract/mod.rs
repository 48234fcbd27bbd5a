//! The contract's words: the closed sets of values the AgentHealth v1 contract and the MCP
//! specification name, each with its one fixed spelling. The bottom of the import graph:
//! nothing here imports another module of the crate, does I/O or keeps state, so every layer
//! may speak these words.
//!
//! * [`Status`], [`Dimension`], [`TargetType`], [`Relationship`]: what a result says about
//!   a target, and what a configuration says it is;
//! * [`Bound`]: which setting ends a wait (`timeout_ms`, `budget_ms`, `--deadline`, …), the
//!   word a timed-out check's reason carries;
//! * [`Secret`]: a value that must never be printed;
//! * [`LocalResource`]: a resource of this host that ran out (never the target's fault);
//! * [`Revision`]: the MCP protocol revisions agenthealth speaks, in one list;
//! * [`Format`]: how results are written (`--format`);
//! * [`OAuthGrant`]: how an OAuth client obtains its token (`mcp.oauth.grant`), and
//!   [`AuthMethod`]: how it authenticates at the token endpoint;
//! * [`AllowList`] and [`Forbidden`]: what a `/probe` module may reach, and the word for why a
//!   target is refused — one definition that the configuration reads, the network layer
//!   enforces and `serve` answers by.
//! * [`endpoint`]: what an endpoint must look like ([`EndpointProblem`]: why one cannot work).
//!
//! What is not a word lives beside it: the machinery that runs a check (deadlines, attempts,
//! threads, cancellation) is [`crate::runtime`], and the text helpers (how a name is shown, a
//! misspelling's nearest word, RFC 3339 timestamps) are [`crate::text`].

pub mod allow;
pub mod bound;
pub mod dimension;
pub mod endpoint;
pub mod format;
pub mod grant;
pub mod resource;
pub mod revision;
pub mod secret;
pub mod status;
pub mod target;

/// `Display` as the word's one spelling (`as_str`), for the words that are printed.
macro_rules! display_as_spelled {
    ($($word:ty),*) => {$(
        impl std::fmt::Display for $word {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    )*};
}

display_as_spelled!(Status, Dimension, TargetType);

/// `parse`: the word spelled exactly `s` (the spelling of configurations and the command
/// line), found in the word's `ALL`.
macro_rules! parse_by_spelling {
    ($($word:ty),*) => {$(
        impl $word {
            /// The word spelled exactly `s`.
            pub fn parse(s: &str) -> Option<$word> {
                <$word>::ALL.into_iter().find(|w| w.as_str() == s)
            }
        }
    )*};
}

parse_by_spelling!(
    AuthMethod, Dimension, Format, OAuthGrant, Revision, TargetType
);

pub use allow::{AllowList, Forbidden};
pub use bound::Bound;
pub use dimension::Dimension;
pub use endpoint::EndpointProblem;
pub use format::Format;
pub use grant::{AuthMethod, OAuthGrant};
pub use resource::LocalResource;
pub use revision::Revision;
pub use secret::Secret;
pub use status::Status;
pub use target::{Relationship, TargetType};
