//! The vocabulary every layer shares, and nothing else: the bottom of the import graph.
//!
//! Nothing here does I/O or knows a protocol (starting a thread, in [`threads`], is the one
//! effect, written once for every layer). Every other module may import it; it imports no
//! other module of the crate.
//!
//! * [`Status`], [`Dimension`], [`TargetType`], [`Relationship`]: the contract's words;
//! * [`Deadline`] and [`Bound`]: when a wait must end, and which setting made it end then;
//! * [`Attempt`]: one bounded call — its deadline, the watchdog's abort hooks, whether a
//!   response started;
//! * [`Secret`]: a value that must never be printed;
//! * [`LocalResource`]: a resource of this host that ran out (never the target's fault);
//! * [`threads::spawn`]: the one way threads start (named, explicit stack, fallible);
//! * [`sync::lock`], [`text::clean`], [`text::suggest`]: the small helpers several layers need
//!   written once.

pub mod attempt;
pub mod deadline;
pub mod dimension;
pub mod resource;
pub mod rfc3339;
pub mod secret;
pub mod status;
pub mod sync;
pub mod target;
pub mod text;
pub mod threads;

pub use attempt::Attempt;
pub use deadline::{Bound, Deadline};
pub use dimension::Dimension;
pub use resource::LocalResource;
pub use secret::{Secret, SecretLog};
pub use status::Status;
pub use target::{Relationship, TargetType};
