//! A scriptable fake MCP server (Streamable HTTP) for tests, demos and benchmarks.
//!
//! It speaks the legacy handshake revisions (2025-03-26, 2025-06-18,
//! 2025-11-25), the stateless 2026-07-28 revision, or both, and can misbehave
//! on purpose, per route and per JSON-RPC method.
//!
//! * HTTP/1.1 from the kit's test server ([`http_server`](crate::http_server)), bound to `127.0.0.1`
//!   only: a pool of reused connection threads, keep-alive, `Content-Length` or
//!   chunked request bodies (capped at 4 MiB), at most [`MAX_CONNECTIONS`]
//!   connections. This module answers with `Content-Length` JSON and chunked SSE
//!   (one write per event).
//! * Dropping the [`FakeServer`] stops everything: every stalled handler (hangs,
//!   trickles, held-open streams, delays) waits on a condition variable that the
//!   drop releases, then the HTTP server stops accepting and shuts open sockets
//!   down. No thread outlives the server for long.
//! * Every request is logged on arrival as a [`Seen`].
//!
//! ```ignore
//! use fake_mcp::{Action, Era, FakeConfig, FakeServer, Fault, Mode};
//! let server = FakeServer::start(FakeConfig {
//!     era: Era::Legacy("2025-06-18"),
//!     response: Mode::Sse,
//!     faults: vec![Fault::on("tools/list", Action::HangBeforeHeaders).times(1)],
//!     ..Default::default()
//! });
//! let url = server.url(); // http://127.0.0.1:PORT/mcp
//! assert_eq!(server.count("initialize"), 0);
//! ```
//!
//! The module depends on `serde_json`, `sha2`, `std` and the kit's `http_server` only.

use crate::http_server;

pub mod cli;
mod config;
mod mcp;
mod oauth;
mod presets;
mod render;
mod server;
mod tools;
mod util;

pub use config::{
    Action, Advertise, DiscoverReply, Era, FakeConfig, Fault, LEGACY_VERSIONS, LegacyOpts,
    MODERN_VERSION, Mode, ModernOpts, On, SseOpts,
};
pub use http_server::MAX_CONNECTIONS;
pub use presets::{PRESETS, PresetInfo, preset, preset_info};
pub use server::{FakeServer, RpcKind, Seen};
pub use tools::{
    CONTENT_KINDS, STALE_OBSERVED_AT, default_prompts, default_resources, default_tools,
};
