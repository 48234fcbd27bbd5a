//! Advice for the engine's own findings: missing credentials, unsupported checks, latency,
//! deadlines (naming the setting that set the one that ran out), cancellation, budgets, and
//! resources of this host that ran out.

use super::{Audience, Setting, word};
use crate::contract::{Bound, Dimension, LocalResource, Revision, Status, TargetType};
use crate::result::document::Check;
use crate::result::{Fact, Key, Note};

pub(super) fn advice(
    note: Note,
    dim: Dimension,
    check: &Check,
    audience: Audience,
) -> Option<String> {
    Some(match note {
        Note::CredentialMissing => match word(check, Key::MissingEnv) {
            Some(names) => format!("set the environment variable(s) {names}"),
            None => "set the referenced environment variables".into(),
        },
        Note::NoAdapter => format!(
            "this target type has no adapter in this build; use one of {}",
            TargetType::names(&TargetType::CHECKED, ", ")
        ),
        Note::DimensionUnsupported => {
            "remove the dimensions this target type does not implement from `checks`".into()
        }
        Note::LatencyExceeds(_) => {
            "raise thresholds.latency_ms or investigate the slow response".into()
        }
        Note::ConfigurationIncomplete(Bound::RunCap) => {
            "the 60 s cap on every run was reached before this node's configuration could be checked; split the configuration or lower the timeouts".into()
        }
        Note::ConfigurationIncomplete(bound) => format!(
            "{} ran out before this node's configuration could be checked; raise it, or lower the timeouts and retries of the nodes before it",
            setting(bound)
        ),
        Note::TimedOut { bound, .. }
            if dim == Dimension::Functional && check.evidence.get(Key::Failure).is_none() =>
        {
            format!(
                "the tool call did not complete before the deadline, and a functional call is never retried; check the tool by hand and {}",
                setting(bound)
            )
        }
        Note::TimedOut { bound, .. } if silent_on_discover(check) => format!(
            "the server process was running and wrote nothing in answer to server/discover \
             within {}; servers that ignore methods they do not know (older SDK releases) \
             never answer it: pin a legacy revision with {}: '{}'; if it was still starting, \
             raise {}",
            deadline(check),
            audience.name(Setting::ProtocolVersion),
            Revision::LEGACY_OFFER.as_str(),
            setting(bound)
        ),
        Note::TimedOut { bound, .. } => timed_out(check, Some(bound)),
        Note::Cancelled => "the run was cancelled (a signal) before this check completed".into(),
        Note::BudgetExhausted(Bound::RunCap) => {
            "the 60 s cap on every run was reached before this check could start; split the configuration or lower the timeouts before it".into()
        }
        Note::LocalResource(resource) => local_resource(resource, check),
        Note::BudgetExhausted(bound) => format!(
            "{} ran out before this check could start; raise it, or lower the timeouts and retries before it",
            setting(bound)
        ),
    })
}

/// A stdio server still running that wrote nothing in answer to `server/discover` before the
/// deadline: one that ignores unknown methods, for which the specification says to pin a
/// legacy revision (a timeout never triggers the fallback).
fn silent_on_discover(check: &Check) -> bool {
    word(check, Key::FailedMethod).as_deref() == Some("server/discover")
        && check.evidence.get(Key::ProcessRunning) == Some(&Fact::Bool(true))
        && check.evidence.get(Key::StdoutBytes) == Some(&Fact::Int(0))
}

/// The setting a person changes to move a deadline `bound` set.
pub(super) fn setting(bound: Bound) -> &'static str {
    bound.setting()
}

/// `300 ms`, or `the deadline`: the attempt's deadline from the `deadline_ms` evidence.
pub(super) fn deadline(check: &Check) -> String {
    match check.evidence.get(Key::DeadlineMs) {
        Some(Fact::Ms(ms)) => format!("{ms:.0} ms"),
        _ => "the deadline".into(),
    }
}

/// What to do about a deadline that passed: which setting to raise (none can raise the run
/// cap), after what happened (`no response within 300 ms`).
pub(super) fn timed_out(check: &Check, bound: Option<Bound>) -> String {
    let d = deadline(check);
    let unknown = check.status == Status::Unknown;
    match bound {
        Some(Bound::RunCap) if unknown => format!(
            "the response started but did not complete within {d}, the 60 s cap on every run; check the server's health"
        ),
        Some(Bound::RunCap) => format!(
            "no response within {d}, the 60 s cap on every run; check that the service is up and reachable"
        ),
        _ if unknown => format!(
            "the response started but did not complete within {d}; check the server's health and {}",
            setting(bound.unwrap_or(Bound::TimeoutMs))
        ),
        _ => format!(
            "no response within {d}; check that the service is up and reachable, and that {} is adequate",
            setting(bound.unwrap_or(Bound::TimeoutMs))
        ),
    }
}

/// A resource of this host ran out: the target was not at fault.
fn local_resource(resource: LocalResource, check: &Check) -> String {
    let ran_out = |what: &str| {
        format!(
            "this host ran out of {what} before the check could complete; the target was not at fault"
        )
    };
    match resource {
        LocalResource::Disk => format!(
            "the token file's volume failed ({}) before the check could complete, so the token was not refreshed and the saved one is intact; the target was not at fault: free space on the volume of mcp.oauth.token_file (a refresh needs 64 KiB beside the file) or repair it",
            word(check, Key::OsError).unwrap_or_else(|| "disk".into())
        ),
        LocalResource::FileDescriptors => {
            ran_out("file descriptors (raise `ulimit -n`, or lower concurrency)")
        }
        LocalResource::Threads => ran_out("threads (raise `ulimit -u`, or lower concurrency)"),
        LocalResource::Memory => ran_out("memory (raise `ulimit -v`, or lower concurrency)"),
    }
}
