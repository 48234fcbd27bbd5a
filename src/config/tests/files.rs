//! Whole files: the fixture with every field, a thousand targets, and how files are read
//! (regular files only, a FIFO refused without blocking, large mappings).

use super::*;

#[test]
fn every_field_fixture_loads() {
    let c = load(include_str!("../../../tests/config/every-field.yaml"));
    assert_eq!(c.concurrency, 256);
    assert_eq!(c.roots.len(), 5);
    assert_eq!(c.nodes.len(), 7);
    let service = &c.nodes[c.roots[0]];
    assert_eq!(service.id.as_deref(), Some("service"));
    assert_eq!(service.latency_threshold_ms, Some(250.5));
    assert_eq!(service.bearer_env.as_deref(), Some("SERVICE_TOKEN"));
    assert_eq!(service.dependencies.len(), 3);
    let search = &c.nodes[service.dependencies[0].node];
    assert_eq!(search.name, "Search MCP");
    let m = search.mcp.as_ref().unwrap();
    let f = m.functional.as_ref().unwrap();
    assert!(f.arguments_json.contains("12345678901234567890"));
    assert_eq!(f.expect.json.len(), 7);
    assert_eq!(
        search.env_refs(),
        vec!["MCP_CLIENT_SECRET"],
        "env refs come from the oauth section"
    );
    let files = &c.nodes[c.roots[2]];
    assert_eq!(files.env_refs(), vec!["HOST_FILES_TOKEN", "HOST_LOG_LEVEL"]);
    let gw = &c.nodes[service.dependencies[2].node];
    assert_eq!(gw.path, "targets[0].dependencies[2]");
    assert_eq!(gw.kind, TargetType::Gateway);
    assert_eq!(
        c.nodes[gw.dependencies[1].node].id.as_deref(),
        Some("files")
    );
}

#[test]
fn thousand_targets_load_and_the_last_error_is_located() {
    // Load time is measured by `make bench`, not asserted here.
    let mut text = String::from("version: v1\nconcurrency: 64\ntargets:\n");
    for i in 0..1000 {
        text.push_str(&format!(
            "  - name: target {i}\n    id: t{i}\n    type: http\n    endpoint: http://127.0.0.1:{}/health\n    checks: [reachability, protocol, latency]\n    thresholds: {{latency_ms: 250}}\n    timeout_ms: 2000\n    auth: {{bearer_env: TOKEN_{i}}}\n    http:\n      expected_status: [200, 204]\n      headers: {{X-Ready: 'true'}}\n",
            8000 + i
        ));
        if i > 0 {
            text.push_str("    dependencies:\n      - ref: t0\n        critical: false\n");
        }
    }
    let c = load(&text);
    assert_eq!(c.nodes.len(), 1000);
    // The error path re-parses once for the line.
    let bad = text.replace(
        "timeout_ms: 2000\n    auth: {bearer_env: TOKEN_999}",
        "timeout_ms: 0\n    auth: {bearer_env: TOKEN_999}",
    );
    let e = load_str(&bad).unwrap_err();
    assert_eq!(e.path, "targets[999].timeout_ms");
    assert!(e.line.is_some_and(|l| l > 13_000), "{e}");
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("agenthealth-load-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn load_file_reads_regular_files() {
    let dir = scratch("regular");
    let p = dir.join("c.yaml");
    std::fs::write(&p, one("http", "")).unwrap();
    assert_eq!(load_file(&p, WAIT).unwrap().nodes.len(), 1);
    // A file that cannot be opened is named, with the operating system's reason.
    let missing = dir.join("missing.yaml");
    let e = load_file(&missing, WAIT).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "cannot open configuration file `{}`: No such file or directory",
            missing.display()
        )
    );
    let e = load_file(&dir, WAIT).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "configuration path `{}` is not a regular file or a pipe",
            dir.display()
        )
    );
    // A UTF-8 byte-order mark is not part of the document.
    std::fs::write(&p, format!("\u{feff}{}", one("http", ""))).unwrap();
    assert_eq!(load_file(&p, WAIT).unwrap().nodes.len(), 1);
    std::fs::write(&p, [b'a', b':', b' ', 0xff, b'\n']).unwrap();
    assert_eq!(
        load_file(&p, WAIT).unwrap_err().to_string(),
        "configuration file is not valid UTF-8"
    );
    let big = vec![b'#'; usize::try_from(MAX_FILE_BYTES).unwrap() + 1];
    std::fs::write(&p, big).unwrap();
    assert_eq!(
        load_file(&p, WAIT).unwrap_err().to_string(),
        "configuration file is larger than 4 MiB"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn a_fifo_is_read_as_its_writer_writes_it() {
    let dir = scratch("fifo");
    let p = dir.join("fifo.yaml");
    nix::unistd::mkfifo(&p, nix::sys::stat::Mode::S_IRWXU).unwrap();
    // The writer's open blocks until the loader has opened the FIFO: that is the sync.
    let writer = {
        let p = p.clone();
        std::thread::spawn(move || {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
            let text = one("http", "");
            let (head, tail) = text.split_at(text.len() / 2);
            f.write_all(head.as_bytes()).unwrap();
            f.flush().unwrap();
            f.write_all(tail.as_bytes()).unwrap();
        })
    };
    assert_eq!(load_file(&p, WAIT).unwrap().nodes.len(), 1);
    writer.join().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_fifo_nobody_writes_is_refused_at_the_deadline() {
    let dir = scratch("fifo-silent");
    let p = dir.join("fifo.yaml");
    nix::unistd::mkfifo(&p, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let started = Instant::now();
    let e = load_file(&p, Duration::from_millis(300)).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "configuration from `{}` did not arrive within 300 ms",
            p.display()
        )
    );
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_millis(1300),
        "{took:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn duplicates_are_found_in_large_mappings_and_lists() {
    // The checks use hash sets; a quadratic scan would make 20,000 entries noticeably slow.
    let n = 20_000;
    let mut text = one("http", "checks: [protocol]\nhttp:\n  headers:");
    for i in 0..n {
        text.push_str(&format!("        X-H{i}: v\n"));
    }
    text.push_str("        x-h7: v\n");
    rejects(
        &text,
        "targets[0].http.headers.x-h7",
        "duplicate header name (header names are case-insensitive)",
    );
    let mut text = one("mcp", "mcp:\n  required_tools:");
    for i in 0..n {
        text.push_str(&format!("        - t{i}\n"));
    }
    text.push_str("        - t7\n");
    rejects(
        &text,
        &format!("targets[0].mcp.required_tools[{n}]"),
        "duplicate tool name",
    );
}
