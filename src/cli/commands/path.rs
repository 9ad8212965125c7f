//! `path`: print a workspace's directory, for `cd "$(agent-workspace path ID)"`.

use clap::Args;

use crate::cli::invocation::{Handle, Invocation};
use crate::error::Result;
use crate::store::layout::WorkspaceId;

/// Print a workspace's directory (exit 1 when there is none)
///
/// Reads only the layout and the workspace's own state: no jj or git call, so it is as fast
/// as a shell function needs.
///
/// Example: `cd "$(agent-workspace path fix-1)"`
#[derive(Debug, Args)]
pub struct PathArgs {
    /// Workspace id
    #[arg(value_parser = WorkspaceId::from_arg)]
    pub id: WorkspaceId,
}

pub(in crate::cli) fn cmd_path(inv: &Invocation, args: &PathArgs) -> Result<i32> {
    let ui = inv.ui;
    let Handle { id, path, .. } = inv.workspace(&args.id)?;
    let is_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
    let known = !matches!(
        crate::store::state::read(&path),
        crate::store::state::Found::Missing
    );
    if !(is_dir && known) {
        return Err(crate::workspace::unknown(&id, &path).hint(format!(
            "list workspaces with `agent-workspace status`; make this one with `agent-workspace create {}`",
            id
        )));
    }
    ui.data(&format!("{}\n", path.display()))?;
    Ok(0)
}
