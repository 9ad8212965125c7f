//! agent-workspace: isolated, resumable jj (or git worktree) workspaces for agent workflows.
//!
//! The binary: parses the command line, calls the crate, renders its error, exits.

use std::ffi::OsString;
use std::process::ExitCode;

use agent_workspace::{CliError, Parsed};

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    if args
        .get(1)
        .is_some_and(|a| a == agent_workspace::TRAMPOLINE)
    {
        return code(agent_workspace::run_guard(&args[2..]));
    }
    let cli = match agent_workspace::parse(args) {
        Ok(Parsed::Command(cli)) => cli,
        Ok(Parsed::Print(text)) => {
            return match agent_workspace::print(&text) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => fail(&err, false),
            }
        }
        Err(err) => return fail(&err, false),
    };
    match agent_workspace::dispatch(&cli) {
        Ok(status) => code(status),
        Err(err) => fail(&err, cli.wraps_command()),
    }
}

/// Prints `err` as the one rendered error and gives its exit code.
fn fail(err: &CliError, wraps_command: bool) -> ExitCode {
    eprintln!("{err}");
    ExitCode::from(err.exit_code(wraps_command))
}

fn code(status: i32) -> ExitCode {
    ExitCode::from(u8::try_from(status).unwrap_or(1))
}
