//! doctor's advice, from typed reasons and evidence.

use super::*;
use crate::contract::Bound;
use crate::output::terminal::tests::{edge, node};
use crate::result::Key;
use crate::result::reason::{HttpFailure, NetFailure, Note};

fn causes(doc: &Document, unicode: bool) -> Vec<String> {
    let style = Style {
        color: false,
        unicode,
        width: None,
    };
    advise(doc, style)
        .lines()
        .filter(|l| l.starts_with("Doctor: root cause: "))
        .map(str::to_string)
        .collect()
}

/// Advice for a target from a configuration file.
fn file_advice(dim: Dimension, check: &Check) -> Option<String> {
    check_advice(dim, check, Audience::default())
}

fn check(status: Status, reason: Option<Reason>, facts: &[(Key, Fact)]) -> Check {
    Check {
        code: reason.and_then(Reason::code),
        reason,
        status,
        message: reason.and_then(Reason::message),
        steps: Default::default(),
        evidence: crate::result::Evidence(facts.to_vec()),
    }
}

#[test]
fn a_rejected_token_is_named_by_its_variable() {
    let rejected = check(
        Status::Misconfigured,
        Some(Reason::Http(HttpFailure::AuthRejected)),
        &[
            (Key::HttpStatus, Fact::Int(401)),
            (Key::CredentialEnv, Fact::Config("API_TOKEN".into())),
        ],
    );
    assert_eq!(
        file_advice(Dimension::Authentication, &rejected).as_deref(),
        Some("HTTP 401: the token in $API_TOKEN was rejected; check its value and scope")
    );
    let anonymous = check(
        Status::Misconfigured,
        Some(Reason::Http(HttpFailure::AuthRejected)),
        &[(Key::HttpStatus, Fact::Int(403))],
    );
    let advice = file_advice(Dimension::Protocol, &anonymous).unwrap_or_default();
    assert!(
        advice.starts_with("HTTP 403: the endpoint requires credentials; set auth.bearer_env"),
        "{advice}"
    );
}

#[test]
fn certificate_advice_names_the_trust_store() {
    let untrusted = |facts: &[(Key, Fact)]| {
        let mut all = vec![(Key::Failure, Fact::Word("tls_untrusted"))];
        all.extend_from_slice(facts);
        let reason = Some(Reason::Network(NetFailure::TlsUntrusted));
        file_advice(
            Dimension::Reachability,
            &check(Status::Unreachable, reason, &all),
        )
        .unwrap_or_default()
    };
    for (facts, names) in [
        (
            vec![
                (Key::TrustStore, Fact::Word("env")),
                (Key::TrustStoreSource, Fact::Word("SSL_CERT_FILE")),
            ],
            "the trust store named by SSL_CERT_FILE",
        ),
        (
            vec![
                (Key::TrustStore, Fact::Word("system")),
                (
                    Key::TrustStoreSource,
                    Fact::Word("/etc/ssl/certs/ca-certificates.crt"),
                ),
            ],
            "the system trust store /etc/ssl/certs/ca-certificates.crt",
        ),
        (
            vec![(Key::TrustStore, Fact::Word("bundled"))],
            "the bundled Mozilla roots",
        ),
    ] {
        let advice = untrusted(&facts);
        assert!(advice.contains(names), "{advice}");
    }
}

#[test]
fn status_advice_depends_on_the_status_and_method() {
    let advice = |status: i64, method: &'static str| {
        file_advice(
            Dimension::Protocol,
            &check(
                Status::Unhealthy,
                Some(Reason::Http(HttpFailure::StatusMismatch)),
                &[
                    (Key::Method, Fact::Word(method)),
                    (Key::HttpStatus, Fact::Int(status)),
                ],
            ),
        )
        .unwrap_or_default()
    };
    assert!(advice(405, "HEAD").contains("set http.method: GET"));
    assert!(advice(501, "HEAD").contains("set http.method: GET"));
    assert!(advice(405, "GET").contains("check the endpoint path"));
    assert!(advice(302, "HEAD").contains("agenthealth never follows redirects"));
    assert!(advice(404, "HEAD").contains("check the endpoint path, or list 404"));
    assert!(advice(503, "HEAD").contains("server error"));
    assert!(advice(204, "GET").contains("not in http.expected_status"));
}

#[test]
fn transport_advice_says_what_happened() {
    let advice = |status: Status, reason: Reason, facts: &[(Key, Fact)]| {
        file_advice(Dimension::Reachability, &check(status, Some(reason), facts))
            .unwrap_or_default()
    };
    let timed_out = |bound, response_seen| {
        Reason::Engine(Note::TimedOut {
            bound,
            response_seen,
        })
    };
    let deadline = |ms| [(Key::DeadlineMs, Fact::Ms(ms))];
    let silent = advice(
        Status::Unreachable,
        timed_out(Bound::TimeoutMs, false),
        &deadline(300.0),
    );
    assert_eq!(
        silent,
        "no response within 300 ms; check that the service is up and reachable, and that timeout_ms is adequate"
    );
    let slow = advice(
        Status::Unknown,
        timed_out(Bound::TimeoutMs, true),
        &deadline(1500.0),
    );
    assert!(slow.contains("did not complete within 1500 ms"), "{slow}");
    let cut = advice(
        Status::Unknown,
        Reason::Network(NetFailure::Reset),
        &[(Key::Failure, Fact::Word("reset"))],
    );
    assert!(cut.contains("cut the connection in the middle"), "{cut}");
    let closed = advice(
        Status::Unreachable,
        Reason::Network(NetFailure::Closed),
        &[],
    );
    assert!(
        closed.contains("closed the connection without answering"),
        "{closed}"
    );
    let dns = advice(Status::Unreachable, Reason::Network(NetFailure::Dns), &[]);
    assert!(dns.contains("does not resolve"), "{dns}");
}

/// doctor names the setting that set the deadline that ran out: a budget or the run cap is
/// not a reason to raise `timeout_ms`, and an ad-hoc `ping` has `--timeout`, not a key.
#[test]
fn deadline_advice_names_the_bound_that_ran_out() {
    let advice = |bound| {
        let reason = Reason::Engine(Note::TimedOut {
            bound,
            response_seen: false,
        });
        file_advice(
            Dimension::Protocol,
            &check(
                Status::Unreachable,
                Some(reason),
                &[(Key::DeadlineMs, Fact::Ms(300.0))],
            ),
        )
        .unwrap_or_default()
    };
    assert!(advice(Bound::TimeoutFlag).ends_with("that --timeout is adequate"));
    assert!(advice(Bound::BudgetMs).ends_with("that budget_ms is adequate"));
    assert!(advice(Bound::CheckTimeoutMs).ends_with("that check_timeouts_ms is adequate"));
    let cap = advice(Bound::RunCap);
    assert!(
        cap.contains("the 60 s cap on every run") && !cap.contains("timeout_ms"),
        "{cap}"
    );
    let exhausted = file_advice(
        Dimension::Capability,
        &check(
            Status::Unreachable,
            Some(Reason::Engine(Note::BudgetExhausted(Bound::BudgetMs))),
            &[],
        ),
    )
    .unwrap_or_default();
    assert!(exhausted.starts_with("budget_ms ran out"), "{exhausted}");
}

#[test]
fn configuration_advice_follows_the_reason() {
    use crate::result::reason::{EndpointProblem, Misconfig, TrustProblem};
    let misconfigured = |problem, facts: &[(Key, Fact)]| {
        file_advice(
            Dimension::Configuration,
            &check(Status::Misconfigured, Some(Reason::Config(problem)), facts),
        )
        .unwrap_or_default()
    };
    for (problem, facts, want) in [
        (
            Misconfig::Endpoint(EndpointProblem::Userinfo),
            vec![],
            "must not carry user:password@",
        ),
        (
            Misconfig::Endpoint(EndpointProblem::Fragment),
            vec![],
            "remove the #fragment",
        ),
        (
            Misconfig::Endpoint(EndpointProblem::UnsupportedScheme),
            vec![],
            "http:// or https://",
        ),
        (
            Misconfig::CredentialControlCharacter,
            vec![],
            "control character",
        ),
        (
            Misconfig::TrustStore(TrustProblem::NoCertificates),
            vec![(Key::TrustStoreVariable, Fact::Word("SSL_CERT_FILE"))],
            "$SSL_CERT_FILE holds no PEM certificate",
        ),
        (
            Misconfig::Proxy,
            vec![(Key::Proxy, Fact::Word("HTTPS_PROXY"))],
            "$HTTPS_PROXY is not a usable proxy",
        ),
        (
            Misconfig::ProtocolPin,
            vec![(Key::ProtocolVersion, Fact::Config("2024-11-05".into()))],
            "`2024-11-05` is not a revision agenthealth supports",
        ),
    ] {
        let advice = misconfigured(problem, &facts);
        assert!(advice.contains(want), "{advice}");
    }
}

#[test]
fn checks_failing_for_one_reason_share_one_advice_line() {
    let mut r = node("api", Status::Misconfigured, vec![]);
    let rejected = check(
        Status::Misconfigured,
        Some(Reason::Http(HttpFailure::AuthRejected)),
        &[(Key::HttpStatus, Fact::Int(401))],
    );
    r.checks.insert(Dimension::Authentication, rejected.clone());
    r.checks.insert(Dimension::Protocol, rejected);
    let text = advise(&Document::new(vec![r]), Style::default());
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("  - ")).collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert!(
        lines[0].starts_with("  - authentication, protocol: HTTP 401:"),
        "{text}"
    );
}

#[test]
fn the_root_cause_is_the_deepest_failing_critical_dependency() {
    // api → gw (critical, failing) → db (critical, failing); api → search (optional,
    // failing): only db is a root cause.
    let db = node("db", Status::Unreachable, vec![]);
    let gw = node(
        "gateway",
        Status::Unhealthy,
        vec![edge(db, Some("db"), true)],
    );
    let search = node("search", Status::Unreachable, vec![]);
    let api = node(
        "api",
        Status::Unhealthy,
        vec![edge(search, None, false), edge(gw, Some("gw"), true)],
    );
    let doc = Document::new(vec![api]);
    assert_eq!(
        causes(&doc, true),
        vec!["Doctor: root cause: api → gateway [id=gw] → db [id=db] is UNREACHABLE"]
    );
    assert_eq!(
        causes(&doc, false),
        vec!["Doctor: root cause: api -> gateway [id=gw] -> db [id=db] is UNREACHABLE"]
    );
}

#[test]
fn a_failing_parent_over_a_healthy_child_is_its_own_root_cause() {
    let db = node("db", Status::Healthy, vec![]);
    let gw = node("gateway", Status::Unhealthy, vec![edge(db, None, true)]);
    let api = node("api", Status::Unhealthy, vec![edge(gw, None, true)]);
    let doc = Document::new(vec![api]);
    assert_eq!(
        causes(&doc, true),
        vec!["Doctor: root cause: api → gateway is UNHEALTHY"]
    );
}

#[test]
fn no_root_cause_without_a_failing_critical_path() {
    // Only an optional dependency fails: the parent is DEGRADED, nothing to blame.
    let search = node("search", Status::Unreachable, vec![]);
    let api = node("api", Status::Degraded, vec![edge(search, None, false)]);
    assert!(causes(&Document::new(vec![api]), true).is_empty());
    // The parent fails on its own checks; its critical dependency is fine.
    let db = node("db", Status::Healthy, vec![]);
    let api = node("api", Status::Unhealthy, vec![edge(db, None, true)]);
    assert!(causes(&Document::new(vec![api]), true).is_empty());
}

#[test]
fn every_failing_branch_is_named() {
    let a = node("a", Status::Unknown, vec![]);
    let b = node("b", Status::Misconfigured, vec![]);
    let api = node(
        "api",
        Status::Unknown,
        vec![edge(a, None, true), edge(b, None, true)],
    );
    assert_eq!(
        causes(&Document::new(vec![api]), true),
        vec![
            "Doctor: root cause: api → a is UNKNOWN",
            "Doctor: root cause: api → b is MISCONFIGURED"
        ]
    );
}

fn mcp_check(failure: crate::result::reason::McpFailure, facts: &[(Key, Fact)]) -> Check {
    check(Status::Unhealthy, Some(Reason::Mcp(failure)), facts)
}

fn revision(text: &str) -> Fact {
    Fact::Revision(crate::result::RevisionDate::parse(text).expect("a revision"))
}

/// The revision a server speaks is named, and what to do depends on whether it is older,
/// newer or one we support (issue 12).
#[test]
fn version_advice_names_what_the_server_speaks() {
    use crate::result::reason::McpFailure;
    let fell_back = |v: &str| {
        vec![
            (Key::Era, Fact::Word("legacy")),
            (Key::Fallback, Fact::Bool(true)),
            (Key::DiscoverHttpStatus, Fact::Int(400)),
            (Key::DiscoverRpcCode, Fact::Int(-32000)),
            (Key::ServerVersion, revision(v)),
            (Key::FailedMethod, Fact::Word("initialize")),
        ]
    };
    let advice = |facts: &[(Key, Fact)]| {
        file_advice(Dimension::Protocol, &mcp_check(McpFailure::Version, facts)).unwrap_or_default()
    };
    assert_eq!(
        advice(&fell_back("2024-11-05")),
        "discover got HTTP 400 -32000; fell back to initialize; the server speaks 2024-11-05; agenthealth supports 2025-03-26, 2025-06-18, 2025-11-25 and 2026-07-28: the server (or its SDK) needs a newer revision"
    );
    assert!(
        advice(&fell_back("2099-01-01"))
            .contains("speaks 2099-01-01, newer than agenthealth supports"),
    );
    assert!(advice(&fell_back("2025-09-01")).contains("pin one of those the server also serves"));
    let pinned = [
        (Key::PinnedVersion, Fact::Word("2025-11-25")),
        (Key::ServerVersion, revision("2025-06-18")),
    ];
    assert!(
        advice(&pinned).ends_with("the server speaks 2025-06-18: pin 2025-06-18 or remove the pin")
    );
    let discover = [
        (Key::ServerVersion, revision("2025-11-25")),
        (Key::FailedMethod, Fact::Word("server/discover")),
    ];
    assert!(
        advice(&discover).contains(
            "the newest it lists is 2025-11-25: pin 2025-11-25 with mcp.protocol_version"
        )
    );
}

/// A 200 that is not a discover result: pin a legacy revision; ad-hoc, in a file.
#[test]
fn a_discover_answer_that_is_not_a_result_asks_for_a_pin() {
    use crate::result::reason::{Malformed, McpFailure};
    let c = mcp_check(
        McpFailure::Malformed(Malformed::Result("discover supportedVersions")),
        &[(Key::FailedMethod, Fact::Word("server/discover"))],
    );
    let file = file_advice(Dimension::Protocol, &c).unwrap_or_default();
    assert!(
        file.contains("not a discover result (discover supportedVersions)"),
        "{file}"
    );
    assert!(file.contains("with mcp.protocol_version, so"), "{file}");
    let adhoc = check_advice(Dimension::Protocol, &c, Audience { adhoc: true }).unwrap_or_default();
    assert!(
        adhoc.contains("in a configuration file (ping and doctor take no pin)"),
        "{adhoc}"
    );
}

/// A redirect says which endpoint to configure when the configuration tells (issue 12).
#[test]
fn redirect_advice_says_which_endpoint_to_configure() {
    use crate::result::reason::McpFailure;
    let advice = |word: Option<&'static str>, audience| {
        let mut facts = vec![
            (Key::HttpStatus, Fact::Int(307)),
            (Key::FailedMethod, Fact::Word("server/discover")),
        ];
        facts.extend(word.map(|w| (Key::Redirect, Fact::Word(w))));
        check_advice(
            Dimension::Protocol,
            &mcp_check(McpFailure::HttpStatus, &facts),
            audience,
        )
        .unwrap_or_default()
    };
    let file = Audience::default();
    assert_eq!(
        advice(Some("trailing_slash"), file),
        "HTTP 307 on server/discover is a redirect, and agenthealth never follows redirects: the server redirects to the same URL with a trailing slash; add the trailing slash to the endpoint"
    );
    assert!(
        advice(Some("no_trailing_slash"), file)
            .ends_with("remove the trailing slash from the endpoint")
    );
    assert!(advice(Some("https"), file).ends_with("use https:// in the endpoint"));
    assert!(advice(Some("elsewhere"), file).contains("agenthealth never shows it"));
    assert!(advice(None, file).contains("agenthealth never shows it"));
    assert!(
        advice(Some("trailing_slash"), Audience { adhoc: true })
            .ends_with("to the endpoint argument")
    );
}

/// A 403 with no credential and no challenge is an allow-list; with a challenge, or with a
/// credential (a bearer variable or an OAuth token), it is about the credential (issue 12).
#[test]
fn a_403_without_challenge_or_credential_is_an_allow_list() {
    let advice = |facts: &[(Key, Fact)]| {
        let c = check(
            Status::Misconfigured,
            Some(Reason::Http(HttpFailure::AuthRejected)),
            facts,
        );
        file_advice(Dimension::Authentication, &c).unwrap_or_default()
    };
    let bare = advice(&[
        (Key::HttpStatus, Fact::Int(403)),
        (Key::AuthChallenge, Fact::Bool(false)),
    ]);
    assert!(bare.contains("Host and Origin allow-lists"), "{bare}");
    assert!(!bare.contains("bearer_env"), "{bare}");
    let challenged = advice(&[
        (Key::HttpStatus, Fact::Int(403)),
        (Key::AuthChallenge, Fact::Bool(true)),
    ]);
    assert!(challenged.contains("set auth.bearer_env"), "{challenged}");
    let with_token = advice(&[
        (Key::HttpStatus, Fact::Int(403)),
        (Key::AuthChallenge, Fact::Bool(false)),
        (Key::CredentialEnv, Fact::Config("T".into())),
    ]);
    assert!(
        with_token.contains("the token in $T was rejected"),
        "{with_token}"
    );
    let oauth = advice(&[
        (Key::HttpStatus, Fact::Int(403)),
        (Key::AuthChallenge, Fact::Bool(false)),
        (Key::CredentialKind, Fact::Word("oauth")),
    ]);
    assert!(oauth.contains("refused the OAuth access token"), "{oauth}");
    assert!(!oauth.contains("allow-lists"), "{oauth}");
    let revoked = advice(&[
        (Key::HttpStatus, Fact::Int(401)),
        (Key::CredentialKind, Fact::Word("oauth")),
        (Key::TokenSource, Fact::Word("file")),
    ]);
    assert!(
        revoked.contains("refused the saved access token") && revoked.contains("log in again"),
        "{revoked}"
    );
    assert!(!revoked.contains("audience"), "{revoked}");
    let oauth_server = advice(&[
        (Key::HttpStatus, Fact::Int(401)),
        (Key::AuthChallenge, Fact::Bool(true)),
        (Key::OauthChallenge, Fact::Bool(true)),
    ]);
    assert!(
        oauth_server.contains("the server uses OAuth")
            && oauth_server.contains("`agenthealth doctor CONFIG --oauth-details`"),
        "{oauth_server}"
    );
    let unauthorized = advice(&[
        (Key::HttpStatus, Fact::Int(401)),
        (Key::AuthChallenge, Fact::Bool(false)),
    ]);
    assert!(
        unauthorized.contains("requires credentials"),
        "{unauthorized}"
    );
}

/// Network advice quotes the configured address; no resolver configuration is said so.
#[test]
fn network_advice_names_the_address_and_a_missing_resolver() {
    let advice = |failure, facts: &[(Key, Fact)]| {
        file_advice(
            Dimension::Reachability,
            &check(Status::Unreachable, Some(Reason::Network(failure)), facts),
        )
        .unwrap_or_default()
    };
    let at = [(Key::Address, Fact::Config("db.internal:5432".into()))];
    assert_eq!(
        advice(NetFailure::ConnectRefused, &at),
        "nothing is listening at `db.internal:5432`"
    );
    assert!(
        advice(NetFailure::Dns, &at)
            .starts_with("the host name of `db.internal:5432` does not resolve")
    );
    let no_resolver = advice(NetFailure::DnsNoResolver, &at);
    assert!(
        no_resolver.contains("no resolver configuration (no /etc/resolv.conf"),
        "{no_resolver}"
    );
}

/// Several targets: the contract's line for each, then each distinct advice once, naming the
/// targets (and checks) it applies to.
#[test]
fn advice_is_given_once_for_every_target_it_applies_to() {
    let refused = || {
        check(
            Status::Unreachable,
            Some(Reason::Network(NetFailure::ConnectRefused)),
            &[(Key::Address, Fact::Config("127.0.0.1:1".into()))],
        )
    };
    let mut a = node("a", Status::Unreachable, vec![]);
    let mut b = node("b", Status::Unreachable, vec![]);
    let mut c = node("c", Status::Unreachable, vec![]);
    for r in [&mut a, &mut b] {
        r.checks.clear();
        r.checks.insert(Dimension::Reachability, refused());
    }
    c.checks.clear();
    c.checks.insert(Dimension::Protocol, refused());
    let text = advise(&Document::new(vec![a, b, c]), Style::default());
    let advice: Vec<&str> = text.lines().filter(|l| l.starts_with("  - ")).collect();
    assert_eq!(
        advice,
        ["  - a, b (reachability); c (protocol): nothing is listening at `127.0.0.1:1`"],
        "{text}"
    );
    // Three targets of one type with one status: one status line.
    let status_lines: Vec<&str> = text.lines().filter(|l| l.starts_with("Doctor: ")).collect();
    assert_eq!(
        status_lines,
        [
            "Doctor: a, b and c (http) are UNREACHABLE. Verify the endpoint, service availability, network access, and timeout policy."
        ],
        "{text}"
    );
}

/// Identical status sentences are one line per status and type, in first-seen order: twelve
/// targets, seven of them healthy HTTP, read as four lines; a long list is cut after two
/// names. JSON and YAML, which doctor does not change, keep every result.
#[test]
fn identical_status_sentences_are_one_line_naming_the_targets() {
    let mut results = Vec::new();
    for i in 1..=7 {
        results.push(node(&format!("svc-{i}"), Status::Healthy, vec![]));
    }
    for (name, status) in [("db", Status::Unreachable), ("cache", Status::Unreachable)] {
        results.push(node(name, status, vec![]));
    }
    let mut mcp = node("notes", Status::Healthy, vec![]);
    mcp.target.kind = crate::contract::TargetType::Mcp;
    results.push(mcp);
    results.push(node("queue", Status::Degraded, vec![]));
    results.push(node("one-more", Status::Healthy, vec![]));
    let text = advise(&Document::new(results), Style::default());
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("Doctor: ")).collect();
    assert_eq!(
        lines,
        [
            "Doctor: svc-1, svc-2 and 6 more (http) are HEALTHY. Checks passed. Review the check list to confirm it covers your readiness requirements.",
            "Doctor: db and cache (http) are UNREACHABLE. Verify the endpoint, service availability, network access, and timeout policy.",
            "Doctor: notes (mcp) is HEALTHY. Checks passed. Review the check list to confirm it covers your readiness requirements.",
            "Doctor: queue (http) is DEGRADED. Inspect latency thresholds and optional dependencies marked as impaired.",
        ],
        "{text}"
    );
    assert_eq!(listed(&["a".into(), "b".into(), "c".into()]), "a, b and c");
    assert_eq!(listed(&["a".into(), "b".into()]), "a and b");
}

/// Every OAuth step, token-endpoint error and token-file problem has advice of its own that
/// names what to change.
#[test]
fn every_oauth_failure_has_its_own_advice() {
    use crate::result::reason::{McpFailure, OAuthStep as S, TokenError, TokenFileProblem as F};
    let mut steps = vec![
        (S::Issuer, "mcp.oauth.issuer"),
        (S::Endpoint, "https"),
        (S::ResourceMetadata, "protected-resource metadata"),
        (S::ResourceMetadataOrigin, "origin"),
        (S::ResourceMismatch, "resource"),
        (S::ResourceChanged, "log in again"),
        (S::IssuerNotListed, "authorization_servers"),
        (S::ServerMetadata, "mcp.oauth.issuer"),
        (S::InsecureEndpoint, "https"),
        (S::AuthMethod, "client_secret_basic"),
        (S::Pkce, "S256"),
        (S::TokenResponse, "bearer token"),
        (S::NoRefreshToken, "mcp.oauth.refresh_token_env"),
        (S::Callback, "log in again"),
        (S::Par(None), "pushed_authorization_request_endpoint"),
        (S::Registration, "mcp.oauth.client_id"),
        (
            S::Par(Some(TokenError::InvalidRequest)),
            "refused ours (invalid_request)",
        ),
        (S::Cancelled, "cancelled"),
        (S::TokenEndpoint(None), "token request failed"),
    ];
    steps.extend(
        TokenError::ALL
            .into_iter()
            .map(|e| (S::TokenEndpoint(Some(e)), e.as_word())),
    );
    for problem in [
        F::Symlink,
        F::NotAFile,
        F::Permissions,
        F::ParentWritable,
        F::Unreadable,
        F::Malformed,
        F::Binding,
        F::Unwritable,
        F::Unsaved,
        F::Locked,
    ] {
        steps.push((S::TokenFile(problem), "token"));
    }
    let mut seen = std::collections::HashSet::new();
    for (step, names) in steps {
        let failed = check(
            Status::Misconfigured,
            Some(Reason::Mcp(McpFailure::OAuth(step))),
            &[],
        );
        let advice = file_advice(Dimension::Authentication, &failed).unwrap_or_default();
        assert!(advice.contains(names), "{step:?}: {advice}");
        assert!(seen.insert(advice.clone()), "{step:?} repeats: {advice}");
    }
}

/// The authentication check's advice for a failed OAuth `step` with `facts`.
fn oauth_advice(step: crate::result::reason::OAuthStep, facts: &[(Key, Fact)]) -> String {
    use crate::result::reason::McpFailure;
    let c = check(
        Status::Misconfigured,
        Some(Reason::Mcp(McpFailure::OAuth(step))),
        facts,
    );
    file_advice(Dimension::Authentication, &c).unwrap_or_default()
}

/// An expired saved token without a refresh token says the server issued none and to log
/// in again or ask for offline_access; no saved credentials says to log in.
#[test]
fn an_expired_token_without_refresh_is_not_no_saved_credentials() {
    use crate::result::reason::McpFailure;
    let advice = |failure| {
        let c = check(Status::Misconfigured, Some(Reason::Mcp(failure)), &[]);
        file_advice(Dimension::Authentication, &c).unwrap_or_default()
    };
    let expired = advice(McpFailure::LoginExpired);
    assert_eq!(
        expired,
        "the saved access token expired and the authorization server issued no refresh token: \
         log in again (`agenthealth login CONFIG TARGET`), or ask for offline_access (add it to \
         mcp.oauth.scopes)"
    );
    let required = advice(McpFailure::LoginRequired);
    assert!(required.starts_with("no saved credentials"), "{required}");
}

/// The client authentication: a public client where only confidential methods are listed
/// names `token_endpoint_auth_method: none`; a configured method the server does not list
/// names it; a client refused with Basic where post is listed too says to configure post
/// instead of checking a secret that may be right.
#[test]
fn the_client_authentication_advice_names_the_method_to_configure() {
    use crate::result::reason::{OAuthStep as S, TokenError};
    let advice = oauth_advice;
    let public = advice(S::AuthMethod, &[(Key::AuthMethod, Fact::Word("none"))]);
    assert!(
        public.contains("set mcp.oauth.token_endpoint_auth_method: none"),
        "{public}"
    );
    let unlisted = advice(
        S::AuthMethod,
        &[(Key::AuthMethod, Fact::Word("client_secret_post"))],
    );
    assert!(
        unlisted
            .contains("does not list mcp.oauth.token_endpoint_auth_method (client_secret_post)"),
        "{unlisted}"
    );
    let refused = S::TokenEndpoint(Some(TokenError::InvalidClient));
    let other = advice(
        refused,
        &[
            (Key::AuthMethod, Fact::Word("client_secret_basic")),
            (Key::AuthMethodAlternative, Fact::Word("client_secret_post")),
        ],
    );
    assert!(
        other.starts_with("the authorization server refused the client with client_secret_basic")
            && other.contains("set mcp.oauth.token_endpoint_auth_method: client_secret_post"),
        "{other}"
    );
    let only = advice(
        refused,
        &[(Key::AuthMethod, Fact::Word("client_secret_post"))],
    );
    assert!(only.contains("check mcp.oauth.client_id"), "{only}");
    assert!(!only.contains("token_endpoint_auth_method"), "{only}");
}

/// An issuer a trailing slash apart from the one the server names: the advice says which
/// way, instead of "check the issuer".
#[test]
fn an_issuer_a_trailing_slash_apart_is_said_so() {
    use crate::result::reason::OAuthStep as S;
    let advice = oauth_advice;
    let listed = advice(
        S::IssuerNotListed,
        &[(Key::IssuerSlash, Fact::Word("with"))],
    );
    assert!(
        listed.contains("write mcp.oauth.issuer with it"),
        "{listed}"
    );
    let named = advice(
        S::ServerMetadata,
        &[(Key::IssuerSlash, Fact::Word("without"))],
    );
    assert!(
        named.contains("write mcp.oauth.issuer without it"),
        "{named}"
    );
    let plain = advice(S::IssuerNotListed, &[]);
    assert!(plain.contains("--oauth-details"), "{plain}");
}

/// A token file that could not take a refreshed token: the advice says what happened to the
/// token (not refreshed, or waiting to be recovered) and what to do about the volume, by the
/// operating system's reason; a full volume with no usable token is this host's disk.
#[test]
fn token_file_advice_follows_the_volumes_reason() {
    use crate::contract::LocalResource;
    use crate::result::reason::{McpFailure, OAuthStep, TokenFileProblem as F};
    let file = |problem| {
        Some(Reason::Mcp(McpFailure::OAuth(OAuthStep::TokenFile(
            problem,
        ))))
    };
    let os = |word| [(Key::OsError, Fact::Word(word))];
    let advice = |status, reason, facts: &[(Key, Fact)]| {
        file_advice(Dimension::Authentication, &check(status, reason, facts)).unwrap_or_default()
    };
    let a = advice(Status::Degraded, file(F::Unwritable), &os("enospc"));
    assert!(a.contains("not refreshed") && a.contains("enospc"), "{a}");
    assert!(a.contains("free space") && a.contains("64 KiB"), "{a}");
    let a = advice(Status::Degraded, file(F::Unsaved), &os("eio"));
    assert!(
        a.contains("next run recovers") && a.contains("I/O errors"),
        "{a}"
    );
    let a = advice(Status::Misconfigured, file(F::Unwritable), &os("erofs"));
    assert!(a.contains("read-write"), "{a}");
    let a = advice(Status::Misconfigured, file(F::Unwritable), &os("eacces"));
    assert!(a.contains("write the directory"), "{a}");
    let disk = Some(Reason::Engine(Note::LocalResource(LocalResource::Disk)));
    let a = advice(Status::Unknown, disk, &os("enospc"));
    assert!(
        a.contains("not at fault") && a.contains("free space"),
        "{a}"
    );
    assert!(a.contains("intact"), "{a}");
}

/// An OAuth step the deadline cut says so, whatever the step, and not that the server
/// publishes nothing.
#[test]
fn an_oauth_step_cut_by_the_deadline_is_advised_as_one() {
    use crate::result::reason::{McpFailure, OAuthStep as S};
    let timeout = [(Key::Failure, Fact::Word("timeout"))];
    for (step, status, what) in [
        (
            S::ResourceMetadata,
            Status::Unreachable,
            "protected-resource metadata request got no answer",
        ),
        (
            S::ServerMetadata,
            Status::Unknown,
            "metadata request started to answer",
        ),
        (
            S::TokenEndpoint(None),
            Status::Unreachable,
            "token request got no answer",
        ),
    ] {
        let cut = check(status, Some(Reason::Mcp(McpFailure::OAuth(step))), &timeout);
        let a = file_advice(Dimension::Authentication, &cut).unwrap_or_default();
        assert!(
            a.contains(what) && a.contains("timeout_ms"),
            "{step:?}: {a}"
        );
    }
}
