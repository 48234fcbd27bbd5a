//! Small helpers: raw JSON member spans, Base64, RFC 3339 time, ids.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

/// Raw text of the member at `path` (object keys from the top-level object),
/// exactly as the client sent it. `None` if the document is not shaped so.
pub(super) fn raw_member<'a>(doc: &'a str, path: &[&str]) -> Option<&'a str> {
    let bytes = doc.as_bytes();
    let mut start = skip_ws(bytes, 0);
    for (depth, key) in path.iter().enumerate() {
        let (vs, ve) = find_member(bytes, start, key)?;
        if depth + 1 == path.len() {
            return doc.get(vs..ve);
        }
        start = vs;
    }
    None
}

/// Finds `key` in the object starting at `at`; returns the value's span.
fn find_member(b: &[u8], at: usize, key: &str) -> Option<(usize, usize)> {
    if b.get(at) != Some(&b'{') {
        return None;
    }
    let mut i = skip_ws(b, at + 1);
    if b.get(i) == Some(&b'}') {
        return None;
    }
    loop {
        let ks = i;
        let ke = string_end(b, ks)?;
        let name: String = serde_json::from_slice(b.get(ks..ke)?).ok()?;
        i = skip_ws(b, ke);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let vs = skip_ws(b, i + 1);
        let ve = value_end(b, vs)?;
        if name == key {
            return Some((vs, ve));
        }
        i = skip_ws(b, ve);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            _ => return None,
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\r' | b'\n')) {
        i += 1;
    }
    i
}

/// `b[at]` must be `"`; returns the index after the closing quote.
fn string_end(b: &[u8], at: usize) -> Option<usize> {
    if b.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    loop {
        match b.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// Index just after the JSON value starting at `at`.
fn value_end(b: &[u8], at: usize) -> Option<usize> {
    match b.get(at)? {
        b'"' => string_end(b, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                match b.get(i)? {
                    b'"' => {
                        i = string_end(b, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let mut i = at;
            while let Some(c) = b.get(i) {
                if matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n') {
                    break;
                }
                i += 1;
            }
            (i > at).then_some(i)
        }
    }
}

/// Decodes `application/x-www-form-urlencoded` text (`+` is a space, `%XX`
/// escapes; malformed escapes are kept verbatim).
pub(super) fn form_decode(text: &str) -> Vec<(String, String)> {
    fn unescape(s: &str) -> String {
        let b = s.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'+' => out.push(b' '),
                b'%' => {
                    let hex = b
                        .get(i + 1..i + 3)
                        .and_then(|h| std::str::from_utf8(h).ok());
                    match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                        Some(v) => {
                            out.push(v);
                            i += 2;
                        }
                        None => out.push(b'%'),
                    }
                }
                c => out.push(c),
            }
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    }
    text.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (unescape(k), unescape(v))
        })
        .collect()
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard padded Base64.
pub(super) fn b64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        let idx = [(n >> 18) & 63, (n >> 12) & 63, (n >> 6) & 63, n & 63];
        for (k, v) in idx.iter().enumerate() {
            if k <= chunk.len() {
                out.push(char::from(B64[*v as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard padded Base64; `None` when malformed.
pub(super) fn b64_decode(text: &str) -> Option<Vec<u8>> {
    let t = text.as_bytes();
    if t.len() % 4 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(t.len() / 4 * 3);
    for (ci, chunk) in t.chunks(4).enumerate() {
        let last = ci + 1 == t.len() / 4;
        let mut n = 0u32;
        let mut pad = 0;
        for (k, c) in chunk.iter().enumerate() {
            let v = match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'+' => 62,
                b'/' => 63,
                b'=' if last && k >= 2 => {
                    pad += 1;
                    0
                }
                _ => return None,
            };
            if pad > 0 && *c != b'=' {
                return None;
            }
            n = (n << 6) | u32::from(v);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    Some(out)
}

/// Decodes an `Mcp-Name` / `Mcp-Param-*` header value: the Base64 sentinel
/// `=?base64?…?=` is unwrapped, anything else is taken verbatim.
pub(super) fn decode_header_value(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(inner) => String::from_utf8(b64_decode(inner)?).ok(),
        None => Some(value.to_string()),
    }
}

/// Current UTC time as RFC 3339 with milliseconds, e.g. `2026-11-30T12:00:00.123Z`.
pub(super) fn rfc3339_now() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs();
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        now.subsec_millis()
    )
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// An unguessable-enough token of visible ASCII (hex), seeded per process.
pub(super) fn token(counter: u64) -> String {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(counter);
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    format!("{:016x}{:04x}", h.finish(), counter & 0xffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_member_is_byte_exact() {
        let doc = r#"{"jsonrpc":"2.0","id":1,"params":{"name":"x","arguments": {"b" : 1.50, "a":"}\""} },"method":"tools/call"}"#;
        assert_eq!(
            raw_member(doc, &["params", "arguments"]),
            Some(r#"{"b" : 1.50, "a":"}\""}"#)
        );
        assert_eq!(raw_member(doc, &["params", "name"]), Some(r#""x""#));
        assert_eq!(raw_member(doc, &["id"]), Some("1"));
        assert_eq!(raw_member(doc, &["params", "missing"]), None);
        assert_eq!(raw_member("[1]", &["a"]), None);
        assert_eq!(raw_member(r#"{"a":"#, &["a"]), None);
    }

    #[test]
    fn base64_round_trip() {
        for s in [
            "",
            "f",
            "fo",
            "foo",
            "foob",
            "fooba",
            "foobar",
            "café",
            "hello\n世界",
        ] {
            let e = b64_encode(s.as_bytes());
            assert_eq!(b64_decode(&e).as_deref(), Some(s.as_bytes()), "{s}");
        }
        assert_eq!(b64_encode("café".as_bytes()), "Y2Fmw6k=");
        assert_eq!(b64_decode("Y2Fmw6k"), None);
        assert_eq!(b64_decode("Y2=mw6k="), None);
        assert_eq!(
            decode_header_value("=?base64?YQli?=").as_deref(),
            Some("a\tb")
        );
        assert_eq!(decode_header_value("us-west1").as_deref(), Some("us-west1"));
    }

    #[test]
    fn form_fields() {
        let f = form_decode(
            "grant_type=client_credentials&resource=http%3A%2F%2F127.0.0.1%3A1%2Fmcp&scope=a+b&bad=%zz&flag",
        );
        assert_eq!(f[1], ("resource".into(), "http://127.0.0.1:1/mcp".into()));
        assert_eq!(f[2].1, "a b");
        assert_eq!(f[3].1, "%zz");
        assert_eq!(f[4], ("flag".into(), String::new()));
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(20_513), (2026, 3, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert!(rfc3339_now().ends_with('Z'));
    }
}
