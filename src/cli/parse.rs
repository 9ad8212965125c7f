//! The command line's clap definition: the global flags and one variant per subcommand, and
//! parsing it (clap's errors turned into the one error form).

use std::ffi::OsString;

use clap::{Parser, Subcommand};

use crate::cli::global::GlobalArgs;
use crate::cli::help;
use crate::error::CliError;

/// Isolated, resumable jj (or git worktree) workspaces for agent workflows.
#[derive(Debug, Parser)]
#[command(name = "agent-workspace", bin_name = "agent-workspace", version)]
#[command(about, long_about = None, max_term_width = 100, after_help = help::EXIT_CODES)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Each subcommand's arguments are built only when it is the one called (or for help,
/// completions and the man page), which keeps a `run` from building every other's. The
/// summaries here are what the top-level help lists before that; each repeats the first line
/// of its `Args`' doc (a unit test holds them equal).
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Run a command in a workspace, creating it if needed
    #[command(after_long_help = help::RUN)]
    Run(crate::cli::commands::run::RunArgs),
    /// Show the workspaces of this repository, or one workspace's record and history
    #[command(after_long_help = help::STATUS)]
    Status(crate::cli::commands::status::StatusArgs),
    /// Make a workspace ready (or reattach it) without running a command; print its directory
    #[command(after_long_help = help::CREATE)]
    Create(crate::cli::commands::create::CreateArgs),
    /// Print a workspace's directory (exit 1 when there is none)
    #[command(after_long_help = help::PATH)]
    Path(crate::cli::commands::path::PathArgs),
    /// Open $SHELL (else /bin/sh) in an existing workspace, with its environment loaded
    #[command(after_long_help = help::SHELL)]
    Shell(crate::cli::commands::shell::ShellArgs),
    /// Remove workspaces, keeping their edits in the repository
    #[command(after_long_help = help::CLEAN)]
    Clean(crate::cli::commands::clean::CleanArgs),
    /// Record a workspace's current state as a commit of its own and keep working on top of it
    #[command(after_long_help = help::CHECKPOINT)]
    Checkpoint(crate::cli::commands::checkpoint::CheckpointArgs),
    /// Show what a workspace changed since it was created: its commits and its files, latest edits included
    #[command(after_long_help = help::DIFF)]
    Diff(crate::cli::commands::diff::DiffArgs),
    /// Bring a workspace's commits onto a target, its unrecorded edits recorded first
    #[command(after_long_help = help::LAND)]
    Land(crate::cli::commands::land::LandArgs),
    /// Copy the repository's tools (tools.paths) into a workspace's tools directory now
    #[command(after_long_help = help::SYNC_TOOLS)]
    SyncTools(crate::cli::commands::sync_tools::SyncToolsArgs),
    /// Remove workspaces past the retention configured for their status (retention.*)
    #[command(after_long_help = help::GC)]
    Gc(crate::cli::commands::gc::GcArgs),
    /// Prepare workspaces ahead of time, so a new run takes one instead of checking out
    #[command(after_long_help = help::POOL)]
    Pool(crate::cli::commands::pool::PoolArgs),
    /// Check the tools, the workspace root, the repository and its workspaces
    #[command(after_long_help = help::DOCTOR)]
    Doctor(crate::cli::commands::doctor::DoctorArgs),
    /// Serve the Model Context Protocol on stdin and stdout, for agents to drive workspaces
    #[command(after_long_help = help::MCP)]
    Mcp(crate::cli::commands::mcp::McpArgs),
    /// Add agent-workspace's hooks to a coding agent's settings, so its own worktrees become workspaces
    #[command(after_long_help = help::INTEGRATE)]
    Integrate(crate::cli::commands::integrate::IntegrateArgs),
    /// Print the skill (SKILL.md) that teaches a coding agent to work with agent-workspace
    #[command(after_long_help = help::SKILL)]
    Skill(crate::cli::commands::skill::SkillArgs),
    /// Answer a coding agent's hook event (read on stdin) with agent-workspace's workspaces
    #[command(after_long_help = help::HOOK, hide = true)]
    Hook(crate::cli::commands::hook::HookArgs),
    /// Print the script that registers completion for a shell
    #[command(after_long_help = help::COMPLETIONS)]
    Completions(crate::cli::commands::completions::CompletionsArgs),
    /// Write the manual pages (agent-workspace.1 and one per subcommand) into a directory
    #[command(after_long_help = help::MAN)]
    Man(crate::cli::commands::man::ManArgs),
}

impl Cli {
    /// Whether `--json` was asked for (see `table::CommandArgs::json`).
    pub fn wants_json(&self) -> bool {
        self.command.args().json()
    }

    /// Where `run --failure-file` asks a failure's document to be written too.
    pub fn failure_file(&self) -> Option<&std::path::Path> {
        self.command.args().failure_file()
    }

    /// Whether the command wraps a user's command (`run`, `shell`).
    pub fn wraps_command(&self) -> bool {
        self.command.args().wraps_command()
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
        return CliError::from(invalid.clone());
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
            "usage: agent-workspace [OPTIONS] <run|status|create|path|shell|clean|gc|pool|diff|checkpoint|land|sync-tools|doctor|mcp|completions|man> ...".into(),
        ];
    }
    if let Some(word) = command_without_separator(err, &command) {
        hints.insert(
            0,
            format!("put `--` before the command: `{command} <ID> -- {word} ...`"),
        );
    }
    hints.push(format!("see `{command} --help`"));
    CliError::usage(message).hint(hints.join("; "))
}

/// The first word of a command given to `run` without the `--` before it (`run w echo hi`):
/// clap meets it as an unexpected argument that is no flag.
fn command_without_separator(err: &clap::Error, command: &str) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if err.kind() != ErrorKind::UnknownArgument || command != "agent-workspace run" {
        return None;
    }
    match err.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(word)) if !word.starts_with('-') => Some(word.clone()),
        _ => None,
    }
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

    /// Every visible subcommand, nested ones too: the summary the top-level help lists (set
    /// before the deferred arguments are built) is its own help's first line, and its long
    /// help ends with an example.
    #[test]
    fn every_subcommand_has_a_summary_and_an_example() {
        fn check(unbuilt: &clap::Command, built: &clap::Command, path: &str) {
            for sub in built.get_subcommands().filter(|s| !s.is_hide_set()) {
                let name = format!("{path} {}", sub.get_name());
                if sub.get_name() == "help" {
                    continue;
                }
                // A deferred subcommand's own subcommands exist only once built.
                let listed = unbuilt
                    .find_subcommand(sub.get_name())
                    .unwrap_or(sub)
                    .get_about()
                    .map(|a| a.to_string())
                    .unwrap_or_default();
                let own = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
                assert!(!listed.is_empty(), "{name}: no summary in the list");
                assert_eq!(listed, own, "{name}: the listed summary differs");
                assert!(!own.contains('\n') && own.len() <= 100, "{name}: {own}");
                let long = sub.get_after_long_help().map(|a| a.to_string());
                let long = long.unwrap_or_default();
                assert!(
                    long.starts_with("Examples:\n")
                        && long
                            .lines()
                            .any(|l| l.starts_with("    ") && l.contains("agent-workspace ")),
                    "{name}: no example in its long help: {long:?}"
                );
                let unbuilt_sub = unbuilt.find_subcommand(sub.get_name()).unwrap_or(sub);
                check(unbuilt_sub, sub, &name);
            }
        }
        let unbuilt = super::Cli::command();
        let mut built = super::Cli::command();
        built.build();
        check(&unbuilt, &built, "agent-workspace");
        let footer = built
            .get_after_help()
            .map(|a| a.to_string())
            .unwrap_or_default();
        assert!(footer.starts_with("Exit codes:"), "{footer}");
    }

    /// An id refused by clap's value parser is the usage error of `WorkspaceId::parse`'s
    /// refusal, not clap's "invalid value" form, for every argument that takes one.
    #[test]
    fn a_refused_id_keeps_its_own_words() {
        let expected = crate::error::CliError::from(
            crate::store::layout::WorkspaceId::parse("a b").unwrap_err(),
        );
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
