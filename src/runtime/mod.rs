//! The machinery every layer that waits shares: when a wait must end, one bounded call, how
//! threads start, the one lock, run-wide cancellation and the log of the run's secrets.
//!
//! It knows no protocol and no configuration format; it imports only the contract's words
//! ([`crate::contract`]: a [`Deadline`] carries the [`crate::contract::Bound`] that set it).
//!
//! * [`Deadline`]: an instant and the bound that put it there;
//! * [`Attempt`]: one bounded call — its deadline, the watchdog's abort hooks, whether a
//!   response started;
//! * [`Cancel`]: SIGINT/SIGTERM for the whole run, a flag and the wake-ups of every wait;
//! * [`SecretLog`]: every secret value learned during a run, for the redaction pass;
//! * [`threads::spawn`]: the one way threads start (named, explicit stack, fallible);
//! * [`sync::lock`]: the one poison-tolerant lock.

pub mod attempt;
pub mod cancel;
pub mod deadline;
pub mod secret_log;
pub mod sync;
pub mod threads;

pub use attempt::Attempt;
pub use cancel::Cancel;
pub use deadline::Deadline;
pub use secret_log::SecretLog;
