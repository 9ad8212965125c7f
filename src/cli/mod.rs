//! The command line: its clap definition (`parse`), the flags every command reads (`global`),
//! one thin command per subcommand (`commands`), what `run` and `create` share (`start`), and
//! the dispatch from one to the other.

pub(in crate::cli) mod commands;
pub(in crate::cli) mod complete;
pub(in crate::cli) mod global;
pub(in crate::cli) mod help;
pub(in crate::cli) mod mcp;
pub(in crate::cli) mod parse;
#[cfg(test)]
mod reference;
#[cfg(test)]
mod schemas;
pub(in crate::cli) mod start;

use clap::CommandFactory;

// What the binary needs, re-exported by the crate root. Everything else in this layer is
// `pub(in crate::cli)`: no lower layer can name it (the compiler holds that direction).
pub use commands::exec::cmd_exec as run_guard;
pub use complete::complete_from_env;
pub use parse::{parse, Cli, Parsed};

use crate::error::CliError;
use crate::ui::Ui;
use parse::Command;

/// Runs the parsed command: one `cmd_<name>` per subcommand; its exit status, or the error
/// to render.
pub fn dispatch(ui: &Ui, cli: &Cli) -> Result<i32, CliError> {
    let global = &cli.global;
    match &cli.command {
        Command::Run(args) => commands::run::cmd_run(ui, global, args),
        Command::Create(args) => commands::create::cmd_create(ui, global, args),
        Command::Path(args) => commands::path::cmd_path(ui, global, args),
        Command::Status(args) if args.watch => {
            commands::status_watch::cmd_status_watch(ui, global, args.interval, args.paths)
        }
        Command::Status(args) => commands::status::cmd_status(ui, global, args),
        Command::Shell(args) => commands::shell::cmd_shell(ui, global, args),
        Command::Clean(args) => commands::clean::cmd_clean(ui, global, args),
        Command::Checkpoint(args) => commands::checkpoint::cmd_checkpoint(ui, global, args),
        Command::Diff(args) => commands::diff::cmd_diff(ui, global, args),
        Command::Gc(args) => commands::gc::cmd_gc(ui, global, args),
        Command::Pool(args) => commands::pool::cmd_pool(ui, global, args),
        Command::Land(args) => commands::land::cmd_land(ui, global, args),
        Command::SyncTools(args) => commands::sync_tools::cmd_sync_tools(ui, global, args),
        Command::Doctor(args) => commands::doctor::cmd_doctor(ui, global, args),
        Command::Mcp(args) => commands::mcp::cmd_mcp(ui, global, args),
        Command::Completions(args) => commands::completions::cmd_completions(ui, args),
        Command::Man(args) => commands::man::cmd_man(ui, args, Cli::command()),
    }
}
