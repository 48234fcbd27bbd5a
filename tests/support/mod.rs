//! Test support shared by unit tests (included with `#[path]`) and integration tests
//! (`mod support;`): scripted HTTP servers and test TLS material.

pub mod http_servers;
pub mod tls;
