//! Endpoint validation: the offline half of every HTTP-speaking adapter's configuration check.
//!
//! An endpoint is usable when it parses, its scheme is `http` or `https`, it names a host, it
//! carries no userinfo (`user:pass@`: credentials belong in `auth.bearer_env`) and no
//! fragment. Anything else is MISCONFIGURED before any network traffic. The error says which
//! rule failed as a fixed word; the endpoint text itself is never repeated (it may hold a
//! secret).

use ureq::http::Uri;

/// A validated `http`/`https` URL, ready to be requested.
#[derive(Clone, Debug)]
pub struct Endpoint {
    uri: Uri,
    https: bool,
    host: String,
}

/// Which endpoint rule failed (the reason's own type: the configuration check reports it).
pub use crate::result::reason::EndpointProblem as EndpointError;

impl Endpoint {
    /// Validates `text`. An empty fragment (a trailing `#`) is dropped, as the Go reference
    /// accepts it; a non-empty one is refused.
    pub fn parse(text: &str) -> Result<Endpoint, EndpointError> {
        let text = match text.split_once('#') {
            Some((_, fragment)) if !fragment.is_empty() => return Err(EndpointError::Fragment),
            Some((before, _)) => before,
            None => text,
        };
        let (scheme, rest) = text.split_once("://").ok_or(EndpointError::Unparsable)?;
        let https = if scheme.eq_ignore_ascii_case("https") {
            true
        } else if scheme.eq_ignore_ascii_case("http") {
            false
        } else {
            return Err(EndpointError::UnsupportedScheme);
        };
        let authority = rest.split(['/', '?']).next().unwrap_or_default();
        if authority.contains('@') {
            return Err(EndpointError::Userinfo);
        }
        let (host, port) = match authority.strip_prefix('[') {
            Some(v6) => {
                let (inside, after) = v6.split_once(']').ok_or(EndpointError::Unparsable)?;
                match after {
                    "" => (inside, None),
                    _ => (
                        inside,
                        Some(after.strip_prefix(':').ok_or(EndpointError::Unparsable)?),
                    ),
                }
            }
            None => match authority.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            },
        };
        if host.is_empty() {
            return Err(EndpointError::MissingHost);
        }
        if port.is_some_and(|p| !p.is_empty() && p.parse::<u16>().is_err()) {
            return Err(EndpointError::Unparsable);
        }
        let normalized = format!("{}://{rest}", if https { "https" } else { "http" });
        let uri: Uri = normalized.parse().map_err(|_| EndpointError::Unparsable)?;
        Ok(Endpoint {
            uri,
            https,
            host: host.to_string(),
        })
    }

    /// The URL to request (scheme lower-cased, fragment removed).
    pub fn uri(&self) -> &Uri {
        &self.uri
    }

    /// Whether the scheme is `https`.
    pub fn is_https(&self) -> bool {
        self.https
    }

    /// The host without brackets (`::1`, `127.0.0.1`, `example.com`).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Whether the host is an IP literal (then there is no dns stage).
    #[cfg(test)]
    pub fn is_ip_literal(&self) -> bool {
        super::resolve::ip_literal(&self.host).is_some()
    }

    /// Whether the host is a name rustls can verify a certificate for (a DNS name or an IP).
    pub fn has_valid_tls_name(&self) -> bool {
        rustls::pki_types::ServerName::try_from(self.host.as_str()).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_endpoints() {
        for (text, https, host) in [
            ("http://127.0.0.1:8080/health", false, "127.0.0.1"),
            ("https://example.com", true, "example.com"),
            ("HTTPS://Example.com/a?b=c", true, "Example.com"),
            ("http://[::1]:9000/", false, "::1"),
            ("http://localhost/#", false, "localhost"),
        ] {
            let e = Endpoint::parse(text).unwrap_or_else(|err| panic!("{text}: {err:?}"));
            assert_eq!((e.is_https(), e.host()), (https, host), "{text}");
        }
        let e = Endpoint::parse("HTTP://h:1/p").expect("ok");
        assert_eq!(e.uri().scheme_str(), Some("http"));
        assert_eq!(e.uri().port_u16(), Some(1));
        assert!(
            Endpoint::parse("http://[::1]/")
                .expect("ok")
                .is_ip_literal()
        );
    }

    #[test]
    fn refused_endpoints() {
        use EndpointError as E;
        for (text, want) in [
            (
                "https://user:password@example.com/?token=secret",
                E::Userinfo,
            ),
            ("http://@example.com/", E::Userinfo),
            ("http://example.com/#frag", E::Fragment),
            ("ftp://example.com/", E::UnsupportedScheme),
            ("mcp+stdio://x", E::UnsupportedScheme),
            ("example.com/health", E::Unparsable),
            ("http:///path", E::MissingHost),
            ("http://:80/", E::MissingHost),
            ("http://exa mple.com/", E::Unparsable),
            ("http://example.com:99999/", E::Unparsable),
            ("http://example.com:abc/", E::Unparsable),
            ("http://[::1/", E::Unparsable),
        ] {
            assert_eq!(Endpoint::parse(text).err(), Some(want), "{text}");
        }
    }

    #[test]
    fn tls_names() {
        assert!(
            Endpoint::parse("https://a.example/")
                .expect("ok")
                .has_valid_tls_name()
        );
        assert!(
            Endpoint::parse("https://127.0.0.1/")
                .expect("ok")
                .has_valid_tls_name()
        );
        assert!(
            Endpoint::parse("https://[::1]/")
                .expect("ok")
                .has_valid_tls_name()
        );
    }
}
