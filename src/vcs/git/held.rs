//! Whether lands still hold, from refs alone: each landed workspace's branch is merged into
//! its target branch (one query per target); and where a land is about to go.

use std::collections::BTreeMap;

use super::Git;
use crate::metadata::Land;
use crate::vcs::error::Result;

impl Git {
    /// Of the `lands` (workspace id, its last land), the workspaces whose branch is
    /// contained in the land's target branch now: a target reset to before the land leaves
    /// them outside it.
    pub fn lands_held(&self, lands: &[(&str, &Land)]) -> Result<Vec<String>> {
        let mut by_target: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (id, land) in lands {
            by_target.entry(&land.target).or_default().push(id);
        }
        let mut held = vec![];
        for (target, ids) in by_target {
            if self.branch_tip(target)?.is_none() {
                continue;
            }
            let out = self
                .call(&self.main)?
                .args(["for-each-ref", "--format=%(refname)"])
                .arg(format!("--merged=refs/heads/{target}"))
                .arg("refs/heads/")
                .stdout()?;
            let merged: Vec<&str> = out
                .lines()
                .filter_map(|r| r.strip_prefix("refs/heads/"))
                .collect();
            held.extend(
                ids.iter()
                    .filter(|id| merged.contains(&self.branch(id).as_str()))
                    .map(|id| id.to_string()),
            );
        }
        Ok(held)
    }

    /// The branch the main worktree is on, if any.
    pub fn main_branch(&self) -> Result<Option<String>> {
        let out = self
            .call(&self.main)?
            .args(["symbolic-ref", "--quiet", "--short", "HEAD"])
            .stdout();
        Ok(out.ok().map(|b| b.trim().to_string()))
    }

    /// The commit `branch` points to, if it exists.
    pub fn tip(&self, branch: &str) -> Result<Option<String>> {
        self.branch_tip(branch)
    }
}
