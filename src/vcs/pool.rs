//! The backend's part in the pool of prepared workspaces: preparing one under a dot-name,
//! handing it over under a workspace id, and forgetting one that is discarded.

use std::path::Path;

use super::error::Result;
use super::git::BranchPlan;
use super::{Created, Vcs};
use crate::exec::process::Started;
use crate::store::layout::WorkspaceId;

impl Vcs {
    /// Registers and checks out a prepared workspace `name` at `path` on `base` (git: on a
    /// detached HEAD, since a dot-name makes no branch).
    pub(crate) fn prepare(&self, name: &WorkspaceId, path: &Path, base: &[String]) -> Result<()> {
        match self {
            Vcs::Jj(jj) => jj.workspace_add(name, path, base),
            Vcs::Git(git) => git.worktree_add_detached(name, path, base),
        }
    }

    /// What a workspace `id` taken from the pool needs that can be refused, asked before
    /// anything is taken: git's branch (see [`super::git::Git::branch_plan`]).
    pub(crate) fn branch_plan(
        &self,
        id: &WorkspaceId,
        base: &[String],
        explicit: bool,
    ) -> Result<Option<BranchPlan>> {
        match self {
            Vcs::Jj(_) => Ok(None),
            Vcs::Git(git) => git.branch_plan(id, base, explicit).map(Some),
        }
    }

    /// Starts giving the prepared workspace at `path` the name `id` in the background (jj);
    /// `None` where there is nothing to start (git).
    pub(crate) fn start_rename_prepared(
        &self,
        path: &Path,
        id: &WorkspaceId,
    ) -> Result<Option<Started>> {
        match self {
            Vcs::Jj(jj) => jj.start_rename_workspace(path, id).map(Some),
            Vcs::Git(_) => Ok(None),
        }
    }

    /// Tells the backend that the prepared workspace's directory is now `path` (git).
    pub(crate) fn moved(&self, path: &Path) -> Result<()> {
        match self {
            Vcs::Jj(jj) => jj.repair_worktree(path),
            Vcs::Git(git) => git.repair(path),
        }
    }

    /// Moves the taken workspace at `path` from `prepared_on` to `base` (jj: a new
    /// working-copy commit there when they differ; git: its branch), rewriting only the files
    /// that differ.
    pub(crate) fn settle(
        &self,
        path: &Path,
        base: &[String],
        prepared_on: &[String],
        plan: Option<&BranchPlan>,
    ) -> Result<Created> {
        match (self, plan) {
            (Vcs::Jj(jj), _) => {
                if base != prepared_on {
                    jj.new_on(path, base)?;
                }
                Ok(Created::default())
            }
            (Vcs::Git(git), Some(plan)) => git.switch(path, plan, base),
            (Vcs::Git(_), None) => Ok(Created::default()),
        }
    }

    /// Unregisters a discarded prepared workspace, whose directory is gone: jj's registrations
    /// named in `names` whose recorded root is one of `paths` (or unknown), git's worktrees at
    /// `paths`.
    pub(crate) fn forget_prepared(&self, names: &[&WorkspaceId], paths: &[&Path]) -> Result<()> {
        match self {
            Vcs::Jj(jj) => {
                for reg in jj.list()? {
                    let ours = reg.path.as_deref().is_none_or(|p| paths.contains(&p));
                    match names.iter().find(|name| ***name == reg.name) {
                        Some(name) if ours => jj.workspace_forget(name)?,
                        _ => {}
                    }
                }
                for path in paths {
                    jj.unregister_worktree(path)?;
                }
                Ok(())
            }
            Vcs::Git(git) => {
                for path in paths {
                    git.worktree_forget(path)?;
                }
                Ok(())
            }
        }
    }
}
