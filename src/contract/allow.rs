//! What a `/probe` module may reach: its `allow` list, and the addresses refused unless an
//! entry names them. The one definition the configuration reads (`modules[i].allow`), the
//! network layer enforces (before every lookup's answer is used and before every connect)
//! and `serve` answers by (403), so all three mean the same by it.
//!
//! An entry is a host name (`mcp.example`, exact, any case, a trailing dot ignored), a domain
//! (`*.agents.svc`: any name under it, not the domain itself), an IP address or CIDR
//! (`10.0.0.0/8`, `fd00::/8`), or a URL prefix (`https://mcp.example:8443/tools`: scheme,
//! host and port exact, the path at a `/` boundary).
//!
//! A target is admitted when all of these hold ([`AllowList::admit`]):
//! 1. its host is no number that the C library would read as an address but that is no
//!    canonical dotted quad (`2130706433`, `127.1`, `0x7f.1`, `0177.0.0.1`: all 127.0.0.1);
//! 2. an entry lists it: a host, domain or URL-prefix entry matches the URL; or it is an IP
//!    literal inside an address entry; or a name all of whose addresses are inside address
//!    entries;
//! 3. none of the addresses it resolves to is of a class refused by default ([`Forbidden`]:
//!    unspecified, loopback, link-local, cloud metadata, multicast), unless an address entry
//!    contains that address. A name entry never unlocks them: DNS pointing a listed name at
//!    the metadata address is still refused. IPv4 carried in IPv6 (mapped, compatible, NAT64,
//!    6to4) is judged as the IPv4 address it carries.
//!
//! One refused address refuses the target, whatever the others are.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why a target is refused: the word of the 403 and of the `address_refused` evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forbidden {
    /// No entry lists it.
    NotAllowed,
    /// A number the C library reads as an address that is no canonical dotted quad.
    AmbiguousAddress,
    /// `0.0.0.0/8` or `::` (Linux connects them to the local host).
    Unspecified,
    /// `127.0.0.0/8` or `::1`.
    Loopback,
    /// A cloud provider's instance metadata service.
    Metadata,
    /// `169.254.0.0/16` or `fe80::/10`.
    LinkLocal,
    /// Multicast or the IPv4 broadcast address.
    Multicast,
}

impl Forbidden {
    /// The word.
    pub fn as_str(self) -> &'static str {
        match self {
            Forbidden::NotAllowed => "not_allowed",
            Forbidden::AmbiguousAddress => "ambiguous_address",
            Forbidden::Unspecified => "unspecified",
            Forbidden::Loopback => "loopback",
            Forbidden::Metadata => "metadata",
            Forbidden::LinkLocal => "link_local",
            Forbidden::Multicast => "multicast",
        }
    }
}

/// The instance metadata services of the clouds, by address: AWS, GCP, Azure, Oracle,
/// DigitalOcean and OpenStack (169.254.169.254), AWS ECS task credentials (169.254.170.2),
/// EKS Pod Identity (169.254.170.23), AWS over IPv6 (fd00:ec2::254, fd00:ec2::23), Azure's
/// wire server (168.63.129.16), Alibaba Cloud (100.100.100.200). Written once, here.
const METADATA: [IpAddr; 8] = [
    IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)),
    IpAddr::V4(Ipv4Addr::new(169, 254, 170, 2)),
    IpAddr::V4(Ipv4Addr::new(169, 254, 170, 23)),
    IpAddr::V4(Ipv4Addr::new(168, 63, 129, 16)),
    IpAddr::V4(Ipv4Addr::new(100, 100, 100, 200)),
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)),
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23)),
    // GCP's metadata server also answers on this IPv6 address.
    IpAddr::V6(Ipv6Addr::new(0xfd20, 0xce, 0, 0, 0, 0, 0, 0x254)),
];

/// The names the metadata services answer to, refused unless a host entry names them.
const METADATA_NAMES: [&str; 3] = ["metadata.google.internal", "metadata", "instance-data"];

/// The class of an address refused by default, if it is one.
pub fn refused_class(ip: IpAddr) -> Option<Forbidden> {
    let ip = embedded_v4(ip).map_or(ip, IpAddr::V4);
    if METADATA.contains(&ip) {
        return Some(Forbidden::Metadata);
    }
    match ip {
        IpAddr::V4(v4) => {
            let [a, ..] = v4.octets();
            if a == 0 {
                Some(Forbidden::Unspecified)
            } else if v4.is_loopback() {
                Some(Forbidden::Loopback)
            } else if v4.is_link_local() {
                Some(Forbidden::LinkLocal)
            } else if v4.is_multicast() || v4.is_broadcast() {
                Some(Forbidden::Multicast)
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            if v6.is_unspecified() {
                Some(Forbidden::Unspecified)
            } else if v6.is_loopback() {
                Some(Forbidden::Loopback)
            } else if first & 0xffc0 == 0xfe80 {
                Some(Forbidden::LinkLocal)
            } else if v6.is_multicast() {
                Some(Forbidden::Multicast)
            } else {
                None
            }
        }
    }
}

/// The IPv4 address an IPv6 one carries: mapped (`::ffff:a.b.c.d`), compatible
/// (`::a.b.c.d`, not `::` nor `::1`), NAT64 (`64:ff9b::a.b.c.d`) or 6to4 (`2002:AABB:CCDD::`).
fn embedded_v4(ip: IpAddr) -> Option<Ipv4Addr> {
    let IpAddr::V6(v6) = ip else {
        return None;
    };
    let s = v6.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        [0, 0, 0, 0, 0, 0xffff, ..] => Some(low),
        [0, 0, 0, 0, 0, 0, ..] if !v6.is_unspecified() && !v6.is_loopback() => Some(low),
        [0x64, 0xff9b, 0, 0, 0, 0, ..] => Some(low),
        [0x2002, hi, lo, ..] => Some(Ipv4Addr::new(
            (hi >> 8) as u8,
            hi as u8,
            (lo >> 8) as u8,
            lo as u8,
        )),
        _ => None,
    }
}

/// One entry of an `allow` list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllowEntry {
    /// A host name, lower case, without a trailing dot.
    Host(String),
    /// A domain (`*.agents.svc` is `.agents.svc`): any name under it.
    Domain(String),
    /// An address and prefix length.
    Net(IpAddr, u8),
    /// A URL prefix.
    Prefix(UrlParts),
}

/// What the allow list reads of a URL: scheme, host (lower case, no brackets, no trailing
/// dot), port (the scheme's when none is given) and path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlParts {
    /// Whether the scheme is `https`.
    pub https: bool,
    /// The host.
    pub host: String,
    /// The port.
    pub port: u16,
    /// The path (`/` when empty), without query or fragment.
    pub path: String,
}

impl UrlParts {
    /// An absolute `http(s)` URL without userinfo; `None` for anything else.
    pub fn parse(url: &str) -> Option<UrlParts> {
        let (scheme, rest) = url.split_once("://")?;
        let https = match scheme.to_ascii_lowercase().as_str() {
            "https" => true,
            "http" => false,
            _ => return None,
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        if authority.contains('@') {
            return None;
        }
        let (host, port) = match authority.strip_prefix('[') {
            Some(v6) => {
                let (inside, after) = v6.split_once(']')?;
                (inside, after.strip_prefix(':'))
            }
            None => match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            },
        };
        let port = match port {
            None | Some("") => {
                if https {
                    443
                } else {
                    80
                }
            }
            Some(p) => p.parse().ok()?,
        };
        let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
        if host.is_empty() {
            return None;
        }
        let path = tail.split(['?', '#']).next().unwrap_or_default();
        let path = if path.is_empty() { "/" } else { path };
        Some(UrlParts {
            https,
            host,
            port,
            path: path.to_string(),
        })
    }
}

impl AllowEntry {
    /// Reads one entry; `None` when it is none of the four forms.
    pub fn parse(entry: &str) -> Option<AllowEntry> {
        let entry = entry.trim();
        if entry.contains("://") {
            let url = UrlParts::parse(entry)?;
            return (!entry.contains(['?', '#'])).then_some(AllowEntry::Prefix(url));
        }
        if let Some((ip, bits)) = entry.split_once('/') {
            let ip: IpAddr = ip.parse().ok()?;
            let bits: u8 = bits.parse().ok()?;
            return (bits <= max_bits(ip)).then_some(AllowEntry::Net(ip, bits));
        }
        if let Ok(ip) = entry.parse::<IpAddr>() {
            return Some(AllowEntry::Net(ip, max_bits(ip)));
        }
        let (domain, name) = match entry.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, entry),
        };
        let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
        if !is_host_name(&name) || numeric(&name) {
            return None;
        }
        Some(match domain {
            true => AllowEntry::Domain(format!(".{name}")),
            false => AllowEntry::Host(name),
        })
    }

    fn lists_name(&self, url: &UrlParts) -> bool {
        match self {
            AllowEntry::Host(h) => *h == url.host,
            AllowEntry::Domain(d) => url.host.len() > d.len() && url.host.ends_with(d.as_str()),
            AllowEntry::Prefix(p) => {
                p.https == url.https
                    && p.host == url.host
                    && p.port == url.port
                    && under(&url.path, &p.path)
            }
            AllowEntry::Net(..) => false,
        }
    }

    fn contains(&self, ip: IpAddr) -> bool {
        let AllowEntry::Net(net, bits) = self else {
            return false;
        };
        let (net, ip) = match (net, embedded_v4(ip).map_or(ip, IpAddr::V4)) {
            (IpAddr::V4(n), IpAddr::V4(i)) => {
                (u128::from(n.to_bits()) << 96, u128::from(i.to_bits()) << 96)
            }
            (IpAddr::V6(n), IpAddr::V6(i)) => (n.to_bits(), i.to_bits()),
            _ => return false,
        };
        let mask = u128::MAX.checked_shl(128 - u32::from(*bits)).unwrap_or(0);
        net & mask == ip & mask
    }
}

fn max_bits(ip: IpAddr) -> u8 {
    if ip.is_ipv4() { 32 } else { 128 }
}

/// Whether `path` is `prefix` or below it at a `/` boundary.
fn under(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| prefix.ends_with('/') || rest.is_empty() || rest.starts_with('/'))
}

/// Letters, digits and hyphens in non-empty dot-separated labels of at most 63 characters.
fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// Whether the C library would read `host` as an IPv4 address: one to four parts, each
/// decimal, octal (leading 0) or hexadecimal (`0x`).
fn numeric(host: &str) -> bool {
    let parts: Vec<&str> = host.split('.').collect();
    parts.len() <= 4
        && parts.iter().all(|p| match p.strip_prefix("0x") {
            Some(hex) => hex.bytes().all(|b| b.is_ascii_hexdigit()),
            None => !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()),
        })
}

/// How a URL is listed, before any lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listed {
    /// By a host, domain or URL-prefix entry, or as an IP literal inside an address entry:
    /// only the refused classes remain to be checked, address by address.
    Yes,
    /// A name no name entry lists: admitted only if every address it resolves to is inside
    /// an address entry.
    ByAddressOnly,
}

/// A module's `allow` list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowList(pub Vec<AllowEntry>);

impl AllowList {
    /// The URL's shape and listing, before any lookup: an ambiguous number, a metadata name
    /// no host entry names, and a URL no entry could list are refused here.
    pub fn listing(&self, url: &UrlParts) -> Result<Listed, Forbidden> {
        if let Ok(ip) = url.host.parse::<IpAddr>() {
            return match self.0.iter().any(|e| e.contains(ip) || e.lists_name(url)) {
                true => Ok(Listed::Yes),
                false => Err(refused_class(ip).unwrap_or(Forbidden::NotAllowed)),
            };
        }
        if numeric(&url.host) {
            return Err(Forbidden::AmbiguousAddress);
        }
        let named = |e: &AllowEntry| matches!(e, AllowEntry::Host(h) if *h == url.host);
        if METADATA_NAMES.contains(&url.host.as_str()) && !self.0.iter().any(named) {
            return Err(Forbidden::Metadata);
        }
        if self.0.iter().any(|e| e.lists_name(url)) {
            Ok(Listed::Yes)
        } else if self.0.iter().any(|e| matches!(e, AllowEntry::Net(..))) {
            Ok(Listed::ByAddressOnly)
        } else {
            Err(Forbidden::NotAllowed)
        }
    }

    /// Whether `ip` may be connected to: outside the refused classes, or inside an address
    /// entry (the check before every connect).
    pub fn admit_address(&self, ip: IpAddr) -> Result<(), Forbidden> {
        match refused_class(ip) {
            Some(class) if !self.0.iter().any(|e| e.contains(ip)) => Err(class),
            _ => Ok(()),
        }
    }

    /// The whole admission of a URL that resolved to `addrs`.
    pub fn admit(&self, url: &UrlParts, addrs: &[IpAddr]) -> Result<(), Forbidden> {
        let listed = self.listing(url)?;
        for &ip in addrs {
            self.admit_address(ip)?;
            if listed == Listed::ByAddressOnly && !self.0.iter().any(|e| e.contains(ip)) {
                return Err(Forbidden::NotAllowed);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str]) -> AllowList {
        AllowList(
            entries
                .iter()
                .map(|e| AllowEntry::parse(e).unwrap_or_else(|| panic!("{e}")))
                .collect(),
        )
    }

    fn url(u: &str) -> UrlParts {
        UrlParts::parse(u).unwrap_or_else(|| panic!("{u}"))
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or_else(|_| panic!("{s}"))
    }

    #[test]
    fn entries_have_four_forms() {
        assert_eq!(
            AllowEntry::parse("MCP.Example."),
            Some(AllowEntry::Host("mcp.example".into()))
        );
        assert_eq!(
            AllowEntry::parse("*.agents.svc"),
            Some(AllowEntry::Domain(".agents.svc".into()))
        );
        assert_eq!(
            AllowEntry::parse("10.0.0.0/8"),
            Some(AllowEntry::Net(ip("10.0.0.0"), 8))
        );
        assert_eq!(
            AllowEntry::parse("fd00::/8"),
            Some(AllowEntry::Net(ip("fd00::"), 8))
        );
        assert_eq!(
            AllowEntry::parse("127.0.0.1"),
            Some(AllowEntry::Net(ip("127.0.0.1"), 32))
        );
        assert!(matches!(
            AllowEntry::parse("https://a.example/tools"),
            Some(AllowEntry::Prefix(_))
        ));
        for bad in [
            "",
            "*",
            "*.",
            "a b",
            "10.0.0.0/33",
            "::/129",
            "ftp://a/",
            "http://u@a/",
            "http://a/?q",
            "http://a:99999/",
            "exämple.com",
            "127.1",
            "2130706433",
            "a..b",
            "http:///x",
        ] {
            assert_eq!(AllowEntry::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_listed_url_is_admitted_and_an_unlisted_one_is_not() {
        let allow = list(&[
            "notes.agents.svc",
            "*.cluster.local",
            "10.1.0.0/16",
            "https://tools.example:8443/mcp",
        ]);
        let addr = [ip("10.2.3.4")];
        for ok in [
            "http://notes.agents.svc/mcp",
            "http://NOTES.agents.svc.:8080/x",
            "http://a.b.cluster.local/",
            "http://10.1.2.3:9/mcp",
            "https://tools.example:8443/mcp",
            "https://tools.example:8443/mcp/sub",
        ] {
            assert_eq!(allow.admit(&url(ok), &addr), Ok(()), "{ok}");
        }
        for no in [
            "http://other.agents.svc/",
            "http://cluster.local/",
            "http://10.2.0.1/",
            "http://tools.example:8443/mcp",
            "https://tools.example/mcp",
            "https://tools.example:8443/mcpx",
            "https://tools.example:8443/",
        ] {
            assert_eq!(
                allow.admit(&url(no), &addr),
                Err(Forbidden::NotAllowed),
                "{no}"
            );
        }
        // A name no name entry lists: its addresses decide.
        assert_eq!(
            allow.admit(&url("http://svc.other/"), &[ip("10.1.9.9")]),
            Ok(())
        );
        assert_eq!(
            allow.admit(&url("http://svc.other/"), &[ip("10.1.9.9"), ip("10.9.9.9")]),
            Err(Forbidden::NotAllowed),
            "one address outside refuses the target"
        );
        assert_eq!(
            list(&["a.example"]).admit(&url("http://svc.other/"), &[ip("10.1.9.9")]),
            Err(Forbidden::NotAllowed)
        );
    }

    #[test]
    fn special_addresses_are_refused_unless_an_address_entry_lists_them() {
        let allow = list(&["*.example", "localhost"]);
        for (address, class) in [
            ("0.0.0.0", Forbidden::Unspecified),
            ("0.1.2.3", Forbidden::Unspecified),
            ("::", Forbidden::Unspecified),
            ("127.0.0.1", Forbidden::Loopback),
            ("127.9.9.9", Forbidden::Loopback),
            ("::1", Forbidden::Loopback),
            ("169.254.1.1", Forbidden::LinkLocal),
            ("fe80::1", Forbidden::LinkLocal),
            ("169.254.169.254", Forbidden::Metadata),
            ("169.254.170.2", Forbidden::Metadata),
            ("fd00:ec2::254", Forbidden::Metadata),
            ("100.100.100.200", Forbidden::Metadata),
            ("168.63.129.16", Forbidden::Metadata),
            ("224.0.0.1", Forbidden::Multicast),
            ("255.255.255.255", Forbidden::Multicast),
            ("ff02::1", Forbidden::Multicast),
            // IPv4 inside IPv6: judged as what it carries.
            ("::ffff:127.0.0.1", Forbidden::Loopback),
            ("::ffff:169.254.169.254", Forbidden::Metadata),
            ("::127.0.0.1", Forbidden::Loopback),
            ("64:ff9b::a9fe:a9fe", Forbidden::Metadata),
            ("2002:7f00:1::", Forbidden::Loopback),
        ] {
            // Through a listed name (DNS pointing it there) and as a literal.
            assert_eq!(
                allow.admit(&url("http://a.example/"), &[ip(address)]),
                Err(class),
                "{address}"
            );
            let literal = if address.contains(':') {
                format!("http://[{address}]/")
            } else {
                format!("http://{address}/")
            };
            assert_eq!(
                allow.admit(&url(&literal), &[ip(address)]),
                Err(class),
                "{literal}"
            );
        }
        // `localhost` is a name entry: it never unlocks loopback.
        assert_eq!(
            allow.admit(&url("http://localhost/"), &[ip("127.0.0.1")]),
            Err(Forbidden::Loopback)
        );
        // An address entry does, for what it contains.
        let local = list(&["127.0.0.1/32", "169.254.169.254", "*.example"]);
        assert_eq!(
            local.admit(&url("http://127.0.0.1:8080/mcp"), &[ip("127.0.0.1")]),
            Ok(())
        );
        assert_eq!(
            local.admit(&url("http://a.example/"), &[ip("127.0.0.1")]),
            Ok(())
        );
        assert_eq!(
            local.admit(
                &url("http://[::ffff:127.0.0.1]/"),
                &[ip("::ffff:127.0.0.1")]
            ),
            Ok(())
        );
        assert_eq!(
            local.admit(&url("http://169.254.169.254/"), &[ip("169.254.169.254")]),
            Ok(())
        );
        assert_eq!(
            local.admit(&url("http://127.0.0.2/"), &[ip("127.0.0.2")]),
            Err(Forbidden::Loopback)
        );
        // Private ranges are ordinary addresses: listed or not, like any other.
        assert_eq!(
            allow.admit(&url("http://a.example/"), &[ip("10.0.0.1"), ip("fd12::1")]),
            Ok(())
        );
        assert_eq!(allow.admit_address(ip("192.168.1.1")), Ok(()));
    }

    #[test]
    fn numbers_the_c_library_reads_as_addresses_are_refused() {
        let allow = list(&["*.example", "0.0.0.0/0"]);
        for host in [
            "2130706433",
            "127.1",
            "0x7f.1",
            "0177.0.0.1",
            "0x7f000001",
            "1.2.3",
        ] {
            assert_eq!(
                allow.listing(&url(&format!("http://{host}/"))),
                Err(Forbidden::AmbiguousAddress),
                "{host}"
            );
        }
        assert_eq!(allow.listing(&url("http://127.0.0.1/")), Ok(Listed::Yes));
    }

    #[test]
    fn metadata_names_are_refused_unless_named() {
        let allow = list(&["*.internal", "10.0.0.0/8"]);
        for name in [
            "metadata.google.internal",
            "metadata",
            "instance-data",
            "METADATA.",
        ] {
            assert_eq!(
                allow.listing(&url(&format!("http://{name}/"))),
                Err(Forbidden::Metadata),
                "{name}"
            );
        }
        let named = list(&["metadata.google.internal", "169.254.169.254"]);
        assert_eq!(
            named.admit(
                &url("http://metadata.google.internal/"),
                &[ip("169.254.169.254")]
            ),
            Ok(())
        );
    }

    #[test]
    fn urls_are_read_as_the_allow_list_needs() {
        assert_eq!(
            UrlParts::parse("HTTPS://[::1]:8443/a?b#c"),
            Some(UrlParts {
                https: true,
                host: "::1".into(),
                port: 8443,
                path: "/a".into()
            })
        );
        assert_eq!(
            UrlParts::parse("http://h").map(|u| (u.port, u.path)),
            Some((80, "/".into()))
        );
        for bad in [
            "h/x",
            "ftp://h/",
            "http://u:p@h/",
            "http://:80/",
            "http://h:x/",
            "http://[::1/",
        ] {
            assert_eq!(UrlParts::parse(bad), None, "{bad}");
        }
    }
}
