//! A small HTTP/1.1 client over std `TcpStream`, for the OAuth lab's tests: the scripted
//! browser, the self-test's token requests, and reading the lab authorization server's log.
//!
//! Plain `http://` only (the lab is loopback), one request per connection
//! (`Connection: close`), no redirects followed, bodies by `Content-Length`, chunked, or to
//! the end of the stream. Every read and write has a timeout; a response is capped at 4 MiB.
//! Also: form encoding (RFC 6749 appendix B, `application/x-www-form-urlencoded`), URL
//! splitting and resolution of a `Location` against the URL it answered.

use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Per read or write on the socket.
pub const IO_TIMEOUT: Duration = Duration::from_secs(20);
const MAX_RESPONSE: usize = 4 << 20;

/// A response. Header names are lower-cased; repeated headers stay separate.
#[derive(Clone, Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of header `name` (any case), in order.
    pub fn headers_named<'a>(&'a self, name: &str) -> Vec<&'a str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .filter(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON; panics with the body when it is not.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|err| panic!("not JSON ({err}), HTTP {}: {}", self.status, self.text()))
    }
}

/// `http://host:port/path?query` split into the authority and the request target.
pub fn split_url(url: &str) -> (String, String) {
    let rest = url
        .strip_prefix("http://")
        .unwrap_or_else(|| panic!("oauth_http: only http:// URLs, got {url:?}"));
    let cut = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, target) = rest.split_at(cut);
    let target = match target {
        "" => "/".to_owned(),
        t if t.starts_with('?') => format!("/{t}"),
        t => t.to_owned(),
    };
    (authority.to_owned(), target)
}

/// The origin (`http://host:port`) of a URL.
pub fn origin(url: &str) -> String {
    format!("http://{}", split_url(url).0)
}

/// Resolves a `Location` value against the URL that answered with it.
pub fn resolve(base: &str, location: &str) -> String {
    if location.starts_with("http://") || location.starts_with("https://") {
        return location.to_owned();
    }
    if location.starts_with('/') {
        return format!("{}{location}", origin(base));
    }
    let (_, target) = split_url(base);
    let path = target.split('?').next().unwrap_or("/");
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    format!("{}{dir}{location}", origin(base))
}

/// One request. `headers` are sent as given; `Host`, `Content-Length` and
/// `Connection: close` are added.
pub fn request(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> io::Result<Response> {
    let (authority, target) = split_url(url);
    // A signal delivered to the test process (another test's child ending) interrupts a
    // blocking call: connect and read are retried, as write_all already is.
    let mut stream = loop {
        match TcpStream::connect(&authority) {
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            other => break other?,
        }
    };
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut head =
        format!("{method} {target} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n");
    for (name, value) in headers {
        let _ = write!(head, "{name}: {value}\r\n");
    }
    if !body.is_empty() || method == "POST" {
        let _ = write!(head, "Content-Length: {}\r\n", body.len());
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                raw.extend_from_slice(&buf[..n]);
                if raw.len() > MAX_RESPONSE {
                    return Err(io::Error::other("response over 4 MiB"));
                }
                // A HEAD response (or a 204/304) has no body: stop at the head.
                if (method == "HEAD") && raw.windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            // A peer that closes with unread request bytes may reset; keep what arrived.
            Err(err) if err.kind() == io::ErrorKind::ConnectionReset && !raw.is_empty() => break,
            Err(err) => return Err(err),
        }
    }
    parse(&raw, method == "HEAD")
}

/// `GET url` with extra headers.
pub fn get(url: &str, headers: &[(&str, &str)]) -> io::Result<Response> {
    request("GET", url, headers, b"")
}

/// `POST url` with a form body.
pub fn post_form(
    url: &str,
    headers: &[(&str, &str)],
    form: &[(&str, &str)],
) -> io::Result<Response> {
    let mut all = vec![("Content-Type", "application/x-www-form-urlencoded")];
    all.extend_from_slice(headers);
    request("POST", url, &all, form_encode(form).as_bytes())
}

fn parse(raw: &[u8], head_only: bool) -> io::Result<Response> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("no complete response head"))?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("bad status line"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let rest = &raw[end + 4..];
    let find = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let body = if head_only || status == 204 || status == 304 {
        Vec::new()
    } else if find("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        dechunk(rest).ok_or_else(|| bad("bad chunked body"))?
    } else if let Some(len) = find("content-length").and_then(|v| v.parse::<usize>().ok()) {
        if rest.len() < len {
            return Err(bad("body shorter than Content-Length"));
        }
        rest[..len].to_vec()
    } else {
        rest.to_vec()
    };
    Ok(Response {
        status,
        headers,
        body,
    })
}

fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&data[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(data.get(..size)?);
        data = data.get(size + 2..)?;
    }
}

/// `application/x-www-form-urlencoded` (space as `+`; unreserved characters kept).
pub fn form_encode_value(value: &str) -> String {
    let mut out = String::new();
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'*' => {
                out.push(b as char);
            }
            b' ' => out.push('+'),
            _ => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out
}

pub fn form_encode(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", form_encode_value(k), form_encode_value(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Decodes one `x-www-form-urlencoded` component (`+` is a space).
pub fn form_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("zz");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The query parameters of a URL, decoded, in order (repeats kept).
pub fn query_pairs(url: &str) -> Vec<(String, String)> {
    let Some((_, query)) = url.split_once('?') else {
        return Vec::new();
    };
    let query = query.split('#').next().unwrap_or_default();
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (form_decode(k), form_decode(v)),
            None => (form_decode(p), String::new()),
        })
        .collect()
}

/// The one value of query parameter `name`; `None` when absent.
pub fn query_param(url: &str, name: &str) -> Option<String> {
    query_pairs(url)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_round_trip() {
        let odd = "odd%25secret+with:colon and space";
        assert_eq!(form_decode(&form_encode_value(odd)), odd);
        assert_eq!(form_encode_value("a b+c"), "a+b%2Bc");
    }
}
