//! What keeps a git worktree's work when it is removed: its uncommitted changes committed
//! on whatever HEAD is, a detached HEAD kept reachable, the files the commit holds and the
//! commits made since the base.

use std::path::{Path, PathBuf};

use super::Git;
use crate::process::ProcessError;
use crate::vcs::error::{Result, VcsError};
use crate::vcs::{Head, Kept};

impl Git {
    /// Commits any uncommitted changes of the worktree to its branch, so removing it loses
    /// nothing; reports the branch and its tip.
    pub fn keep_edits(&self, id: &str, path: Option<&Path>) -> Result<Kept> {
        let branch = self.branch(id);
        let mut committed = false;
        let mut head = None;
        if let Some(ws) = path {
            let status = self
                .call(ws)?
                .args(["status", "--porcelain", "-z", "--untracked-files=all"])
                .stdout();
            let status = match status {
                // Its administrative files are gone: git no longer knows this worktree.
                Err(e) if e.stderr().contains("not a git repository") => {
                    return Ok(Kept::Unregistered)
                }
                other => other?,
            };
            if !status.is_empty() {
                // Committed on whatever HEAD is: a branch, or a detached HEAD kept below.
                self.call(ws)?.args(["add", "--all"]).stdout()?;
                let commit = self
                    .call(ws)?
                    .args(["commit", "--quiet", "--no-verify", "-m"])
                    .arg(format!(
                        "agent-workspace: uncommitted changes of workspace {id}"
                    ))
                    .stdout();
                if let Err(e) = commit {
                    return Err(self.commit_failed(ws, e));
                }
                committed = true;
            }
            head = self.keep_head(ws, &branch)?;
        }
        let commit = self.branch_tip(&branch)?.unwrap_or_default();
        if commit.is_empty() && head.is_none() {
            return Ok(Kept::Nothing);
        }
        Ok(Kept::Branch {
            branch,
            commit,
            committed,
            head,
        })
    }

    /// A failed commit of the uncommitted changes: unstage what `add --all` staged, so the
    /// worktree is left as the agent had it, and say so.
    fn commit_failed(&self, ws: &Path, source: ProcessError) -> VcsError {
        let unstaged = self
            .call(ws)
            .and_then(|c| Ok(c.args(["reset", "--quiet"]).stdout()?));
        VcsError::CommitFailed {
            ws: ws.to_path_buf(),
            source: Box::new(source),
            unstage_failed: unstaged.err().map(Box::new),
        }
    }

    /// Where the worktree at `ws` has its HEAD, when not on `branch`; a detached HEAD that
    /// `branch` does not contain gets a branch of its own, `<branch>-detached-<short>`, so that
    /// removing the worktree leaves it reachable.
    fn keep_head(&self, ws: &Path, branch: &str) -> Result<Option<Head>> {
        let on = self
            .call(ws)?
            .args(["symbolic-ref", "--quiet", "--short", "HEAD"])
            .stdout();
        let commit = match self
            .call(ws)?
            .args(["rev-parse", "--verify", "--quiet", "HEAD"])
            .stdout()
        {
            Ok(sha) => sha.trim().to_string(),
            // No commit at all on HEAD (an unborn branch): nothing to keep reachable.
            Err(_) => return Ok(None),
        };
        match on {
            Ok(name) if name.trim() == branch => Ok(None),
            Ok(name) => Ok(Some(Head {
                branch: name.trim().to_string(),
                commit,
                created: false,
            })),
            Err(ProcessError::Failed { code: Some(1), .. }) => {
                let contained = self
                    .call(&self.main)?
                    .args(["merge-base", "--is-ancestor", &commit])
                    .arg(format!("refs/heads/{branch}"))
                    .stdout()
                    .is_ok();
                if contained {
                    return Ok(None);
                }
                let keeper = format!("{branch}-detached-{}", &commit[..commit.len().min(12)]);
                if self.branch_tip(&keeper)?.as_deref() != Some(commit.as_str()) {
                    self.call(&self.main)?
                        .args(["branch", "--quiet", "--end-of-options", &keeper, &commit])
                        .stdout()?;
                }
                Ok(Some(Head {
                    branch: keeper,
                    commit,
                    created: true,
                }))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The commits on `tips` not on `base`, newest first.
    pub fn work_commits(&self, tips: &[&str], base: &[String]) -> Result<Vec<crate::vcs::Commit>> {
        // Only object ids reach the command line: the base comes from a file the workspace
        // can write.
        let hex = |c: &&str| !c.is_empty() && c.bytes().all(|b| b.is_ascii_hexdigit());
        let out = self
            .call(&self.main)?
            .args(["log", "--format=%H%x09%s%x00"])
            .args(tips.iter().copied().filter(hex))
            .arg("--not")
            .args(base.iter().map(String::as_str).filter(hex))
            .arg("--")
            .stdout()?;
        Ok(crate::vcs::parse_commits(&out))
    }

    /// The files of the worktree at `ws` that git tracks, relative to `ws`.
    pub fn tracked(&self, ws: &Path) -> Result<Vec<PathBuf>> {
        let out = self.call(ws)?.args(["ls-files", "-z"]).stdout()?;
        Ok(crate::vcs::split_nul(&out))
    }
}
