//! Request heads as they arrive: the buffer that finds where a head ends whatever pieces the
//! network cuts it into (and keeps what follows it: a pipelined next request), and the parser.

/// A parsed request head: the parts the handler reads.
#[derive(Debug, PartialEq, Eq)]
pub struct RequestHead<'a> {
    /// The method, as sent (case-sensitive, as HTTP methods are).
    pub method: &'a str,
    /// The path, without query or fragment.
    pub path: &'a str,
    /// The query, without its `?` (`None` when the target has none).
    pub query: Option<&'a str>,
    /// The minor version of `HTTP/1.x`.
    pub minor: u8,
    pub(super) headers: Vec<(&'a str, &'a str)>,
}

impl<'a> RequestHead<'a> {
    /// Every header line's name and trimmed value, in the order sent.
    pub fn headers(&self) -> &[(&'a str, &'a str)] {
        &self.headers
    }

    /// The first value of the header `name` (case-insensitive), trimmed.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    }

    /// Whether the connection may carry another request after this one: HTTP/1.1 without
    /// `Connection: close`, and no body (bodies are never read, so where the next request
    /// would start is unknown). HTTP/1.0 closes, as its default is.
    pub fn keeps_alive(&self) -> bool {
        let close = self
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("connection"))
            .flat_map(|(_, v)| v.split(','))
            .any(|token| token.trim().eq_ignore_ascii_case("close"));
        let body = self.headers.iter().any(|(n, v)| {
            n.eq_ignore_ascii_case("transfer-encoding")
                || (n.eq_ignore_ascii_case("content-length") && v.trim() != "0")
        });
        self.minor >= 1 && !close && !body
    }
}

/// Why a request head cannot be answered by the handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeadError {
    /// Not an HTTP/1.x request head.
    Malformed,
    /// Longer than the limit.
    TooLarge,
}

/// Request heads as they arrive, in whatever pieces the network cuts them into.
///
/// Kept apart from the socket so that what the pieces add up to can be fuzzed: the outcome
/// must not depend on where the cuts fall (`agenthealth::fuzzing::http_head`).
#[derive(Debug, Default)]
pub struct HeadBuf {
    bytes: Vec<u8>,
    /// How much of `bytes` has been searched for a head's end.
    searched: usize,
}

/// What the bytes received so far make of a head.
#[derive(Debug, PartialEq, Eq)]
pub enum Arrival<'a> {
    /// No blank line yet, and still within the limit.
    More,
    /// The head, up to and including its blank line (what follows it stays for the next one:
    /// [`HeadBuf::take`]).
    Complete(&'a [u8]),
    /// No blank line within the limit.
    TooLarge,
}

impl HeadBuf {
    /// Adds the next piece and says whether the head is complete: within `limit` bytes, a
    /// head ends at its first blank line. Empty lines before the request line are dropped
    /// (RFC 9112 §2.2) and count against nothing. An empty piece asks again about what is
    /// held (a pipelined request behind the one just taken).
    pub fn push(&mut self, piece: &[u8], limit: usize) -> Arrival<'_> {
        let mut fresh = piece;
        if self.bytes.is_empty() {
            let skip = fresh.iter().take_while(|b| matches!(b, b'\r' | b'\n'));
            fresh = &fresh[skip.count()..];
        }
        self.bytes.extend_from_slice(fresh);
        let from = self.searched.saturating_sub(3);
        match head_end(&self.bytes, from) {
            Some(end) if end <= limit => Arrival::Complete(&self.bytes[..end]),
            _ if self.bytes.len() > limit => Arrival::TooLarge,
            _ => {
                self.searched = self.bytes.len();
                Arrival::More
            }
        }
    }

    /// Drops the head of `len` bytes just answered (and the empty lines after it), keeping
    /// what the client sent behind it.
    pub fn take(&mut self, len: usize) {
        let len = len.min(self.bytes.len());
        let blank = self.bytes[len..]
            .iter()
            .take_while(|b| matches!(b, b'\r' | b'\n'))
            .count();
        self.bytes.drain(..len + blank);
        self.searched = 0;
    }

    /// Whether nothing of a next request has arrived.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// Where the head ends (after its blank line), searching from `from`: `\r\n\r\n`, or bare
/// `\n` line ends as lenient clients send them. Only the new bytes are searched as a head
/// trickles in, so a slow client costs no more than a fast one.
fn head_end(buf: &[u8], from: usize) -> Option<usize> {
    (from..buf.len()).find_map(|i| match &buf[i..] {
        [b'\n', b'\n', ..] => Some(i + 2),
        [b'\n', b'\r', b'\n', ..] => Some(i + 3),
        _ => None,
    })
}

/// Parses a request head (up to and including its blank line). Lenient where RFC 9112 lets a
/// server be (bare `\n` line ends, empty lines before the request line), strict where a
/// lenient reading would pass on what a client must not send: a control character anywhere
/// but an HTAB in a header value (a bare CR, a NUL) makes the head malformed (RFC 9112 §2.2,
/// RFC 9110 §5.5), as does a version other than `HTTP/1.<digit>`.
pub fn parse_head(head: &[u8]) -> Result<RequestHead<'_>, HeadError> {
    let text = std::str::from_utf8(head).map_err(|_| HeadError::Malformed)?;
    let mut lines = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .skip_while(|l| l.is_empty());
    let request_line = lines.next().ok_or(HeadError::Malformed)?;
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HeadError::Malformed);
    };
    let minor = match version.strip_prefix("HTTP/1.").map(str::as_bytes) {
        Some([d]) if d.is_ascii_digit() => d - b'0',
        _ => return Err(HeadError::Malformed),
    };
    if method.is_empty()
        || !method.bytes().all(is_token_byte)
        || target.bytes().any(|b| b.is_ascii_control())
    {
        return Err(HeadError::Malformed);
    }
    let (path, query) = path_of(target).ok_or(HeadError::Malformed)?;
    let mut headers = Vec::new();
    for line in lines.take_while(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':').ok_or(HeadError::Malformed)?;
        // No whitespace before the colon, no obsolete line folding (RFC 9112 §5).
        if name.is_empty() || !name.bytes().all(is_token_byte) {
            return Err(HeadError::Malformed);
        }
        if value.bytes().any(|b| b.is_ascii_control() && b != b'\t') {
            return Err(HeadError::Malformed);
        }
        headers.push((name, value.trim_matches([' ', '\t'])));
    }
    Ok(RequestHead {
        method,
        path,
        query,
        minor,
        headers,
    })
}

/// The path and query of an origin-form (`/live?x`) or absolute-form (`http://host/live`)
/// target.
fn path_of(target: &str) -> Option<(&str, Option<&str>)> {
    let rest = if target.starts_with('/') {
        // Origin form: whatever the query holds (`/probe?target=http://…`).
        target
    } else {
        match target.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => {
                let end = rest.find(['/', '?']).unwrap_or(rest.len());
                match &rest[end..] {
                    "" => "/",
                    tail => tail,
                }
            }
            _ => return None,
        }
    };
    if rest.starts_with('?') {
        // `http://host?q`: the path is `/`.
        return Some((
            "/",
            rest.split('#').next().and_then(|r| r.strip_prefix('?')),
        ));
    }
    let rest = rest.split('#').next().unwrap_or_default();
    Some(match rest.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (rest, None),
    })
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_parse_with_crlf_or_lf() {
        let r = parse_head(b"GET /live?x=1 HTTP/1.1\r\nHost: a\r\nAHP-Version:  v1 \r\n\r\n");
        let r = r.expect("valid");
        assert_eq!(
            (r.method, r.path, r.query, r.minor),
            ("GET", "/live", Some("x=1"), 1)
        );
        assert_eq!(r.header("ahp-version"), Some("v1"));
        assert_eq!(r.header("authorization"), None);
        // An HTAB inside a value is allowed; around it, trimmed.
        let r = parse_head(b"GET / HTTP/1.1\r\nX:\ta\tb \r\n\r\n").expect("htab");
        assert_eq!(r.headers(), &[("X", "a\tb")]);
        let r = parse_head(b"\r\nPOST http://h:1/ready#f HTTP/1.0\nX: 1\nX: 2\n\n").expect("lf");
        assert_eq!(
            (r.method, r.path, r.query, r.minor, r.header("x")),
            ("POST", "/ready", None, 0, Some("1"))
        );
        assert_eq!(
            parse_head(b"GET http://h HTTP/1.1\r\n\r\n").map(|r| r.path),
            Ok("/")
        );
        let r = parse_head(b"GET /probe?target=a%20b#frag HTTP/1.1\r\n\r\n").expect("query");
        assert_eq!((r.path, r.query), ("/probe", Some("target=a%20b")));
        // A URL in the query, unescaped, as curl users send it.
        let r = parse_head(b"GET /probe?module=m&target=http://a:1/mcp HTTP/1.1\r\n\r\n")
            .expect("a URL in the query");
        assert_eq!(
            (r.path, r.query),
            ("/probe", Some("module=m&target=http://a:1/mcp"))
        );
        let r = parse_head(b"GET http://h:1?x HTTP/1.1\r\n\r\n").expect("absolute, no path");
        assert_eq!((r.path, r.query), ("/", Some("x")));
    }

    #[test]
    fn malformed_heads_are_refused() {
        for bad in [
            &b"GET /live\r\n\r\n"[..],
            b"GET  /live HTTP/1.1\r\n\r\n",
            b"GET live HTTP/1.1\r\n\r\n",
            b"GET /live HTTP/2\r\n\r\n",
            b"G(T /live HTTP/1.1\r\n\r\n",
            b"GET /live HTTP/1.1\r\nNo colon\r\n\r\n",
            b"GET /live HTTP/1.1\r\nName : v\r\n\r\n",
            b"GET /live HTTP/1.1\r\nA: b\r\n folded\r\n\r\n",
            b"GET ftp://h/live HTTP/1.1\r\n\r\n",
            b"GET /\xff HTTP/1.1\r\n\r\n",
            b"\r\n\r\n",
            // Control characters (the fuzz target's first find was a 0x06 in a value).
            b"GET /live HTTP/1.1\r\nX: a\x06b\r\n\r\n",
            b"GET /live HTTP/1.1\r\nX: a\rb\r\n\r\n",
            b"GET /live HTTP/1.1\r\nX: a\0\r\n\r\n",
            b"GET /live HTTP/1.1\r\nX: a\r\r\n\r\n",
            b"GET /li\tve HTTP/1.1\r\n\r\n",
            b"GET /live\x7f HTTP/1.1\r\n\r\n",
            b"GET /live HTTP/1.1\r\r\n\r\n",
            b"GET /live HTTP/1.10\r\n\r\n",
            b"GET /live HTTP/1.x\r\n\r\n",
        ] {
            assert_eq!(
                parse_head(bad),
                Err(HeadError::Malformed),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn a_connection_stays_open_only_for_http_1_1_without_close_or_a_body() {
        let keeps = |head: &str| parse_head(head.as_bytes()).expect("valid").keeps_alive();
        assert!(keeps("GET / HTTP/1.1\r\n\r\n"));
        assert!(keeps(
            "GET / HTTP/1.1\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"
        ));
        assert!(!keeps(
            "GET / HTTP/1.1\r\nConnection: Keep-Alive, CLOSE\r\n\r\n"
        ));
        assert!(!keeps("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
        assert!(!keeps("GET / HTTP/1.1\r\nContent-Length: 2\r\n\r\n"));
        assert!(!keeps(
            "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        ));
    }

    #[test]
    fn the_head_ends_at_the_first_blank_line() {
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n\r\nbody", 0), Some(18));
        assert_eq!(head_end(b"GET / HTTP/1.1\n\n", 0), Some(16));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nA: b\r\n", 0), None);
        // Searching from the last three old bytes finds an end split across reads.
        let head = b"GET / HTTP/1.1\r\n\r\n";
        assert_eq!(head_end(head, head.len() - 4), Some(18));
    }

    #[test]
    fn a_head_completes_the_same_in_any_pieces() {
        let sent = b"\r\n\nGET / HTTP/1.1\r\nA: b\r\n\r\nbody";
        let head = &b"GET / HTTP/1.1\r\nA: b\r\n\r\n"[..];
        for cut in 0..=sent.len() {
            let mut buf = HeadBuf::default();
            let first = buf.push(&sent[..cut], 64);
            if first == Arrival::More {
                assert_eq!(buf.push(&sent[cut..], 64), Arrival::Complete(head), "{cut}");
            } else {
                assert_eq!(first, Arrival::Complete(head), "{cut}");
            }
        }
        // A byte at a time, it completes with the head's last byte.
        let mut trickle = HeadBuf::default();
        let more = sent
            .iter()
            .take_while(|b| trickle.push(&[**b], 64) == Arrival::More)
            .count();
        assert_eq!(more, sent.len() - b"body".len() - 1);
        // The limit counts the head, not the empty lines before it nor what follows it.
        let mut exact = HeadBuf::default();
        assert_eq!(exact.push(sent, head.len()), Arrival::Complete(head));
        let mut over = HeadBuf::default();
        assert_eq!(over.push(sent, head.len() - 1), Arrival::TooLarge);
        let mut short = HeadBuf::default();
        assert_eq!(short.push(&head[..10], 9), Arrival::TooLarge);
        assert_eq!(HeadBuf::default().push(&head[..10], 10), Arrival::More);
    }

    /// Two requests in one piece (pipelined): the second is found in what the first left,
    /// without waiting for more bytes.
    #[test]
    fn a_pipelined_head_is_found_behind_the_first() {
        let mut buf = HeadBuf::default();
        let first = b"GET /a HTTP/1.1\r\n\r\n";
        let sent = b"GET /a HTTP/1.1\r\n\r\n\r\nGET /b HTTP/1.1\r\n\r\nGET /c";
        assert_eq!(buf.push(sent, 64), Arrival::Complete(first));
        buf.take(first.len());
        assert_eq!(
            buf.push(b"", 64),
            Arrival::Complete(b"GET /b HTTP/1.1\r\n\r\n")
        );
        buf.take(19);
        assert_eq!(buf.push(b"", 64), Arrival::More);
        assert!(!buf.is_empty());
        assert_eq!(
            buf.push(b" HTTP/1.1\r\n\r\n", 64),
            Arrival::Complete(b"GET /c HTTP/1.1\r\n\r\n")
        );
        buf.take(19);
        assert!(buf.is_empty());
    }
}
