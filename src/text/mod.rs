//! Pure functions on text that several layers need: how a configured name is shown
//! ([`clean`]), the nearest known word to a misspelt one ([`suggest`]), what an OAuth scope
//! may be ([`is_scope_token`]), the pairs of a URL query ([`query_pairs`]), and the RFC 3339 timestamps of token files, AHP bodies and
//! health-check results ([`rfc3339`]).
//!
//! They are neither words of the contract ([`crate::contract`]: closed sets of values) nor
//! runtime machinery ([`crate::runtime`]: they hold no state, wait for nothing and start
//! nothing), so they sit beside both at the bottom and import neither.

pub mod rfc3339;

/// `s` with every control character (ANSI escapes, newlines, NUL …) replaced by a space, so
/// names from the configuration cannot rewrite a terminal or forge a line of output.
pub fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Whether `s` is an RFC 6749 §3.3 `scope-token`: one or more bytes of `%x21 / %x23-5B /
/// %x5D-7E`, printable ASCII without a space, `"` or `\`. One rule for every scope we send:
/// configured ones (refused at load), a 401 challenge's and the metadata's (ignored).
pub fn is_scope_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| (0x21..=0x7e).contains(&b) && b != b'"' && b != b'\\')
}

/// The pairs of a URL query (or a form body) in order, `+` and percent escapes decoded; a
/// name without `=` has an empty value. `None` when an escape is not `%` and two hex digits or
/// a decoded part is not UTF-8: a query we cannot read exactly is refused whole, never
/// guessed at (the login callback's `state` and `/probe`'s `target` are both read here).
pub fn query_pairs(query: &str) -> Option<Vec<(String, String)>> {
    query
        .split('&')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let (name, value) = part.split_once('=').unwrap_or((part, ""));
            Some((percent_decode(name)?, percent_decode(value)?))
        })
        .collect()
}

fn percent_decode(text: &str) -> Option<String> {
    let hex = |b: u8| char::from(b).to_digit(16);
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'+' => out.push(b' '),
            b'%' => {
                let high = hex(*bytes.get(i + 1)?)?;
                let low = hex(*bytes.get(i + 2)?)?;
                out.push(u8::try_from(high * 16 + low).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// The candidate nearest to `word` by edit distance, when it is close enough to be a typo.
pub fn suggest<'c>(word: &str, candidates: impl Iterator<Item = &'c str>) -> Option<&'c str> {
    if word.len() > 64 {
        return None;
    }
    let lower = word.to_ascii_lowercase();
    let limit = match word.chars().count() {
        0..=3 => 1,
        4..=8 => 2,
        _ => 3,
    };
    // A close spelling wins; otherwise a key that extends the word (`bearer` → `bearer_env`).
    let candidates: Vec<&str> = candidates.collect();
    candidates
        .iter()
        .map(|c| (edit_distance(&lower, c), *c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
        .or_else(|| {
            let long_enough = lower.chars().count() >= 4;
            candidates
                .iter()
                .find(|c| long_enough && c.starts_with(lower.as_str()))
                .copied()
        })
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions and adjacent
/// transpositions each cost one.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (i, row) in d.chunks_mut(w).enumerate() {
        row[0] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_close_spellings_or_extensions() {
        let keys = ["timeout_ms", "bearer_env", "format", "retries"];
        assert_eq!(suggest("timout_ms", keys.into_iter()), Some("timeout_ms"));
        assert_eq!(suggest("formt", keys.into_iter()), Some("format"));
        assert_eq!(suggest("bearer", keys.into_iter()), Some("bearer_env"));
        assert_eq!(suggest("xyz", keys.into_iter()), None);
        assert_eq!(suggest(&"a".repeat(65), keys.into_iter()), None);
    }

    #[test]
    fn suggestions_catch_typos_only() {
        let known = ["name", "type", "endpoint", "timeout_ms", "retries"];
        assert_eq!(
            suggest("timeot_ms", known.iter().copied()),
            Some("timeout_ms")
        );
        assert_eq!(suggest("nmae", known.iter().copied()), Some("name"));
        assert_eq!(suggest("Name", known.iter().copied()), Some("name"));
        assert_eq!(suggest("colour", known.iter().copied()), None);
        assert_eq!(suggest("endp", known.iter().copied()), Some("endpoint"));
        assert_eq!(suggest("ret", known.iter().copied()), None);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", "acb"), 1);
    }

    #[test]
    fn queries_decode_exactly_or_not_at_all() {
        let pairs = |q: &str| {
            query_pairs(q).map(|v| {
                v.into_iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(
            pairs("code=a%2Fb&state=x+y&iss=http%3A%2F%2Fh&flag&&e=%C3%A9"),
            Some(vec![
                "code=a/b".into(),
                "state=x y".into(),
                "iss=http://h".into(),
                "flag=".into(),
                "e=é".into()
            ])
        );
        assert_eq!(pairs("a=%41"), Some(vec!["a=A".into()]));
        assert_eq!(pairs(""), Some(vec![]));
        for bad in ["a=%zz", "a=%4", "a=%", "a=%+1", "%4=b", "a=%C3", "a=%FF"] {
            assert_eq!(pairs(bad), None, "{bad}");
        }
    }

    #[test]
    fn scope_tokens_are_printable_ascii_without_space_quote_or_backslash() {
        for ok in [
            "mcp:read",
            "a",
            "files.read/write",
            "~!#$%&'()*+,-./:;<=>?@[]^_`{|}",
        ] {
            assert!(is_scope_token(ok), "{ok}");
        }
        for bad in [
            "",
            "a b",
            "a\"b",
            "a\\b",
            "a\tb",
            "é",
            "a\u{7f}",
            "mcp:read\" evil=\"1",
        ] {
            assert!(!is_scope_token(bad), "{bad:?}");
        }
    }

    #[test]
    fn control_characters_become_spaces() {
        assert_eq!(clean("a\u{1b}[31mb\nc"), "a [31mb c");
    }
}
