//! The one integration test binary: runs the built `agenthealth` against servers on
//! 127.0.0.1 written here, and checks stdout, stderr, exit codes and deadlines; `process`
//! drives the stdio child-process layer against hostile children; `stdio` runs the binary
//! against stdio MCP servers (hostile, fake and real); `docs` runs every console example of
//! README.md and docs/ as shown; `layout` holds the golden terminal, doctor and line outputs;
//! `empty_root` runs the static binary in an empty root; `test_server` checks the HTTP test
//! server the others use; `serve` runs the AHP server against scripted targets and hostile
//! clients, `probe` its `/probe` and `/targets`, `fleet` a real Prometheus probing 1,000
//! targets through three replicas; `deploy` checks the manifests, image files and release
//! artefacts; `architecture` reads `src/` for the rules its layout must keep; `lanes` when
//! inventories go out at once, across a far link made in a private network namespace
//! (`netns`).

mod architecture;
mod cli;
mod completions;
mod config;
mod deadline;
mod deploy;
mod docs;
mod empty_root;
mod fleet;
mod graph;
mod interop;
mod lanes;
mod layout;
mod netns;
mod probe;
mod serve;
mod stdio;
mod test_server;
mod util;

mod http;
mod mcp;
mod mcp_functional;
mod mcp_modes;
mod mcp_selection;
mod oauth;
mod oauth_interop;
mod tools;
