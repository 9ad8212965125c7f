//! Checkpoints of a git worktree (a commit of all its changes on whatever HEAD is) and the
//! commit a child workspace starts from (its parent's state, built with a temporary index).

use std::path::{Path, PathBuf};

use super::Git;
use crate::exec::process::ProcessError;
use crate::store::layout::WorkspaceId;
use crate::vcs::error::{Result, VcsError};
use crate::vcs::{Recorded, Unrecorded};

impl Git {
    /// Commits every change of the worktree at `ws` (untracked files included, ignored files
    /// not) with `description`; records nothing when nothing changed. Hooks are skipped, as
    /// for the commit `clean` makes: a checkpoint records the state as it is. Unmerged files
    /// and added conflict-marker lines are refused, the index left as it was.
    pub(crate) fn checkpoint(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        description: &str,
    ) -> Result<Recorded> {
        let unrecorded = self.ignored(ws)?;
        self.refuse_unmerged(ws)?;
        if self.is_clean(ws)? {
            return Ok(Recorded {
                unrecorded,
                ..Recorded::default()
            });
        }
        let backup = self.index_backup(ws)?;
        super::add_all(self.call(ws)?.args(["add", "--all"]), ws)?;
        self.refuse_staged_markers(id, ws, &backup)?;
        let commit = self
            .call(ws)?
            .args(["commit", "--quiet", "--no-verify", "--message", description])
            .stdout();
        if let Err(e) = commit {
            return Err(self.checkpoint_failed(id, ws, e));
        }
        let head = self.call(ws)?.args(["rev-parse", "HEAD"]).stdout()?;
        let files = self
            .call(ws)?
            .args([
                "diff-tree",
                "-r",
                "--root",
                "--no-commit-id",
                "--name-only",
                "-z",
                "HEAD",
            ])
            .stdout()?;
        Ok(Recorded {
            commit: Some(head.trim().to_string()),
            change_id: None,
            files: crate::vcs::split_nul(&files),
            unrecorded,
        })
    }

    /// Whether the worktree at `ws` has no change at all (untracked files included); never
    /// writes its index.
    fn is_clean(&self, ws: &Path) -> Result<bool> {
        let status = self
            .call(ws)?
            .args(["--no-optional-locks", "status", "--porcelain", "-z"])
            .arg("--untracked-files=all")
            .stdout()?;
        Ok(status.is_empty())
    }

    /// The ignored files and directories of the worktree at `ws`, which no commit holds
    /// (agent-workspace's own record and direnv's cache left out).
    fn ignored(&self, ws: &Path) -> Result<Vec<Unrecorded>> {
        let out = self
            .call(ws)?
            .args([
                "ls-files",
                "-z",
                "--others",
                "--ignored",
                "--exclude-standard",
            ])
            .arg("--directory")
            .stdout()?;
        let ours = |p: &PathBuf| {
            let text = p.to_string_lossy();
            text.starts_with(crate::store::metadata::FILE_NAME) || text == ".direnv/"
        };
        Ok(crate::vcs::split_nul(&out)
            .into_iter()
            .filter(|p| !ours(p))
            .map(|path| Unrecorded {
                path,
                why: "ignored by git".into(),
                ignored: true,
            })
            .collect())
    }

    /// A failed checkpoint commit: unstage what `add --all` staged, so the worktree is left
    /// as it was, and say so.
    fn checkpoint_failed(&self, id: &WorkspaceId, ws: &Path, source: ProcessError) -> VcsError {
        let unstaged = self
            .call(ws)
            .and_then(|c| Ok(c.args(["reset", "--quiet"]).stdout()?));
        VcsError::CheckpointFailed {
            id: id.clone(),
            ws: ws.to_path_buf(),
            jj: false,
            source: Box::new(source),
            unstage_failed: unstaged.err().map(Box::new),
        }
    }

    /// The commit a child of `parent` (the worktree at `ws`) starts from: HEAD when the
    /// worktree is clean, else a new commit on HEAD holding its whole state, built in the
    /// temporary index `scratch`, so the parent's index, branch and files stay as they were.
    pub(crate) fn fork_point(
        &self,
        parent: &WorkspaceId,
        ws: &Path,
        child: &WorkspaceId,
        scratch: &Path,
    ) -> Result<String> {
        let head = self
            .call(ws)?
            .args(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])
            .stdout()
            .map_err(|_| VcsError::NoCommit { id: parent.clone() })?;
        let head = head.trim().to_string();
        if self.is_clean(ws)? {
            return Ok(head);
        }
        // A scratch index a killed call left (or anything planted there) is not built on.
        let _ = std::fs::remove_file(scratch);
        let tree = self.tree_of_worktree(ws, scratch);
        let _ = std::fs::remove_file(scratch);
        let message = fork_subject(child, parent);
        let out = self
            .call(ws)?
            .args([
                "commit-tree",
                "--no-gpg-sign",
                "-p",
                &head,
                "-m",
                &message,
                &tree?,
            ])
            .stdout()?;
        Ok(out.trim().to_string())
    }

    /// The tree of the worktree at `ws` as `git add --all` would record it, written through
    /// the temporary index `scratch`.
    fn tree_of_worktree(&self, ws: &Path, scratch: &Path) -> Result<String> {
        let indexed = |args: &[&str]| -> Result<String> {
            Ok(self
                .call(ws)?
                .env("GIT_INDEX_FILE", scratch)
                .args(args)
                .stdout()?)
        };
        indexed(&["read-tree", "HEAD"])?;
        super::add_all(
            self.call(ws)?
                .env("GIT_INDEX_FILE", scratch)
                .args(["add", "--all"]),
            ws,
        )?;
        Ok(indexed(&["write-tree"])?.trim().to_string())
    }
}

/// The subject of the commit a child workspace `child` starts from when its parent `parent`
/// has uncommitted edits.
pub(super) fn fork_subject(child: &WorkspaceId, parent: &WorkspaceId) -> String {
    format!("{}{parent}", fork_prefix(child))
}

/// The start every [`fork_subject`] of workspace `child` has, whatever its parent.
pub(super) fn fork_prefix(child: &WorkspaceId) -> String {
    format!("[workspace {child}] uncommitted edits of workspace ")
}
