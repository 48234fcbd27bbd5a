//! Why a check did not pass, typed from the adapter that saw it to `doctor`.
//!
//! Every failed observation carries one [`Reason`]: a family (the engine, the configuration,
//! the network, the HTTP adapter, MCP, the MCP stdio process) and, within it, what happened.
//! The contract's diagnostic [`DiagnosticCode`] and the canonical message are functions of the
//! reason, so they cannot disagree with it; `doctor` maps reason → advice per family and never
//! reads a message. Evidence still carries the numbers and names that explain a failure (an
//! HTTP status, a variable's name); the reason says which failure it is.

use super::diagnostic::DiagnosticCode;
use crate::contract::{Bound, Forbidden, LocalResource};

/// Why a check did not pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reason {
    /// The engine's own finding: a missing credential, a deadline, a cancellation, …
    Engine(Note),
    /// An offline rule of the target's configuration failed: nothing was sent.
    Config(Misconfig),
    /// A network exchange failed before a complete answer (not a deadline: see
    /// [`Note::TimedOut`]).
    Network(NetFailure),
    /// The HTTP adapter's judgement of an answer.
    Http(HttpFailure),
    /// The MCP adapter's judgement of an answer.
    Mcp(McpFailure),
    /// An MCP stdio server process could not start or ended early.
    Process(ProcessFailure),
}

impl Reason {
    /// The contract's diagnostic code, when the failure has one.
    pub fn code(self) -> Option<DiagnosticCode> {
        match self {
            // An offline rule: nothing was sent, so no code that reads as the server's fault
            // (`mcp_version` says a server answered a revision; a bad pin was never sent).
            Reason::Engine(_) | Reason::Network(_) | Reason::Config(_) => None,
            Reason::Http(h) => Some(match h {
                HttpFailure::AuthRejected => DiagnosticCode::HttpAuth,
                HttpFailure::StatusMismatch => DiagnosticCode::HttpStatus,
                HttpFailure::HeaderMismatch => DiagnosticCode::HttpHeaders,
                HttpFailure::BodyMissing => DiagnosticCode::HttpBody,
                HttpFailure::BodyLimit => DiagnosticCode::HttpBodyLimit,
            }),
            Reason::Mcp(m) => match m {
                McpFailure::AuthRejected => Some(DiagnosticCode::McpAuth),
                McpFailure::HttpStatus => Some(DiagnosticCode::McpHttp),
                McpFailure::Rpc => Some(DiagnosticCode::McpRpc),
                McpFailure::VersionRefused | McpFailure::Version => {
                    Some(DiagnosticCode::McpVersion)
                }
                McpFailure::Malformed(_) => Some(DiagnosticCode::McpProtocol),
                McpFailure::Limit(_) => Some(DiagnosticCode::McpLimit),
                McpFailure::Input => Some(DiagnosticCode::McpInput),
                McpFailure::Required => Some(DiagnosticCode::McpRequired),
                McpFailure::Unsafe => Some(DiagnosticCode::McpUnsafe),
                McpFailure::ToolError | McpFailure::Expectation => {
                    Some(DiagnosticCode::McpFunctional)
                }
                McpFailure::ArgumentsRejected => None,
                McpFailure::OAuth(_) => Some(DiagnosticCode::McpOauth),
                McpFailure::LoginRequired | McpFailure::LoginExpired => {
                    Some(DiagnosticCode::McpLogin)
                }
            },
            Reason::Process(_) => Some(DiagnosticCode::McpProcess),
        }
    }

    /// The canonical message: the code's, else the engine note's, else none (the engine then
    /// says `<STATUS> in <dimension>`).
    pub fn message(self) -> Option<String> {
        match (self.code(), self) {
            (Some(code), _) => Some(code.message().to_string()),
            (None, Reason::Engine(note)) => Some(note.message()),
            _ => None,
        }
    }

    /// Whether the target refused our credentials (or their absence): the engine then names
    /// the variable the credential came from.
    pub fn rejects_credentials(self) -> bool {
        matches!(
            self,
            Reason::Http(HttpFailure::AuthRejected) | Reason::Mcp(McpFailure::AuthRejected)
        )
    }
}

/// A fixed engine message for failures that carry no diagnostic code.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Note {
    /// A referenced credential environment variable is unset or empty.
    CredentialMissing,
    /// The target type has no adapter.
    NoAdapter,
    /// A requested dimension is not implemented by the adapter.
    DimensionUnsupported,
    /// Measured latency is over the configured threshold (ms).
    LatencyExceeds(f64),
    /// The configuration check did not finish within its deadline, which `bound` set (the
    /// node's `budget_ms`, the run deadline or the run cap ran out while it waited).
    ConfigurationIncomplete(Bound),
    /// The deadline `bound` set passed: before any response byte, or after the response had
    /// started.
    TimedOut {
        /// Which setting set the deadline.
        bound: Bound,
        /// Whether a response byte had arrived (UNKNOWN) or none (UNREACHABLE).
        response_seen: bool,
    },
    /// The run was cancelled (a signal) while the check was in flight.
    Cancelled,
    /// The node's time (`budget_ms`, the run deadline or the run cap) ran out before the
    /// check could start.
    BudgetExhausted(Bound),
    /// A resource of this host ran out (descriptors, threads, memory): nothing was learnt
    /// about the target.
    LocalResource(LocalResource),
}

impl Note {
    /// The message text.
    pub fn message(&self) -> String {
        match self {
            Note::CredentialMissing => "credential environment variable is missing or empty".into(),
            Note::NoAdapter => "no adapter registered for target type".into(),
            Note::DimensionUnsupported => "requested dimension is not supported by adapter".into(),
            Note::LatencyExceeds(t) => format!("latency exceeds threshold {t:.2}ms"),
            Note::ConfigurationIncomplete(_) => "configuration check did not complete".into(),
            Note::TimedOut {
                response_seen: false,
                ..
            } => "communication failed".into(),
            Note::TimedOut {
                response_seen: true,
                ..
            } => "incomplete response".into(),
            Note::Cancelled => "check cancelled before it completed".into(),
            Note::BudgetExhausted(
                Bound::DeadlineMs | Bound::DeadlineFlag | Bound::RunCap | Bound::ScrapeTimeout,
            ) => "run deadline reached before the check could run".into(),
            Note::BudgetExhausted(_) => "node budget exhausted before the check could run".into(),
            Note::LocalResource(_) => {
                "a local resource ran out before the check could complete".into()
            }
        }
    }
}

/// An offline configuration rule that failed before any traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Misconfig {
    /// The endpoint is not a usable URL.
    Endpoint(EndpointProblem),
    /// The credential's value holds a control character no header may carry.
    CredentialControlCharacter,
    /// `SSL_CERT_FILE`/`SSL_CERT_DIR` cannot be used.
    TrustStore(TrustProblem),
    /// The proxy variable for the endpoint's scheme is unusable.
    Proxy,
    /// `mcp.protocol_version` names no supported revision.
    ProtocolPin,
    /// A stdio target's endpoint is not `stdio://name`, or it has no `mcp.stdio` command.
    StdioTarget,
}

/// Why an endpoint is not a usable URL (the `endpoint` evidence word): a word of the
/// contract, whose grammar the configuration's offline check shares.
pub use crate::contract::EndpointProblem;

/// Why the trust store named by the environment cannot be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrustProblem {
    /// The file or directory cannot be read.
    Unreadable,
    /// It holds no PEM certificate.
    NoCertificates,
    /// rustls refused to build a configuration from it.
    Tls,
}

/// What went wrong with a network exchange, in our own vocabulary (the `failure` word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetFailure {
    /// The name did not resolve.
    Dns,
    /// The name could not be looked up at all: the machine has no resolver configuration
    /// (no `/etc/resolv.conf`, as in an empty container root) and the name is not in
    /// `/etc/hosts`.
    DnsNoResolver,
    /// The peer refused the TCP connection.
    ConnectRefused,
    /// No route to the host or network (also: address not available).
    NetworkUnreachable,
    /// The deadline passed (or the watchdog cut the exchange) before it finished.
    Timeout,
    /// The connection was reset or aborted by the peer.
    Reset,
    /// The peer closed the connection before the exchange finished.
    Closed,
    /// The certificate does not chain to a trusted root (self-signed, private CA, bad
    /// signature, revoked).
    TlsUntrusted,
    /// The certificate is not valid for the host name.
    TlsNameMismatch,
    /// The certificate has expired.
    TlsExpired,
    /// The certificate is not valid yet.
    TlsNotYetValid,
    /// Any other TLS failure (protocol mismatch, alert, plain HTTP on a TLS port).
    TlsHandshake,
    /// The CONNECT proxy refused or failed the tunnel.
    Proxy,
    /// The peer answered something that is not HTTP/1.1, or a head over our limits.
    Protocol,
    /// The trust store named by `SSL_CERT_FILE`/`SSL_CERT_DIR` holds no usable certificate.
    TrustStore,
    /// The proxy environment variable for this scheme is unusable (unsupported scheme or not
    /// a URL).
    ProxyConfig,
    /// A request header could not be sent (e.g. a control byte in a value).
    InvalidRequest,
    /// This host ran out of descriptors, threads or memory before the exchange could be
    /// made: nothing is known about the peer.
    LocalResource(LocalResource),
    /// A `/probe` module's allow list refuses the target's address: nothing was sent to it.
    AddressRefused(Forbidden),
    /// Anything else.
    Other,
}

impl NetFailure {
    /// The evidence word.
    pub fn as_word(self) -> &'static str {
        match self {
            NetFailure::Dns => "dns",
            NetFailure::DnsNoResolver => "dns_no_resolver",
            NetFailure::ConnectRefused => "connect_refused",
            NetFailure::NetworkUnreachable => "network_unreachable",
            NetFailure::Timeout => "timeout",
            NetFailure::Reset => "reset",
            NetFailure::Closed => "closed",
            NetFailure::TlsUntrusted => "tls_untrusted",
            NetFailure::TlsNameMismatch => "tls_name_mismatch",
            NetFailure::TlsExpired => "tls_expired",
            NetFailure::TlsNotYetValid => "tls_not_yet_valid",
            NetFailure::TlsHandshake => "tls_handshake",
            NetFailure::Proxy => "proxy",
            NetFailure::Protocol => "protocol",
            NetFailure::TrustStore => "trust_store",
            NetFailure::ProxyConfig => "proxy_config",
            NetFailure::InvalidRequest => "invalid_request",
            NetFailure::LocalResource(_) => "local_resource",
            NetFailure::AddressRefused(_) => "address_refused",
            NetFailure::Other => "other",
        }
    }

    /// Whether the server's certificate was refused (the trust store decides these).
    pub fn is_certificate(self) -> bool {
        matches!(
            self,
            NetFailure::TlsUntrusted
                | NetFailure::TlsNameMismatch
                | NetFailure::TlsExpired
                | NetFailure::TlsNotYetValid
        )
    }

    /// Whether the failure is a local configuration problem found before any byte was sent.
    pub fn is_local(self) -> bool {
        matches!(
            self,
            NetFailure::TrustStore
                | NetFailure::ProxyConfig
                | NetFailure::InvalidRequest
                | NetFailure::AddressRefused(_)
        )
    }
}

/// Where a redirect points, compared with the configured endpoint (the `redirect` evidence
/// word). Derived from our configuration: the server's `Location` is compared, never kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redirect {
    /// To the endpoint with a trailing slash added to its path.
    TrailingSlash,
    /// To the endpoint with its path's trailing slash removed.
    NoTrailingSlash,
    /// To the same host, port and path over `https`.
    Https,
    /// Anywhere else (or no usable `Location`).
    Elsewhere,
}

impl Redirect {
    /// The evidence word.
    pub fn as_word(self) -> &'static str {
        match self {
            Redirect::TrailingSlash => "trailing_slash",
            Redirect::NoTrailingSlash => "no_trailing_slash",
            Redirect::Https => "https",
            Redirect::Elsewhere => "elsewhere",
        }
    }
}

/// The HTTP adapter's judgement of an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpFailure {
    /// 401 or 403.
    AuthRejected,
    /// A status outside `http.expected_status` (default: any 2xx).
    StatusMismatch,
    /// A required response header is missing or different.
    HeaderMismatch,
    /// The functional GET's body lacks `body_contains`.
    BodyMissing,
    /// The functional GET's body is longer than `max_body_bytes`.
    BodyLimit,
}

/// The MCP adapter's judgement of an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum McpFailure {
    /// HTTP 401 or 403.
    AuthRejected,
    /// Another HTTP status than the exchange allows, without a JSON-RPC error.
    HttpStatus,
    /// A JSON-RPC error answered the request.
    Rpc,
    /// The server refused the requested revision (−32022).
    VersionRefused,
    /// The server's revision is unsupported or differs from the pin.
    Version,
    /// The answer broke the protocol.
    Malformed(Malformed),
    /// The answer exceeded a safety limit.
    Limit(Limit),
    /// The server asked for input or a client capability a health check never provides.
    Input,
    /// A required tool, resource or prompt is not advertised.
    Required,
    /// The functional tool lacks its read-only, non-destructive annotations.
    Unsafe,
    /// The tool returned `isError: true`.
    ToolError,
    /// An operator expectation on the tool result failed.
    Expectation,
    /// The operator's `arguments_json` breaks the tool's input schema (or cannot travel in
    /// its headers): the tool was not called.
    ArgumentsRejected,
    /// OAuth could not produce a token: which step failed.
    OAuth(OAuthStep),
    /// `grant: authorization_code` has no saved credentials: `agenthealth login` first.
    LoginRequired,
    /// `grant: authorization_code`: the saved access token expired and the authorization
    /// server issued no refresh token: log in again (`login=expired`).
    LoginExpired,
}

/// What to do when the authorization server issued no refresh token: login's last line and
/// doctor's advice for [`McpFailure::LoginExpired`] say it alike.
pub const NO_REFRESH_TOKEN: &str = "the authorization server issued no refresh token: log in again (`agenthealth login CONFIG TARGET`), or ask for offline_access (add it to mcp.oauth.scopes)";

/// The step of OAuth that failed (the `oauth` evidence word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OAuthStep {
    /// The configured issuer is not an https URL (or explicit loopback http) without a
    /// query, userinfo or fragment.
    Issuer,
    /// The MCP endpoint is plain http on a host that is not loopback: no token is sent there.
    Endpoint,
    /// No protected-resource metadata (RFC 9728) could be fetched.
    ResourceMetadata,
    /// The challenge's `resource_metadata` names another origin than the MCP endpoint.
    ResourceMetadataOrigin,
    /// The protected-resource metadata describes another resource than the endpoint.
    ResourceMismatch,
    /// The metadata now names another resource than the one the saved grant was issued
    /// for: no refresh is sent (log in again).
    ResourceChanged,
    /// The pinned issuer is not among the metadata's `authorization_servers`.
    IssuerNotListed,
    /// No authorization-server metadata (RFC 8414 or OpenID) for the pinned issuer.
    ServerMetadata,
    /// The token or authorization endpoint is not https (or explicit loopback http), or is
    /// plain http under an https issuer.
    InsecureEndpoint,
    /// A confidential client, and the server supports neither `client_secret_basic` nor
    /// `client_secret_post`.
    AuthMethod,
    /// Login needs PKCE S256, and the server does not advertise it.
    Pkce,
    /// The token endpoint refused the request (with the RFC 6749 error it gave, if one we
    /// know), or could not be reached.
    TokenEndpoint(Option<TokenError>),
    /// The token endpoint answered something that is not a usable bearer token.
    TokenResponse,
    /// The token file cannot be used.
    TokenFile(TokenFileProblem),
    /// `grant: refresh_token` and no refresh token (variable or token file).
    NoRefreshToken,
    /// Login's callback carried an error, a wrong issuer or no code (or never came).
    Callback,
    /// Login: the server requires pushed authorization requests (RFC 9126) and names no
    /// endpoint for them, or refused ours (with the RFC 6749 error it gave, if one we know).
    Par(Option<TokenError>),
    /// `login --register`: the server has no secure registration endpoint, or its
    /// registration failed or answered no usable client.
    Registration,
    /// Login was cancelled (a signal) while it waited for the browser.
    Cancelled,
}

impl OAuthStep {
    /// The evidence word.
    pub fn as_word(self) -> &'static str {
        match self {
            OAuthStep::Issuer => "issuer",
            OAuthStep::Endpoint => "endpoint",
            OAuthStep::ResourceMetadata => "resource_metadata",
            OAuthStep::ResourceMetadataOrigin => "resource_metadata_origin",
            OAuthStep::ResourceMismatch => "resource_mismatch",
            OAuthStep::ResourceChanged => "resource_changed",
            OAuthStep::IssuerNotListed => "issuer_not_listed",
            OAuthStep::ServerMetadata => "server_metadata",
            OAuthStep::InsecureEndpoint => "insecure_endpoint",
            OAuthStep::AuthMethod => "auth_method",
            OAuthStep::Pkce => "pkce",
            OAuthStep::TokenEndpoint(_) => "token_endpoint",
            OAuthStep::TokenResponse => "token_response",
            OAuthStep::TokenFile(_) => "token_file",
            OAuthStep::NoRefreshToken => "no_refresh_token",
            OAuthStep::Callback => "callback",
            OAuthStep::Par(_) => "par",
            OAuthStep::Registration => "registration",
            OAuthStep::Cancelled => "cancelled",
        }
    }
}

/// An RFC 6749 §5.2 (or RFC 8707) error a token endpoint answered (the `oauth_error` word).
/// Only these fixed codes are kept; anything else the server says is not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenError {
    /// `invalid_request`
    InvalidRequest,
    /// `invalid_client`
    InvalidClient,
    /// `invalid_grant`
    InvalidGrant,
    /// `unauthorized_client`
    UnauthorizedClient,
    /// `unsupported_grant_type`
    UnsupportedGrantType,
    /// `invalid_scope`
    InvalidScope,
    /// `invalid_target` (RFC 8707: the resource)
    InvalidTarget,
}

impl TokenError {
    /// Every code we recognise.
    pub const ALL: [TokenError; 7] = [
        TokenError::InvalidRequest,
        TokenError::InvalidClient,
        TokenError::InvalidGrant,
        TokenError::UnauthorizedClient,
        TokenError::UnsupportedGrantType,
        TokenError::InvalidScope,
        TokenError::InvalidTarget,
    ];

    /// The protocol spelling, which is also the evidence word.
    pub fn as_word(self) -> &'static str {
        match self {
            TokenError::InvalidRequest => "invalid_request",
            TokenError::InvalidClient => "invalid_client",
            TokenError::InvalidGrant => "invalid_grant",
            TokenError::UnauthorizedClient => "unauthorized_client",
            TokenError::UnsupportedGrantType => "unsupported_grant_type",
            TokenError::InvalidScope => "invalid_scope",
            TokenError::InvalidTarget => "invalid_target",
        }
    }

    /// The code spelled exactly `s`, if it is one we recognise.
    pub fn parse(s: &str) -> Option<TokenError> {
        TokenError::ALL.into_iter().find(|e| e.as_word() == s)
    }
}

/// Why a token file cannot be used (the `token_file` evidence word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenFileProblem {
    /// The path is a symbolic link.
    Symlink,
    /// Not a regular file.
    NotAFile,
    /// Group or others may access it, or another user owns it.
    Permissions,
    /// Its directory is writable by group or others.
    ParentWritable,
    /// It cannot be read, or is larger than 64 KiB.
    Unreadable,
    /// It is not a token file of ours (JSON with the expected fields).
    Malformed,
    /// It holds credentials for another issuer, resource or client.
    Binding,
    /// It could not be written (or its directory created), or the space for a refreshed
    /// token could not be reserved beside it: nothing was refreshed.
    Unwritable,
    /// A refreshed token could not be saved in its place (it waits beside it, in the
    /// temporary file the next run recovers).
    Unsaved,
    /// Another run held its lock until the deadline.
    Locked,
}

impl TokenFileProblem {
    /// The evidence word.
    pub fn as_word(self) -> &'static str {
        match self {
            TokenFileProblem::Symlink => "symlink",
            TokenFileProblem::NotAFile => "not_a_file",
            TokenFileProblem::Permissions => "permissions",
            TokenFileProblem::ParentWritable => "parent_writable",
            TokenFileProblem::Unreadable => "unreadable",
            TokenFileProblem::Malformed => "malformed",
            TokenFileProblem::Binding => "binding",
            TokenFileProblem::Unwritable => "unwritable",
            TokenFileProblem::Unsaved => "unsaved",
            TokenFileProblem::Locked => "locked",
        }
    }
}

/// The operating system's reason a token file could not be written (the `os_error` word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OsError {
    /// `ENOSPC`: the volume is full (blocks or inodes).
    NoSpace,
    /// `EDQUOT`: the user's quota on the volume is used up.
    Quota,
    /// `EIO`: the device failed.
    Io,
    /// `EROFS`: the volume is mounted read-only.
    ReadOnly,
    /// `EACCES`: the directory may not be written by this user.
    Access,
    /// `EPERM`: the operation is not permitted here.
    Permission,
    /// Anything else.
    Other,
}

impl OsError {
    /// The reason an I/O error gives.
    pub fn of(e: &std::io::Error) -> OsError {
        use nix::errno::Errno;
        match e.raw_os_error().map(Errno::from_raw) {
            Some(Errno::ENOSPC) => OsError::NoSpace,
            Some(Errno::EDQUOT) => OsError::Quota,
            Some(Errno::EIO) => OsError::Io,
            Some(Errno::EROFS) => OsError::ReadOnly,
            Some(Errno::EACCES) => OsError::Access,
            Some(Errno::EPERM) => OsError::Permission,
            _ => OsError::Other,
        }
    }

    /// The evidence word.
    pub fn as_word(self) -> &'static str {
        match self {
            OsError::NoSpace => "enospc",
            OsError::Quota => "edquot",
            OsError::Io => "eio",
            OsError::ReadOnly => "erofs",
            OsError::Access => "eacces",
            OsError::Permission => "eperm",
            OsError::Other => "other",
        }
    }

    /// Whether this host's disk failed (full, over quota, broken) — not the target's fault
    /// nor a setting's, so UNKNOWN `local_resource` — rather than a volume set up wrong
    /// (read-only, not ours to write: MISCONFIGURED).
    pub fn is_disk_fault(self) -> bool {
        matches!(self, OsError::NoSpace | OsError::Quota | OsError::Io)
    }
}

/// Server requests (a legacy `ping`, anything we reject with −32601) answered while waiting
/// for the response to one request; one more is a protocol violation
/// ([`Malformed::TooManyServerRequests`]), so a server cannot keep us answering without end.
pub const MAX_ANSWERS: usize = 100;

/// How an answer broke the protocol (the `protocol_error` evidence word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// A message that is not JSON-RPC.
    NotJsonRpc,
    /// A stdio server wrote a line that is not JSON at all (a banner, a log line).
    NonJsonLine,
    /// A response whose id is not our request's.
    IdMismatch,
    /// A server request during a 2026-07-28 exchange, which allows none.
    StatelessServerRequest,
    /// More server requests than we answer while waiting for one response
    /// ([`MAX_ANSWERS`](crate::result::reason::MAX_ANSWERS)).
    TooManyServerRequests,
    /// A stdio server's output ended part-way through an answer.
    OutputEnded,
    /// An event stream ended without our response and cannot be resumed.
    StreamEnded,
    /// A JSON body that holds no response to our request.
    BodyWithoutResponse,
    /// A `Content-Type` that is neither JSON nor an event stream.
    ContentType,
    /// Several `Mcp-Session-Id` values.
    SeveralSessionIds,
    /// An `Mcp-Session-Id` that is empty, too long or not visible ASCII.
    InvalidSessionId,
    /// An SSE event id we cannot send back in `Last-Event-ID`.
    InvalidEventId,
    /// A stream resumption answered with another status than 200.
    ResumptionStatus,
    /// A stream resumption that is not an event stream.
    ResumptionContentType,
    /// A request we could not frame (a newline in a stdio message, invalid params): a bug of
    /// ours or of the operator's `arguments_json`.
    Request(&'static str),
    /// A result of the wrong shape; the word names what was wrong (`discover
    /// supportedVersions`, `tool result content is not an array`, …).
    Result(&'static str),
}

impl Malformed {
    /// The evidence word.
    pub fn as_word(self) -> &'static str {
        match self {
            Malformed::NotJsonRpc => "invalid json-rpc message",
            Malformed::NonJsonLine => "non-json line on stdout",
            Malformed::IdMismatch => "response id does not match",
            Malformed::StatelessServerRequest => "server request on a stateless exchange",
            Malformed::TooManyServerRequests => {
                "more than 100 server requests while waiting for one response"
            }
            Malformed::OutputEnded => "output ended without a response",
            Malformed::StreamEnded => "stream ended without a response",
            Malformed::BodyWithoutResponse => "body holds no response",
            Malformed::ContentType => "response content type is neither json nor an event stream",
            Malformed::SeveralSessionIds => "several session ids",
            Malformed::InvalidSessionId => "invalid session id",
            Malformed::InvalidEventId => "invalid event id",
            Malformed::ResumptionStatus => "resumption status",
            Malformed::ResumptionContentType => "resumption content type",
            Malformed::Request(word) | Malformed::Result(word) => word,
        }
    }
}

/// Which safety limit an answer exceeded (the `limit` evidence word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// One response over 1 MiB (a body, or a stream with its resumptions).
    Response,
    /// One stdio line over 1 MiB.
    Line,
    /// More than 1 MiB of stdio output while waiting for one response.
    OutputBeforeResponse,
    /// A fourth stream resumption.
    Resumptions,
    /// More than 100 pages of one inventory.
    Pages,
    /// More than 10,000 entries in one inventory.
    Entries,
    /// A pagination cursor seen before.
    RepeatedCursor,
}

impl Limit {
    /// The evidence word.
    pub fn as_word(self) -> &'static str {
        match self {
            Limit::Response => "response over 1 MiB",
            Limit::Line => "line over 1 MiB",
            Limit::OutputBeforeResponse => "output over 1 MiB before the response",
            Limit::Resumptions => "stream resumed three times",
            Limit::Pages => "more than 100 pages",
            Limit::Entries => "more than 10000 entries",
            Limit::RepeatedCursor => "repeated cursor",
        }
    }
}

/// Why an MCP stdio server process failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessFailure {
    /// The command cannot be started (an operator problem: MISCONFIGURED).
    Unstartable(StartProblem),
    /// The process ended its output before answering (UNREACHABLE).
    Exited,
}

/// Why a command cannot be started (the `process_error` evidence word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartProblem {
    /// No such file, or not on `PATH`.
    CommandNotFound,
    /// Not an executable ELF binary or `#!` script.
    CommandNotExecutable,
    /// `mcp.stdio.directory` is not a usable directory.
    BadDirectory,
    /// A mapped environment value cannot be passed (NUL, …).
    InvalidEnv,
    /// The operating system refused to start it.
    StartFailed,
}

impl StartProblem {
    /// The evidence word.
    pub fn as_word(self) -> &'static str {
        match self {
            StartProblem::CommandNotFound => "command_not_found",
            StartProblem::CommandNotExecutable => "command_not_executable",
            StartProblem::BadDirectory => "bad_directory",
            StartProblem::InvalidEnv => "invalid_env",
            StartProblem::StartFailed => "start_failed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_the_reason() {
        assert_eq!(
            Reason::Mcp(McpFailure::Malformed(Malformed::NonJsonLine)).code(),
            Some(DiagnosticCode::McpProtocol)
        );
        assert_eq!(
            Reason::Process(ProcessFailure::Exited).code(),
            Some(DiagnosticCode::McpProcess)
        );
        assert_eq!(Reason::Network(NetFailure::Dns).code(), None);
        assert_eq!(Reason::Config(Misconfig::ProtocolPin).code(), None);
        assert!(Reason::Http(HttpFailure::AuthRejected).rejects_credentials());
        assert!(!Reason::Mcp(McpFailure::Rpc).rejects_credentials());
    }

    #[test]
    fn messages_come_from_the_code_or_the_note() {
        let silent = Note::TimedOut {
            bound: Bound::TimeoutMs,
            response_seen: false,
        };
        assert_eq!(
            Reason::Engine(silent).message().as_deref(),
            Some("communication failed")
        );
        assert_eq!(
            Reason::Http(HttpFailure::StatusMismatch)
                .message()
                .as_deref(),
            Some(DiagnosticCode::HttpStatus.message())
        );
        assert_eq!(Reason::Network(NetFailure::Reset).message(), None);
        assert_eq!(
            Note::LatencyExceeds(1000.0).message(),
            "latency exceeds threshold 1000.00ms"
        );
    }
}
