//! What `run` and `create` share: the flags that say how a workspace starts, and the steps
//! before its command (the context, the id's checks, an interrupted clean finished, the
//! sandbox prepared, the session entered).

use std::path::PathBuf;

use clap::Args;

use crate::cli::global::SandboxArgs;
use crate::cli::invocation::{Handle, Invocation};
use crate::error::Result;
use crate::exec::signals;
use crate::session::{self, Entered, Start};
use crate::store::layout::WorkspaceId;
use crate::ui::report;
use crate::workspace::context::Context;
use crate::workspace::launch::Sandboxing;

/// How a workspace starts: `run`'s and `create`'s flags.
#[derive(Debug, Args)]
pub struct StartArgs {
    /// Workflow name recorded with the workspace and its runs
    #[arg(long, value_name = "NAME")]
    pub workflow: Option<String>,
    /// Start a new workspace on a new commit on top of this revision
    #[arg(long, value_name = "REV")]
    pub base_change: Option<String>,
    /// Start a new workspace from this workspace's exact current state, unrecorded edits
    /// included, leaving that workspace as it was
    #[arg(long, value_name = "PARENT_ID", conflicts_with = "base_change", value_parser = WorkspaceId::from_arg)]
    pub parent: Option<WorkspaceId>,
    /// Do not load the workspace's .envrc (the command runs directly)
    #[arg(long)]
    pub no_direnv: bool,
    /// Allow the workspace's .envrc even if it differs from its base revision's
    #[arg(long)]
    pub trust_envrc: bool,
    /// Evaluate the workspace's .envrc with direnv even when nothing it watches changed
    /// since the environment it loaded last time
    #[arg(long, conflicts_with = "no_direnv")]
    pub reload_envrc: bool,
    /// Run the setup command of the repository's configuration file even if that file
    /// differs from the one at the workspace's base revision
    #[arg(long)]
    pub trust_config: bool,
    /// Wait for a live run in this workspace to finish instead of failing
    #[arg(long)]
    pub wait: bool,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

/// A workspace the session entered, with what its command needs.
pub(in crate::cli) struct Begun {
    pub ctx: Context,
    pub path: PathBuf,
    pub sandboxing: Option<Sandboxing>,
    /// `None`: this command runs inside the run holding the workspace (nested, or in its
    /// sandbox), which shares that run's working copy.
    pub entered: Option<Entered>,
}

/// Opens the context, checks the id, finishes a clean of it a kill interrupted, prepares
/// the sandbox and enters the session: the workspace made or reattached and ready, its lease
/// held. Notes are said as they happen, the progress line shown meanwhile.
pub(in crate::cli) fn begin(inv: &Invocation, id: &WorkspaceId, args: &StartArgs) -> Result<Begun> {
    let ui = inv.ui;
    signals::install();
    let Handle { mut ctx, path, .. } = inv.workspace(id)?;
    let progress = ui.progress(&format!("workspace {id}"));
    ctx.progress = progress.progress();
    if crate::exec::sandbox::inside(id, &path) {
        // Already confined: nested in the sandboxed run, in the same sandbox.
        return Ok(Begun {
            ctx,
            path,
            sandboxing: None,
            entered: None,
        });
    }
    if crate::workspace::remove::interrupted(&ctx, id) {
        // A clean of this id a kill interrupted: finish it, then start a new workspace.
        for line in report::settled(&crate::workspace::remove::settle_interrupted(&ctx)?) {
            ui.note(line);
        }
    }
    let confined = super::global::ran_sandboxed(ui, &args.sandbox, id, &path);
    let sandboxing = args.sandbox.prepare(&ctx.config, confined)?;
    if let Some(why) = sandboxing.as_ref().and_then(|s| s.unlimited.as_ref()) {
        ui.note(crate::ui::report::unlimited(why));
    }
    if args.reload_envrc {
        ctx.config.direnv_reuse = false;
    }
    let start = Start {
        id,
        workflow: args.workflow.as_deref(),
        base_change: args.base_change.as_deref(),
        parent: args.parent.as_ref(),
        no_direnv: args.no_direnv,
        trust_envrc: args.trust_envrc,
        trust_config: args.trust_config,
        wait: args.wait,
        sandboxing: sandboxing.as_ref(),
    };
    let entered = session::enter(&ctx, &start, &mut |notes| ui.notes(notes))?;
    drop(progress);
    Ok(Begun {
        ctx,
        path,
        sandboxing,
        entered,
    })
}
