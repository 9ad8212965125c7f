//! What keeps a git worktree's work when it is removed: its uncommitted changes committed
//! on whatever HEAD is, a detached HEAD kept reachable, the files the commit holds and the
//! commits made since the base.

use std::path::{Path, PathBuf};

use super::classify::{self, Failure};
use super::Git;
use crate::exec::process::ProcessError;
use crate::store::disk::NoRoom;
use crate::store::layout::WorkspaceId;
use crate::vcs::error::{Result, VcsError};
use crate::vcs::{Head, Kept};

impl Git {
    /// Commits any uncommitted changes of the worktree to its branch, so removing it loses
    /// nothing; reports the branch and its tip. Unmerged files and added conflict-marker
    /// lines are refused, the index left as it was.
    pub(crate) fn keep_edits(&self, id: &WorkspaceId, path: Option<&Path>) -> Result<Kept> {
        self.keep_edits_within(id, path, &|_| Ok(()))
    }

    /// [`Git::keep_edits`], asking `room` first, before anything is written, whether the
    /// file systems have room for what committing the changes writes: at most the bytes of
    /// the files `status` lists (ignored files are not committed) and of the files flagged
    /// skip-worktree or assume-unchanged, whose edits `status` cannot see. Refused:
    /// [`VcsError::NoRoom`], nothing changed.
    pub(crate) fn keep_edits_within(
        &self,
        id: &WorkspaceId,
        path: Option<&Path>,
        room: &dyn Fn(u64) -> std::result::Result<(), NoRoom>,
    ) -> Result<Kept> {
        let branch = self.branch(id);
        let mut committed = false;
        let mut head = None;
        if let Some(ws) = path {
            // Edits to files flagged skip-worktree or assume-unchanged are invisible to
            // `status` and `add --all`: clear the flags first so they are committed too.
            let listed = match self.call(ws)?.args(["ls-files", "-v", "-z"]).stdout() {
                // Its administrative files are gone: git no longer knows this worktree.
                Err(e) if classify::failure(e.stderr()) == Failure::NotARepository => {
                    return Ok(Kept::Unregistered)
                }
                other => other?,
            };
            let porcelain = || -> Result<String> {
                Ok(self
                    .call(ws)?
                    .args(["status", "--porcelain", "-z", "--untracked-files=all"])
                    .stdout()?)
            };
            // Committed, a conflict's markers would become content.
            self.refuse_unmerged(ws)?;
            let mut changes = porcelain()?;
            let (skipped, assumed) = flagged_paths(&listed);
            let flagged: Vec<&str> = skipped.into_iter().chain(assumed).collect();
            let bytes = changed_paths(&changes)
                .into_iter()
                .chain(flagged.iter().copied())
                .map(|rel| match std::fs::symlink_metadata(ws.join(rel)) {
                    // A directory is a repository of its own: committed as a link to it.
                    Ok(meta) if !meta.is_dir() => meta.len(),
                    _ => 0,
                })
                .fold(0u64, u64::saturating_add);
            room(bytes).map_err(VcsError::NoRoom)?;
            let backup = match flagged.is_empty() && changes.is_empty() {
                true => None,
                false => Some(self.index_backup(ws)?),
            };
            if !flagged.is_empty() {
                self.unhide_flagged(ws, &listed)?;
                changes = porcelain()?;
            }
            if !changes.is_empty() {
                // Committed on whatever HEAD is: a branch, or a detached HEAD kept below.
                super::add_all(self.call(ws)?.args(["add", "--all"]), ws)?;
                if let Some(backup) = &backup {
                    self.refuse_staged_markers(id, ws, backup)?;
                }
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

    /// Clears the skip-worktree and assume-unchanged flags (`listed` is `git ls-files -v -z`)
    /// of the index entries of the worktree at `ws` whose file is on disk (a sparse checkout's absent files keep theirs:
    /// clearing it would record them as deleted), so git compares those files again.
    fn unhide_flagged(&self, ws: &Path, listed: &str) -> Result<()> {
        let (skipped, assumed) = flagged_paths(listed);
        // One flag per call: given both, update-index applies only the last to the paths.
        for (flag, paths) in [
            ("--no-skip-worktree", skipped),
            ("--no-assume-unchanged", assumed),
        ] {
            let on_disk: Vec<&str> = paths
                .into_iter()
                .filter(|rel| std::fs::symlink_metadata(ws.join(rel)).is_ok())
                .collect();
            for chunk in on_disk.chunks(500) {
                self.call(ws)?
                    .args(["update-index", flag, "--"])
                    .args(chunk.iter().copied())
                    .stdout()?;
            }
        }
        Ok(())
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
    pub(crate) fn work_commits(
        &self,
        tips: &[&str],
        base: &[String],
    ) -> Result<Vec<crate::vcs::Commit>> {
        // Only object ids reach the command line: the base comes from a file the workspace
        // can write.
        let hex = |c: &&str| !c.is_empty() && c.bytes().all(|b| b.is_ascii_hexdigit());
        let out = self
            .call(&self.main)?
            .args(["log", crate::vcs::COMMIT_FORMAT_GIT])
            .args(tips.iter().copied().filter(hex))
            .arg("--not")
            .args(base.iter().map(String::as_str).filter(hex))
            .arg("--")
            .stdout()?;
        Ok(crate::vcs::parse_commits(&out))
    }

    /// At most what committing the changes of the worktree at `ws` writes, counted from the
    /// files changed since its index was written, the ignored ones aside (for a worktree
    /// git no longer knows, where `status` cannot be asked).
    pub(crate) fn bytes_to_record(&self, ws: &Path) -> u64 {
        let index = self.index_of(ws).ok();
        crate::vcs::changed_bytes(
            ws,
            index.as_slice(),
            self.ignored_files(ws, true).unwrap_or_default(),
        )
    }

    /// The files of the worktree at `ws` that git ignores (and so `add --all` leaves out),
    /// relative to `ws`.
    /// With `dirs`, a directory whose files are all ignored is listed alone (`target/`).
    pub(crate) fn ignored_files(&self, ws: &Path, dirs: bool) -> Result<Vec<PathBuf>> {
        let out = self
            .call(ws)?
            .args([
                "ls-files",
                "-z",
                "--others",
                "--ignored",
                "--exclude-standard",
            ])
            .args(dirs.then_some("--directory"))
            .stdout()?;
        Ok(crate::vcs::split_nul(&out))
    }

    /// The files of the worktree at `ws` that git tracks, relative to `ws`.
    pub(crate) fn tracked(&self, ws: &Path) -> Result<Vec<PathBuf>> {
        let out = self.call(ws)?.args(["ls-files", "-z"]).stdout()?;
        Ok(crate::vcs::split_nul(&out))
    }
}

/// The paths `git status --porcelain -z` names as changed or untracked (the source of a
/// rename or copy left out: it is not written).
fn changed_paths(status: &str) -> Vec<&str> {
    let mut paths = vec![];
    let mut entries = status.split('\0');
    while let Some(entry) = entries.next() {
        let (Some(xy), Some(path)) = (entry.get(..2), entry.get(3..)) else {
            continue;
        };
        if !path.is_empty() {
            paths.push(path);
        }
        if xy.contains(['R', 'C']) {
            entries.next();
        }
    }
    paths
}

/// The paths `git ls-files -v -z` lists with the skip-worktree flag (tag `S` or `s`) and
/// with the assume-unchanged flag (a lowercase tag).
fn flagged_paths(listed: &str) -> (Vec<&str>, Vec<&str>) {
    let (mut skipped, mut assumed) = (vec![], vec![]);
    for entry in listed.split('\0') {
        let Some((tag, rel)) = entry.split_once(' ') else {
            continue;
        };
        if rel.is_empty() {
            continue;
        }
        if tag.eq_ignore_ascii_case("s") {
            skipped.push(rel);
        }
        if !tag.is_empty() && tag.chars().all(|c| c.is_ascii_lowercase()) {
            assumed.push(rel);
        }
    }
    (skipped, assumed)
}

#[cfg(test)]
mod tests {
    #[test]
    fn flagged_paths_are_skip_worktree_or_assume_unchanged() {
        let listed = "H a.txt\0S b.txt\0h c d.txt\0s e.txt\0M f.txt\0";
        let (skipped, assumed) = super::flagged_paths(listed);
        assert_eq!(skipped, ["b.txt", "e.txt"]);
        assert_eq!(assumed, ["c d.txt", "e.txt"]);
    }

    #[test]
    fn changed_paths_leave_out_the_source_of_a_rename() {
        let status = " M a.txt\0R  new name.txt\0old.txt\0?? dir/b\0 D gone\0C  c2\0c1\0";
        assert_eq!(
            super::changed_paths(status),
            ["a.txt", "new name.txt", "dir/b", "gone", "c2"]
        );
    }
}
