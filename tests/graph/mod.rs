//! Dependency graphs end to end: load-time graph errors (exit 6, the key path, one line),
//! shared nodes probed once per run and afresh on the next, edge policy, bounded parallelism
//! measured by the servers, budgets that never reach a shared dependency, a mixed HTTP + MCP
//! graph sharing one MCP session, the terminal tree and `doctor`'s root cause, and a
//! 1,000-node graph with a bounded number of threads.
//!
//! Deadline assertions allow +1 s for a loaded machine. Nothing here waits for a fixed time to
//! let something happen: servers count, and a rendezvous route proves parallelism.
//!
//! One file per part; the helpers the parts share are here.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use agenthealth_testkit::lock;
use agenthealth_testkit::processes::MARGIN;
use serde_json::Value;

use crate::util::{Outcome, TempDir, command, run};
use agenthealth_testkit::fake_mcp::{FakeConfig, FakeServer};
use agenthealth_testkit::http_server::{Reply, Server, closed_port};

mod load_errors;
mod mixed;
mod parallelism;
mod rendering;
mod scale;
mod sharing;

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap_or_default()
}

/// `check <file> --format json`.
fn check_json(file: &Path) -> Outcome {
    run(&["check", path_str(file), "--format", "json"])
}

/// Requests the server saw for `path`.
fn hits(s: &Server, path: &str) -> usize {
    s.requests().iter().filter(|r| r.target == path).count()
}

/// Every result in the document, depth-first, with its name.
fn all_results(doc: &Value) -> Vec<&Value> {
    fn walk<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
        out.push(v);
        for d in v["dependencies"].as_array().into_iter().flatten() {
            walk(d, out);
        }
    }
    let mut out = Vec::new();
    match doc["results"].as_array() {
        Some(results) => results.iter().for_each(|r| walk(r, &mut out)),
        None => walk(doc, &mut out),
    }
    out
}

fn named<'a>(doc: &'a Value, name: &str) -> Vec<&'a Value> {
    all_results(doc)
        .into_iter()
        .filter(|r| r["target"]["name"] == name)
        .collect()
}
