//! agenthealth's test kit: what the integration tests (`tests/tests.rs`), the examples
//! (`fake_mcp_server` for `make demo` and `make bench`, `latency_proxy`) and the crate's unit
//! tests (through `src/net/testkit.rs` and `src/process/testkit.rs`) share.
//!
//! * [`http_server`]: the one HTTP/1.1 test server (scripted, hostile, TLS-wrapped or custom).
//! * [`fake_mcp`]: the scriptable fake MCP server built on it.
//! * [`tls`]: a throwaway test CA, leaves and server sessions for `http_server`.
//! * [`fixtures`]: the stdio fixture scripts and the real Python interpreter.
//! * [`processes`]: which processes of a run are still alive, and the bounded wait until
//!   none is.
//! * [`oauth_http`], [`oauth_browser`]: the OAuth lab's HTTP client and scripted browser.
//!
//! It does not depend on `agenthealth`: the unit tests that use it would otherwise see two
//! copies of the crate's types. So it has its own poison-tolerant [`lock`].

pub mod fake_mcp;
pub mod fixtures;
pub mod http_server;
pub mod oauth_browser;
pub mod oauth_http;
pub mod processes;
pub mod tls;

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, taking the data even when another thread panicked while holding it: a test
/// server must keep answering (and a test keep reporting) after one handler panicked. The
/// kit's copy of the crate's `runtime::sync::lock`, for the reason in the module doc.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poison| poison.into_inner())
}
