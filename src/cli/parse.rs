//! The command line's clap definition: the global flags and one variant per subcommand, and
//! parsing it (clap's errors turned into the one error form).

use std::ffi::OsString;

use clap::{Parser, Subcommand};

use crate::cli::global::GlobalArgs;
use crate::error::CliError;

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

/// Each subcommand's arguments are built only when it is the one called (or for help,
/// completions and the man page), which keeps a `run` from building every other's.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    Run(crate::cli::commands::run::RunArgs),
    Status(crate::cli::commands::status::StatusArgs),
    Create(crate::cli::commands::create::CreateArgs),
    Path(crate::cli::commands::path::PathArgs),
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
}

impl Cli {
    /// Whether the command wraps a user's command (`run`, `shell`), whose own exit codes an
    /// error's must not be mistaken for.
    pub fn wraps_command(&self) -> bool {
        matches!(self.command, Command::Run(_) | Command::Shell(_))
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
    // A refused workspace id says so in its own words, as everywhere else.
    if let Some(invalid) = std::error::Error::source(err)
        .and_then(|e| e.downcast_ref::<crate::store::layout::InvalidId>())
    {
        return invalid.0.clone();
    }
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
            "usage: agent-workspace [OPTIONS] <run|status|create|path|shell|clean|gc|pool|diff|checkpoint|land|sync-tools|doctor|completions|man> ...".into(),
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

    /// An id refused by clap's value parser is the usage error `validate_id` words, not
    /// clap's "invalid value" form, for every argument that takes one.
    #[test]
    fn a_refused_id_keeps_its_own_words() {
        let expected = crate::store::layout::validate_id("a b").unwrap_err();
        for args in [
            &["run", "a b", "--", "true"][..],
            &["run", "w", "--parent", "a b", "--", "true"],
            &["status", "a b"],
            &["clean", "w", "a b"],
            &["land", "a b"],
        ] {
            let argv = std::iter::once("agent-workspace")
                .chain(args.iter().copied())
                .map(std::ffi::OsString::from)
                .collect();
            let Err(err) = super::parse(argv) else {
                panic!("{args:?} was accepted");
            };
            assert_eq!(err.message, expected.message, "{args:?}");
            assert_eq!(err.hint, expected.hint, "{args:?}");
            assert_eq!(err.exit_code(false), 2, "{args:?}");
        }
    }
}
