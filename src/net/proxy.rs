//! Proxies from the environment, by curl's rules (not ureq's `Proxy::try_from_env`, which
//! takes the first of `ALL_PROXY`/`HTTPS_PROXY`/`HTTP_PROXY` whatever the target's scheme).
//!
//! What curl does, and so what we do:
//! * `http://` targets use `http_proxy`, **lowercase only**: curl ignores `HTTP_PROXY`,
//!   because CGI servers put a client's `Proxy:` request header into `HTTP_PROXY`
//!   ("httpoxy").
//! * `https://` targets use `https_proxy`, else `HTTPS_PROXY`.
//! * Either falls back to `all_proxy`, else `ALL_PROXY`.
//! * `no_proxy`, else `NO_PROXY`: entries separated by commas or blanks; `*` matches every
//!   host; a name matches itself and every name under it (`example.com` and `.example.com`
//!   both match `example.com` and `www.example.com`, never `notexample.com`; a leading `*.` is
//!   read like a leading dot); an IP address matches exactly, or as a CIDR block
//!   (`10.0.0.0/8`); IPv6 addresses are written without brackets; a `:port` on a name entry is
//!   ignored.
//! * Empty values count as unset. A proxy value without a scheme means `http://`.
//!
//! Ours on top: loopback (`127.0.0.0/8`, `::1`, `localhost`, `*.localhost`) is never
//! proxied. Only `http://` and `https://` proxies are supported (ureq is built without SOCKS);
//! any other scheme is a configuration error rather than a silent direct connection. ureq
//! tunnels every proxied request with `CONNECT`, plain http included, so a proxy that only
//! forwards absolute-form `GET http://…` requests cannot be used.

use std::net::IpAddr;

use super::endpoint::Endpoint;
use super::resolve::{ip_literal, is_loopback_host};

/// A proxy environment variable and its value. The value may hold proxy credentials: it is
/// never printed.
#[derive(Clone)]
pub struct ProxySetting {
    /// The variable it came from (`https_proxy`, `ALL_PROXY`, …).
    pub variable: &'static str,
    value: String,
}

impl std::fmt::Debug for ProxySetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxySetting")
            .field("variable", &self.variable)
            .finish_non_exhaustive()
    }
}

/// Why a proxy variable cannot be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProxyError {
    /// A scheme other than `http`/`https` (e.g. `socks5://`).
    Unsupported(&'static str),
    /// Not a proxy URL.
    Invalid(&'static str),
}

impl ProxyError {
    /// The variable at fault.
    pub fn variable(self) -> &'static str {
        match self {
            ProxyError::Unsupported(v) | ProxyError::Invalid(v) => v,
        }
    }

    /// A fixed word for evidence.
    pub fn as_word(self) -> &'static str {
        match self {
            ProxyError::Unsupported(_) => "unsupported_scheme",
            ProxyError::Invalid(_) => "invalid",
        }
    }
}

/// The proxy-related environment, read once.
#[derive(Clone, Debug, Default)]
pub struct ProxyEnv {
    http: Option<ProxySetting>,
    https: Option<ProxySetting>,
    all: Option<ProxySetting>,
    no_proxy: NoProxy,
}

impl ProxyEnv {
    /// Reads the process environment.
    pub fn from_env() -> ProxyEnv {
        ProxyEnv::from_lookup(|k| std::env::var(k).ok())
    }

    /// Reads the variables through `get` (for tests).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> ProxyEnv {
        let first = |names: &[&'static str]| {
            names.iter().find_map(|&variable| {
                get(variable)
                    .map(|v| v.trim().to_string())
                    .filter(|v| !v.is_empty())
                    .map(|value| ProxySetting { variable, value })
            })
        };
        ProxyEnv {
            http: first(&["http_proxy"]),
            https: first(&["https_proxy", "HTTPS_PROXY"]),
            all: first(&["all_proxy", "ALL_PROXY"]),
            no_proxy: ["no_proxy", "NO_PROXY"]
                .iter()
                .find_map(|k| get(k))
                .map(|v| NoProxy::parse(&v))
                .unwrap_or_default(),
        }
    }

    /// The setting that applies to a target with this scheme and host, if any.
    pub fn select(&self, https: bool, host: &str) -> Option<&ProxySetting> {
        if is_loopback_host(host) || self.no_proxy.matches(host) {
            return None;
        }
        let specific = if https { &self.https } else { &self.http };
        specific.as_ref().or(self.all.as_ref())
    }

    /// The proxy to use for `endpoint`: `Ok(None)` for a direct connection.
    pub fn proxy_for(&self, endpoint: &Endpoint) -> Result<Option<ureq::Proxy>, ProxyError> {
        match self.select(endpoint.is_https(), endpoint.host()) {
            None => Ok(None),
            Some(setting) => setting.to_proxy().map(Some),
        }
    }
}

impl ProxySetting {
    /// The ureq proxy for this setting.
    pub fn to_proxy(&self) -> Result<ureq::Proxy, ProxyError> {
        let url = if self.value.contains("://") {
            self.value.clone()
        } else {
            format!("http://{}", self.value)
        };
        let scheme = url.split("://").next().unwrap_or_default();
        if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
            return Err(ProxyError::Unsupported(self.variable));
        }
        ureq::Proxy::new(&url).map_err(|_| ProxyError::Invalid(self.variable))
    }
}

/// A parsed `no_proxy` list.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NoProxy {
    all: bool,
    entries: Vec<NoProxyEntry>,
}

#[derive(Clone, Debug, PartialEq)]
enum NoProxyEntry {
    /// A lower-case name without leading or trailing dots.
    Name(String),
    /// An address and how many leading bits must match.
    Net(IpAddr, u8),
}

impl NoProxy {
    /// Parses a `no_proxy` value.
    pub fn parse(list: &str) -> NoProxy {
        let mut out = NoProxy::default();
        for raw in list.split(|c: char| c == ',' || c.is_whitespace()) {
            let entry = raw.trim();
            if entry.is_empty() {
                continue;
            }
            if entry == "*" {
                out.all = true;
                continue;
            }
            if let Some(net) = parse_net(entry) {
                out.entries.push(net);
                continue;
            }
            let name = entry.strip_prefix("*.").unwrap_or(entry);
            let name = name.trim_start_matches('.').trim_end_matches('.');
            // A port on a name entry is ignored (IPv6 addresses were taken above).
            let name = name.split(':').next().unwrap_or_default();
            if !name.is_empty() {
                out.entries
                    .push(NoProxyEntry::Name(name.to_ascii_lowercase()));
            }
        }
        out
    }

    /// Whether `host` (a name or an IP literal, brackets allowed) bypasses the proxy.
    pub fn matches(&self, host: &str) -> bool {
        if self.all {
            return true;
        }
        if let Some(ip) = ip_literal(host) {
            return self.entries.iter().any(|e| match e {
                NoProxyEntry::Net(net, bits) => in_net(ip, *net, *bits),
                NoProxyEntry::Name(_) => false,
            });
        }
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.entries.iter().any(|e| match e {
            NoProxyEntry::Name(name) => {
                host == *name
                    || host
                        .strip_suffix(name.as_str())
                        .is_some_and(|rest| rest.ends_with('.'))
            }
            NoProxyEntry::Net(..) => false,
        })
    }
}

fn parse_net(entry: &str) -> Option<NoProxyEntry> {
    let (addr, bits) = match entry.split_once('/') {
        Some((a, b)) => (a, Some(b.parse::<u8>().ok()?)),
        None => (entry, None),
    };
    let ip = ip_literal(addr)?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let bits = bits.unwrap_or(max);
    (bits <= max).then_some(NoProxyEntry::Net(ip, bits))
}

fn in_net(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> ProxyEnv {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ProxyEnv::from_lookup(move |k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
    }

    fn chosen(e: &ProxyEnv, https: bool, host: &str) -> Option<&'static str> {
        e.select(https, host).map(|s| s.variable)
    }

    #[test]
    fn scheme_specific_variables_follow_curl() {
        let e = env(&[("HTTP_PROXY", "http://upper:1"), ("HTTPS_PROXY", "p:2")]);
        assert_eq!(
            chosen(&e, false, "example.com"),
            None,
            "HTTP_PROXY is ignored"
        );
        assert_eq!(chosen(&e, true, "example.com"), Some("HTTPS_PROXY"));

        let e = env(&[
            ("http_proxy", "p:1"),
            ("https_proxy", "p:2"),
            ("HTTPS_PROXY", "p:3"),
        ]);
        assert_eq!(chosen(&e, false, "example.com"), Some("http_proxy"));
        assert_eq!(chosen(&e, true, "example.com"), Some("https_proxy"));

        let e = env(&[("ALL_PROXY", "p:1"), ("all_proxy", "")]);
        assert_eq!(chosen(&e, false, "example.com"), Some("ALL_PROXY"));
        assert_eq!(chosen(&e, true, "example.com"), Some("ALL_PROXY"));
        let e = env(&[("https_proxy", "p:2"), ("all_proxy", "p:1")]);
        assert_eq!(chosen(&e, false, "example.com"), Some("all_proxy"));
        assert_eq!(chosen(&e, true, "example.com"), Some("https_proxy"));
    }

    #[test]
    fn loopback_is_never_proxied() {
        let e = env(&[("http_proxy", "p:1"), ("https_proxy", "p:2")]);
        for host in [
            "localhost",
            "api.localhost",
            "127.0.0.1",
            "127.9.9.9",
            "[::1]",
        ] {
            assert_eq!(chosen(&e, false, host), None, "{host}");
            assert_eq!(chosen(&e, true, host), None, "{host}");
        }
        assert_eq!(chosen(&e, false, "10.1.2.3"), Some("http_proxy"));
    }

    #[test]
    fn no_proxy_matching() {
        let n = NoProxy::parse(
            " example.com, .corp.test ,*.svc.local internal:8080\tfd00::/8,10.0.0.0/8,192.168.1.7",
        );
        for yes in [
            "example.com",
            "www.example.com",
            "EXAMPLE.COM.",
            "corp.test",
            "a.b.corp.test",
            "x.svc.local",
            "internal",
            "10.200.3.4",
            "192.168.1.7",
            "[fd12::1]",
        ] {
            assert!(n.matches(yes), "{yes} should bypass");
        }
        for no in [
            "notexample.com",
            "example.com.evil",
            "corp.testing",
            "192.168.1.8",
            "11.0.0.1",
            "[fe80::1]",
            "internal.example",
        ] {
            assert!(!n.matches(no), "{no} should be proxied");
        }
        assert!(NoProxy::parse("*").matches("anything.example"));
        assert!(NoProxy::parse("a.test,*").matches("b.test"));
        assert!(!NoProxy::parse("").matches("a.test"));
        assert!(NoProxy::parse("::1,2001:db8::5").matches("[2001:db8::5]"));

        let e = env(&[("https_proxy", "p:2"), ("NO_PROXY", "example.com")]);
        assert_eq!(chosen(&e, true, "api.example.com"), None);
        assert_eq!(chosen(&e, true, "example.org"), Some("https_proxy"));
        let e = env(&[
            ("https_proxy", "p:2"),
            ("no_proxy", "example.org"),
            ("NO_PROXY", "example.com"),
        ]);
        assert_eq!(
            chosen(&e, true, "example.com"),
            Some("https_proxy"),
            "lowercase no_proxy wins"
        );
    }

    #[test]
    fn proxy_urls() {
        let ok = |v: &str| {
            ProxySetting {
                variable: "https_proxy",
                value: v.into(),
            }
            .to_proxy()
        };
        assert!(ok("proxy.corp:3128").is_ok());
        assert!(ok("http://user:pw@proxy.corp:3128").is_ok());
        assert!(ok("HTTPS://proxy.corp").is_ok());
        assert_eq!(
            ok("socks5://proxy:1080").err(),
            Some(ProxyError::Unsupported("https_proxy"))
        );
        assert!(
            format!("{:?}", env(&[("https_proxy", "http://u:secret@p")]).https)
                .find("secret")
                .is_none()
        );
    }
}
