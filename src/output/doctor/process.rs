//! Advice for MCP stdio server processes that could not start or ended early.

use super::{int, word};
use crate::result::Key;
use crate::result::document::Check;
use crate::result::reason::{ProcessFailure, StartProblem};

pub(super) fn advice(failure: ProcessFailure, check: &Check) -> String {
    let command =
        word(check, Key::Command).map_or_else(|| "the command".to_string(), |c| format!("`{c}`"));
    let by_hand = "run the configured command by hand (agenthealth starts it without a shell, \
                   with only PATH, HOME, USER, the temporary-directory variables and mcp.stdio.env)";
    match failure {
        ProcessFailure::Unstartable(StartProblem::CommandNotFound) if command.contains('/') => {
            format!(
                "{command} does not exist; a relative path is resolved against mcp.stdio.directory (or the current directory)"
            )
        }
        ProcessFailure::Unstartable(StartProblem::CommandNotFound) => {
            format!("{command} was not found on PATH; check mcp.stdio.command or give a path")
        }
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
