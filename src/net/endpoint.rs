//! Endpoint validation: the offline half of every HTTP-speaking adapter's configuration check.
//!
//! An endpoint is usable when it parses, its scheme is `http` or `https`, it names a host, it
//! carries no userinfo (`user:pass@`: credentials belong in `auth.bearer_env`) and no
//! fragment. Anything else is MISCONFIGURED before any network traffic. The error says which
//! rule failed as a fixed word; the endpoint text itself is never repeated (it may hold a
//! secret).

use ureq::http::Uri;

use crate::result::reason::Redirect;

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
    /// Validates `text` by the contract's grammar ([`crate::contract::endpoint::http_url`]).
    pub fn parse(text: &str) -> Result<Endpoint, EndpointError> {
        let url = crate::contract::endpoint::http_url(text)?;
        let scheme = if url.https { "https" } else { "http" };
        let uri: Uri = format!("{scheme}://{}", url.rest)
            .parse()
            .map_err(|_| EndpointError::Unparsable)?;
        Ok(Endpoint {
            uri,
            https: url.https,
            host: url.host.to_string(),
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

    /// `host:port` as configured (the scheme's default port when none is given; IPv6 in
    /// brackets): the `address` evidence of a failed exchange.
    pub fn address(&self) -> String {
        let port = self
            .uri
            .port_u16()
            .unwrap_or(if self.https { 443 } else { 80 });
        if self.host.contains(':') {
            format!("[{}]:{port}", self.host)
        } else {
            format!("{}:{port}", self.host)
        }
    }

    /// Where a redirect's `Location` points, compared with this endpoint: to the same URL
    /// with a trailing slash added to the path or removed from it, to the same URL over
    /// `https`, or elsewhere. Only absolute URLs and absolute paths are compared; the
    /// location itself is not kept.
    pub fn redirect_to(&self, location: &str) -> Redirect {
        let location = location.split('#').next().unwrap_or_default().trim();
        let ours_path = self.uri.path();
        let ours_query = self.uri.query();
        let (https, path_and_query) = if location.starts_with('/') && !location.starts_with("//") {
            (self.https, location.to_string())
        } else {
            let Ok(uri) = location.parse::<Uri>() else {
                return Redirect::Elsewhere;
            };
            let https = match uri.scheme_str() {
                Some(s) if s.eq_ignore_ascii_case("https") => true,
                Some(s) if s.eq_ignore_ascii_case("http") => false,
                _ => return Redirect::Elsewhere,
            };
            let default = |https: bool| if https { 443 } else { 80 };
            let same_host = uri
                .host()
                .is_some_and(|h| h.trim_matches(['[', ']']).eq_ignore_ascii_case(&self.host));
            let ours_port = self.uri.port_u16().unwrap_or(default(self.https));
            let their_port = uri.port_u16().unwrap_or(default(https));
            // An upgrade to https moves from the default http port to the default https one.
            let same_port = their_port == ours_port
                || (https && !self.https && their_port == 443 && ours_port == 80);
            if !same_host || !same_port {
                return Redirect::Elsewhere;
            }
            let pq = uri.path_and_query().map_or("/", |pq| pq.as_str());
            (https, pq.to_string())
        };
        let (path, query) = match path_and_query.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (path_and_query.as_str(), None),
        };
        if query != ours_query {
            return Redirect::Elsewhere;
        }
        match (https == self.https, path) {
            (false, p) if https && p == ours_path => Redirect::Https,
            (true, p) if p.strip_suffix('/') == Some(ours_path) => Redirect::TrailingSlash,
            (true, p) if ours_path.len() > 1 && ours_path.strip_suffix('/') == Some(p) => {
                Redirect::NoTrailingSlash
            }
            _ => Redirect::Elsewhere,
        }
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
    fn addresses_name_host_and_port() {
        let address = |t: &str| Endpoint::parse(t).expect("ok").address();
        assert_eq!(address("http://127.0.0.1:8080/mcp"), "127.0.0.1:8080");
        assert_eq!(address("https://example.com/mcp"), "example.com:443");
        assert_eq!(address("http://example.com"), "example.com:80");
        assert_eq!(address("http://[::1]:9/"), "[::1]:9");
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

/// What the contract's grammar accepts, the request URL parser accepts too: `validate`
/// (which runs only the grammar) and a check never disagree on an endpoint. Every printable
/// character in the host, the path and the query, and a few shapes.
#[cfg(test)]
#[test]
fn the_grammar_never_passes_what_the_uri_parser_refuses() {
    let mut texts: Vec<String> = [
        "http://h:/",
        "http://h:0/",
        "http://[::1/",
        "http://[::1]x/",
        "http://[zz]/",
        "http://h:65535/",
        "http://h/?#",
        "http://h/a#",
        "https://h?x",
        "http://h /",
    ]
    .map(String::from)
    .to_vec();
    for c in (0x21u8..0x7f).map(char::from) {
        texts.extend([
            format!("http://h{c}h/"),
            format!("http://h/a{c}b"),
            format!("http://h/?a{c}b"),
        ]);
    }
    for text in &texts {
        if crate::contract::endpoint::http_url(text).is_ok() {
            assert!(
                Endpoint::parse(text).is_ok(),
                "{text:?}: the grammar passes it, Uri refuses"
            );
        }
    }
}
