//! Name resolution: IP literals without a lookup, `localhost` without `/etc/hosts`, and the
//! dns stage timing for every real lookup.
//!
//! A static musl binary in a `scratch` image has no `/etc/hosts`; musl would then send
//! `localhost` to a nameserver that does not exist and time out. RFC 6761 §6.3 lets us
//! answer `localhost` and `*.localhost` with loopback ourselves, which is what curl and the
//! browsers do too.
//!
//! Without a resolver configuration (`/etc/resolv.conf`: an empty container root), musl and
//! glibc send every query to a nameserver on 127.0.0.1 that nothing runs and wait out their
//! whole timeout, so the check would end as "communication failed" at its deadline. A name
//! that is neither in `/etc/hosts` nor resolvable for lack of that file therefore fails at
//! once as the DNS failure it is (`dns_no_resolver`), before any query.
//!
//! With a `/probe` module's allow list, every answer is checked before it is returned (IP
//! literals, `localhost` and remembered lookups too): a refused address fails the exchange
//! as [`NetFailure::AddressRefused`](crate::result::reason::NetFailure::AddressRefused)
//! before anything is sent, and ureq connects to exactly the addresses returned, so the
//! addresses checked are the ones connected to (no second resolution).
//!
//! ureq asks the resolver before every request, even one that will reuse a pooled
//! connection. A keep-alive client (an MCP session) therefore remembers its lookups for the
//! run, so one session costs one DNS query (the first exchange has the dns stage, later ones
//! none, like their missing tcp/tls). A fresh-connection client looks up every time, so every
//! probe measures its dns stage.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex, mpsc};

use ureq::Error;
use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

use crate::contract::allow::{AllowList, Forbidden, UrlParts};
use crate::result::Stage;
use crate::runtime::sync::lock;
use crate::runtime::threads;

use super::failure::{ForbiddenAddress, NoLookup, no_lookup};
use super::stages::Recorder;

/// A remembered lookup: host, port, addresses.
type Remembered = (String, u16, ResolvedSocketAddrs);

/// The system resolver's configuration and its hosts file.
const RESOLV_CONF: &str = "/etc/resolv.conf";
const HOSTS: &str = "/etc/hosts";
/// The most of a hosts file read.
const MAX_HOSTS_BYTES: u64 = 1 << 20;

/// The agent's resolver: records the dns stage around a lookup on a thread of our own (see
/// [`lookup`]).
pub(crate) struct StageResolver {
    inner: DefaultResolver,
    rec: Recorder,
    allow: Option<Arc<AllowList>>,
    memory: Option<Mutex<Vec<Remembered>>>,
    /// Where the resolver configuration and the hosts file are (fixed paths; tests move them).
    files: (&'static str, &'static str),
}

impl StageResolver {
    /// `remember`: keep successful lookups for the agent's lifetime (keep-alive clients).
    /// `allow`: the module's allow list every answer must pass.
    pub(crate) fn new(
        rec: Recorder,
        remember: bool,
        allow: Option<Arc<AllowList>>,
    ) -> StageResolver {
        StageResolver {
            inner: DefaultResolver::default(),
            rec,
            allow,
            memory: remember.then(|| Mutex::new(Vec::new())),
            files: (RESOLV_CONF, HOSTS),
        }
    }

    /// The same, reading the resolver configuration and hosts file at other paths.
    #[cfg(test)]
    fn with_files(rec: Recorder, resolv_conf: &'static str, hosts: &'static str) -> StageResolver {
        StageResolver {
            files: (resolv_conf, hosts),
            ..StageResolver::new(rec, false, None)
        }
    }

    fn recall(&self, host: &str, port: u16) -> Option<ResolvedSocketAddrs> {
        let memory = self.memory.as_ref()?;
        let memory = lock(memory);
        memory
            .iter()
            .find(|(h, p, _)| h == host && *p == port)
            .map(|(_, _, addrs)| addrs.clone())
    }

    fn remember(&self, host: &str, port: u16, addrs: &ResolvedSocketAddrs) {
        if let Some(memory) = &self.memory {
            let mut memory = lock(memory);
            memory.retain(|(h, p, _)| !(h == host && *p == port));
            memory.push((host.to_string(), port, addrs.clone()));
        }
    }
}

impl Resolver for StageResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, Error> {
        let Some(allow) = &self.allow else {
            return self.resolve_unchecked(uri, config, timeout);
        };
        // A URL no entry could list is refused before any lookup.
        let url = UrlParts::parse(&uri.to_string())
            .ok_or_else(|| ForbiddenAddress::error(Forbidden::NotAllowed))?;
        allow.listing(&url).map_err(ForbiddenAddress::error)?;
        let addrs = self.resolve_unchecked(uri, config, timeout)?;
        let ips: Vec<IpAddr> = addrs.iter().map(SocketAddr::ip).collect();
        allow.admit(&url, &ips).map_err(ForbiddenAddress::error)?;
        Ok(addrs)
    }
}

impl StageResolver {
    fn resolve_unchecked(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, Error> {
        let host = uri.host().unwrap_or_default();
        let port = uri.port_u16().or(match uri.scheme_str() {
            Some("https") => Some(443),
            Some("http") => Some(80),
            _ => None,
        });
        let Some(port) = port else {
            // Not a URL we can resolve: let ureq say why.
            return self.inner.resolve(uri, config, timeout);
        };
        if let Some(ip) = ip_literal(host) {
            let mut out = self.empty();
            out.push(SocketAddr::new(ip, port));
            return Ok(out);
        }
        if let Some(addrs) = self.recall(host, port) {
            return Ok(addrs);
        }
        self.rec.stage_started(Stage::Dns);
        let result = if is_localhost_name(host) {
            let mut out = self.empty();
            for addr in loopback_addrs(port) {
                out.push(addr);
            }
            Ok(out)
        } else if cannot_look_up(host, self.files.0, self.files.1) {
            Err(Error::Io(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                NoLookup::NoResolver,
            )))
        } else {
            // A lookup that fails (the system resolver's "no such name", "no nameserver",
            // a name it refuses) is a DNS failure, whatever error the platform reports;
            // only running out of time, or of threads, stays what it is.
            lookup(uri, config, timeout).map_err(|e| match &e {
                Error::Timeout(_) => e,
                Error::Io(io) if no_lookup(io) == Some(&NoLookup::NoThread) => e,
                _ => Error::HostNotFound,
            })
        };
        self.rec.stage_ended(Stage::Dns, result.is_ok());
        if let Ok(addrs) = &result {
            self.remember(host, port, addrs);
        }
        result
    }
}

/// A lookup through the system resolver on a thread of our own, abandoned at `timeout`.
///
/// `getaddrinfo` cannot be interrupted, so it runs on a helper thread (as ureq's own resolver
/// does) — but one started through [`threads::spawn`], with a sized stack and without panicking
/// when no thread can be had: that is [`NoLookup::NoThread`], a local resource, not a DNS
/// failure. The thread does ureq's synchronous lookup (address family, address count).
fn lookup(uri: &Uri, config: &Config, timeout: NextTimeout) -> Result<ResolvedSocketAddrs, Error> {
    let (tx, rx) = mpsc::sync_channel(1);
    let (uri, config) = (uri.clone(), config.clone());
    threads::spawn("dns", threads::LOOKUP_STACK, move || {
        let found = DefaultResolver::default().resolve(&uri, &config, NextTimeout::default());
        let _ = tx.send(found);
    })
    .map_err(|_| Error::Io(io::Error::other(NoLookup::NoThread)))?;
    let wait = if timeout.after.is_not_happening() {
        None
    } else {
        Some(*timeout.after)
    };
    let answer = match wait {
        Some(after) => rx.recv_timeout(after).map_err(|e| match e {
            mpsc::RecvTimeoutError::Timeout => Error::Timeout(timeout.reason),
            mpsc::RecvTimeoutError::Disconnected => Error::HostNotFound,
        }),
        None => rx.recv().map_err(|_| Error::HostNotFound),
    };
    answer?
}

impl std::fmt::Debug for StageResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StageResolver")
    }
}

/// Whether a lookup of `host` cannot succeed: there is no resolver configuration at
/// `resolv_conf` and the hosts file at `hosts` does not name it.
fn cannot_look_up(host: &str, resolv_conf: &str, hosts: &str) -> bool {
    if std::path::Path::new(resolv_conf).exists() {
        return false;
    }
    let mut text = String::new();
    let read = std::fs::File::open(hosts).and_then(|f| {
        use std::io::Read;
        f.take(MAX_HOSTS_BYTES).read_to_string(&mut text)
    });
    read.is_err() || !hosts_names(&text, host)
}

/// Whether a hosts file (`address name [alias…]` per line, `#` comments) names `host`.
fn hosts_names(text: &str, host: &str) -> bool {
    let want = host.strip_suffix('.').unwrap_or(host);
    text.lines()
        .map(|line| line.split('#').next().unwrap_or_default())
        .flat_map(|line| line.split_whitespace().skip(1))
        .any(|name| {
            name.strip_suffix('.')
                .unwrap_or(name)
                .eq_ignore_ascii_case(want)
        })
}

/// The address of an IP-literal host (`127.0.0.1`, `[::1]` or `::1`), if it is one.
pub fn ip_literal(host: &str) -> Option<IpAddr> {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    bare.parse().ok()
}

/// Whether `host` is `localhost` or a name under `.localhost` (any case, trailing dot allowed).
pub fn is_localhost_name(host: &str) -> bool {
    let h = host.strip_suffix('.').unwrap_or(host);
    h.eq_ignore_ascii_case("localhost")
        || h.len() > ".localhost".len()
            && h.get(h.len() - ".localhost".len()..)
                .is_some_and(|tail| tail.eq_ignore_ascii_case(".localhost"))
}

/// What `localhost` resolves to: IPv4 loopback first (what most servers bind), then IPv6.
pub fn loopback_addrs(port: u16) -> [SocketAddr; 2] {
    [
        SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port),
        SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), port),
    ]
}

/// Whether `host` is a loopback address or a localhost name: such hosts are never proxied.
pub fn is_loopback_host(host: &str) -> bool {
    match ip_literal(host) {
        Some(IpAddr::V4(v4)) => v4.is_loopback(),
        Some(IpAddr::V6(v6)) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        None => is_localhost_name(host),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Bound;
    use crate::runtime::Attempt;
    use crate::runtime::Deadline;
    use std::time::{Duration, Instant};

    #[test]
    fn localhost_names() {
        for yes in [
            "localhost",
            "LOCALHOST",
            "localhost.",
            "api.localhost",
            "a.b.LocalHost.",
        ] {
            assert!(is_localhost_name(yes), "{yes}");
        }
        for no in [
            "localhost.example",
            "mylocalhost",
            ".localhost",
            "local",
            "",
            "xlocalhost",
        ] {
            assert!(!is_localhost_name(no), "{no}");
        }
    }

    #[test]
    fn loopback_hosts_are_recognised() {
        for yes in [
            "127.0.0.1",
            "127.3.2.1",
            "[::1]",
            "::1",
            "localhost",
            "[::ffff:127.0.0.1]",
        ] {
            assert!(is_loopback_host(yes), "{yes}");
        }
        for no in ["10.0.0.1", "[::2]", "example.com", "128.0.0.1"] {
            assert!(!is_loopback_host(no), "{no}");
        }
    }

    fn resolve(url: &str) -> (Result<Vec<SocketAddr>, Error>, crate::net::Timings) {
        resolve_with(&StageResolver::new(Recorder::new(), false, None), url)
    }

    fn resolve_with(
        r: &StageResolver,
        url: &str,
    ) -> (Result<Vec<SocketAddr>, Error>, crate::net::Timings) {
        let rec = r.rec.clone();
        rec.begin(
            &Attempt::new(Deadline::new(
                Instant::now() + Duration::from_secs(5),
                Bound::TimeoutMs,
            )),
            false,
            0,
        );
        let uri: Uri = url.parse().expect("test url");
        let out = r
            .resolve(&uri, &Config::default(), NextTimeout::default())
            .map(|a| a.iter().copied().collect());
        (
            out,
            rec.finish(super::super::stages::Ending::Failed { cut: false }),
        )
    }

    /// `localhost` never reaches the system resolver, so it works without /etc/hosts.
    #[test]
    fn localhost_resolves_to_loopback_without_a_lookup() {
        let (addrs, t) = resolve("http://localhost:8080/x");
        let addrs = addrs.expect("localhost resolves");
        assert_eq!(addrs, loopback_addrs(8080).to_vec());
        assert_eq!(
            t.dns.map(|s| s.status),
            Some(crate::contract::Status::Healthy)
        );
        let (addrs, _) = resolve("https://mcp.localhost/");
        assert_eq!(addrs.expect("resolves"), loopback_addrs(443).to_vec());
    }

    #[test]
    fn a_keep_alive_resolver_looks_up_once() {
        let remembering = StageResolver::new(Recorder::new(), true, None);
        let (_, first) = resolve_with(&remembering, "http://localhost:8080/");
        let (again, second) = resolve_with(&remembering, "http://localhost:8080/");
        assert!(first.dns.is_some());
        assert!(second.dns.is_none(), "remembered: no new lookup");
        assert_eq!(again.expect("remembered"), loopback_addrs(8080).to_vec());
        let (_, other_port) = resolve_with(&remembering, "http://localhost:9090/");
        assert!(other_port.dns.is_some());

        let forgetful = StageResolver::new(Recorder::new(), false, None);
        let _ = resolve_with(&forgetful, "http://localhost:8080/");
        let (_, second) = resolve_with(&forgetful, "http://localhost:8080/");
        assert!(second.dns.is_some(), "fresh clients measure every lookup");
    }

    /// A name the resolver refuses (a 64-character label fails in the C library, before any
    /// query is sent) is a DNS failure at the dns stage, not an "other" error.
    #[test]
    fn a_name_that_does_not_resolve_is_a_dns_failure() {
        let label = "a".repeat(64);
        let (addrs, t) = resolve(&format!("http://{label}.invalid:8080/"));
        let err = addrs.expect_err("does not resolve");
        assert!(matches!(err, Error::HostNotFound), "{err:?}");
        assert_eq!(crate::net::classify(&err, false).as_word(), "dns");
        assert_eq!(
            t.dns.map(|s| s.status),
            Some(crate::contract::Status::Unreachable)
        );
    }

    /// Without a resolver configuration, a name the hosts file does not list fails at once as
    /// `dns_no_resolver` (musl and glibc would wait out their timeout for a nameserver on
    /// 127.0.0.1); a name it lists is still looked up.
    #[test]
    fn without_a_resolver_configuration_a_name_fails_at_once() {
        let dir = std::env::temp_dir().join(format!("ah-resolv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let hosts = dir.join("hosts");
        std::fs::write(
            &hosts,
            "# comment\n127.0.0.1 listed.test alias.test # trailing\n",
        )
        .expect("hosts");
        let hosts: &'static str = Box::leak(hosts.to_string_lossy().into_owned().into_boxed_str());
        let missing: &'static str = Box::leak(
            dir.join("resolv.conf")
                .to_string_lossy()
                .into_owned()
                .into_boxed_str(),
        );
        let r = StageResolver::with_files(Recorder::new(), missing, hosts);
        let started = Instant::now();
        let (addrs, t) = resolve_with(&r, "http://mcp.example.com:8080/");
        let err = addrs.expect_err("no resolver");
        assert!(started.elapsed() < Duration::from_millis(100), "at once");
        assert_eq!(
            crate::net::classify(&err, false).as_word(),
            "dns_no_resolver"
        );
        assert_eq!(
            t.dns.map(|s| s.status),
            Some(crate::contract::Status::Unreachable)
        );
        assert!(!cannot_look_up("listed.test", missing, hosts));
        assert!(!cannot_look_up("ALIAS.test.", missing, hosts));
        assert!(cannot_look_up("comment", missing, hosts));
        assert!(cannot_look_up("listed.test", missing, "/nonexistent/hosts"));
        // With a configuration, the system resolver decides.
        assert!(!cannot_look_up("mcp.example.com", hosts, hosts));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn ip_literals_have_no_dns_stage() {
        let (addrs, t) = resolve("http://127.0.0.1:9/");
        assert_eq!(
            addrs.expect("literal"),
            vec!["127.0.0.1:9".parse::<SocketAddr>().expect("addr")]
        );
        assert!(t.dns.is_none());
        let (addrs, t) = resolve("http://[::1]/");
        assert_eq!(
            addrs.expect("literal"),
            vec!["[::1]:80".parse::<SocketAddr>().expect("addr")]
        );
        assert!(t.dns.is_none());
    }
}
