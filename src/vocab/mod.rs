//! The vocabulary every layer shares, and nothing else: the bottom of the import graph.
//!
//! Nothing here does I/O or knows a protocol. Every other module may import it; it imports
//! no other module of the crate.
//!
//! * [`Status`], [`Dimension`], [`TargetType`], [`Relationship`]: the contract's words;
//! * [`Deadline`] and [`Bound`]: when a wait must end, and which setting made it end then;
//! * [`Attempt`]: one bounded call — its deadline, the watchdog's abort hooks, whether a
//!   response started;
//! * [`Secret`]: a value that must never be printed;
//! * [`sync::lock`], [`text::clean`], [`text::suggest`]: the small helpers several layers need
//!   written once.

pub mod attempt;
pub mod deadline;
pub mod dimension;
pub mod rfc3339;
pub mod secret;
pub mod status;
pub mod sync;
pub mod target;
pub mod text;

pub use attempt::Attempt;
pub use deadline::{Bound, Deadline};
pub use dimension::Dimension;
pub use secret::{Secret, SecretLog};
pub use status::Status;
pub use target::{Relationship, TargetType};
