//! Command-line definitions: global flags and one variant per subcommand.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

pub mod commands;

use crate::error::CliError;
use crate::ui::output::ColorChoice;

use crate::repo::Backend;

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
    /// When to colour the output: auto (on a terminal, unless NO_COLOR is set), always, never
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// The sandbox flags of `run` and `shell`.
#[derive(Debug, Args, Clone, Default)]
pub struct SandboxArgs {
    /// Confine the command (direnv included) with bubblewrap: it can write only this
    /// workspace, what jj or git needs, a private /tmp and --allow-write paths
    #[arg(long)]
    pub sandbox: bool,
    /// Run unconfined although the configuration sets sandbox.enabled
    #[arg(long, conflicts_with_all = ["sandbox", "no_network", "allow_write"])]
    pub no_sandbox: bool,
    /// With --sandbox: remove the network (only loopback remains)
    #[arg(long)]
    pub no_network: bool,
    /// With --sandbox: also let the command write PATH (repeatable; also
    /// $AGENT_WORKSPACE_SANDBOX_WRITE, separated like PATH)
    #[arg(long, value_name = "PATH")]
    pub allow_write: Vec<PathBuf>,
}

impl SandboxArgs {
    /// bubblewrap, found and probed, with the options asked for (flags first, then the
    /// configuration's `sandbox.*`); `None` when the run is not sandboxed.
    pub fn prepare(
        &self,
        config: &crate::config::Config,
    ) -> Result<Option<crate::workspace::launch::Sandboxing>, CliError> {
        let sandboxed = self.sandbox || (config.sandbox && !self.no_sandbox);
        if !sandboxed {
            if self.no_network || !self.allow_write.is_empty() {
                return Err(CliError::usage(
                    "--no-network and --allow-write apply to sandboxed runs only",
                )
                .hint("add --sandbox (or set sandbox.enabled in the configuration)"));
            }
            return Ok(None);
        }
        let bwrap = crate::exec::sandbox::find()?;
        let mut flags = self.allow_write.clone();
        flags.extend(config.sandbox_writable.iter().cloned());
        let writable = crate::exec::sandbox::writable(&flags)?;
        Ok(Some(crate::workspace::launch::Sandboxing {
            bwrap,
            options: crate::exec::sandbox::Options {
                network: !self.no_network && config.sandbox_network,
                writable,
            },
        }))
    }
}

/// Each subcommand's arguments are built only when it is the one called (or for help,
/// completions and the man page), which keeps a `run` from building every other's.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    Run(crate::cli::commands::run::RunArgs),
    Status(crate::cli::commands::status::StatusArgs),
    Shell(crate::cli::commands::shell::ShellArgs),
    Clean(crate::cli::commands::clean::CleanArgs),
    Checkpoint(crate::cli::commands::checkpoint::CheckpointArgs),
    Diff(crate::cli::commands::diff::DiffArgs),
    Land(crate::cli::commands::land::LandArgs),
    SyncTools(crate::cli::commands::sync_tools::SyncToolsArgs),
    Gc(crate::cli::commands::gc::GcArgs),
    Pool(crate::cli::commands::pool::PoolArgs),
    Doctor(crate::cli::commands::doctor::DoctorArgs),
    Completions(crate::cli::commands::completions::CompletionsArgs),
    Man(crate::cli::commands::man::ManArgs),
    /// List the workspace ids of the current repository, one a line (for completion scripts)
    #[command(name = "__complete-ids", hide = true)]
    CompleteIds,
}

impl<'a> From<&'a GlobalArgs> for crate::workspace::context::Options<'a> {
    fn from(global: &'a GlobalArgs) -> Self {
        crate::workspace::context::Options {
            root: global.root.as_deref(),
            repo: global.repo.as_deref(),
            backend: global.backend,
        }
    }
}

impl Cli {
    /// Whether the command wraps a user's command (`run`, `shell`), whose own exit codes an
    /// error's must not be mistaken for.
    pub fn wraps_command(&self) -> bool {
        matches!(self.command, Command::Run(_) | Command::Shell(_))
    }
}

/// Runs the parsed command: one `cmd_<name>` per subcommand; its exit status, or the error
/// to render.
pub fn dispatch(cli: &Cli) -> Result<i32, CliError> {
    use crate::cli::commands;
    let global = &cli.global;
    match &cli.command {
        Command::Run(args) => commands::run::cmd_run(global, args),
        Command::Status(args) if args.watch => {
            commands::status_watch::cmd_status_watch(global, args.interval)
        }
        Command::Status(args) => commands::status::cmd_status(global, args),
        Command::Shell(args) => commands::shell::cmd_shell(global, args),
        Command::Clean(args) => commands::clean::cmd_clean(global, args),
        Command::Checkpoint(args) => commands::checkpoint::cmd_checkpoint(global, args),
        Command::Diff(args) => commands::diff::cmd_diff(global, args),
        Command::Gc(args) => commands::gc::cmd_gc(global, args),
        Command::Pool(args) => commands::pool::cmd_pool(global, args),
        Command::Land(args) => commands::land::cmd_land(global, args),
        Command::SyncTools(args) => commands::sync_tools::cmd_sync_tools(global, args),
        Command::Doctor(args) => commands::doctor::cmd_doctor(global, args),
        Command::Completions(args) => commands::completions::cmd_completions(args),
        Command::Man(args) => commands::man::cmd_man(args),
        Command::CompleteIds => commands::complete_ids::cmd_complete_ids(global),
    }
}

/// What parsing the command line gave: a command to run, or text clap asked to print
/// (`--help`, `--version`) on stdout.
pub enum Parsed {
    Command(Box<Cli>),
    Print(String),
}

/// Parses the command line; bad usage becomes a usage [`CliError`] rendered like every other
/// error (exit 2).
pub fn parse(args: Vec<OsString>) -> Result<Parsed, CliError> {
    match Cli::try_parse_from(args) {
        Ok(cli) => Ok(Parsed::Command(Box::new(cli))),
        Err(err) if !err.use_stderr() => Ok(Parsed::Print(err.to_string())),
        Err(err) => Err(usage_error(&err)),
    }
}

/// clap's message as `Error:` (its first paragraph), its tips and the usage line as the hint.
fn usage_error(err: &clap::Error) -> CliError {
    let text = err.to_string();
    let mut paragraphs = text.split("\n\n").map(str::trim).filter(|p| !p.is_empty());
    let first = paragraphs.next().unwrap_or("invalid usage");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let mut message: String = first.lines().map(str::trim).collect::<Vec<_>>().join(" ");
    let mut hints: Vec<String> = vec![];
    let mut command = "agent-workspace".to_string();
    for line in paragraphs.flat_map(str::lines).map(str::trim) {
        if let Some(tip) = line.strip_prefix("tip: ") {
            hints.push(tip.to_string());
        } else if let Some(usage) = line.strip_prefix("Usage: ") {
            if let Some(sub) = usage
                .split_whitespace()
                .nth(1)
                .filter(|w| !w.starts_with(['[', '<']))
            {
                command = format!("agent-workspace {sub}");
            }
            hints.push(format!("usage: {usage}"));
        }
    }
    if err.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        message = "no subcommand given".into();
        hints = vec![
            "usage: agent-workspace [OPTIONS] <run|status|shell|clean|gc|pool|diff|checkpoint|land|sync-tools|doctor|completions|man> ...".into(),
        ];
    }
    hints.push(format!("see `{command} --help`"));
    CliError::usage(message).hint(hints.join("; "))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// clap's own checks of every subcommand's definition, which a deferred subcommand
    /// would otherwise meet only when called.
    #[test]
    fn every_subcommand_is_well_defined() {
        super::Cli::command().debug_assert();
    }
}
