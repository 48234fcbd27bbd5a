//! Evidence: the facts that explain a check, keyed by names declared once, here.
//!
//! [`Key`] is the registry of every evidence key the binary can emit, each with its meaning;
//! the documentation's evidence tables are checked against [`Key::ALL`] by a test, so a key
//! cannot appear without being documented, nor be documented without existing.
//!
//! Values are numbers, fixed words chosen by our code, or names taken from the configuration
//! — never text received from a server, never a credential ([`Fact`]).

use std::fmt;

macro_rules! keys {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal : $meaning:literal, )*) => {
        /// An evidence key.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Key {
            $( $(#[$doc])* #[doc = $meaning] $variant, )*
        }

        impl Key {
            /// Every key, in declaration order.
            pub const ALL: &'static [Key] = &[$(Key::$variant,)*];

            /// The result spelling.
            pub fn as_str(self) -> &'static str {
                match self { $(Key::$variant => $name,)* }
            }

            /// What the key means, in one line.
            pub fn meaning(self) -> &'static str {
                match self { $(Key::$variant => $meaning,)* }
            }
        }
    };
}

keys! {
    // Transport stages and deadlines.
    DnsMs = "dns_ms": "name resolution time, ms",
    TcpMs = "tcp_ms": "TCP connect time, ms",
    TlsMs = "tls_ms": "TLS handshake time, ms",
    HttpMs = "http_ms": "request written to response head read, ms",
    DeadlineMs = "deadline_ms": "the deadline the attempt had when it ran out, ms",
    SharedTimeout = "shared_timeout": "the earlier check whose attempt timed out with nothing received on this run's session or process; this one reports that outcome instead of waiting again",
    Failure = "failure": "why a network exchange failed (dns, connect_refused, timeout, reset, closed, tls_untrusted, …)",
    LocalResource = "local_resource": "the resource of this host that ran out (file_descriptors, threads, memory): not the target's fault",
    AddressRefused = "address_refused": "why a /probe module's allow list refuses the target (not_allowed, loopback, link_local, metadata, unspecified, multicast, ambiguous_address): nothing was sent to it",
    // Configuration.
    Endpoint = "endpoint": "why the endpoint is not a usable URL (userinfo, fragment, unsupported_scheme, …)",
    Credential = "credential": "why the credential's value cannot be sent (control_character)",
    CredentialEnv = "credential_env": "the variable whose credential the target refused (its name only)",
    CredentialKind = "credential_kind": "oauth when the refused request carried an OAuth access token",
    MissingEnv = "missing_env": "referenced environment variables that are unset or empty",
    TrustStore = "trust_store": "which trust store verifies certificates: env, system or bundled",
    TrustStoreSource = "trust_store_source": "the variables or file behind that trust store",
    TrustStoreCerts = "trust_store_certs": "how many certificates the trust store holds",
    TrustStoreError = "trust_store_error": "why SSL_CERT_FILE/SSL_CERT_DIR cannot be used (unreadable, no_certificates)",
    TrustStoreVariable = "trust_store_variable": "the variable naming an unusable trust store",
    Proxy = "proxy": "the proxy variable an exchange uses",
    ProxyError = "proxy_error": "why that proxy variable is unusable (unsupported_scheme, invalid)",
    // HTTP.
    Method = "method": "the HTTP method of the probe",
    HttpStatus = "http_status": "the HTTP status answered (the failing one, or HEAD's in reachability)",
    Redirect = "redirect": "where a refused redirect points, against the configured endpoint (trailing_slash, no_trailing_slash, https, elsewhere)",
    AuthChallenge = "auth_challenge": "whether a 401/403 carried a WWW-Authenticate challenge",
    OauthChallenge = "oauth_challenge": "the 401's challenge names protected-resource metadata (RFC 9728): the server uses OAuth",
    Address = "address": "the configured endpoint's host and port, when a network exchange with it failed",
    ResponseReused = "response_reused": "the check judged the response reachability already received",
    HeaderMismatch = "header_mismatch": "configured response headers that were missing or different",
    BodyBytes = "body_bytes": "bytes of the functional GET's body that were read",
    MaxBodyBytes = "max_body_bytes": "the configured body limit",
    // Latency.
    LatencyMs = "latency_ms": "the measured reachability latency, ms",
    ThresholdMs = "threshold_ms": "the configured latency threshold, ms",
    // MCP establishment.
    Era = "era": "which era established the session: modern or legacy",
    NegotiatedVersion = "negotiated_version": "the supported revision the session uses",
    PinnedVersion = "pinned_version": "the configured mcp.protocol_version (why this era, and no fallback)",
    ProtocolVersion = "protocol_version": "a configured pin that names no supported revision",
    Fallback = "fallback": "unpinned discovery was rejected the legacy way, so initialize followed",
    DiscoverHttpStatus = "discover_http_status": "the HTTP status of the rejected discovery",
    DiscoverRpcCode = "discover_rpc_code": "the JSON-RPC error code of the rejected discovery",
    DiscoverResult = "discover_result": "why a server/discover result was no modern answer: no_versions (no supportedVersions at all)",
    TransportHint = "transport_hint": "the deprecated HTTP+SSE transport: sse_path (the endpoint's path ends in /sse) or http_sse (a GET opened its event stream)",
    SessionIdIssued = "session_id_issued": "whether legacy initialize assigned a session id",
    ResponseMode = "response_mode": "how the establishing response arrived: json or sse",
    ServerVersion = "server_version": "the revision the server answered when it was refused (YYYY-MM-DD, grammar-checked)",
    FailedMethod = "failed_method": "the method of the message that failed",
    RpcCode = "rpc_code": "the JSON-RPC error code answered",
    ProtocolError = "protocol_error": "what was malformed, in our words",
    Limit = "limit": "which safety limit was exceeded",
    Oauth = "oauth": "which OAuth step failed (resource_metadata, issuer_not_listed, token_endpoint, token_file, …)",
    OauthError = "oauth_error": "the token endpoint's RFC 6749 error code (invalid_client, invalid_grant, …)",
    TokenFile = "token_file": "why the token file cannot be used (permissions, symlink, binding, …), could not take a refreshed token (unwritable, unsaved), or that a refreshed token a killed run left was recovered",
    OsError = "os_error": "the operating system's reason a token file could not be written (enospc, edquot, eio, erofs, eacces, eperm, other)",
    ChallengeScope = "challenge_scope": "ignored: the 401 challenge's scope broke the scope-token rule, so it was not requested",
    Login = "login": "expired: the saved access token expired and the authorization server issued no refresh token",
    TokenSource = "token_source": "file: the access token sent came from the token file as saved (a refusal then means it was revoked)",
    IssuerSlash = "issuer_slash": "the server names mcp.oauth.issuer only a trailing slash apart: with or without it",
    Discovery = "discovery": "2025-03-26 when the server published no protected-resource metadata and the pinned issuer at its origin was used, as that revision did",
    ResourceRule = "resource_rule": "how the root protected-resource metadata's resource names the endpoint when it is not the endpoint itself (root_origin, path_prefix)",
    AuthMethod = "auth_method": "the token endpoint client authentication used or refused (client_secret_basic, client_secret_post, none)",
    AuthMethodAlternative = "auth_method_alternative": "the other confidential method the server lists, when the one used was chosen automatically",
    // MCP inventories.
    ToolsCount = "tools_count": "tools listed",
    ResourcesCount = "resources_count": "resources listed",
    PromptsCount = "prompts_count": "prompts listed",
    ToolsExcluded = "tools_excluded": "tools dropped for invalid x-mcp-header annotations",
    MissingTools = "missing_tools": "configured tools not advertised",
    MissingResources = "missing_resources": "configured resources not advertised",
    MissingPrompts = "missing_prompts": "configured prompts not advertised",
    ExcludedTools = "excluded_tools": "configured tools that were excluded",
    ExclusionReason = "exclusion_reason": "why the first of them was excluded",
    // MCP stdio processes.
    ExitCode = "exit_code": "the exit code of a stdio server that ended before answering",
    ExitSignal = "exit_signal": "the signal that ended it",
    ProcessRunning = "process_running": "it was still running when its output closed or the deadline passed",
    StdoutBytes = "stdout_bytes": "bytes the stdio server wrote in answer to the request the deadline cut (0: nothing)",
    ProcessError = "process_error": "why the stdio command cannot start (command_not_found, …)",
    Command = "command": "the configured stdio command",
    // MCP functional checks.
    Tool = "tool": "the configured functional tool",
    UnsafeAnnotation = "unsafe_annotation": "which safety annotation is missing or wrong",
    ArgumentViolation = "argument_violation": "the argument path and schema rule arguments_json breaks",
    ContentBlocks = "content_blocks": "content blocks in the tool result",
    ContentBlock = "content_block": "index of the first invalid content block",
    IsError = "is_error": "the tool returned isError: true",
    OutputSchemaChecked = "output_schema_checked": "structuredContent matched the tool's outputSchema",
    OutputViolation = "output_violation": "the path and rule structuredContent breaks",
    ExpectationsMet = "expectations_met": "expectations that held",
    ExpectationsFailed = "expectations_failed": "expectations that failed",
    ExpectKind = "expect_kind": "the kind of the first failed expectation (json, text_contains, fresh_within_s)",
    ExpectPointer = "expect_pointer": "its JSON Pointer, as configured",
    Expected = "expected": "its expected value, as configured",
    ExpectFailure = "expect_failure": "why it failed (differs, missing, stale, …)",
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One observed fact. Values are numbers, fixed words chosen by our code, or names taken from
/// the configuration — never text received from a server, never a credential.
#[derive(Clone, Debug, PartialEq)]
pub enum Fact {
    /// A count or code (HTTP status, JSON-RPC error code, inventory size).
    Int(i64),
    /// A duration in milliseconds.
    Ms(f64),
    /// A yes/no observation.
    Bool(bool),
    /// A fixed word from our own vocabulary (`"sse"`, `"2025-06-18"` after validation, …).
    Word(&'static str),
    /// A name copied from the configuration (a required tool, an env var name).
    Config(String),
    /// Several names copied from the configuration.
    ConfigList(Vec<String>),
    /// A sentence of our own words around names from the configuration (a rule an argument
    /// broke, the failing path of a result). Its type admits nothing else.
    Phrase(Phrase),
    /// A protocol revision a server answered: a date its type checked, never free text.
    Revision(RevisionDate),
}

/// A protocol revision as a server spelled it, accepted only when it matches the revision
/// grammar (`YYYY-MM-DD`: four digits, a month 01–12, a day 01–31), so evidence can name a
/// revision we do not support (`2024-11-05`) without ever carrying text from a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RevisionDate([u8; 10]);

impl RevisionDate {
    /// `text` when it is a revision, else `None`.
    pub fn parse(text: &str) -> Option<RevisionDate> {
        let b: [u8; 10] = text.as_bytes().try_into().ok()?;
        let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
        let number = |r: std::ops::Range<usize>| {
            b[r].iter()
                .fold(0u32, |n, d| n * 10 + u32::from(d.wrapping_sub(b'0')))
        };
        let shaped = digits(0..4) && b[4] == b'-' && digits(5..7) && b[7] == b'-' && digits(8..10);
        (shaped && (1..=12).contains(&number(5..7)) && (1..=31).contains(&number(8..10)))
            .then_some(RevisionDate(b))
    }

    /// The revision as spelled (ASCII by construction).
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl fmt::Display for RevisionDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One part of a [`Phrase`].
#[derive(Clone, Debug, PartialEq)]
pub enum Piece {
    /// Our own words.
    Word(&'static str),
    /// A name or value copied from the configuration (redacted like [`Fact::Config`]).
    Config(String),
    /// A number we derived ourselves (an array index, a count).
    Int(i64),
}

/// A sentence built only from our own words, our numbers and names from the configuration,
/// so evidence can explain a failure in prose without ever carrying text from a server.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Phrase(Vec<Piece>);

impl Phrase {
    /// An empty phrase.
    pub fn new() -> Phrase {
        Phrase::default()
    }

    /// Builder: appends our own words.
    pub fn word(mut self, word: &'static str) -> Phrase {
        self.0.push(Piece::Word(word));
        self
    }

    /// Builder: appends a name from the configuration.
    pub fn config(mut self, name: impl Into<String>) -> Phrase {
        self.0.push(Piece::Config(name.into()));
        self
    }

    /// Builder: appends a number.
    pub fn int(mut self, n: i64) -> Phrase {
        self.0.push(Piece::Int(n));
        self
    }

    /// Appends every piece of `other`.
    pub fn append(&mut self, other: Phrase) {
        self.0.extend(other.0);
    }

    /// The sentence, with each configuration name passed through `config` (cleaning,
    /// redaction) and everything else verbatim.
    pub fn render(&self, config: &dyn Fn(&str) -> String) -> String {
        let mut out = String::new();
        for piece in &self.0 {
            match piece {
                Piece::Word(w) => out.push_str(w),
                Piece::Config(s) => out.push_str(&config(s)),
                Piece::Int(i) => out.push_str(&i.to_string()),
            }
        }
        out
    }

    /// Applies `f` to every configuration name (the redaction hook).
    pub fn map_config(&mut self, f: &dyn Fn(&str) -> String) {
        for piece in &mut self.0 {
            if let Piece::Config(s) = piece {
                *s = f(s);
            }
        }
    }
}

impl fmt::Display for Phrase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&str::to_owned))
    }
}

/// Facts a check observed, in insertion order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evidence(pub Vec<(Key, Fact)>);

impl Evidence {
    /// Records (or replaces) a fact.
    pub fn set(&mut self, key: Key, fact: Fact) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = fact,
            None => self.0.push((key, fact)),
        }
    }

    /// Looks a fact up.
    pub fn get(&self, key: Key) -> Option<&Fact> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, f)| f)
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds every fact of `other`, replacing equal keys.
    pub fn extend(&mut self, other: &Evidence) {
        for (k, f) in &other.0 {
            self.set(*k, f.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_identifiers_with_a_meaning() {
        let mut seen = std::collections::HashSet::new();
        for key in Key::ALL {
            let s = key.as_str();
            assert!(seen.insert(s), "{s} declared twice");
            assert!(
                s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{s}"
            );
            assert!(!key.meaning().is_empty(), "{s}");
        }
    }

    #[test]
    fn revisions_follow_the_grammar_and_nothing_else_passes() {
        for ok in ["2024-11-05", "2025-06-18", "2099-12-31", "2026-07-28"] {
            assert_eq!(
                RevisionDate::parse(ok).map(|r| r.to_string()),
                Some(ok.into())
            );
        }
        for bad in [
            "",
            "2024-11-5",
            "2024-13-01",
            "2024-00-10",
            "2024-11-32",
            "2024-11-00",
            "2024/11/05",
            " 2024-11-05",
            "2024-11-05 ",
            "latest",
            "2024-11-05\u{1b}",
            "２０２４-11-05",
            "20241105",
            "2024-1105x",
        ] {
            assert_eq!(RevisionDate::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn phrases_render_words_numbers_and_config_names() {
        let mut p = Phrase::new()
            .word("argument `")
            .config("a\u{1b}b")
            .word("[");
        p.append(Phrase::new().int(2).word("]`"));
        assert_eq!(p.to_string(), "argument `a\u{1b}b[2]`");
        assert_eq!(
            p.render(&|s: &str| s.replace('\u{1b}', " ")),
            "argument `a b[2]`"
        );
        p.map_config(&|_: &str| "[REDACTED]".to_owned());
        assert_eq!(p.to_string(), "argument `[REDACTED][2]`");
        assert_eq!(p.0.len(), 5, "the pieces, in order");
    }
}
