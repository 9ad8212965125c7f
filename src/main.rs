//! agent-workspace: isolated, resumable jj (or git worktree) workspaces for agent workflows.

mod aside;
mod checkup;
mod cli;
mod commands;
mod config;
mod context;
mod direnv;
mod disk;
mod envrc_loads;
mod error;
mod fsutil;
mod include;
mod inventory;
mod launch;
mod layout;
mod liveness;
mod lock;
mod metadata;
mod output;
mod pool_journal;
mod process;
mod progress;
mod progress_line;
mod recovery;
mod reflink;
mod refname;
mod repo;
mod report;
mod sandbox;
mod signals;
mod state;
mod status_table;
mod tools;
mod tree;
mod vars;
mod vcs;
mod verdict;
mod workspace;

use std::ffi::OsString;
use std::process::ExitCode;

use cli::Command;

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == process::TRAMPOLINE) {
        return code(commands::exec::cmd_exec(&args[2..]));
    }
    let cli = match cli::parse(args) {
        Ok(cli::Parsed::Command(cli)) => cli,
        Ok(cli::Parsed::Print(text)) => {
            return match output::print(&text) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => fail(&err, false),
            }
        }
        Err(err) => return fail(&err, false),
    };
    let wraps_command = matches!(cli.command, Command::Run(_) | Command::Shell(_));
    let outcome = match &cli.command {
        Command::Run(args) => commands::run::cmd_run(&cli.global, args),
        Command::Status(args) if args.watch => {
            commands::status_watch::cmd_status_watch(&cli.global, args.interval)
        }
        Command::Status(args) => commands::status::cmd_status(&cli.global, args),
        Command::Shell(args) => commands::shell::cmd_shell(&cli.global, args),
        Command::Clean(args) => commands::clean::cmd_clean(&cli.global, args),
        Command::Checkpoint(args) => commands::checkpoint::cmd_checkpoint(&cli.global, args),
        Command::Diff(args) => commands::diff::cmd_diff(&cli.global, args),
        Command::Gc(args) => commands::gc::cmd_gc(&cli.global, args),
        Command::Pool(args) => commands::pool::cmd_pool(&cli.global, args),
        Command::Land(args) => commands::land::cmd_land(&cli.global, args),
        Command::SyncTools(args) => commands::sync_tools::cmd_sync_tools(&cli.global, args),
        Command::Doctor(args) => commands::doctor::cmd_doctor(&cli.global, args),
        Command::Completions(args) => commands::completions::cmd_completions(args),
        Command::Man(args) => commands::man::cmd_man(args),
        Command::CompleteIds => commands::complete_ids::cmd_complete_ids(&cli.global),
    };
    match outcome {
        Ok(status) => code(status),
        Err(err) => fail(&err, wraps_command),
    }
}

/// Prints `err` as the one rendered error and gives its exit code.
fn fail(err: &error::CliError, wraps_command: bool) -> ExitCode {
    eprintln!("{err}");
    ExitCode::from(err.exit_code(wraps_command))
}

fn code(status: i32) -> ExitCode {
    ExitCode::from(u8::try_from(status).unwrap_or(1))
}
