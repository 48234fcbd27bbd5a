//! Test support shared by integration tests (`mod support;` in `tests/tests.rs`), the
//! `fake_mcp_server` example and, file by file through `#[path]`, unit tests
//! (`src/net/testkit.rs`): the one HTTP test server, the fake MCP server built on it, and
//! test TLS material.

#![allow(dead_code)]

pub mod fake_mcp;
pub mod http_server;
pub mod tls;
