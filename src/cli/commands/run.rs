//! `run`: run a command in a workspace, creating or reattaching it, and record the outcome.

use std::ffi::OsString;

use clap::Args;

use crate::cli::invocation::Invocation;
use crate::error::Result;
use crate::session;
use crate::store::layout::WorkspaceId;
use crate::store::metadata::Status;
use crate::ui::report;

/// Run a command in a workspace, creating it if needed.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Workspace id: 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit
    #[arg(value_parser = WorkspaceId::from_arg)]
    pub id: WorkspaceId,
    #[command(flatten)]
    pub start: crate::cli::start::StartArgs,
    /// After the run, record the workspace's state as a checkpoint commit
    #[arg(long)]
    pub checkpoint: bool,
    /// Remove the workspace after a successful run (keep it after a failure)
    #[arg(long)]
    pub cleanup: bool,
    /// Also write a failure's JSON document (schema/failure.schema.json) to this file: `mcp`
    /// reads it, since a run's stdout is its command's
    #[arg(long, hide = true, value_name = "FILE")]
    pub failure_file: Option<std::path::PathBuf>,
    /// The command and its arguments
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

pub(in crate::cli) fn cmd_run(inv: &Invocation, args: &RunArgs) -> Result<i32> {
    let ui = inv.ui;
    let begun = crate::cli::start::begin(inv, &args.id, &args.start)?;
    let (ctx, sandboxing) = (begun.ctx, begun.sandboxing);
    let Some(mut entered) = begun.entered else {
        return Err(session::run_nested(&args.command, &begun.path));
    };
    entered.record.sandbox = sandboxing.as_ref().map(|s| s.options.clone());
    entered.record.confined |= sandboxing.is_some();
    let ended = session::supervise(
        &ctx,
        &mut entered,
        &args.command,
        args.checkpoint,
        sandboxing,
    )?;
    for warning in &ended.warnings {
        match report::run_warning(warning) {
            (message, Some(hint)) => ui.warning_with_hint(message, hint),
            (message, None) => ui.warning(message),
        }
    }
    if args.cleanup && ended.status == Status::Done {
        let (path, removal) = session::remove_after_run(&ctx, &args.id, entered.lease)?;
        ui.note(report::describe(&args.id, &path, &removal));
    }
    Ok(ended.code)
}
