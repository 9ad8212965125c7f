//! A git worktree's uncommitted changes as a commit that no ref holds yet, made through a
//! copy of its index: what a land decides on, and, once it goes ahead, what its branch moves
//! to (the copy becoming the worktree's index), as `git add --all` + `git commit` would.

use std::path::{Path, PathBuf};

use super::Git;
use crate::store::layout::WorkspaceId;
use crate::vcs::land::{LandError, Plan, Result};
use crate::vcs::Kept;
use crate::vcs::VcsError;

/// Where a worktree's work is, for a land.
pub(super) enum WorkHead {
    /// On the workspace's branch (or a HEAD elsewhere holding nothing the branch lacks).
    Branch,
    /// A detached HEAD at `commit`, which descends from the branch's tip.
    Detached { commit: String },
}

/// A commit of a worktree's uncommitted changes and the index it was made from, which is
/// deleted unless [`Git::save`] puts it in place.
pub(super) struct Unsaved {
    pub commit: String,
    /// The tip the commit was made on.
    tip: String,
    index: ScratchIndex,
}

struct ScratchIndex {
    path: PathBuf,
    real: PathBuf,
}

impl Drop for ScratchIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Git {
    /// The uncommitted changes of the worktree at `ws` as a commit on `tip`, the commit its
    /// HEAD is on; `None` when it has none. Neither its index nor any ref changes.
    pub(super) fn unsaved_commit(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        tip: &str,
    ) -> Result<Option<Unsaved>> {
        let status = self
            .call(ws)?
            .args(["status", "--porcelain", "-z", "--untracked-files=all"])
            .stdout()?;
        if status.is_empty() {
            return Ok(None);
        }
        let git_dir = self
            .call(ws)?
            .args(["rev-parse", "--absolute-git-dir"])
            .stdout()?;
        let git_dir = PathBuf::from(git_dir.trim());
        let index = ScratchIndex {
            // Per process: a dry run may look while another land or dry run does.
            path: git_dir.join(format!("agent-workspace-land.{}.index", std::process::id())),
            real: git_dir.join("index"),
        };
        // A copy of the real index keeps its cached file stats (`add` then rehashes only what
        // changed) and its mtime (see `index.rs`).
        super::index::copy_index(&index.real, &index.path)?;
        let with_index = |args: &[&str]| -> Result<String> {
            Ok(self
                .call(ws)?
                .env("GIT_INDEX_FILE", &index.path)
                .args(args)
                .stdout()?)
        };
        // The index is relative to HEAD, which is `tip` (see `work_head`): what is staged
        // there (a file added with `add -f` over an ignore rule, say) stays, as in the
        // `git add --all` + `git commit` this stands for.
        with_index(&["add", "--all"])?;
        let tree = with_index(&["write-tree"])?;
        let commit = self
            .call(ws)?
            .args(["commit-tree", tree.trim(), "-p", tip, "-m"])
            .arg(format!(
                "agent-workspace: uncommitted changes of workspace {id}"
            ))
            .stdout()?;
        Ok(Some(Unsaved {
            commit: commit.trim().to_string(),
            tip: tip.to_string(),
            index,
        }))
    }

    /// Where the work of the worktree at `ws` is, measured against its branch at `branch_tip`:
    /// its branch, or a detached HEAD that descends from it. Refuses a HEAD elsewhere (a
    /// detached one beside or behind the branch, or another branch) that holds work the branch
    /// does not (commits or uncommitted changes): landing the branch would pass it over.
    pub(super) fn work_head(
        &self,
        plan: &Plan,
        branch: &str,
        branch_tip: &str,
    ) -> Result<WorkHead> {
        let on = self
            .call(plan.ws)?
            .args(["symbolic-ref", "--quiet", "HEAD"])
            .stdout();
        let other = match on {
            Ok(name) if name.trim() == format!("refs/heads/{branch}") => {
                return Ok(WorkHead::Branch)
            }
            Ok(name) => {
                let name = name.trim();
                Some(name.strip_prefix("refs/heads/").unwrap_or(name).to_string())
            }
            Err(crate::exec::process::ProcessError::Failed { code: Some(1), .. }) => None,
            Err(e) => return Err(e.into()),
        };
        let head = self
            .call(plan.ws)?
            .args(["rev-parse", "--verify", "HEAD"])
            .stdout()?
            .trim()
            .to_string();
        let dirty = !self
            .call(plan.ws)?
            .args(["status", "--porcelain", "-z", "--untracked-files=all"])
            .stdout()?
            .is_empty();
        if !dirty && self.is_ancestor(&head, branch_tip)? {
            // All it holds is on the branch already.
            return Ok(WorkHead::Branch);
        }
        if other.is_none() && self.is_ancestor(branch_tip, &head)? {
            return Ok(WorkHead::Detached { commit: head });
        }
        Err(LandError::HeadElsewhere {
            id: plan.id.clone(),
            ws: plan.ws.to_path_buf(),
            commit: head,
            branch: branch.to_string(),
            other,
        })
    }

    /// Puts the work on the workspace's branch for a land that goes ahead, and gives the
    /// branch's tip and whether uncommitted changes were committed. On its branch, the branch
    /// moves to the commit of the uncommitted changes already made (if still at its tip) and
    /// the index it was made from becomes the worktree's (otherwise they are committed as
    /// `clean` does). A detached HEAD: the branch fast-forwards to it (or to that commit),
    /// and HEAD is put back on the branch, at the same commit, so no file changes.
    pub(super) fn save(
        &self,
        plan: &Plan,
        head: &WorkHead,
        branch_tip: &str,
        unsaved: Option<Unsaved>,
    ) -> Result<(String, bool)> {
        let branch = self.branch(plan.id);
        let committed = unsaved.is_some();
        let message = match committed {
            true => format!(
                "commit: agent-workspace: uncommitted changes of workspace {}",
                plan.id
            ),
            false => format!(
                "agent-workspace land: the detached HEAD of workspace {}",
                plan.id
            ),
        };
        let (new, old) = match (head, &unsaved) {
            (WorkHead::Branch, None) => return Ok((branch_tip.to_string(), false)),
            (WorkHead::Branch, Some(u)) => (u.commit.clone(), u.tip.clone()),
            (WorkHead::Detached { commit }, u) => (
                u.as_ref().map_or(commit.clone(), |u| u.commit.clone()),
                branch_tip.to_string(),
            ),
        };
        let moved = self
            .call(&self.main)?
            .args(["update-ref", "-m", &message])
            .arg(format!("refs/heads/{branch}"))
            .args([&new, &old])
            .stdout();
        match (head, moved) {
            (WorkHead::Detached { .. }, Err(e)) => return Err(e.into()),
            (WorkHead::Detached { .. }, Ok(_)) => {
                self.call(plan.ws)?
                    .args(["symbolic-ref", "-m", &message, "HEAD"])
                    .arg(format!("refs/heads/{branch}"))
                    .stdout()?;
            }
            (WorkHead::Branch, Err(_)) => {
                // The branch moved meanwhile: commit on it as `clean` does.
                drop(unsaved);
                return match self.keep_edits(plan.id, Some(plan.ws))? {
                    Kept::Branch {
                        commit, committed, ..
                    } if !commit.is_empty() => Ok((commit, committed)),
                    Kept::Unregistered => Err(VcsError::Unregistered {
                        id: plan.id.to_string(),
                        path: plan.ws.to_path_buf(),
                    }
                    .into()),
                    _ => Err(no_branch(&branch)),
                };
            }
            (WorkHead::Branch, Ok(_)) => {}
        }
        if let Some(unsaved) = unsaved {
            let index = &unsaved.index;
            if std::fs::rename(&index.path, &index.real).is_err() {
                // The branch has the changes; an index that still differs only costs the
                // next `git status` a refresh.
                let _ = self.call(plan.ws)?.args(["reset", "--quiet"]).stdout();
            }
        }
        Ok((new, committed))
    }
}

/// A land whose branch does not exist (the target, or the workspace's own).
pub(super) fn no_branch(branch: &str) -> LandError {
    LandError::NoBranch {
        branch: branch.to_string(),
    }
}
