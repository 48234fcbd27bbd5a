//! Test support shared by integration tests (`mod support;` in `tests/tests.rs`), the
//! `fake_mcp_server` example and, file by file through `#[path]`, unit tests
//! (`src/net/testkit.rs`): the one HTTP test server, the fake MCP server built on it, and
//! test TLS material.

#![allow(dead_code)]

/// The crate's poison-tolerant lock, which `http_server` takes from its includer as
/// `super::lock` (the crate's unit tests, which include it too, give it by another path).
pub use agenthealth::vocab::sync::lock;

pub mod fake_mcp;
pub mod fixtures;
pub mod http_server;
pub mod tls;
