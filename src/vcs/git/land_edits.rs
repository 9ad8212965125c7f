//! A git worktree's uncommitted changes as a commit that no ref holds yet, made through a
//! copy of its index: what a land decides on, and, once it goes ahead, what its branch moves
//! to (the copy becoming the worktree's index), as `git add --all` + `git commit` would.

use std::path::{Path, PathBuf};

use super::Git;
use crate::vcs::land::Plan;
use crate::vcs::land::Result;
use crate::vcs::Kept;
use crate::vcs::VcsError;

/// A commit of a worktree's uncommitted changes and the index it was made from, which is
/// deleted unless [`Git::save`] puts it in place.
pub struct Unsaved {
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
    /// The uncommitted changes of the worktree at `ws` as a commit on `tip`; `None` when it
    /// has none. Neither its index nor any ref changes.
    pub(super) fn unsaved_commit(&self, id: &str, ws: &Path, tip: &str) -> Result<Option<Unsaved>> {
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
            path: git_dir.join("agent-workspace-land.index"),
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
        with_index(&["read-tree", "-m", tip])?;
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

    /// Commits the uncommitted changes for a land that goes ahead: when the worktree is on its
    /// branch, the branch moves to the commit already made (if still at its tip) and the index
    /// it was made from becomes the worktree's; otherwise as `clean` does. Gives the branch's
    /// tip and whether anything was committed.
    pub(super) fn save(&self, plan: &Plan, unsaved: Unsaved) -> Result<(String, bool)> {
        let branch = self.branch(plan.id);
        let on_branch = self
            .call(plan.ws)?
            .args(["symbolic-ref", "--quiet", "HEAD"])
            .stdout()
            .is_ok_and(|head| head.trim() == format!("refs/heads/{branch}"));
        if on_branch {
            let moved = self
                .call(&self.main)?
                .args(["update-ref", "-m"])
                .arg(format!(
                    "commit: agent-workspace: uncommitted changes of workspace {}",
                    plan.id
                ))
                .arg(format!("refs/heads/{branch}"))
                .args([&unsaved.commit, &unsaved.tip])
                .stdout();
            if moved.is_ok() {
                let index = &unsaved.index;
                if std::fs::rename(&index.path, &index.real).is_err() {
                    // The branch has the changes; an index that still differs only costs the
                    // next `git status` a refresh.
                    let _ = self.call(plan.ws)?.args(["reset", "--quiet"]).stdout();
                }
                return Ok((unsaved.commit, true));
            }
        }
        drop(unsaved);
        match self.keep_edits(plan.id, Some(plan.ws))? {
            Kept::Branch {
                commit, committed, ..
            } if !commit.is_empty() => Ok((commit, committed)),
            Kept::Unregistered => Err(VcsError::Unregistered {
                id: plan.id.to_string(),
                path: plan.ws.to_path_buf(),
            }
            .into()),
            _ => Err(super::land::no_branch(&branch)),
        }
    }
}
