//! What an endpoint must look like, as pure grammar: the `http(s)` URL every HTTP-speaking
//! adapter requests, and the `stdio://name` that names a stdio MCP target. `net` builds its
//! request URL on [`http_url`]; the configuration loader runs both so that `validate` can say
//! offline what would make a check MISCONFIGURED. Nothing here resolves or connects.

/// Why an endpoint is not a usable URL (the `endpoint` evidence word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndpointProblem {
    /// Not a URL we can parse.
    Unparsable,
    /// The scheme is not `http` or `https`.
    UnsupportedScheme,
    /// No host.
    MissingHost,
    /// `user:pass@` in the authority.
    Userinfo,
    /// A `#fragment`.
    Fragment,
    /// An `https` host that no certificate can name.
    InvalidTlsName,
}

impl EndpointProblem {
    /// The evidence word.
    pub fn as_word(self) -> &'static str {
        match self {
            EndpointProblem::Unparsable => "unparsable",
            EndpointProblem::UnsupportedScheme => "unsupported_scheme",
            EndpointProblem::MissingHost => "missing_host",
            EndpointProblem::Userinfo => "userinfo",
            EndpointProblem::Fragment => "fragment",
            EndpointProblem::InvalidTlsName => "invalid_tls_name",
        }
    }

    /// What is wrong, for a sentence that never repeats the endpoint (it may hold a secret).
    pub fn what(self) -> &'static str {
        match self {
            EndpointProblem::Unparsable => "it does not parse",
            EndpointProblem::UnsupportedScheme => "its scheme is not http or https",
            EndpointProblem::MissingHost => "it names no host",
            EndpointProblem::Userinfo => {
                "it carries user:password@ (a token goes in auth.bearer_env)"
            }
            EndpointProblem::Fragment => "it has a #fragment",
            EndpointProblem::InvalidTlsName => "no certificate can name its host",
        }
    }
}

/// An `http(s)` URL taken apart by [`http_url`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HttpUrl<'a> {
    /// The scheme is `https` (in any case).
    pub https: bool,
    /// The host, without brackets.
    pub host: &'a str,
    /// Everything after `scheme://`, without an empty trailing `#`.
    pub rest: &'a str,
}

/// Checks `text` as an `http`/`https` URL with a host, no userinfo, no fragment (an empty one,
/// a trailing `#`, is dropped, as the Go reference accepts it), a numeric port, and no space,
/// control or non-ASCII character (which no request line can carry).
pub fn http_url(text: &str) -> Result<HttpUrl<'_>, EndpointProblem> {
    let text = match text.split_once('#') {
        Some((_, fragment)) if !fragment.is_empty() => return Err(EndpointProblem::Fragment),
        Some((before, _)) => before,
        None => text,
    };
    let (scheme, rest) = text.split_once("://").ok_or(EndpointProblem::Unparsable)?;
    let https = if scheme.eq_ignore_ascii_case("https") {
        true
    } else if scheme.eq_ignore_ascii_case("http") {
        false
    } else {
        return Err(EndpointProblem::UnsupportedScheme);
    };
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err(EndpointProblem::Userinfo);
    }
    if !usable_characters(authority, &rest[authority.len()..]) {
        return Err(EndpointProblem::Unparsable);
    }
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (inside, after) = v6.split_once(']').ok_or(EndpointProblem::Unparsable)?;
            match after {
                "" => (inside, None),
                _ => (
                    inside,
                    Some(after.strip_prefix(':').ok_or(EndpointProblem::Unparsable)?),
                ),
            }
        }
        None => match authority.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        },
    };
    if host.is_empty() {
        return Err(EndpointProblem::MissingHost);
    }
    if port.is_some_and(|p| !p.is_empty() && p.parse::<u16>().is_err()) {
        return Err(EndpointProblem::Unparsable);
    }
    Ok(HttpUrl { https, host, rest })
}

/// Whether every character can go into a request: printable ASCII, and none that the URI
/// grammar refuses where it is (`<`, `>`, `` ` `` anywhere; `"` in the query; in a host
/// name, also `"%[\]^{|}`).
fn usable_characters(authority: &str, path_and_query: &str) -> bool {
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    let refused = |part: &str, extra: &[u8]| {
        part.bytes()
            .any(|b| !b.is_ascii_graphic() || b"<>`".contains(&b) || extra.contains(&b))
    };
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => authority,
    };
    !(refused(authority, b"")
        || refused(host, b"\"%[\\]^{|}")
        || refused(path, b"")
        || refused(query, b"\""))
}

/// The scheme of a stdio target's endpoint.
pub const STDIO_SCHEME: &str = "stdio://";

/// Whether `endpoint` names a stdio target: `stdio://` and a non-empty name, without
/// userinfo, query, fragment, whitespace or control characters. The name only identifies
/// the target; it is never executed.
pub fn is_stdio_name(endpoint: &str) -> bool {
    let Some(prefix) = endpoint.get(..STDIO_SCHEME.len()) else {
        return false;
    };
    if !prefix.eq_ignore_ascii_case(STDIO_SCHEME) {
        return false;
    }
    let rest = &endpoint[STDIO_SCHEME.len()..];
    let name = rest.split('/').next().unwrap_or_default();
    !name.is_empty()
        && !rest
            .chars()
            .any(|c| matches!(c, '@' | '?' | '#') || c.is_whitespace() || c.is_control())
}
