//! agent-workspace: isolated, resumable jj (or git worktree) workspaces for agent workflows.
//!
//! The binary: parses the command line, calls the crate, renders its error, exits.

use std::ffi::OsString;
use std::process::ExitCode;

use agent_workspace::{CliError, ColorChoice, Parsed, Ui};

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    if args
        .get(1)
        .is_some_and(|a| a == agent_workspace::TRAMPOLINE)
    {
        return code(agent_workspace::run_guard(
            &Ui::new(ColorChoice::Never),
            &args[2..],
        ));
    }
    // A shell asking for completions (`AGENT_WORKSPACE_COMPLETE` set by its script).
    if let Some(answer) = agent_workspace::complete_from_env(&args) {
        let ui = Ui::new(ColorChoice::Never);
        return match answer.and_then(|text| ui.generated(&text)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => fail(&ui, &err, false),
        };
    }
    let cli = match agent_workspace::parse(args) {
        Ok(Parsed::Command(cli)) => cli,
        Ok(Parsed::Print(text)) => {
            let ui = Ui::new(ColorChoice::Auto);
            return match ui.generated(&text) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => fail(&ui, &err, false),
            };
        }
        Err(err) => return fail(&Ui::new(ColorChoice::Auto), &err, false),
    };
    let ui = Ui::new(cli.global.color);
    match agent_workspace::dispatch(&ui, &cli) {
        Ok(status) => code(status),
        Err(err) => {
            if cli.wants_json() {
                ui.error_json(&err, err.exit_code(cli.wraps_command()));
            }
            if let Some(path) = cli.failure_file() {
                ui.error_json_file(path, &err, err.exit_code(cli.wraps_command()));
            }
            fail(&ui, &err, cli.wraps_command())
        }
    }
}

/// Renders `err` through the sink and gives its exit code.
fn fail(ui: &Ui, err: &CliError, wraps_command: bool) -> ExitCode {
    ui.error(err);
    ExitCode::from(err.exit_code(wraps_command))
}

fn code(status: i32) -> ExitCode {
    ExitCode::from(u8::try_from(status).unwrap_or(1))
}
