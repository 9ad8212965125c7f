//! `shell`: an interactive shell in a workspace with the environment `run` gives.

use clap::Args;

use crate::cli::invocation::{Handle, Invocation};
use crate::error::Result;
use crate::exec::signals;
use crate::store::layout::WorkspaceId;
use crate::workspace::direnv;
use crate::workspace::launch::Launch;
use crate::workspace::{self, Request};

/// Open $SHELL (else /bin/sh) in an existing workspace, with its environment loaded.
#[derive(Debug, Args)]
pub struct ShellArgs {
    /// Workspace id
    #[arg(value_parser = WorkspaceId::from_arg)]
    pub id: WorkspaceId,
    /// Start the shell without loading the workspace's .envrc
    #[arg(long)]
    pub no_direnv: bool,
    /// Allow the workspace's .envrc even if it differs from its base revision's
    #[arg(long)]
    pub trust_envrc: bool,
    /// Evaluate the workspace's .envrc with direnv even when nothing it watches changed
    /// since the environment it loaded last time
    #[arg(long, conflicts_with = "no_direnv")]
    pub reload_envrc: bool,
    #[command(flatten)]
    pub sandbox: crate::cli::global::SandboxArgs,
}

pub(in crate::cli) fn cmd_shell(inv: &Invocation, args: &ShellArgs) -> Result<i32> {
    let ui = inv.ui;
    signals::install();
    let Handle { mut ctx, path, .. } = inv.workspace(&args.id)?;
    if args.reload_envrc {
        ctx.config.direnv_reuse = false;
    }
    let confined = crate::cli::global::ran_sandboxed(ui, &args.sandbox, &args.id, &path);
    let sandboxing = args.sandbox.prepare(&ctx.config, confined)?;
    if let Some(why) = sandboxing.as_ref().and_then(|s| s.unlimited.as_ref()) {
        ui.note(crate::ui::report::unlimited(why));
    }
    let req = Request {
        id: &args.id,
        base_change: None,
        workflow: None,
        parent: None,
        create: false,
        known_before: true,
    };
    // A shell is for looking in or stepping in mid-workflow: it takes no lease and leaves
    // the record of the workflow alone.
    let mut notes = vec![];
    let opened = workspace::open(&ctx, &req, &mut notes);
    ui.notes(&notes);
    let mut record = opened?.record;
    let loader = direnv::prepare(&mut record, &ctx.vcs, args.no_direnv, args.trust_envrc)?;
    let shell = crate::vars::non_empty(crate::vars::SHELL).unwrap_or_else(|| "/bin/sh".into());
    let launch = Launch::new(
        &ctx,
        &record,
        loader,
        &[shell.into()],
        None,
        sandboxing.as_ref(),
    )?;
    if let Some(store) = launch.kept_store() {
        ui.warning_with_hint(
            format!(
                "the workspace's own store was made again from your side; the old one holds {}, and is kept in {}",
                store.holds,
                store.path.display()
            ),
            "it is the agent's (its configuration is not yours): read it as data".to_string(),
        );
    }
    let mut moved_aside = launch.moved_aside().to_vec();
    let ending = launch.run()?;
    if let Some(sandboxing) = &sandboxing {
        let ws = &record.workspace_path;
        let (paths, brought) =
            workspace::own_store::bring_back(&ctx, &args.id, ws, &sandboxing.bwrap);
        moved_aside.extend(paths);
        if let Err(err) = brought {
            let hint = err.hint.clone().unwrap_or_default();
            ui.warning_with_hint(err.message, hint);
        }
    }
    if !moved_aside.is_empty() {
        ui.warning_with_hint(
            crate::ui::report::moved_aside(&moved_aside),
            crate::ui::report::MOVED_ASIDE_HINT.to_string(),
        );
    }
    Ok(ending.code())
}
