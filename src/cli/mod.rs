//! The command line: its clap definition (`parse`), the flags every command reads (`global`),
//! the words of every lower layer's error (`errors`), one thin command per subcommand
//! (`commands`), what `run` and `create` share (`start`), and
//! the one table of commands (`table`) the dispatch reads, and what every command starts from
//! (`invocation`).

pub(in crate::cli) mod commands;
pub(in crate::cli) mod complete;
mod errors;
pub(in crate::cli) mod global;
pub(in crate::cli) mod help;
pub(in crate::cli) mod invocation;
pub(in crate::cli) mod mcp;
pub(in crate::cli) mod parse;
#[cfg(test)]
mod reference;
#[cfg(test)]
mod schemas;
pub(in crate::cli) mod skill;
pub(in crate::cli) mod start;
pub(in crate::cli) mod table;

// What the binary needs, re-exported by the crate root. Everything else in this layer is
// `pub(in crate::cli)`: no lower layer can name it (the compiler holds that direction).
pub use commands::exec::cmd_exec as run_guard;
pub use complete::complete_from_env;
pub use parse::{parse, Cli, Parsed};

use crate::error::CliError;
use crate::ui::Ui;

/// Runs the parsed command through its row of the table of commands (`table.rs`): its exit
/// status, or the error to render.
pub fn dispatch(ui: &Ui, cli: &Cli) -> Result<i32, CliError> {
    let inv = invocation::Invocation::new(ui, &cli.global);
    cli.command.args().run(&inv)
}
