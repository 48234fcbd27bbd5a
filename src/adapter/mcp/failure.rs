//! Classified failures of MCP exchanges and their one mapping into observations.
//!
//! Every failure the adapter can meet — a transport's answer, a result of the wrong shape, a
//! version it cannot accept, an inconclusive `input_required` — becomes an [`McpError`], and
//! [`McpError::observe`] is the only place that picks a status, a code and the failure's
//! evidence (`http_status`, `rpc_code`, `protocol_error`, `limit`; for a process
//! `exit_code`, `exit_signal`, `process_running` or `process_error`).

use super::era::UNSUPPORTED_VERSION;
use super::transport::TransportError;
use crate::contract::Status;
use crate::process::ExitInfo;
use crate::result::reason::{Limit, Malformed, McpFailure, ProcessFailure, Reason};
use crate::result::{Fact, Key, Observation};

/// Why establishing a session, listing an inventory or calling a tool failed.
#[derive(Clone, Debug, PartialEq)]
pub enum McpError {
    /// The transport's failure.
    Transport(TransportError),
    /// A result of the wrong shape.
    Malformed(Malformed),
    /// The server's revision is unsupported or differs from the pin.
    Version,
    /// Discovery exceeded a safety limit (pages, entries, a repeated cursor).
    Limit(Limit),
    /// The server asked for input we never give (`resultType: input_required`).
    Input,
    /// A `server/discover` result that names no `supportedVersions` at all (`{}`, as legacy
    /// servers that answer any method give): no modern answer. Unpinned, it falls back to
    /// `initialize`; with a 2026-07-28 pin it is the malformed discover result it is.
    NoVersions,
}

impl From<TransportError> for McpError {
    fn from(e: TransportError) -> McpError {
        McpError::Transport(e)
    }
}

impl McpError {
    /// Whether a response arrived: a classified failure always has one, a network failure
    /// only when it says so. Only failures with a response may be cached for later
    /// dimensions.
    pub fn response_seen(&self) -> bool {
        match self {
            McpError::Transport(e) => e.response_seen(),
            _ => true,
        }
    }

    /// Whether this failure is the engine's to classify (a deadline, an abort, a dead
    /// connection) rather than an answer about the server.
    pub fn is_network(&self) -> bool {
        matches!(self, McpError::Transport(TransportError::Network { .. }))
    }

    /// The observation: status, reason and the failure's own evidence.
    pub fn observe(&self) -> Observation {
        use TransportError as T;
        let mcp = |status, failure| Observation::failed(status, Reason::Mcp(failure));
        let mut o = match self {
            McpError::Transport(T::Status { status, head }) => {
                let mut o = if matches!(status, 401 | 403) {
                    mcp(Status::Misconfigured, McpFailure::AuthRejected)
                } else {
                    mcp(Status::Unhealthy, McpFailure::HttpStatus)
                };
                o.evidence
                    .set(Key::HttpStatus, Fact::Int(i64::from(*status)));
                head.write(&mut o.evidence);
                o
            }
            McpError::Transport(T::Rpc { code, status }) => {
                let failure = if *code == UNSUPPORTED_VERSION {
                    McpFailure::VersionRefused
                } else {
                    McpFailure::Rpc
                };
                let mut o = mcp(Status::Unhealthy, failure);
                if let Some(status) = status {
                    o = o.with(Key::HttpStatus, Fact::Int(i64::from(*status)));
                }
                o.with(Key::RpcCode, Fact::Int(*code))
            }
            McpError::Transport(T::Malformed(why)) | McpError::Malformed(why) => {
                mcp(Status::Unhealthy, McpFailure::Malformed(*why))
                    .with(Key::ProtocolError, Fact::Word(why.as_word()))
            }
            McpError::NoVersions => {
                let why = Malformed::Result("discover supportedVersions");
                mcp(Status::Unhealthy, McpFailure::Malformed(why))
                    .with(Key::ProtocolError, Fact::Word(why.as_word()))
            }
            McpError::Transport(T::Limit(why)) | McpError::Limit(why) => {
                mcp(Status::Unknown, McpFailure::Limit(*why))
                    .with(Key::Limit, Fact::Word(why.as_word()))
            }
            McpError::Transport(T::Exited(exit)) => {
                let o = Observation::failed(
                    Status::Unreachable,
                    Reason::Process(ProcessFailure::Exited),
                );
                match exit {
                    ExitInfo::Code(code) => o.with(Key::ExitCode, Fact::Int(i64::from(*code))),
                    ExitInfo::Signal(signal) => {
                        o.with(Key::ExitSignal, Fact::Int(i64::from(*signal)))
                    }
                    ExitInfo::Running => o.with(Key::ProcessRunning, Fact::Bool(true)),
                }
            }
            McpError::Transport(T::Unstartable(why)) => Observation::failed(
                Status::Misconfigured,
                Reason::Process(ProcessFailure::Unstartable(*why)),
            )
            .with(Key::ProcessError, Fact::Word(why.as_word())),
            McpError::Version => mcp(Status::Unhealthy, McpFailure::Version),
            McpError::Input => mcp(Status::Unknown, McpFailure::Input),
            McpError::Transport(T::Network(o)) => (**o).clone(),
            McpError::Transport(T::Refused(o)) => (**o).clone(),
        };
        o.response_seen = self.response_seen();
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Bound;
    use crate::result::DiagnosticCode;
    use crate::result::reason::StartProblem;

    fn of(f: McpError) -> (Status, Option<DiagnosticCode>) {
        let o = f.observe();
        (o.status, o.code())
    }

    #[test]
    fn statuses_and_codes() {
        use TransportError as T;
        let t = McpError::Transport;
        assert_eq!(
            of(t(T::status(401))),
            (Status::Misconfigured, Some(DiagnosticCode::McpAuth))
        );
        assert_eq!(
            of(t(T::status(403))),
            (Status::Misconfigured, Some(DiagnosticCode::McpAuth))
        );
        assert_eq!(
            of(t(T::status(500))),
            (Status::Unhealthy, Some(DiagnosticCode::McpHttp))
        );
        assert_eq!(
            of(t(T::Rpc {
                code: -32022,
                status: Some(400)
            })),
            (Status::Unhealthy, Some(DiagnosticCode::McpVersion))
        );
        assert_eq!(
            of(t(T::Rpc {
                code: -32601,
                status: Some(404)
            })),
            (Status::Unhealthy, Some(DiagnosticCode::McpRpc))
        );
        assert_eq!(
            of(t(T::Malformed(Malformed::Result("x")))),
            (Status::Unhealthy, Some(DiagnosticCode::McpProtocol))
        );
        assert_eq!(
            of(McpError::Malformed(Malformed::Result("x"))),
            (Status::Unhealthy, Some(DiagnosticCode::McpProtocol))
        );
        assert_eq!(
            of(t(T::Limit(Limit::Pages))),
            (Status::Unknown, Some(DiagnosticCode::McpLimit))
        );
        assert_eq!(
            of(McpError::Limit(Limit::Pages)),
            (Status::Unknown, Some(DiagnosticCode::McpLimit))
        );
        assert_eq!(
            of(McpError::Version),
            (Status::Unhealthy, Some(DiagnosticCode::McpVersion))
        );
        assert_eq!(
            of(McpError::Input),
            (Status::Unknown, Some(DiagnosticCode::McpInput))
        );
        let exited = t(T::Exited(ExitInfo::Code(3))).observe();
        assert_eq!(
            (exited.status, exited.code()),
            (Status::Unreachable, Some(DiagnosticCode::McpProcess))
        );
        assert!(!exited.response_seen);
        assert_eq!(exited.evidence.get(Key::ExitCode), Some(&Fact::Int(3)));
        let killed = t(T::Exited(ExitInfo::Signal(9))).observe();
        assert_eq!(killed.evidence.get(Key::ExitSignal), Some(&Fact::Int(9)));
        let running = t(T::Exited(ExitInfo::Running)).observe();
        assert_eq!(
            running.evidence.get(Key::ProcessRunning),
            Some(&Fact::Bool(true))
        );
        let unstartable = t(T::Unstartable(StartProblem::CommandNotFound)).observe();
        assert_eq!(
            (unstartable.status, unstartable.code()),
            (Status::Misconfigured, Some(DiagnosticCode::McpProcess))
        );
        assert!(!unstartable.response_seen);
        assert_eq!(
            unstartable.evidence.get(Key::ProcessError),
            Some(&Fact::Word("command_not_found"))
        );
        let silent = t(T::timed_out(Bound::TimeoutMs, false)).observe();
        assert_eq!(silent.status, Status::Unreachable);
        assert!(!silent.response_seen && silent.code().is_none());
        let partial = t(T::timed_out(Bound::TimeoutMs, true)).observe();
        assert_eq!(partial.status, Status::Unknown);
        assert!(partial.response_seen);
    }

    #[test]
    fn evidence_carries_status_and_code_only() {
        let o = McpError::Transport(TransportError::Rpc {
            code: -32020,
            status: Some(400),
        })
        .observe();
        assert_eq!(o.evidence.get(Key::HttpStatus), Some(&Fact::Int(400)));
        assert_eq!(o.evidence.get(Key::RpcCode), Some(&Fact::Int(-32020)));
        assert!(o.response_seen);
    }
}
