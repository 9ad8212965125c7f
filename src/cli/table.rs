//! The one table of commands: what the command layer asks of every subcommand (how to run
//! it, whether `--json` was asked for, where a failure's document goes too, whether it wraps
//! a user's command), each subcommand answering in one `impl` here. A new subcommand is a
//! variant of `parse::Command`, an arm of [`Command::args`] and an `impl` below.

use std::path::Path;

use clap::CommandFactory;

use crate::cli::commands::{
    checkpoint, clean, completions, create, diff, doctor, gc, hook, integrate, land, man, mcp,
    path, pool, run, shell, skill, status, status_watch, sync_tools,
};
use crate::cli::invocation::Invocation;
use crate::cli::parse::{Cli, Command};
use crate::error::CliError;

/// What every subcommand's arguments answer.
pub(in crate::cli) trait CommandArgs {
    /// Runs the command: its exit status, or the error to render.
    fn run(&self, inv: &Invocation) -> Result<i32, CliError>;

    /// Whether `--json` was asked for: a failure then prints its error object on stdout too
    /// (`schema/failure.schema.json`), so a script reading stdout always gets a document.
    fn json(&self) -> bool {
        false
    }

    /// Where `--failure-file` asks a failure's document to be written too.
    fn failure_file(&self) -> Option<&Path> {
        None
    }

    /// Whether the command wraps a user's command (`run`, `shell`), whose own exit codes an
    /// error's must not be mistaken for.
    fn wraps_command(&self) -> bool {
        false
    }
}

impl Command {
    /// The subcommand's arguments, as the table's rows.
    pub(in crate::cli) fn args(&self) -> &dyn CommandArgs {
        match self {
            Command::Run(a) => a,
            Command::Status(a) => a,
            Command::Create(a) => a,
            Command::Path(a) => a,
            Command::Shell(a) => a,
            Command::Clean(a) => a,
            Command::Checkpoint(a) => a,
            Command::Diff(a) => a,
            Command::Land(a) => a,
            Command::SyncTools(a) => a,
            Command::Gc(a) => a,
            Command::Pool(a) => a,
            Command::Doctor(a) => a,
            Command::Mcp(a) => a,
            Command::Hook(a) => a,
            Command::Integrate(a) => a,
            Command::Skill(a) => a,
            Command::Completions(a) => a,
            Command::Man(a) => a,
        }
    }
}

impl CommandArgs for skill::SkillArgs {
    fn run(&self, inv: &Invocation) -> Result<i32, CliError> {
        // The skill is made from the command line's definition, which only the table sees
        // whole without a cycle (the commands are part of that definition).
        skill::cmd_skill(inv, &crate::cli::skill::text())
    }
}

impl CommandArgs for integrate::IntegrateArgs {
    fn run(&self, inv: &Invocation) -> Result<i32, CliError> {
        integrate::cmd_integrate(inv, self, &crate::cli::skill::text())
    }
}

impl CommandArgs for hook::HookArgs {
    fn run(&self, inv: &Invocation) -> Result<i32, CliError> {
        hook::cmd_hook(inv, self)
    }
}

impl CommandArgs for run::RunArgs {
    fn run(&self, inv: &Invocation) -> Result<i32, CliError> {
        run::cmd_run(inv, self)
    }
    fn failure_file(&self) -> Option<&Path> {
        self.failure_file.as_deref()
    }
    fn wraps_command(&self) -> bool {
        true
    }
}

impl CommandArgs for status::StatusArgs {
    fn run(&self, inv: &Invocation) -> Result<i32, CliError> {
        match self.watch {
            true => status_watch::cmd_status_watch(inv, self.interval, self.paths),
            false => status::cmd_status(inv, self),
        }
    }
    fn json(&self) -> bool {
        self.json
    }
}

impl CommandArgs for create::CreateArgs {
    fn run(&self, inv: &Invocation) -> Result<i32, CliError> {
        create::cmd_create(inv, self)
    }
    fn json(&self) -> bool {
        self.json
    }
}

impl CommandArgs for path::PathArgs {
    fn run(&self, inv: &Invocation) -> Result<i32, CliError> {
        path::cmd_path(inv, self)
    }
}

impl CommandArgs for shell::ShellArgs {
    fn run(&self, inv: &Invocation) -> Result<i32, CliError> {
        shell::cmd_shell(inv, self)
    }
    fn wraps_command(&self) -> bool {
        true
    }
}

impl CommandArgs for clean::CleanArgs {
    fn run(&self, inv: &Invocation) -> Result<i32, CliError> {
        clean::cmd_clean(inv, self)
    }
    fn json(&self) -> bool {
        self.json
    }
}

impl CommandArgs for checkpoint::CheckpointArgs {
    fn run(&self, inv: &Invocation) -> Result<i32, CliError> {
        checkpoint::cmd_checkpoint(inv, self)
    }
    fn json(&self) -> bool {
        self.json
    }
}

impl CommandArgs for diff::DiffArgs {
    fn run(&self, inv: &Invocation) -> Result<i32, CliError> {
        diff::cmd_diff(inv, self)
    }
    fn json(&self) -> bool {
        self.json
    }
}

impl CommandArgs for land::LandArgs {
    fn run(&self, inv: &Invocation) -> Result<i32, CliError> {
        land::cmd_land(inv, self)
    }
    fn json(&self) -> bool {
        self.json
    }
}

impl CommandArgs for sync_tools::SyncToolsArgs {
    fn run(&self, inv: &Invocation) -> Result<i32, CliError> {
        sync_tools::cmd_sync_tools(inv, self)
    }
    fn json(&self) -> bool {
        self.json
    }
}

impl CommandArgs for gc::GcArgs {
    fn run(&self, inv: &Invocation) -> Result<i32, CliError> {
        gc::cmd_gc(inv, self)
    }
    fn json(&self) -> bool {
        self.json
    }
}

impl CommandArgs for pool::PoolArgs {
    fn run(&self, inv: &Invocation) -> Result<i32, CliError> {
        pool::cmd_pool(inv, self)
    }
    fn json(&self) -> bool {
        match &self.action {
            pool::PoolAction::Fill(f) => f.json.json,
            pool::PoolAction::Status(j) | pool::PoolAction::Drain(j) => j.json,
            pool::PoolAction::Refill => false,
        }
    }
}

impl CommandArgs for doctor::DoctorArgs {
    fn run(&self, inv: &Invocation) -> Result<i32, CliError> {
        doctor::cmd_doctor(inv, self)
    }
    fn json(&self) -> bool {
        self.json
    }
}

impl CommandArgs for mcp::McpArgs {
    fn run(&self, inv: &Invocation) -> Result<i32, CliError> {
        mcp::cmd_mcp(inv, self)
    }
}

impl CommandArgs for completions::CompletionsArgs {
    fn run(&self, inv: &Invocation) -> Result<i32, CliError> {
        completions::cmd_completions(inv.ui, self)
    }
}

impl CommandArgs for man::ManArgs {
    fn run(&self, inv: &Invocation) -> Result<i32, CliError> {
        man::cmd_man(inv.ui, self, Cli::command())
    }
}
