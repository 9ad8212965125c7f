//! git calls for the pool of prepared workspaces: a detached worktree prepared ahead of time,
//! repaired after its directory was renamed, then switched to the workspace's branch.

use std::path::Path;

use super::Git;
use crate::exec::process::ProcessError;
use crate::store::layout::WorkspaceId;
use crate::vcs::error::{Result, VcsError};
use crate::vcs::Created;

/// How a prepared worktree gets its workspace's branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BranchPlan {
    /// The branch exists: switch to it.
    Existing(String),
    /// A new branch at the base.
    New(String),
}

impl Git {
    /// Adds a worktree at `path` on a detached HEAD at `base`.
    pub(crate) fn worktree_add_detached(
        &self,
        name: &WorkspaceId,
        path: &Path,
        base: &[String],
    ) -> Result<()> {
        self.call(&self.main)?
            .args(["worktree", "add", "--quiet", "--detach"])
            .arg(path)
            .arg(base.first().map_or("HEAD", String::as_str))
            .stdout()
            .map_err(|source| VcsError::CreateFailed {
                what: "git worktree",
                id: name.clone(),
                path: path.to_path_buf(),
                source: Box::new(source),
            })?;
        Ok(())
    }

    /// What workspace `id` on `base` needs, decided the way [`Git::worktree_add`] decides:
    /// its existing branch, unless a base was asked for explicitly and the branch is elsewhere.
    pub(crate) fn branch_plan(
        &self,
        id: &WorkspaceId,
        base: &[String],
        explicit: bool,
    ) -> Result<BranchPlan> {
        let branch = self.branch(id);
        match self.branch_tip(&branch)? {
            Some(tip) if explicit && base.first() != Some(&tip) => Err(VcsError::BranchElsewhere {
                branch,
                tip: tip[..tip.len().min(12)].to_string(),
            }),
            Some(_) => Ok(BranchPlan::Existing(branch)),
            None => Ok(BranchPlan::New(branch)),
        }
    }

    /// Tells git that the worktree now lives at `path` (its directory was renamed).
    pub(crate) fn repair(&self, path: &Path) -> Result<()> {
        self.call(&self.main)?
            .args(["worktree", "repair"])
            .arg(path)
            .stdout()?;
        Ok(())
    }

    /// Switches the worktree at `path` to its branch: git rewrites only the files that differ.
    pub(crate) fn switch(
        &self,
        path: &Path,
        plan: &BranchPlan,
        base: &[String],
    ) -> Result<Created> {
        let call = self.call(path)?.args(["switch", "--quiet"]);
        let (call, branch, new_branch) = match plan {
            BranchPlan::Existing(branch) => (call.arg(branch), branch, false),
            BranchPlan::New(branch) => (
                call.args(["-c", branch.as_str()])
                    .arg(base.first().map_or("HEAD", String::as_str)),
                branch,
                true,
            ),
        };
        call.stdout().map_err(|e: ProcessError| VcsError::from(e))?;
        Ok(Created {
            branch: Some(branch.clone()),
            new_branch,
            start: match new_branch {
                true => self.branch_tip(branch).ok().flatten(),
                false => None,
            },
        })
    }
}
