//! `run`: run a command in a workspace, creating or reattaching it, and record the outcome.

use std::ffi::OsString;

use clap::Args;

use crate::error::Result;
use crate::exec::signals;
use crate::session::{self, Start};
use crate::store::layout::WorkspaceId;
use crate::store::metadata::Status;
use crate::ui::report;
use crate::ui::Ui;
use crate::workspace::context::Context;

/// Run a command in a workspace, creating it if needed.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Workspace id: 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit
    #[arg(value_parser = WorkspaceId::from_arg)]
    pub id: WorkspaceId,
    /// Workflow name recorded with the run
    #[arg(long, value_name = "NAME")]
    pub workflow: Option<String>,
    /// Start a new workspace on a new commit on top of this revision
    #[arg(long, value_name = "REV")]
    pub base_change: Option<String>,
    /// Start a new workspace from this workspace's exact current state, unrecorded edits
    /// included, leaving that workspace as it was
    #[arg(long, value_name = "PARENT_ID", conflicts_with = "base_change", value_parser = WorkspaceId::from_arg)]
    pub parent: Option<WorkspaceId>,
    /// After the run, record the workspace's state as a checkpoint commit
    #[arg(long)]
    pub checkpoint: bool,
    /// Remove the workspace after a successful run (keep it after a failure)
    #[arg(long)]
    pub cleanup: bool,
    /// Run the command directly, without loading the workspace's .envrc
    #[arg(long)]
    pub no_direnv: bool,
    /// Allow the workspace's .envrc even if it differs from its base revision's
    #[arg(long)]
    pub trust_envrc: bool,
    /// Run the setup command of the repository's configuration file even if that file
    /// differs from the one at the workspace's base revision
    #[arg(long)]
    pub trust_config: bool,
    /// Wait for a live run in this workspace to finish instead of failing
    #[arg(long)]
    pub wait: bool,
    #[command(flatten)]
    pub sandbox: crate::cli::global::SandboxArgs,
    /// The command and its arguments
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

pub(crate) fn cmd_run(
    ui: &Ui,
    ctx_args: &crate::cli::global::GlobalArgs,
    args: &RunArgs,
) -> Result<i32> {
    signals::install();
    let mut ctx = Context::open(ctx_args)?;
    let progress = ui.progress(&format!("workspace {}", args.id));
    ctx.progress = progress.progress();
    ctx.vcs.check_id(&args.id)?;
    let path = ctx.layout.workspace(&args.id);
    if crate::exec::sandbox::inside(&args.id, &path) {
        // Already confined: a nested run of the sandboxed run, in the same sandbox.
        return Err(session::run_nested(&args.command, &path));
    }
    if crate::workspace::remove::interrupted(&ctx, &args.id) {
        // A clean of this id a kill interrupted: finish it, then run on a new workspace.
        for line in report::settled(&crate::workspace::remove::settle_interrupted(&ctx)?) {
            ui.note(line);
        }
    }
    let sandboxing = args.sandbox.prepare(&ctx.config)?;
    let start = Start {
        id: &args.id,
        workflow: args.workflow.as_deref(),
        base_change: args.base_change.as_deref(),
        parent: args.parent.as_deref(),
        no_direnv: args.no_direnv,
        trust_envrc: args.trust_envrc,
        trust_config: args.trust_config,
        wait: args.wait,
        sandboxing: sandboxing.as_ref(),
    };
    let Some(mut entered) = session::enter(&ctx, &start, &mut |notes| ui.notes(notes))? else {
        return Err(session::run_nested(&args.command, &path));
    };
    drop(progress);
    entered.record.sandbox = sandboxing.as_ref().map(|s| s.options.clone());
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
