//! The built binary against stdio MCP servers, by what is under test: how a child process
//! ends or misbehaves (`children`), the line framing and its limits (`framing`), era
//! selection (`eras`), the process and its environment over a run (`lifecycle`), the
//! ad-hoc `--stdio --` form and doctor's words for it (`adhoc`), tool calls (`functional`),
//! and the real servers `.ci/interop-setup` installs (`real`). The fake server is
//! `tests/fixtures/stdio/fake_server.py`; the other fixtures sit beside it.
//!
//! Every run asserts its status, its exit code and its time (the deadlines it was given plus
//! `MARGIN`), and that nothing it started is left: the process group recorded in the
//! child's `PIDFILE` has no live member, and no live process carries the run's marker
//! argument in its command line (`/proc`). `harness` holds the target builder, the case and
//! the expected outcomes.

mod adhoc;
mod children;
mod eras;
mod framing;
mod functional;
mod harness;
mod lifecycle;
mod real;
