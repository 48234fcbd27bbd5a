//! `agenthealth`: can this MCP server, and what it depends on, do its work right now?
//!
//! The data flows one way: [`cli`] → [`config`] → [`engine`] → [`adapter`] → [`result`] →
//! [`output`]. `main.rs` only calls [`run`] and exits with its code.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod adapter;
pub mod config;
pub mod net;
pub mod result;
