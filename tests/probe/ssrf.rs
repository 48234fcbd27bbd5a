//! docs/deployment.md, "Modules" (`allow`): a module's allow list against SSRF — every class of address refused by default, a host
//! outside the list, and a redirect toward the metadata address. Each runs in a private
//! network namespace (`crate::netns`) whose loopback also holds the cloud metadata addresses
//! (169.254.169.254, fd00:ec2::254), a link-local one and two private ones, each with a
//! listener: a refused probe is 403 (the redirect: 200 with probe_success 0) and no
//! connection reached any of them — their non-blocking `accept` finds nothing — and the
//! namespace's TCP active opens grew by exactly one: the test's own request to `serve`.

use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener};

use super::{config, probe, sample};
use crate::netns;
use crate::serve::Serving;
use crate::util::TempDir;
use agenthealth_testkit::fake_mcp::{FakeConfig, FakeServer};
use agenthealth_testkit::http_server::{Reply, Server};

/// Inside the namespace: the addresses, and `serve` with module `m` allowing `allow` and
/// module `names` allowing only names and URL prefixes (no address entry: an unlisted name
/// is refused without a lookup).
fn serving(allow: &str) -> (Serving, TempDir) {
    netns::inside();
    for addr in [
        "169.254.169.254/32",
        "169.254.1.1/32",
        "10.20.0.1/32",
        "10.20.0.2/32",
    ] {
        netns::ip(&["addr", "add", addr, "dev", "lo"]);
    }
    netns::ip(&[
        "-6",
        "addr",
        "add",
        "fd00:ec2::254/128",
        "dev",
        "lo",
        "nodad",
    ]);
    let dir = TempDir::new("probe-ssrf");
    let file = config(
        &dir,
        &format!(
            "modules:\n  - name: m\n    type: mcp\n    timeout_ms: 2000\n    allow: {allow}\n  - name: names\n    type: mcp\n    allow: ['https://tools.example/mcp', '*.agents.svc']\n"
        ),
    );
    (Serving::start(&file, &[]), dir)
}

/// A listener nothing may reach.
fn bait(addr: &str) -> TcpListener {
    let l = TcpListener::bind(addr).unwrap_or_else(|e| panic!("bind {addr}: {e}"));
    l.set_nonblocking(true).expect("non-blocking");
    l
}

fn untouched(listener: &TcpListener) {
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("{:?} was contacted: {other:?}", listener.local_addr()),
    }
}

/// TCP connections this namespace opened (`ActiveOpens` of /proc/net/snmp).
fn active_opens() -> u64 {
    let snmp = std::fs::read_to_string("/proc/net/snmp").expect("/proc/net/snmp");
    let mut tcp = snmp.lines().filter(|l| l.starts_with("Tcp:"));
    let (names, values) = (tcp.next().unwrap_or(""), tcp.next().unwrap_or(""));
    let at = names.split_whitespace().position(|n| n == "ActiveOpens");
    at.and_then(|i| values.split_whitespace().nth(i))
        .and_then(|v| v.parse().ok())
        .expect("ActiveOpens")
}

/// Probes `url` through module `m` and asserts a 403 for `class` that reached nothing: no
/// bait accepted a connection, and the only TCP connection opened was the request itself.
fn refused(serving: &Serving, url: &str, class: &str, baits: &[&TcpListener]) {
    refused_by(serving, "m", url, class, baits);
}

/// [`refused`] through `module`.
fn refused_by(serving: &Serving, module: &str, url: &str, class: &str, baits: &[&TcpListener]) {
    let before = active_opens();
    let a = probe(serving, &format!("/probe?module={module}&target={url}"), "");
    assert_eq!(a.status, 403, "{url}: {}", a.body);
    assert_eq!(a.json()["error"], "target_refused", "{url}");
    assert_eq!(a.json()["refused"], class, "{url}");
    assert!(!a.body.contains(url), "the URL is never echoed");
    assert_eq!(
        active_opens() - before,
        1,
        "{url}: only the request to serve"
    );
    for bait in baits {
        untouched(bait);
    }
}

#[test]
fn loopback_is_refused_and_never_contacted() {
    netns::run_inside("probe::ssrf::loopback_inside");
}

#[test]
#[ignore = "runs inside the network namespace of loopback_is_refused_and_never_contacted"]
fn loopback_inside() {
    let (serving, _dir) = serving("['10.20.0.0/24', '*.localhost']");
    let lo = bait("127.0.0.1:0");
    let port = lo.local_addr().map(|a| a.port()).unwrap_or(0);
    for url in [
        format!("http://127.0.0.1:{port}/mcp"),
        format!("http://127.9.9.9:{port}/mcp"),
        format!("http://[::ffff:127.0.0.1]:{port}/mcp"),
        // Names: the resolver's answer is what is refused (localhost is no listed name;
        // evil.localhost is, and a name entry never unlocks loopback).
        format!("http://localhost:{port}/mcp"),
        format!("http://evil.localhost:{port}/mcp"),
        format!("http://2130706433:{port}/mcp"),
    ] {
        let class = if url.contains("2130706433") {
            "ambiguous_address"
        } else {
            "loopback"
        };
        refused(&serving, &url, class, &[&lo]);
    }
}

#[test]
fn link_local_is_refused_and_never_contacted() {
    netns::run_inside("probe::ssrf::link_local_inside");
}

#[test]
#[ignore = "runs inside the network namespace of link_local_is_refused_and_never_contacted"]
fn link_local_inside() {
    let (serving, _dir) = serving("['10.20.0.0/24']");
    let ll = bait("169.254.1.1:0");
    let port = ll.local_addr().map(|a| a.port()).unwrap_or(0);
    refused(
        &serving,
        &format!("http://169.254.1.1:{port}/mcp"),
        "link_local",
        &[&ll],
    );
}

#[test]
fn metadata_addresses_are_refused_and_never_contacted() {
    netns::run_inside("probe::ssrf::metadata_inside");
}

#[test]
#[ignore = "runs inside the network namespace of metadata_addresses_are_refused_and_never_contacted"]
fn metadata_inside() {
    let (serving, _dir) = serving("['10.20.0.0/24', '*.internal']");
    let v4 = bait("169.254.169.254:80");
    let v6 = bait("[fd00:ec2::254]:80");
    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/latest/meta-data/",
        "http://[::ffff:169.254.169.254]/",
        "http://metadata.google.internal/computeMetadata/v1/",
    ] {
        refused(&serving, url, "metadata", &[&v4, &v6]);
    }
}

#[test]
fn a_host_outside_the_allow_list_is_refused_and_never_contacted() {
    netns::run_inside("probe::ssrf::outside_inside");
}

#[test]
#[ignore = "runs inside the network namespace of a_host_outside_the_allow_list_is_refused_and_never_contacted"]
fn outside_inside() {
    let (serving, _dir) = serving("['10.20.0.1/32', 'https://tools.example/mcp']");
    let other = bait("10.20.0.2:0");
    let port = other.local_addr().map(|a| a.port()).unwrap_or(0);
    refused(
        &serving,
        &format!("http://10.20.0.2:{port}/mcp"),
        "not_allowed",
        &[&other],
    );
    for url in [
        format!("http://10.20.0.2:{port}/mcp"),
        "http://tools.example/mcp".into(),
        "https://tools.example/other".into(),
        "https://tools.example:8443/mcp".into(),
        format!("http://elsewhere.example:{port}/mcp"),
        "http://agents.svc/mcp".into(),
    ] {
        refused_by(&serving, "names", &url, "not_allowed", &[&other]);
    }
    // What the list names is probed: a healthy fake MCP server on the allowed address.
    let bind = SocketAddr::from(([10, 20, 0, 1], 0));
    let allowed = FakeServer::try_start_at(FakeConfig::default(), bind, None).expect("listen");
    let url = format!("http://10.20.0.1:{}/mcp", allowed.port());
    let a = probe(&serving, &format!("/probe?module=m&target={url}"), "");
    assert_eq!(
        (a.status, sample(&a.body, "probe_success")),
        (200, Some(1.0)),
        "{}",
        a.body
    );
    untouched(&other);
}

#[test]
fn a_redirect_toward_the_metadata_address_is_not_followed() {
    netns::run_inside("probe::ssrf::redirect_inside");
}

#[test]
#[ignore = "runs inside the network namespace of a_redirect_toward_the_metadata_address_is_not_followed"]
fn redirect_inside() {
    let (serving, _dir) = serving("['10.20.0.1/32']");
    let v4 = bait("169.254.169.254:80");
    let bind = SocketAddr::from(([10, 20, 0, 1], 0));
    let redirecting = Server::start_at(bind, |_| {
        Reply::status(307).header("location", "http://169.254.169.254/latest/meta-data/")
    })
    .expect("listen");
    let url = redirecting.url("/mcp");
    let a = probe(&serving, &format!("/probe?module=m&target={url}"), "");
    assert_eq!(
        a.status, 200,
        "the target was reached; its redirect was not followed"
    );
    assert_eq!(sample(&a.body, "probe_success"), Some(0.0), "{}", a.body);
    assert!(redirecting.connections() > 0);
    untouched(&v4);
}
