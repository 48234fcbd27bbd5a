//! OAuth 2.1 for MCP over HTTP: the client that turns `mcp.oauth` into a bearer token.
//!
//! It sits on the network layer, the contract's words and the runtime, below the adapters:
//! the MCP HTTP transport asks an [`Authorizer`] for its `Authorization` value, and the
//! `login` command drives [`authorization_code::authorize`]. Nothing here prints (login writes
//! only what it is handed a writer for) and nothing picks an exit code.
//!
//! * [`url`]: which URLs credentials may travel to (https, or http on explicit loopback),
//!   the canonical resource URI, the well-known locations, form encoding;
//! * [`challenge`]: the 401's `WWW-Authenticate` (`resource_metadata`, `scope`);
//! * [`discovery`]: protected-resource metadata (RFC 9728), the pinned issuer's metadata
//!   (RFC 8414, then OpenID Connect), the scope; [`details`]: the same read for `doctor
//!   --oauth-details`, validated for showing, never for a token;
//! * [`token`]: token requests with client authentication, and what a usable token is;
//! * [`registration`]: dynamic client registration (RFC 7591), `login --register` only;
//! * [`store`]: the token file (private, bound to issuer, resource and client, written
//!   atomically, locked across read–refresh–write);
//! * [`acquire`]: the policy of a health check — reuse within the target's run, the token
//!   file, refresh, client credentials; never interactive;
//! * [`authorization_code`]: the authorization code grant with PKCE through a loopback
//!   callback, which `login` runs; [`loopback`]: the callback's bounded one-thread server;
//!   [`authorization_request`]: the URL it sends the browser to (pushed first when the
//!   server requires it).
//!
//! Every failure is an [`OAuthError`]: a typed step (the reason `doctor` reads), and for the
//! token endpoint the HTTP status, the RFC 6749 error code and the network failure word —
//! never text from a server. All traffic runs under the caller's attempt deadline.

pub(crate) mod acquire;
pub(crate) mod authorization_code;
pub(crate) mod authorization_request;
pub(crate) mod challenge;
pub(crate) mod details;
pub(crate) mod discovery;
pub(crate) mod loopback;
pub(crate) mod random;
pub(crate) mod registration;
pub(crate) mod store;
pub(crate) mod token;
pub(crate) mod url;

pub(crate) use acquire::{AuthFacts, Authorizer, Settings};

use crate::contract::{LocalResource, Status};
use crate::net;
use crate::result::reason::{McpFailure, NetFailure, OAuthStep, OsError, Reason, TokenFileProblem};
use crate::result::{Evidence, Fact, Key, Observation};

/// Why OAuth could not produce a token.
#[derive(Clone, Debug)]
pub(crate) enum OAuthError {
    /// The challenge request got no HTTP answer: the network layer's classification stands,
    /// as for any request to the target.
    Network(Box<net::NetError>),
    /// `grant: authorization_code` and no saved credentials.
    LoginRequired,
    /// `grant: authorization_code`, and the saved access token expired with no refresh
    /// token to renew it (the authorization server issued none).
    LoginExpired,
    /// Login only: the browser's round trip failed at `step` (a fixed word:
    /// `callback_error`, `iss_missing`, `iss_mismatch`, `no_code`, `wait_expired`), with the
    /// authorization server's RFC 6749 `error` code when it sent one we know.
    Login {
        /// Which part of the round trip.
        step: &'static str,
        /// The `error` code.
        code: Option<&'static str>,
    },
    /// A step failed.
    Step {
        /// Which.
        step: OAuthStep,
        /// The token endpoint's HTTP status, when it answered.
        http_status: Option<u16>,
        /// The network failure, when the step's request got no complete answer.
        failure: Option<NetFailure>,
        /// Whether that request had part of an answer (a timeout is then UNKNOWN, not
        /// UNREACHABLE).
        response_seen: bool,
        /// Why the operating system refused to write the token file.
        os_error: Option<OsError>,
        /// What else the step established, as facts (the client authentication used, how
        /// a listed issuer differs from the pin, …).
        facts: Evidence,
    },
}

impl OAuthError {
    /// A failed step, nothing more known.
    pub(crate) fn step(step: OAuthStep) -> OAuthError {
        OAuthError::Step {
            step,
            http_status: None,
            failure: None,
            response_seen: false,
            os_error: None,
            facts: Evidence::default(),
        }
    }

    /// A token-file problem.
    pub(crate) fn file(problem: TokenFileProblem) -> OAuthError {
        OAuthError::step(OAuthStep::TokenFile(problem))
    }

    /// A token file the operating system would not let us write, and why.
    pub(crate) fn file_os(problem: TokenFileProblem, e: &std::io::Error) -> OAuthError {
        let mut error = OAuthError::file(problem);
        if let OAuthError::Step { os_error, .. } = &mut error {
            *os_error = Some(OsError::of(e));
        }
        error
    }

    /// A step whose request failed on the network (`status`: what it had answered, if it
    /// had).
    pub(crate) fn network(step: OAuthStep, e: &net::NetError, status: Option<u16>) -> OAuthError {
        OAuthError::Step {
            step,
            http_status: status,
            failure: Some(e.kind),
            response_seen: e.response_seen,
            os_error: None,
            facts: Evidence::default(),
        }
    }

    /// Adds the client authentication the step used.
    pub(crate) fn with_method(self, choice: token::MethodChoice) -> OAuthError {
        self.with_facts(|facts| choice.record(facts))
    }

    /// Adds facts the step established.
    pub(crate) fn with_facts(mut self, add: impl FnOnce(&mut Evidence)) -> OAuthError {
        if let OAuthError::Step { facts, .. } = &mut self {
            add(facts);
        }
        self
    }

    /// Adds the HTTP status the step got.
    pub(crate) fn status(mut self, status: u16) -> OAuthError {
        if let OAuthError::Step { http_status, .. } = &mut self {
            *http_status = Some(status);
        }
        self
    }

    /// The check's observation, with the step, the token endpoint's status, error code and
    /// failure word, the token file's problem and the OS reason as evidence:
    /// MISCONFIGURED `mcp_oauth` (or `mcp_login`); a step the deadline cut UNREACHABLE, or
    /// UNKNOWN after part of an answer; a token file this host's disk failed UNKNOWN
    /// `local_resource`; a failed challenge request as the network layer classified it.
    pub(crate) fn observation(&self) -> Observation {
        match self {
            OAuthError::Network(f) => f.observation(),
            OAuthError::LoginRequired => Observation::failed(
                Status::Misconfigured,
                Reason::Mcp(McpFailure::LoginRequired),
            ),
            OAuthError::LoginExpired => {
                Observation::failed(Status::Misconfigured, Reason::Mcp(McpFailure::LoginExpired))
                    .with(Key::Login, Fact::Word("expired"))
            }
            OAuthError::Login { .. } => Observation::failed(
                Status::Misconfigured,
                Reason::Mcp(McpFailure::OAuth(OAuthStep::Callback)),
            )
            .with(Key::Oauth, Fact::Word(OAuthStep::Callback.as_word())),
            OAuthError::Step {
                step,
                http_status,
                failure,
                response_seen,
                os_error,
                facts,
            } => {
                let reason = Reason::Mcp(McpFailure::OAuth(*step));
                let mut o = match (failure, os_error) {
                    (Some(NetFailure::Timeout), _) => {
                        let status = if *response_seen {
                            Status::Unknown
                        } else {
                            Status::Unreachable
                        };
                        let mut o = Observation::failed(status, reason);
                        o.response_seen = *response_seen;
                        o
                    }
                    (_, Some(os)) if os.is_disk_fault() => {
                        Observation::local_resource(LocalResource::Disk)
                    }
                    _ => Observation::failed(Status::Misconfigured, reason),
                };
                o.evidence.set(Key::Oauth, Fact::Word(step.as_word()));
                match step {
                    OAuthStep::TokenEndpoint(Some(error)) | OAuthStep::Par(Some(error)) => {
                        o.evidence.set(Key::OauthError, Fact::Word(error.as_word()));
                    }
                    OAuthStep::TokenFile(problem) => {
                        o.evidence
                            .set(Key::TokenFile, Fact::Word(problem.as_word()));
                    }
                    _ => {}
                }
                if let Some(os) = os_error {
                    o.evidence.set(Key::OsError, Fact::Word(os.as_word()));
                }
                if let Some(status) = http_status {
                    o.evidence
                        .set(Key::HttpStatus, Fact::Int(i64::from(*status)));
                }
                if let Some(failure) = failure {
                    o.evidence.set(Key::Failure, Fact::Word(failure.as_word()));
                }
                o.evidence.extend(facts);
                o
            }
        }
    }
}

/// The offline rules of `mcp.oauth` for `endpoint`, checked before any traffic: the issuer
/// is a secure URL without a query, and the MCP endpoint is one a token may be sent to.
pub(crate) fn check_offline(
    settings: &Settings,
    endpoint: &crate::net::Endpoint,
) -> Result<(), OAuthError> {
    discovery::pinned_issuer(&settings.configured.issuer)?;
    if !(endpoint.is_https() || url::is_loopback(endpoint.host())) {
        return Err(OAuthError::step(OAuthStep::Endpoint));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
