//! The one integration test binary: runs the built `agenthealth` against servers on
//! 127.0.0.1 written here, and checks stdout, stderr, exit codes and deadlines; `process`
//! drives the stdio child-process layer against hostile children; `stdio` runs the binary
//! against stdio MCP servers (hostile, fake and real); `docs` runs every console example of
//! README.md and docs/ as shown; `test_server` checks the HTTP test server the others use.

mod cli;
mod config;
mod deadline;
mod docs;
mod graph;
mod interop;
mod process;
mod stdio;
mod test_server;
mod util;

mod http;
mod mcp;
mod mcp_functional;
mod mcp_modes;
mod mcp_selection;
mod oauth;
mod support;

use support::fake_mcp;
