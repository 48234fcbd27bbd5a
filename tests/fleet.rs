//! The probe fleet on a real Prometheus (Debian's `prometheus` 2.42, which has no Kubernetes
//! discovery): the job of deploy/prometheus/probe.yaml with `file_sd_configs` in place of
//! `kubernetes_sd_configs` and the same relabelling, scraping `/probe` every 5 s through a
//! round-robin balancer (the fleet's Service) in front of 3 `serve` replicas, for 1,000 MCP
//! servers on one fake server's routes (healthy, failing, slow, hanging) announced as
//! kubernetes_sd would announce Services — beside 40 Services the relabelling must drop. It
//! checks through Prometheus's HTTP API that every target's `probe_success` is right, no
//! scrape failed or reached the timeout and none was lost; then kills a replica and checks that
//! every target is scraped and up again through the other two. A second job discovers one
//! replica's configured targets through `/targets` (http_sd) and probes them by name.
//!
//! docs/deployment.md's "Fleets on Prometheus" is what this runs: the job, the modules-only
//! configuration, the replicas behind one address, `/targets`.
//!
//! Waiting is polling Prometheus's API under a deadline; nothing sleeps as synchronisation.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::deploy::probe_job_with_file_sd;
use crate::serve::Serving;
use crate::util::TempDir;
use agenthealth_testkit::fake_mcp::{Action, FakeConfig, FakeServer, Fault, preset};
use agenthealth_testkit::lock;

const TARGETS: usize = 1000;
const REPLICAS: usize = 3;
const JOB: &str = "agenthealth-probe";
/// How the 1,000 behave, in these proportions.
const MIX: [(&str, f64); 4] = [
    ("healthy", 0.70),
    ("failing", 0.20),
    ("slow", 0.07),
    ("hang", 0.03),
];

/// The behaviour of target `i` (deterministic, in the proportions of [`MIX`]).
fn behaviour(i: usize) -> &'static str {
    let mut edge = 0.0;
    for (name, share) in MIX {
        edge += share;
        if (i as f64) < (edge * TARGETS as f64).round() {
            return name;
        }
    }
    MIX[MIX.len() - 1].0
}

/// The fake server's route of each behaviour.
fn route(kind: &str) -> FakeConfig {
    let modern = preset("modern").unwrap_or_default();
    match kind {
        "failing" => preset("malformed").unwrap_or_default(),
        "slow" => modern.with_fault(Fault::post(Action::Delay(Duration::from_millis(200)))),
        "hang" => modern.with_fault(Fault::post(Action::HangBeforeHeaders)),
        _ => modern,
    }
}

/// Target groups shaped like kubernetes_sd's role=service: one per Service port.
fn services(fake_port: u16) -> Value {
    let group = |port: u16, name: String, port_name: &str, extra: Value| {
        let mut labels = json!({
            "__meta_kubernetes_namespace": "agents",
            "__meta_kubernetes_service_name": name,
            "__meta_kubernetes_service_port_name": port_name,
        });
        if let (Some(l), Some(e)) = (labels.as_object_mut(), extra.as_object()) {
            l.extend(e.clone());
        }
        json!({"targets": [format!("127.0.0.1:{port}")], "labels": labels})
    };
    let mut groups: Vec<Value> = (0..TARGETS)
        .map(|i| {
            let annotations = json!({
                "__meta_kubernetes_service_annotation_agenthealth_io_probe": "true",
                "__meta_kubernetes_service_annotation_agenthealth_io_module": "mcp-local",
                "__meta_kubernetes_service_annotation_agenthealth_io_path":
                    format!("/t/{i:04}/{}", behaviour(i)),
            });
            group(fake_port, format!("svc-{i:04}"), "mcp", annotations)
        })
        .collect();
    for i in 0..20 {
        // Not annotated; annotated, but its port is not the one named `mcp`.
        groups.push(group(fake_port, format!("plain-{i:02}"), "mcp", json!({})));
        let probe = json!({"__meta_kubernetes_service_annotation_agenthealth_io_probe": "true"});
        groups.push(group(
            fake_port + 1,
            format!("metrics-{i:02}"),
            "metrics",
            probe,
        ));
    }
    Value::Array(groups)
}

/// A round-robin TCP balancer (kube-proxy's part): each connection goes to the next backend
/// that accepts it; a backend that no longer does is skipped.
struct Balancer {
    addr: SocketAddr,
    backends: Arc<Mutex<Vec<SocketAddr>>>,
}

impl Balancer {
    fn start(backends: Vec<SocketAddr>) -> Balancer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the balancer");
        let addr = listener.local_addr().expect("addr");
        let backends = Arc::new(Mutex::new(backends));
        let list = backends.clone();
        let next = AtomicUsize::new(0);
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let live = lock(&list).clone();
                let start = next.fetch_add(1, Ordering::SeqCst);
                let backend = (0..live.len()).find_map(|k| {
                    let to = live[(start + k) % live.len()];
                    TcpStream::connect_timeout(&to, Duration::from_secs(1)).ok()
                });
                if let Some(backend) = backend {
                    splice(client, backend);
                }
            }
        });
        Balancer { addr, backends }
    }

    /// Sends no new connection to `addr`.
    fn drop_backend(&self, addr: SocketAddr) {
        let mut list = lock(&self.backends);
        list.retain(|a| *a != addr);
    }
}

/// Copies bytes both ways until either side closes, then closes both.
fn splice(a: TcpStream, b: TcpStream) {
    let pairs = [
        (a.try_clone(), b.try_clone()),
        (b.try_clone(), a.try_clone()),
    ];
    for (from, to) in pairs {
        if let (Ok(mut from), Ok(mut to)) = (from, to) {
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut from, &mut to);
                let _ = to.shutdown(Shutdown::Both);
                let _ = from.shutdown(Shutdown::Both);
            });
        }
    }
}

/// A running Prometheus; killed when dropped.
struct Prometheus {
    child: Child,
    addr: SocketAddr,
    log: Arc<Mutex<String>>,
}

impl Prometheus {
    fn start(config: &std::path::Path, data: &std::path::Path) -> Prometheus {
        let mut child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", data.display()))
            .args(["--web.listen-address=127.0.0.1:0", "--log.level=info"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("prometheus is not installed ({e}): apt-get install prometheus (.ci/interop-setup)")
            });
        let mut lines = BufReader::new(child.stderr.take().expect("stderr"));
        let log = Arc::new(Mutex::new(String::new()));
        let mut addr = None;
        let mut line = String::new();
        while addr.is_none() && lines.read_line(&mut line).is_ok_and(|n| n > 0) {
            addr = line
                .split("msg=\"Listening on\" address=")
                .nth(1)
                .and_then(|a| a.split_whitespace().next())
                .and_then(|a| a.parse().ok());
            lock(&log).push_str(&line);
            line.clear();
        }
        let kept = log.clone();
        // Keep draining its log so that it never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in lines.lines().map_while(Result::ok) {
                let mut log = lock(&kept);
                log.push_str(&line);
                log.push('\n');
            }
        });
        let addr = addr.unwrap_or_else(|| panic!("prometheus did not start:\n{}", lock(&log)));
        Prometheus { child, addr, log }
    }

    /// `GET path` of the HTTP API: the JSON body of a 200, else `None`.
    fn api(&self, path: &str) -> Option<Value> {
        let mut s = TcpStream::connect_timeout(&self.addr, Duration::from_secs(5)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        write!(s, "GET {path} HTTP/1.0\r\nHost: prometheus\r\n\r\n").ok()?;
        let mut text = String::new();
        s.read_to_string(&mut text).ok()?;
        let (head, body) = text.split_once("\r\n\r\n")?;
        (head.split(' ').nth(1) == Some("200")).then_some(())?;
        serde_json::from_str(body).ok()
    }

    /// The instant-vector result of `query`.
    fn query(&self, query: &str) -> Vec<(Value, f64)> {
        let path = format!("/api/v1/query?query={}", encode(query));
        let Some(v) = self.api(&path) else {
            return Vec::new();
        };
        v["data"]["result"]
            .as_array()
            .map(|r| {
                r.iter()
                    .map(|s| {
                        let value = s["value"][1].as_str().and_then(|x| x.parse().ok());
                        (s["metric"].clone(), value.unwrap_or(f64::NAN))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A query's single value (0 when it has none).
    fn scalar(&self, query: &str) -> f64 {
        self.query(query).first().map_or(0.0, |(_, v)| *v)
    }

    fn log(&self) -> String {
        lock(&self.log).clone()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A URL query component, percent-encoded.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Polls `probe` every 50 ms until it gives something or `deadline` passes (then fails,
/// saying what was awaited and what Prometheus logged).
fn until<T>(
    what: &str,
    deadline: Instant,
    prom: &Prometheus,
    mut probe: impl FnMut() -> Option<T>,
) -> T {
    loop {
        if let Some(done) = probe() {
            return done;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}\n--- prometheus\n{}",
            prom.log()
        );
        // The poll period, not synchronisation: only the condition decides.
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Seconds since the Unix epoch, now.
fn now_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

/// The configuration of the replicas: the module the Services name, and two configured
/// targets (named as no label should break) for the `/targets` job.
fn replica_config(dir: &TempDir, fake: &FakeServer) -> std::path::PathBuf {
    dir.file(
        "agenthealth.yaml",
        &format!(
            "version: v1\ntargets:\n  - name: 'notes \"mcp\" é'\n    type: mcp\n    endpoint: {}\n  - name: down / api\n    type: http\n    endpoint: http://127.0.0.1:1/\nmodules:\n  - name: mcp-local\n    type: mcp\n    allow: [127.0.0.1/32]\n",
            fake.url_for("/t/0000/healthy")
        ),
    )
}

/// The Prometheus configuration: the deploy job (file_sd, the balancer as the Service, 5 s
/// interval, 4 s timeout) and a job of one replica's `/targets`.
fn prometheus_config(
    dir: &TempDir,
    balancer: SocketAddr,
    replica: SocketAddr,
) -> std::path::PathBuf {
    let token = dir.file("token", crate::serve::TOKEN);
    let sd = dir.0.join("services.json");
    let mut doc = probe_job_with_file_sd(&sd, &token);
    doc["global"] = json!({"scrape_interval": "5s", "evaluation_interval": "5s"});
    let job = &mut doc["scrape_configs"][0];
    job["scrape_interval"] = json!("5s");
    job["scrape_timeout"] = json!("4s");
    for rule in job["relabel_configs"].as_array_mut().into_iter().flatten() {
        if rule["target_label"] == "__address__" {
            rule["replacement"] = json!(balancer.to_string());
        }
    }
    let targets = json!({
        "job_name": "agenthealth-targets",
        "metrics_path": "/probe",
        "scrape_interval": "5s",
        "scrape_timeout": "4s",
        "authorization": {"type": "Bearer", "credentials_file": token},
        "http_sd_configs": [{
            "url": format!("http://{replica}/targets"),
            "refresh_interval": "5s",
            "authorization": {"type": "Bearer", "credentials_file": token},
        }],
        "relabel_configs": [
            {"source_labels": ["__address__"], "target_label": "__param_target"},
            {"source_labels": ["__param_target"], "target_label": "instance"},
            {"target_label": "__address__", "replacement": replica.to_string()},
        ],
    });
    if let Some(jobs) = doc["scrape_configs"].as_array_mut() {
        jobs.push(targets);
    }
    let config = dir.file(
        "prometheus.yml",
        &yaml_serde::to_string(&doc).expect("YAML"),
    );
    let ran = crate::tools::promtool(&["check", "config", &config.to_string_lossy()], "");
    assert!(
        ran.ok,
        "promtool check config:\n{}{}",
        ran.stdout, ran.stderr
    );
    config
}

/// Whether `probe_success` of every target is what its behaviour makes it, as `(right, wrong)`.
fn judged(prom: &Prometheus) -> (usize, Vec<String>) {
    let mut right = 0;
    let mut wrong = Vec::new();
    for (labels, value) in prom.query(&format!("probe_success{{job=\"{JOB}\"}}")) {
        let instance = labels["instance"].as_str().unwrap_or_default().to_string();
        let kind = instance.rsplit('/').next().unwrap_or_default();
        let want = if matches!(kind, "healthy" | "slow") {
            1.0
        } else {
            0.0
        };
        if value == want {
            right += 1;
        } else {
            wrong.push(format!("{instance}: {value}"));
        }
    }
    (right, wrong)
}

#[test]
fn a_prometheus_probes_1000_targets_through_three_replicas_and_survives_losing_one() {
    let started = Instant::now();
    let fake_config = FakeConfig {
        routes: (0..TARGETS)
            .map(|i| (format!("/t/{i:04}/{}", behaviour(i)), route(behaviour(i))))
            .collect(),
        ..FakeConfig::default()
    };
    let fake = FakeServer::start(fake_config);
    let dir = TempDir::new("fleet");
    let config = replica_config(&dir, &fake);
    let mut replicas: Vec<Serving> = (0..REPLICAS)
        .map(|_| Serving::start(&config, &["--probe-concurrency", "32"]))
        .collect();
    let addrs: Vec<SocketAddr> = replicas.iter().map(|r| r.addr).collect();
    let balancer = Balancer::start(addrs.clone());
    std::fs::write(
        dir.0.join("services.json"),
        services(fake.port()).to_string(),
    )
    .expect("sd");
    let prom_config = prometheus_config(&dir, balancer.addr, addrs[REPLICAS - 1]);
    let prom = Prometheus::start(&prom_config, &dir.0.join("data"));
    let deadline = Instant::now() + Duration::from_secs(60);
    until("/-/ready", deadline, &prom, || {
        let mut s = TcpStream::connect(prom.addr).ok()?;
        write!(s, "GET /-/ready HTTP/1.0\r\n\r\n").ok()?;
        let mut head = [0u8; 12];
        s.read_exact(&mut head).ok()?;
        (&head[8..] == b" 200").then_some(())
    });

    // Every target scraped once: exactly the 1,000 annotated Services' mcp ports.
    let count = |q: &str| prom.scalar(&format!("count({q}) or vector(0)")) as usize;
    let up = format!("up{{job=\"{JOB}\"}}");
    until("every target scraped once", deadline, &prom, || {
        (count(&up) == TARGETS).then_some(())
    });
    until("probe_success of every target", deadline, &prom, || {
        (count(&format!("probe_success{{job=\"{JOB}\"}}")) == TARGETS).then_some(())
    });
    let (right, wrong) = judged(&prom);
    assert_eq!(
        (right, &wrong[..wrong.len().min(10)]),
        (TARGETS, &[][..]),
        "probe_success by behaviour"
    );
    assert_eq!(
        count(&format!("{up} == 0")),
        0,
        "a scrape failed or timed out"
    );
    let longest = prom.scalar(&format!("max(scrape_duration_seconds{{job=\"{JOB}\"}})"));
    assert!(
        longest < 4.0,
        "the longest scrape took {longest} s of its 4 s"
    );
    println!(
        "fleet: {TARGETS} targets scraped and right after {:?}; longest scrape {longest:.2} s",
        started.elapsed()
    );

    // The configured targets, discovered through /targets (http_sd) and probed by name.
    until("the /targets job", deadline, &prom, || {
        let got = prom.query("probe_success{job=\"agenthealth-targets\"}");
        let by_name = |name: &str| {
            got.iter()
                .find(|(l, _)| l["instance"] == name)
                .map(|(_, v)| *v)
        };
        (by_name("notes \"mcp\" é") == Some(1.0) && by_name("down / api") == Some(0.0))
            .then_some(())
    });

    // One replica dies: its connections break, the balancer sends the next ones elsewhere,
    // and every target is scraped and up again through the other two; none is lost.
    let killed = replicas.remove(0);
    balancer.drop_backend(killed.addr);
    drop(killed);
    let after = now_s() + 1.0;
    let deadline = Instant::now() + Duration::from_secs(45);
    until(
        "every target scraped and up after the kill",
        deadline,
        &prom,
        || {
            let fresh = prom.scalar(&format!("min(timestamp({up}))")) > after;
            (fresh && count(&format!("{up} == 1")) == TARGETS).then_some(())
        },
    );
    assert_eq!(count(&up), TARGETS, "no target lost");
    let (right, wrong) = judged(&prom);
    assert_eq!(
        (right, &wrong[..wrong.len().min(10)]),
        (TARGETS, &[][..]),
        "after the kill"
    );
    println!(
        "fleet: recovered from a lost replica; {:?} in all",
        started.elapsed()
    );
}
