//! Advice for MCP stdio server processes that could not start or ended early.

use super::{Audience, Setting, int, word};
use crate::result::Key;
use crate::result::document::Check;
use crate::result::reason::{ProcessFailure, StartProblem};

pub(super) fn advice(failure: ProcessFailure, check: &Check, audience: Audience) -> String {
    let command =
        word(check, Key::Command).map_or_else(|| "the command".to_string(), |c| format!("`{c}`"));
    let by_hand = if audience.adhoc {
        "run the command by hand (agenthealth starts it without a shell, with only PATH, HOME, \
         USER and the temporary-directory variables)"
    } else {
        "run the configured command by hand (agenthealth starts it without a shell, \
         with only PATH, HOME, USER, the temporary-directory variables and mcp.stdio.env)"
    };
    let relative_to = if audience.adhoc {
        "the current directory"
    } else {
        "mcp.stdio.directory (or the current directory)"
    };
    match failure {
        ProcessFailure::Unstartable(StartProblem::CommandNotFound) if command.contains('/') => {
            format!("{command} does not exist; a relative path is resolved against {relative_to}")
        }
        ProcessFailure::Unstartable(StartProblem::CommandNotFound) => format!(
            "{command} was not found on PATH; check {} or give a path",
            audience.name(Setting::StdioCommand)
        ),
        ProcessFailure::Unstartable(StartProblem::CommandNotExecutable) => format!(
            "{command} cannot be executed: it needs execute permission and must be a binary or a #! script whose interpreter exists"
        ),
        ProcessFailure::Unstartable(StartProblem::BadDirectory) => {
            "mcp.stdio.directory is missing, not a directory, or not searchable".into()
        }
        ProcessFailure::Unstartable(StartProblem::InvalidEnv) => {
            "an mcp.stdio.env name or value cannot be placed in an environment (`=` or NUL)".into()
        }
        ProcessFailure::Unstartable(StartProblem::StartFailed) => {
            format!("the server process could not be started; {by_hand}")
        }
        ProcessFailure::Exited => match (int(check, Key::ExitCode), int(check, Key::ExitSignal)) {
            (Some(code), _) => {
                format!("the server process exited with status {code} before answering; {by_hand}")
            }
            (None, Some(signal)) => format!(
                "the server process was killed by signal {signal} before answering; {by_hand}"
            ),
            (None, None) => {
                format!("the server process closed its output before answering; {by_hand}")
            }
        },
    }
}
