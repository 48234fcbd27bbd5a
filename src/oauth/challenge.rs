//! The `WWW-Authenticate` challenge of a protected MCP server (RFC 6750 §3, RFC 9728 §5.1):
//! the `resource_metadata` URL and the `scope` it names.
//!
//! Only the `Bearer` challenge is read. Auth-params are `name=token` or `name="quoted"`
//! (with `\` escapes); names compare case-insensitively. A value is kept only when it is at
//! most 2 KiB of visible ASCII: the URL is fetched, the scope may be sent, and neither is
//! ever shown.

/// What a challenge names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Challenge {
    /// `resource_metadata`: where the protected-resource metadata is.
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the resource wants, space-separated.
    pub scope: Option<String>,
    /// The endpoint answered 401 (set by discovery, which knows the status): it wants
    /// credentials, named or not.
    pub unauthorized: bool,
}

impl Challenge {
    /// Whether it names anything.
    pub(crate) fn names_anything(&self) -> bool {
        self.resource_metadata.is_some() || self.scope.is_some()
    }
}

/// Longest value kept.
const MAX_VALUE: usize = 2048;

/// Reads the `Bearer` challenge among `values` (each a `WWW-Authenticate` header value).
pub(crate) fn parse<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> Challenge {
    let mut out = Challenge::default();
    for value in values {
        let Ok(text) = std::str::from_utf8(value) else {
            continue;
        };
        for (scheme, params) in challenges(text) {
            if !scheme.eq_ignore_ascii_case("bearer") {
                continue;
            }
            for (name, value) in params {
                let keep =
                    value.len() <= MAX_VALUE && value.bytes().all(|b| (0x20..0x7f).contains(&b));
                if !keep {
                    continue;
                }
                if name.eq_ignore_ascii_case("resource_metadata") && out.resource_metadata.is_none()
                {
                    out.resource_metadata = Some(value);
                } else if name.eq_ignore_ascii_case("scope") && out.scope.is_none() {
                    out.scope = Some(value).filter(|s| !s.trim().is_empty());
                }
            }
            return out;
        }
    }
    out
}

/// The challenges of one header value: each scheme with its auth-params.
fn challenges(text: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut out: Vec<(String, Vec<(String, String)>)> = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches([' ', '\t', ',']);
        if rest.is_empty() {
            return out;
        }
        let token_end = rest.find(['=', ',', ' ', '\t', '"']).unwrap_or(rest.len());
        let token = &rest[..token_end];
        let after = &rest[token_end..];
        let after_ws = after.trim_start_matches([' ', '\t']);
        if token.is_empty() {
            // A stray `=` or quote: skip one character.
            rest = &rest[rest.chars().next().map_or(1, char::len_utf8)..];
            continue;
        }
        if let Some(value_text) = after_ws.strip_prefix('=') {
            // An auth-param of the current challenge (or a token68 ending in `=`).
            let value_text = value_text.trim_start_matches([' ', '\t']);
            let (value, remaining) = value_of(value_text);
            if let Some((_, params)) = out.last_mut() {
                params.push((token.to_string(), value));
            }
            rest = remaining;
        } else {
            // A new challenge's scheme.
            out.push((token.to_string(), Vec::new()));
            rest = after;
        }
    }
}

/// A quoted-string or a token at the start of `text`, and what follows it.
fn value_of(text: &str) -> (String, &str) {
    if let Some(quoted) = text.strip_prefix('"') {
        let mut value = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        value.push(escaped);
                    }
                }
                '"' => return (value, &quoted[i + 1..]),
                c => value.push(c),
            }
        }
        (value, "")
    } else {
        let end = text.find([',', ' ', '\t']).unwrap_or(text.len());
        (text[..end].to_string(), &text[end..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(values: &[&str]) -> Challenge {
        parse(values.iter().map(|v| v.as_bytes()))
    }

    #[test]
    fn bearer_params_are_read_whatever_their_form() {
        let c = of(&[
            r#"Bearer resource_metadata="https://h/.well-known/oauth-protected-resource/mcp", scope="files:read files:write""#,
        ]);
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://h/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c.scope.as_deref(), Some("files:read files:write"));
        let c = of(&[r#"bearer Scope=read,RESOURCE_METADATA="https://h/m""#]);
        assert_eq!(c.scope.as_deref(), Some("read"));
        assert_eq!(c.resource_metadata.as_deref(), Some("https://h/m"));
        let c = of(&[r#"Bearer realm="a\"b", scope="x""#]);
        assert_eq!(c.scope.as_deref(), Some("x"));
    }

    #[test]
    fn only_the_bearer_challenge_counts() {
        let c = of(&[
            r#"Basic realm="x", scope="basic-scope""#,
            r#"DPoP algs="ES256", Bearer scope="mcp""#,
        ]);
        assert_eq!(c.scope.as_deref(), Some("mcp"));
        assert_eq!(c.resource_metadata, None);
        assert_eq!(of(&["Negotiate abc=="]), Challenge::default());
        assert_eq!(of(&[""]), Challenge::default());
    }

    #[test]
    fn oversized_or_control_values_are_dropped() {
        let long = format!(
            r#"Bearer resource_metadata="https://h/{}""#,
            "a".repeat(3000)
        );
        assert_eq!(of(&[&long]).resource_metadata, None);
        let c = of(&["Bearer scope=\"a\u{7}b\""]);
        assert_eq!(c.scope, None);
        let c = of(&[r#"Bearer scope="   ""#]);
        assert_eq!(c.scope, None);
    }

    #[test]
    fn garbage_never_panics() {
        for text in [
            "=",
            "\"",
            "Bearer =",
            "Bearer a=\"",
            "Bearer a=\"\\",
            ",,,",
            "Bearer ,=,\"x",
            "Bearer\tscope\t=\t\"y\"",
            "é=é",
        ] {
            let _ = of(&[text]);
        }
        assert_eq!(of(&["Bearer\tscope\t=\t\"y\""]).scope.as_deref(), Some("y"));
    }
}
