//! What every command starts from: the Ui and the global flags, and, asked once, the
//! repository's context or one of its workspaces with its id checked against the backend.
//! No command opens a context or checks an id on its own.

use std::path::PathBuf;

use crate::cli::global::GlobalArgs;
use crate::error::Result;
use crate::store::layout::WorkspaceId;
use crate::ui::Ui;
use crate::workspace::context::Context;

/// One invocation of the binary: what its command reads besides its own arguments.
pub(in crate::cli) struct Invocation<'a> {
    pub ui: &'a Ui,
    pub global: &'a GlobalArgs,
}

/// A workspace a command acts on: the repository's context, the id the backend accepts
/// (jj: not its main workspace; git: a valid branch name) and where the workspace lives.
pub(in crate::cli) struct Handle {
    pub ctx: Context,
    pub id: WorkspaceId,
    pub path: PathBuf,
}

impl<'a> Invocation<'a> {
    pub(in crate::cli) fn new(ui: &'a Ui, global: &'a GlobalArgs) -> Self {
        Invocation { ui, global }
    }

    /// The repository the command acts on, its configuration, layout and backend.
    pub(in crate::cli) fn context(&self) -> Result<Context> {
        Context::open(self.global)
    }

    /// The workspace `id` of the repository, its id checked.
    pub(in crate::cli) fn workspace(&self, id: &WorkspaceId) -> Result<Handle> {
        Handle::new(self.context()?, id)
    }
}

impl Handle {
    /// `id` in the repository of `ctx`, checked against its backend.
    pub(in crate::cli) fn new(ctx: Context, id: &WorkspaceId) -> Result<Handle> {
        let path = checked(&ctx, id)?;
        Ok(Handle {
            ctx,
            id: id.clone(),
            path,
        })
    }
}

/// Where workspace `id` of the repository of `ctx` lives, once its backend accepts the id: for
/// a command that acts on several workspaces of one context.
pub(in crate::cli) fn checked(ctx: &Context, id: &WorkspaceId) -> Result<PathBuf> {
    ctx.vcs.check_id(id)?;
    Ok(ctx.layout.workspace(id))
}
