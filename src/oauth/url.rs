//! URLs of OAuth: which ones credentials may travel to, the canonical resource URI, the
//! well-known metadata locations, and the `application/x-www-form-urlencoded` encoding.

use crate::net::Endpoint;

/// A URL OAuth may use: it parses as an `http(s)` endpoint without userinfo or fragment, and
/// is `https`, or plain `http` on an explicit loopback host (`localhost`, `127.0.0.0/8`,
/// `::1`).
pub(crate) fn secure(text: &str) -> Option<Endpoint> {
    if text.contains('#') {
        return None;
    }
    let endpoint = Endpoint::parse(text).ok()?;
    (endpoint.is_https() || is_loopback(endpoint.host())).then_some(endpoint)
}

/// Whether `host` names this machine explicitly.
pub(crate) fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    host.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// Scheme and authority of a URL, lower-cased (the origin, for the challenge's origin rule).
pub(crate) fn origin(endpoint: &Endpoint) -> String {
    let uri = endpoint.uri();
    format!(
        "{}://{}",
        uri.scheme_str().unwrap_or_default().to_ascii_lowercase(),
        uri.authority()
            .map(|a| a.as_str().to_ascii_lowercase())
            .unwrap_or_default()
    )
}

/// The canonical resource URI of an MCP endpoint (RFC 8707, the MCP authorization spec):
/// scheme and host lower-cased, a bare `/` path dropped, the query kept, no fragment. Tokens
/// are requested for exactly this string, and a token file is bound to it.
pub(crate) fn resource_uri(endpoint: &Endpoint) -> String {
    let uri = endpoint.uri();
    let path = uri.path();
    let path = if path == "/" { "" } else { path };
    let query = uri.query().map(|q| format!("?{q}")).unwrap_or_default();
    format!("{}{path}{query}", origin(endpoint))
}

/// Where protected-resource metadata may be (RFC 9728 §3.1), in order: the path-inserted
/// location for an endpoint with a path, then the origin's root location.
pub(crate) fn resource_metadata_candidates(endpoint: &Endpoint) -> Vec<String> {
    let root = format!("{}/.well-known/oauth-protected-resource", origin(endpoint));
    let path = endpoint.uri().path().trim_end_matches('/');
    let mut out = Vec::with_capacity(2);
    if !path.is_empty() {
        out.push(format!("{root}{path}"));
    }
    out.push(root);
    out
}

/// Where an issuer's metadata may be, in order: RFC 8414's path-inserted
/// `/.well-known/oauth-authorization-server`, then OpenID Connect discovery's
/// `<issuer>/.well-known/openid-configuration`.
pub(crate) fn server_metadata_candidates(issuer: &Endpoint) -> Vec<String> {
    let path = issuer.uri().path().trim_end_matches('/');
    vec![
        format!(
            "{}/.well-known/oauth-authorization-server{path}",
            origin(issuer)
        ),
        format!("{}{path}/.well-known/openid-configuration", origin(issuer)),
    ]
}

/// `application/x-www-form-urlencoded` encoding of one name or value (RFC 6749 §2.3.1 for
/// Basic credentials; the WHATWG form encoding): unreserved bytes as they are, space as `+`,
/// everything else percent-encoded.
pub(crate) fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(char::from(b));
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// A form body (or a query) of `pairs`.
pub(crate) fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(s: &str) -> Endpoint {
        Endpoint::parse(s).expect("endpoint")
    }

    #[test]
    fn credentials_travel_to_https_or_explicit_loopback_only() {
        for ok in [
            "https://auth.example.com",
            "https://auth.example.com/tenant",
            "http://127.0.0.1:8080",
            "http://localhost/x",
            "http://[::1]:9/",
            "http://127.1.2.3/",
        ] {
            assert!(secure(ok).is_some(), "{ok}");
        }
        for bad in [
            "http://auth.example.com",
            "http://10.0.0.1/",
            "ftp://127.0.0.1/",
            "https://u:p@auth.example.com",
            "https://auth.example.com/#frag",
            "https://auth.example.com/#",
            "not a url",
        ] {
            assert!(secure(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn the_resource_uri_is_canonical() {
        assert_eq!(
            resource_uri(&ep("HTTPS://MCP.Example.COM/")),
            "https://mcp.example.com"
        );
        assert_eq!(
            resource_uri(&ep("https://mcp.example.com/MCP?x=1")),
            "https://mcp.example.com/MCP?x=1"
        );
        assert_eq!(
            resource_uri(&ep("http://127.0.0.1:8000/mcp")),
            "http://127.0.0.1:8000/mcp"
        );
    }

    #[test]
    fn well_known_locations() {
        assert_eq!(
            resource_metadata_candidates(&ep("https://h/public/mcp")),
            [
                "https://h/.well-known/oauth-protected-resource/public/mcp",
                "https://h/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            resource_metadata_candidates(&ep("https://h/")),
            ["https://h/.well-known/oauth-protected-resource"]
        );
        assert_eq!(
            server_metadata_candidates(&ep("https://a.example.com/tenant1/")),
            [
                "https://a.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://a.example.com/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            server_metadata_candidates(&ep("http://127.0.0.1:9")),
            [
                "http://127.0.0.1:9/.well-known/oauth-authorization-server",
                "http://127.0.0.1:9/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn forms_encode() {
        assert_eq!(form_encode("a b%+:/é"), "a+b%25%2B%3A%2F%C3%A9");
        assert_eq!(
            form(&[
                ("grant_type", "client_credentials"),
                ("scope", "read write")
            ]),
            "grant_type=client_credentials&scope=read+write"
        );
    }
}
