//! A 1,000-node graph within its budgets on a bounded number of threads.

use super::*;

/// Runs the binary with stdout to a file, sampling its thread count until it exits.
fn run_counting_threads(args: &[&str], out: &Path) -> (Outcome, usize) {
    let file = File::create(out).expect("stdout file");
    let start = Instant::now();
    let mut child = command(args, &[])
        .stdout(file)
        .spawn()
        .expect("spawn agenthealth");
    let status_file = PathBuf::from(format!("/proc/{}/status", child.id()));
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        // Sampling can only miss a peak, never invent one.
        if let Ok(text) = std::fs::read_to_string(&status_file) {
            if let Some(n) = text
                .lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse::<usize>().ok())
            {
                peak = peak.max(n);
            }
        }
        std::thread::yield_now();
    };
    let elapsed = start.elapsed();
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
    }
    let outcome = Outcome {
        code: status.code().unwrap_or(-1),
        stdout: std::fs::read_to_string(out).unwrap_or_default(),
        stderr,
        elapsed,
    };
    (outcome, peak)
}

/// The graph `examples/graph/generate.sh` prints (the one `make bench` measures).
fn generated_graph(roots: usize, kids: usize, grand: usize, urls: &[String]) -> String {
    let mut cmd = Command::new("bash");
    cmd.arg("examples/graph/generate.sh");
    cmd.args([roots, kids, grand].map(|n| n.to_string()));
    cmd.args(urls);
    let out = cmd.output().expect("run examples/graph/generate.sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 YAML")
}

#[test]
fn a_thousand_nodes_finish_within_budgets_on_bounded_threads() {
    let servers: Vec<Server> = (0..2)
        .map(|_| Server::start(|_| Reply::status(200)))
        .collect();
    let urls: Vec<String> = servers.iter().map(|s| s.url("/health")).collect();
    let dir = TempDir::new("graph-scale");
    // 10 × (1 + 9 × (1 + 10)) = 1,000 nodes.
    let f = dir.file("big.yaml", &generated_graph(10, 9, 10, &urls));
    let (o, threads) = run_counting_threads(
        &["check", path_str(&f), "--format", "json"],
        &dir.0.join("out"),
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let probes: usize = servers.iter().map(|s| s.requests().len()).sum();
    assert_eq!(probes, 1000, "every node once, shared ones included");
    let v = o.json();
    let results = all_results(&v);
    assert_eq!(results.len(), 10 * (1 + 9 * 11 + 9 * 11));
    assert!(results.iter().all(|r| r["status"] == "HEALTHY"));
    assert!(
        o.elapsed < Duration::from_secs(20) + MARGIN,
        "{:?}",
        o.elapsed
    );
    // main + signal thread + 16 workers.
    assert!(threads <= 16 + 2, "{threads} threads");

    // Fewer workers, fewer threads.
    let small = dir.file(
        "small.yaml",
        &generated_graph(10, 9, 10, &urls).replacen("targets:", "concurrency: 3\ntargets:", 1),
    );
    let (o, threads) = run_counting_threads(
        &["check", path_str(&small), "--format", "json"],
        &dir.0.join("out-small"),
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(threads <= 3 + 2, "{threads} threads");
}
