//! The rules a setting must follow wherever it is given: in a configuration file or on the
//! command line.
//!
//! Plain consts and functions over numbers and `&str`, with no knowledge of YAML, key paths or
//! flags, so the configuration readers and the command-line parser apply the same bounds and
//! the same name rules (`--timeout` and `timeout_ms`, `--bearer-env` and `auth.bearer_env`
//! cannot drift apart). Each caller words its own message around them; only the "one of"
//! listings are shared text, so every list of accepted spellings reads alike.

use crate::text::suggest;

/// An inclusive range of whole numbers a setting accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Range {
    /// Smallest accepted value.
    pub(crate) min: u64,
    /// Largest accepted value.
    pub(crate) max: u64,
}

impl Range {
    /// `min..=max`.
    const fn new(min: u64, max: u64) -> Range {
        Range { min, max }
    }

    /// Whether `n` is accepted.
    pub(crate) const fn contains(self, n: u64) -> bool {
        self.min <= n && n <= self.max
    }
}

/// `timeout_ms`, each `check_timeouts_ms` value and `--timeout`: one attempt's deadline.
pub(crate) const TIMEOUT_MS: Range = Range::new(1, 300_000);
/// `retries`: extra attempts of a passive check that got no response.
pub(crate) const RETRIES: Range = Range::new(0, 3);
/// `retry_delay_ms`.
pub(crate) const RETRY_DELAY_MS: Range = Range::new(0, 60_000);
/// `budget_ms`: a node's own checks, retries and queue waits.
pub(crate) const BUDGET_MS: Range = Range::new(1, 60_000);
/// `deadline_ms` and `--deadline`: the whole run (checks, retries, dependencies, cleanup),
/// never above the 60 s cap on every run.
pub(crate) const DEADLINE_MS: Range = Range::new(1, 60_000);
/// `http.max_body_bytes`.
pub(crate) const BODY_BYTES: Range = Range::new(1, 1_048_576);
/// `http.expected_status` items: the final statuses a server may answer with.
pub(crate) const HTTP_STATUS: Range = Range::new(200, 599);
/// `mcp.oauth.redirect_port` (0 = ephemeral).
pub(crate) const PORT: Range = Range::new(0, 65_535);
/// `concurrency`: the contract's 1–16, extended.
pub(crate) const CONCURRENCY: Range = Range::new(1, 256);
/// Upper bound of `mcp.functional.arguments_json`, in bytes: the call's arguments travel in
/// one request, and a probe has no business sending more.
pub(crate) const MAX_ARGUMENTS_JSON_BYTES: usize = 65_536;

/// Whether `text` has nothing but whitespace (a blank name or command is never meant).
pub(crate) fn is_blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// Whether `s` contains a NUL byte, which no argv entry, path or environment entry can hold.
pub(crate) fn has_nul(s: &str) -> bool {
    s.contains('\0')
}

/// Whether `s` can name an environment variable: not blank, no `=` (it would split the
/// entry) and no NUL.
pub(crate) fn is_env_name(s: &str) -> bool {
    !is_blank(s) && !s.contains('=') && !has_nul(s)
}

/// Whether `s` is a graph id: `^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$` (safe in messages, paths
/// and the result document without quoting).
pub(crate) fn is_id(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() <= 64
        && b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

/// Whether `p` is an RFC 6901 JSON Pointer: empty, or `/`-separated tokens where `~` appears
/// only as `~0` or `~1`.
pub(crate) fn is_json_pointer(p: &str) -> bool {
    if p.is_empty() {
        return true;
    }
    if !p.starts_with('/') {
        return false;
    }
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return false;
        }
    }
    true
}

/// `one of a, b, c`: how every message lists the accepted spellings.
pub(crate) fn one_of(names: &[&str]) -> String {
    format!("one of {}", names.join(", "))
}

/// `unknown <what>; expected one of a, b, c (did you mean `b`?)`. It never echoes `found`:
/// a secret typed into the wrong place must not be printed back, a known spelling may.
pub(crate) fn unknown(what: &str, names: &[&str], found: &str) -> String {
    let mut msg = format!("unknown {what}; expected {}", one_of(names));
    if let Some(s) = suggest(found, names.iter().copied()) {
        msg.push_str(&format!(" (did you mean `{s}`?)"));
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_inclusive() {
        assert!(TIMEOUT_MS.contains(1) && TIMEOUT_MS.contains(300_000));
        assert!(!TIMEOUT_MS.contains(0) && !TIMEOUT_MS.contains(300_001));
        assert!(RETRIES.contains(0) && !RETRIES.contains(4));
    }

    #[test]
    fn env_names() {
        assert!(is_env_name("TOKEN") && is_env_name("a b"));
        for bad in ["", " ", "\t", "A=B", "=", "A\0"] {
            assert!(!is_env_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn ids() {
        assert!(is_id("a") && is_id("0.b_c-d") && is_id(&"a".repeat(64)));
        for bad in ["", "-a", "_a", ".a", "a b", "a/b", "é", &"a".repeat(65)] {
            assert!(!is_id(bad), "{bad:?}");
        }
    }

    #[test]
    fn json_pointers() {
        for ok in ["", "/", "/a/b", "/a~0b/~1", "/0"] {
            assert!(is_json_pointer(ok), "{ok:?}");
        }
        for bad in ["a", "/~", "/~2", "/a~"] {
            assert!(!is_json_pointer(bad), "{bad:?}");
        }
    }

    #[test]
    fn one_of_lists_and_suggests_without_echoing() {
        assert_eq!(one_of(&["a", "b"]), "one of a, b");
        assert_eq!(
            unknown(
                "grant",
                &["refresh_token", "client_credentials"],
                "refresh_tokn"
            ),
            "unknown grant; expected one of refresh_token, client_credentials \
             (did you mean `refresh_token`?)"
        );
        assert_eq!(
            unknown("grant", &["x"], "sk-secret"),
            "unknown grant; expected one of x"
        );
    }
}
