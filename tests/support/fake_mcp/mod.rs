//! A scriptable fake MCP server (Streamable HTTP) for tests, demos and benchmarks.
//!
//! It speaks the legacy handshake revisions (2025-03-26, 2025-06-18,
//! 2025-11-25), the stateless 2026-07-28 revision, or both, and can misbehave
//! on purpose, per route and per JSON-RPC method.
//!
//! * Hand-written HTTP/1.1 on `std::net`, bound to `127.0.0.1` only; each
//!   connection is served by one thread, taken from a pool of reused workers (a
//!   client opening a connection per request pays no thread spawn), keep-alive, `Content-Length` or chunked request bodies
//!   (capped at 4 MiB), `Content-Length` JSON answers and chunked SSE answers
//!   (one write per event). At most [`MAX_CONNECTIONS`] connections.
//! * Dropping the [`FakeServer`] stops everything: the accept loop is woken by
//!   a self-connection, open sockets are shut down, and every stalled handler
//!   (hangs, trickles, held-open streams, delays) waits on a condition variable
//!   that the drop releases. No thread outlives the server for long.
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
//! The module depends on `serde_json` and `std` only and uses no `crate::`
//! paths, so it can be included with `#[path = "…/fake_mcp/mod.rs"] mod fake_mcp;`.
// Each including target (integration tests, the example binary) uses a
// different subset of this API.
#![allow(dead_code, unused_imports)]

mod config;
mod http;
mod mcp;
mod presets;
mod render;
mod server;
mod tools;
mod util;

pub use config::{
    Action, Advertise, DiscoverReply, Era, FakeConfig, Fault, LEGACY_VERSIONS, LegacyOpts,
    MODERN_VERSION, Mode, ModernOpts, On, SseOpts,
};
pub use presets::{PRESETS, PresetInfo, preset, preset_info};
pub use server::{FakeServer, MAX_CONNECTIONS, RpcKind, Seen};
pub use tools::{
    CONTENT_KINDS, STALE_OBSERVED_AT, default_prompts, default_resources, default_tools,
};
