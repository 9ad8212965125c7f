//! Command-line definitions: global flags and one variant per subcommand.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::vcs::Backend;

/// Isolated, resumable jj (or git worktree) workspaces for agent workflows.
#[derive(Debug, Parser)]
#[command(name = "agent-workspace", bin_name = "agent-workspace", version)]
#[command(about, long_about = None, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every subcommand accepts.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Directory holding all workspaces [default: $AI_WORKSPACES_ROOT, else
    /// $XDG_CACHE_HOME/ai-workspaces, else ~/.cache/ai-workspaces]
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Repository to act on [default: the one containing the current directory]
    #[arg(long, global = true, value_name = "PATH")]
    pub repo: Option<PathBuf>,
    /// Version-control backend [default: $AGENT_WORKSPACE_BACKEND, else jj when the
    /// repository has .jj, else git]
    #[arg(long, global = true, value_enum)]
    pub backend: Option<Backend>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Run(crate::commands::run::RunArgs),
    Status(crate::commands::status::StatusArgs),
    Shell(crate::commands::shell::ShellArgs),
    Clean(crate::commands::clean::CleanArgs),
}

/// Parses the command line, exiting with clap's message and code 2 on bad usage.
pub fn parse(args: Vec<OsString>) -> Cli {
    Cli::parse_from(args)
}
