//! The single redaction pass: every string from outside our code that reaches stdout or
//! stderr — a target name or id, a configured value in evidence, a word of the command line
//! — goes through [`Redactor::apply`] (ids through [`Redactor::apply_to_id`]).
//!
//! Three rules, in order: resolved credential values become `[REDACTED]`; URL-looking text
//! becomes `[REDACTED URL]`; credential assignments (`token=…`, `password: …`, `Bearer …`)
//! become `[REDACTED CREDENTIAL]`.
//!
//! Two promises hold for a secret of any length, a one-character token included:
//!
//! * **It never appears.** Every string from outside is searched for every secret, as a
//!   substring. A secret of [`SPLICE_MIN`] characters or more is replaced where it occurs
//!   (`svc-[REDACTED]`), longest first; a shorter one replaces the whole string it occurs
//!   in, since splicing it out of a word would leave nonsense and could not be told from
//!   coincidence.
//! * **It never garbles our own words.** Messages, evidence words and advice are fixed text
//!   of this program: no secret can be in them, so they never pass through here, and a
//!   token `e` cannot turn "authentication rejected" into `auth[REDACTED]ntication`.

/// Knows the run's secret values.
#[derive(Clone, Debug, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

const URL_SCHEMES: [&str; 10] = [
    "https://",
    "http://",
    "postgresql://",
    "postgres://",
    "mysql://",
    "mongodb+srv://",
    "mongodb://",
    "rediss://",
    "redis://",
    "stdio://",
];

const CREDENTIAL_WORDS: [&str; 9] = [
    "authorization",
    "api_key",
    "api-key",
    "apikey",
    "api key",
    "password",
    "secret",
    "token",
    "passwd",
];

/// The shortest secret replaced where it occurs; a shorter one replaces the whole string it
/// is found in.
pub const SPLICE_MIN: usize = 4;

impl Redactor {
    /// A redactor for these secret values (empty values are ignored).
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a str>) -> Redactor {
        let mut secrets: Vec<String> = secrets
            .into_iter()
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        Redactor { secrets }
    }

    /// Applies every rule to one string from outside our code.
    pub fn apply(&self, text: &str) -> String {
        let out = self.replace_secrets(text, "[REDACTED]");
        let out = redact_urls(&out);
        redact_assignments(&out)
    }

    /// The secrets rule alone, for `doctor --oauth-details`: its URLs are what it shows (the
    /// OAuth client validated each), so only a credential value could still need hiding.
    pub fn apply_secrets(&self, text: &str) -> String {
        self.replace_secrets(text, "[REDACTED]")
    }

    /// For a target id: every secret value becomes `redacted`, so the id still matches
    /// `^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$` (as upstream does). An id cannot hold a URL or an
    /// assignment: its alphabet has no `:`, `/`, `=` or space.
    pub fn apply_to_id(&self, id: &str) -> String {
        self.replace_secrets(id, "redacted")
    }

    /// `text` with every secret replaced by `with`: spliced out when it is long enough, the
    /// whole of `text` when a short one occurs in it.
    fn replace_secrets(&self, text: &str, with: &str) -> String {
        let short = |s: &String| s.chars().count() < SPLICE_MIN;
        if self
            .secrets
            .iter()
            .any(|s| short(s) && text.contains(s.as_str()))
        {
            return with.to_string();
        }
        let mut out = text.to_string();
        for s in self.secrets.iter().filter(|s| !short(s)) {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), with);
            }
        }
        out
    }
}

fn redact_urls(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let hit = URL_SCHEMES
            .iter()
            .find(|scheme| lower[i..].starts_with(*scheme) && word_boundary_before(text, i));
        match hit {
            Some(_) => {
                let end = text[i..]
                    .find(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == '`')
                    .map_or(text.len(), |n| i + n);
                out.push_str("[REDACTED URL]");
                i = end;
            }
            None => {
                let ch = text[i..].chars().next().unwrap_or(' ');
                out.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    out
}

fn word_boundary_before(text: &str, i: usize) -> bool {
    text[..i]
        .chars()
        .next_back()
        .is_none_or(|c| !c.is_ascii_alphanumeric())
}

fn redact_assignments(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if let Some(end) = assignment_at(text, &lower, i) {
            out.push_str("[REDACTED CREDENTIAL]");
            i = end;
            continue;
        }
        let ch = text[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// If a credential assignment starts at `i`, the byte index where it ends.
fn assignment_at(text: &str, lower: &str, i: usize) -> Option<usize> {
    if !word_boundary_before(text, i) {
        return None;
    }
    let rest = &lower[i..];
    if let Some(after) = rest.strip_prefix("bearer ") {
        let value_start = i + "bearer ".len() + (after.len() - after.trim_start().len());
        return value_end(text, value_start);
    }
    let word = CREDENTIAL_WORDS.iter().find(|w| rest.starts_with(*w))?;
    let mut j = i + word.len();
    // Allow `_id`-style suffixes to be part of another word: `token_file` is not a value.
    let bytes = text.as_bytes();
    while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
        j += 1;
    }
    if j < bytes.len() && (bytes[j] == b'=' || bytes[j] == b':') {
        j += 1;
        while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
            j += 1;
        }
        // `Authorization: Bearer abc` — the scheme word belongs to the value.
        for scheme in ["bearer ", "basic "] {
            if lower[j..].starts_with(scheme) {
                j += scheme.len();
            }
        }
        return value_end(text, j);
    }
    None
}

fn value_end(text: &str, start: usize) -> Option<usize> {
    let len = text[start..]
        .find(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == ',' || c == ';')
        .unwrap_or(text.len() - start);
    (len > 0).then_some(start + len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_longest_first() {
        let r = Redactor::new(["abcd", "abcdefgh", ""]);
        assert_eq!(r.apply("x abcdefgh y abcd"), "x [REDACTED] y [REDACTED]");
    }

    /// A secret of a few characters never garbles (it is never spliced out of a word) and
    /// never appears (a string that holds it is replaced whole).
    #[test]
    fn short_secrets_neither_garble_nor_appear() {
        for secret in ["e", "a1", "xyz"] {
            let r = Redactor::new([secret, "long-secret-value"]);
            for text in [
                format!("svc-{secret}"),
                format!("search{secret}engine"),
                secret.to_string(),
                format!("{secret} and long-secret-value"),
            ] {
                let out = r.apply(&text);
                assert_eq!(out, "[REDACTED]", "{secret:?} in {text:?}");
                assert_eq!(r.apply_to_id(&text), "redacted");
            }
            // Strings without it are left as they are, however close.
            let other = if secret == "e" { "ping" } else { "doctor" };
            assert_eq!(r.apply(other), other);
        }
        // Long secrets are spliced out, keeping the rest readable.
        let r = Redactor::new(["abcd", "long-secret-value"]);
        assert_eq!(r.apply("svc-abcd-x"), "svc-[REDACTED]-x");
        assert_eq!(r.apply("long-secret-value!"), "[REDACTED]!");
    }

    #[test]
    fn ids_keep_their_pattern() {
        let r = Redactor::new(["tok123"]);
        assert_eq!(r.apply_to_id("svc-tok123.a"), "svc-redacted.a");
        let id = r.apply_to_id("tok123");
        assert!(
            id.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')),
            "{id}"
        );
    }

    #[test]
    fn urls() {
        let r = Redactor::default();
        assert_eq!(
            r.apply("see https://user:pw@h/x?token=1 now"),
            "see [REDACTED URL] now"
        );
        assert_eq!(r.apply("POSTGRES://a/b"), "[REDACTED URL]");
        assert_eq!(r.apply("no url here"), "no url here");
    }

    #[test]
    fn assignments() {
        let r = Redactor::default();
        assert_eq!(r.apply("token=abc123 ok"), "[REDACTED CREDENTIAL] ok");
        assert_eq!(r.apply("Password: hunter2"), "[REDACTED CREDENTIAL]");
        assert_eq!(
            r.apply("Authorization: Bearer xyz"),
            "[REDACTED CREDENTIAL]"
        );
        assert_eq!(r.apply("use Bearer abc.def"), "use [REDACTED CREDENTIAL]");
        assert_eq!(r.apply("api key = k1"), "[REDACTED CREDENTIAL]");
    }

    #[test]
    fn canonical_messages_survive() {
        let r = Redactor::default();
        for m in [
            "MCP OAuth configuration, discovery or token acquisition failed",
            "credential environment variable is missing or empty",
            "MCP OAuth login is required; use agenthealth login",
            "HTTP authentication rejected (401 or 403)",
        ] {
            assert_eq!(r.apply(m), m);
        }
    }
}
