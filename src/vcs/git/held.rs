//! Whether lands still hold, from refs alone: each landed workspace's branch is merged into
//! its target branch (one query per target); and where a land is about to go.

use std::collections::BTreeMap;

use super::Git;
use crate::store::layout::WorkspaceId;
use crate::store::metadata::Land;
use crate::vcs::error::Result;

impl Git {
    /// Of the `lands` (workspace id, its last land), the workspaces whose branch is
    /// contained in the land's target branch now: a target reset to before the land leaves
    /// them outside it.
    pub(crate) fn lands_held(&self, lands: &[(&WorkspaceId, &Land)]) -> Result<Vec<WorkspaceId>> {
        // git's targets are branches, kept as their names.
        let mut by_target: BTreeMap<String, Vec<&WorkspaceId>> = BTreeMap::new();
        for (id, land) in lands {
            by_target
                .entry(land.target.to_string())
                .or_default()
                .push(id);
        }
        let mut held = vec![];
        for (target, ids) in by_target {
            let target = target.as_str();
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
                    .map(|id| (*id).clone()),
            );
        }
        Ok(held)
    }

    /// The commits of workspace `id`'s branch that `before` (a commit) did not hold,
    /// oldest first.
    pub(crate) fn commits_since(&self, id: &WorkspaceId, before: &str) -> Result<Vec<String>> {
        if before.is_empty() || !before.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(vec![]);
        }
        let out = self
            .call(&self.main)?
            .args(["rev-list", "--reverse"])
            .arg(format!("{before}..refs/heads/{}", self.branch(id)))
            .arg("--")
            .stdout()?;
        Ok(out.lines().map(str::to_string).collect())
    }

    /// The branch the main worktree is on, if any.
    pub(crate) fn main_branch(&self) -> Result<Option<String>> {
        let out = self
            .call(&self.main)?
            .args(["symbolic-ref", "--quiet", "--short", "HEAD"])
            .stdout();
        Ok(out.ok().map(|b| b.trim().to_string()))
    }

    /// A stamp of the branches, read from files alone: the modification times of
    /// `packed-refs` and of `refs/heads` and every directory below it (a ref created,
    /// updated or deleted is a file renamed into, or removed from, one of them). None for a
    /// reftable repository, whose files say nothing this way.
    pub(crate) fn refs_stamp(&self) -> Option<String> {
        if self.common.join("reftable").exists() {
            return None;
        }
        let mut paths = vec![self.common.join("packed-refs")];
        let mut dirs = vec![self.common.join("refs").join("heads")];
        while let Some(dir) = dirs.pop() {
            if let Ok(entries) = std::fs::read_dir(&dir) {
                for entry in entries.flatten() {
                    if entry.file_type().is_ok_and(|t| t.is_dir()) {
                        dirs.push(entry.path());
                    }
                }
            }
            paths.push(dir);
        }
        paths.sort();
        let mut stamp = String::new();
        for path in &paths {
            let time = std::fs::symlink_metadata(path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            stamp += &format!("{}={time};", path.display());
        }
        Some(stamp)
    }

    /// The commit `branch` points to, if it exists.
    pub(crate) fn tip(&self, branch: &str) -> Result<Option<String>> {
        self.branch_tip(branch)
    }
}
