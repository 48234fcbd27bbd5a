//! The two eras of MCP and which one applies: the one module that decides (the revisions
//! themselves are [`crate::contract::Revision`]).
//!
//! The *modern* era (2026-07-28) is stateless: every request carries its own revision and
//! client identity, and `server/discover` replaces the handshake. The *legacy* era
//! (2025-03-26, 2025-06-18, 2025-11-25) negotiates a revision with `initialize`.
//!
//! One value, an [`Era`], says which rules frame a message. It is decided here —
//! [`handshake_plan`] turns the configured pin into the first step, [`after_discover`] decides
//! whether a failed discovery means "this is a legacy server, negotiate with `initialize`" or
//! "this is a modern server that said no" — and carried unchanged from the session to the
//! transport, which derives every header from it ([`Era::revision`]: the
//! `MCP-Protocol-Version`). The decision is transport-agnostic; the one difference between HTTP
//! and stdio is the transport's rule ([`after_discover`]: HTTP statuses tell a rejection apart;
//! over stdio any unrecognised JSON-RPC error is a legacy server's answer).

use crate::config::McpTransport;
use crate::contract::Revision;

/// Which rules frame a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// 2026-07-28: stateless. Every request carries the revision and `Mcp-Method`, never a
    /// session id; streams are never resumed; a server request is malformed.
    Modern,
    /// The legacy `initialize` request: no revision yet and no session id yet. Its response
    /// may assign a session id, which the transport keeps for the rest of the session.
    Handshake,
    /// A legacy session after `initialize`: the negotiated revision (and the session id, if
    /// one was assigned) travels with every message; SSE streams may be resumed.
    Legacy(Revision),
}

impl Era {
    /// The revision a message of this era carries (`MCP-Protocol-Version`, the `_meta`
    /// envelope); none for the handshake, which negotiates it.
    pub fn revision(self) -> Option<Revision> {
        match self {
            Era::Modern => Some(Revision::MODERN),
            Era::Handshake => None,
            Era::Legacy(revision) => Some(revision),
        }
    }

    /// Whether this is the stateless era.
    pub fn is_modern(self) -> bool {
        self == Era::Modern
    }
}

/// The first step of establishing a session, decided by the configured pin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandshakePlan {
    /// Probe `server/discover` at 2026-07-28. With `fallback` (no pin), a legacy rejection
    /// leads to `initialize` offering [`Revision::LEGACY_OFFER`]; with a modern pin every
    /// failure is final.
    Discover {
        /// Whether a legacy rejection may lead to legacy negotiation.
        fallback: bool,
    },
    /// A legacy pin: skip discovery, offer exactly this revision and accept only it.
    Initialize {
        /// The pinned revision.
        pin: Revision,
    },
}

/// The configured pin names no supported revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidPin;

/// The handshake plan for a configured `mcp.protocol_version` (`None` when unset).
pub fn handshake_plan(pin: Option<&str>) -> Result<HandshakePlan, InvalidPin> {
    match pin {
        None => Ok(HandshakePlan::Discover { fallback: true }),
        Some(text) => match Revision::parse(text).ok_or(InvalidPin)? {
            Revision::V2026_07_28 => Ok(HandshakePlan::Discover { fallback: false }),
            pin => Ok(HandshakePlan::Initialize { pin }),
        },
    }
}

/// What a failed discovery carried, as far as the era decision cares (the transport says;
/// [`crate::adapter::mcp::transport::TransportError::rejection`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// A JSON-RPC error, and the HTTP status that carried it (`None` on stdio).
    Rpc {
        /// The error code.
        code: i64,
        /// The carrying HTTP status.
        status: Option<u16>,
    },
    /// An HTTP status without a JSON-RPC error.
    Status(u16),
    /// Anything else: no answer, a malformed one, a limit, a process that ended.
    Other,
}

/// What a failed, unpinned discovery means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterDiscover {
    /// A legacy server's rejection: negotiate with `initialize`.
    FallBack,
    /// A final answer (a modern server's error, an outage, a malformed reply): classify it.
    Stay,
}

/// JSON-RPC: method not found.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// 2026-07-28: the request's headers and body disagree.
pub const HEADER_MISMATCH: i64 = -32020;
/// 2026-07-28: the request lacks a client capability the server requires.
pub const MISSING_CAPABILITY: i64 = -32021;
/// 2026-07-28: the requested protocol revision is not served.
pub const UNSUPPORTED_VERSION: i64 = -32022;

/// Whether `code` is one of the 2026-07-28 errors a modern server answers discovery with.
///
/// The implementation-defined range −32000..−32019 (pre-release numbering, SDK-specific
/// "session not found") is deliberately not among them.
pub fn is_modern_error(code: i64) -> bool {
    matches!(
        code,
        HEADER_MISMATCH | MISSING_CAPABILITY | UNSUPPORTED_VERSION
    )
}

/// Whether an HTTP status can carry a legacy server's rejection of an unknown request: a 200
/// (stateless servers of older SDK lines answer any unknown method with a JSON-RPC error in a
/// 200) or a 4xx other than the authentication statuses (a gateway maps its child's "method
/// not found" to 404; session-based servers refuse a request without a session with 400).
fn may_carry_legacy_rejection(status: u16) -> bool {
    status == 200 || is_legacy_status(status)
}

/// Whether an HTTP status without a JSON-RPC error is a legacy server's rejection: a 4xx other
/// than the authentication statuses.
fn is_legacy_status(status: u16) -> bool {
    (400..500).contains(&status) && status != 401 && status != 403
}

/// Decides what a failed discovery means (unpinned only; a pin never falls back). The rule
/// the official Python and TypeScript clients follow:
///
/// * A recognised modern version/header error (−32020, −32021, −32022) is a modern server's
///   answer, whatever carries it: stay and classify it.
/// * HTTP: any other JSON-RPC error carried by a 200 or by a 4xx except 401/403 (−32601 at
///   404 from a gateway, −32602 at 200 from a stateless server, −32000 at 400 from a session
///   server, …), and any such 4xx without a JSON-RPC body, is a legacy server's rejection.
/// * Stdio: any other JSON-RPC error is a legacy server's rejection.
/// * Everything else stays: authentication failures, 3xx/5xx, a 200 whose result is not a
///   discover result, malformed replies, limits and network failures — a timeout never
///   downgrades.
pub fn after_discover(rejection: Rejection, transport: McpTransport) -> AfterDiscover {
    let fall_back = match (transport, rejection) {
        (_, Rejection::Rpc { code, .. }) if is_modern_error(code) => false,
        (McpTransport::Stdio, Rejection::Rpc { .. }) => true,
        (McpTransport::Http, Rejection::Rpc { status, .. }) => {
            status.is_some_and(may_carry_legacy_rejection)
        }
        (McpTransport::Http, Rejection::Status(status)) => is_legacy_status(status),
        _ => false,
    };
    if fall_back {
        AfterDiscover::FallBack
    } else {
        AfterDiscover::Stay
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AfterDiscover::{FallBack, Stay};

    fn rpc(code: i64, status: u16) -> Rejection {
        Rejection::Rpc {
            code,
            status: Some(status),
        }
    }

    fn http(status: u16) -> Rejection {
        Rejection::Status(status)
    }

    #[test]
    fn pins_choose_the_handshake_plan() {
        assert_eq!(
            handshake_plan(None),
            Ok(HandshakePlan::Discover { fallback: true })
        );
        assert_eq!(
            handshake_plan(Some("2026-07-28")),
            Ok(HandshakePlan::Discover { fallback: false })
        );
        assert_eq!(
            handshake_plan(Some("2025-06-18")),
            Ok(HandshakePlan::Initialize {
                pin: Revision::V2025_06_18
            })
        );
        assert_eq!(handshake_plan(Some("2024-11-05")), Err(InvalidPin));
        assert_eq!(handshake_plan(Some("latest")), Err(InvalidPin));
    }

    /// The selection table (issues 4 and 12), one row per line, over HTTP.
    #[test]
    fn http_selection_table() {
        let rows: &[(Rejection, AfterDiscover)] = &[
            // Recognised modern errors never downgrade, whatever carries them.
            (rpc(UNSUPPORTED_VERSION, 400), Stay),
            (rpc(HEADER_MISMATCH, 400), Stay),
            (rpc(MISSING_CAPABILITY, 400), Stay),
            (rpc(UNSUPPORTED_VERSION, 200), Stay),
            (rpc(HEADER_MISMATCH, 404), Stay),
            (rpc(MISSING_CAPABILITY, 200), Stay),
            // HTTP rejections without a JSON-RPC body: a legacy server.
            (http(400), FallBack),
            (http(404), FallBack),
            (http(405), FallBack),
            (http(406), FallBack),
            (http(415), FallBack),
            // Any other JSON-RPC error at 200 or a 4xx but 401/403: a legacy server.
            (rpc(METHOD_NOT_FOUND, 404), FallBack), // a gateway in front of a handshake server
            (rpc(-32602, 200), FallBack),           // stateless older Python SDK lines
            (rpc(METHOD_NOT_FOUND, 200), FallBack), // a legacy server's unknown method
            (rpc(-32600, 200), FallBack),
            (rpc(-32000, 400), FallBack), // TS v1 "Mcp-Session-Id header is required"
            (rpc(-32600, 400), FallBack), // Python "Missing session ID"
            (rpc(-32602, 400), FallBack), // rmcp session mode, missing _meta
            (rpc(-32001, 404), FallBack), // TS v1 "Session not found"
            (rpc(METHOD_NOT_FOUND, 400), FallBack),
            (rpc(-32603, 422), FallBack),
            // Not rejections: classified, never downgraded.
            (http(401), Stay),
            (http(403), Stay),
            (rpc(-32600, 401), Stay),
            (rpc(METHOD_NOT_FOUND, 403), Stay),
            (http(500), Stay),
            (http(503), Stay),
            (http(307), Stay),
            (http(200), Stay),
            (rpc(-32603, 500), Stay),
            (rpc(METHOD_NOT_FOUND, 302), Stay),
            (rpc(METHOD_NOT_FOUND, 204), Stay),
            (
                Rejection::Rpc {
                    code: METHOD_NOT_FOUND,
                    status: None,
                },
                Stay,
            ),
            // Malformed replies (a 200 `{}` included), limits, timeouts: nothing to read.
            (Rejection::Other, Stay),
        ];
        for (failure, expected) in rows {
            assert_eq!(
                after_discover(*failure, McpTransport::Http),
                *expected,
                "{failure:?}"
            );
        }
    }

    #[test]
    fn pre_release_codes_are_never_modern_errors() {
        for code in -32019..=-32000 {
            assert!(!is_modern_error(code), "{code}");
            assert_eq!(after_discover(rpc(code, 400), McpTransport::Http), FallBack);
            assert_eq!(after_discover(rpc(code, 200), McpTransport::Http), FallBack);
            assert_eq!(after_discover(rpc(code, 500), McpTransport::Http), Stay);
        }
        assert!(is_modern_error(-32020) && is_modern_error(-32021) && is_modern_error(-32022));
    }

    #[test]
    fn stdio_rule_falls_back_on_any_unrecognised_rpc_error() {
        let stdio = |code| Rejection::Rpc { code, status: None };
        assert_eq!(after_discover(stdio(-32601), McpTransport::Stdio), FallBack);
        // Upstream §17 G38: the legacy Python SDK's "not initialized" (data may be a string).
        assert_eq!(after_discover(stdio(-32602), McpTransport::Stdio), FallBack);
        assert_eq!(after_discover(stdio(-32001), McpTransport::Stdio), FallBack);
        assert_eq!(after_discover(stdio(-32022), McpTransport::Stdio), Stay);
        assert_eq!(after_discover(stdio(-32020), McpTransport::Stdio), Stay);
        assert_eq!(after_discover(stdio(-32021), McpTransport::Stdio), Stay);
        // A silent, dead or malformed process is never read as a legacy server.
        assert_eq!(after_discover(Rejection::Other, McpTransport::Stdio), Stay);
    }
}
