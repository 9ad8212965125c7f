//! What a git land must not write over in the worktree of its target branch: an operation in
//! progress (a merge, a rebase, ...), unmerged files, uncommitted changes and ignored files
//! where the merge writes. Each is refused before anything is committed or moved.

use std::path::{Path, PathBuf};

use super::Git;
use crate::vcs::land::{overlap, LandError, Result};

/// The operations git keeps state for in a worktree's git directory, with the words for them
/// and the command that abandons each.
const OPERATIONS: &[(&str, &str, &str)] = &[
    ("MERGE_HEAD", "a merge", "merge --abort"),
    ("rebase-merge", "a rebase", "rebase --abort"),
    ("rebase-apply", "a rebase or `git am`", "rebase --abort"),
    ("CHERRY_PICK_HEAD", "a cherry-pick", "cherry-pick --abort"),
    ("REVERT_HEAD", "a revert", "revert --abort"),
    (
        "sequencer",
        "a cherry-pick or revert",
        "cherry-pick --abort",
    ),
];

impl Git {
    /// Refuses a land onto the branch checked out in `wt` while an operation is in progress
    /// there, or while its index has unmerged entries: git would stop half-way, after the
    /// workspace's changes were committed.
    pub(super) fn refuse_in_progress(&self, wt: &Path) -> Result<()> {
        let git_dir = self
            .call(wt)?
            .args(["rev-parse", "--absolute-git-dir"])
            .stdout()?;
        let git_dir = PathBuf::from(git_dir.trim());
        let main = wt == self.main;
        if let Some((_, what, abort)) = OPERATIONS
            .iter()
            .find(|(name, ..)| git_dir.join(name).symlink_metadata().is_ok())
        {
            return Err(LandError::InProgress {
                path: wt.to_path_buf(),
                main,
                what: what.to_string(),
                abort: abort.to_string(),
            });
        }
        let unmerged = self
            .call(wt)?
            .args(["ls-files", "--unmerged", "-z"])
            .stdout()?;
        let files = parse_unmerged(&unmerged);
        if files.is_empty() {
            return Ok(());
        }
        Err(LandError::Unmerged {
            path: wt.to_path_buf(),
            main,
            files,
        })
    }

    /// Refuses a land onto `branch` while a worktree rebases it: its HEAD is detached then,
    /// and the rebase's end would put the branch where it wants, dropping the land.
    pub(super) fn refuse_rebasing(&self, branch: &str) -> Result<()> {
        let wanted = format!("refs/heads/{branch}");
        let mut dirs = vec![(self.common.clone(), Some(self.main.clone()))];
        if let Ok(entries) = std::fs::read_dir(self.common.join("worktrees")) {
            for entry in entries.flatten() {
                let dir = entry.path();
                // `gitdir` names the worktree's `.git` file.
                let wt = std::fs::read_to_string(dir.join("gitdir"))
                    .ok()
                    .and_then(|p| Some(Path::new(p.trim()).parent()?.to_path_buf()));
                dirs.push((dir, wt));
            }
        }
        for (dir, wt) in dirs {
            let rebasing = ["rebase-merge", "rebase-apply"].iter().any(|op| {
                std::fs::read_to_string(dir.join(op).join("head-name"))
                    .is_ok_and(|name| name.trim() == wanted)
            });
            if rebasing {
                let path = wt.unwrap_or(dir);
                return Err(LandError::InProgress {
                    main: path == self.main,
                    path,
                    what: format!("a rebase of {branch}"),
                    abort: "rebase --abort".into(),
                });
            }
        }
        Ok(())
    }

    /// Refuses a land whose target worktree has changes (untracked files included) in files
    /// the land would change, unless each such file already holds what the merge (`tree`)
    /// brings (a child's fork of its parent's uncommitted changes): those are returned. Files
    /// the worktree ignores where the merge writes are refused unless they hold just that.
    /// Refuses a child's land into its parent's worktree `wt` when the child changed, since
    /// `fork` (the copy of the parent's uncommitted state it started from) up to `tip`, a
    /// file the parent still holds uncommitted edits in: merged onto the parent's branch,
    /// which lacks those edits, the parent's side would seem to undo them (a conflict that
    /// is none, which `--prefer target` settles by dropping the child's lines and `--prefer
    /// workspace` by committing the parent's edits).
    pub(super) fn refuse_parent_edits(
        &self,
        wt: &Path,
        parent: &crate::store::layout::WorkspaceId,
        fork: &str,
        tip: &str,
    ) -> Result<()> {
        let changed = self
            .call(&self.main)?
            .args(["diff", "--name-only", "-z", "--no-renames", fork, tip, "--"])
            .stdout()?;
        let changed: Vec<String> = changed
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        let both = overlap(&changed, &self.dirty_files(wt)?);
        match both.is_empty() {
            true => Ok(()),
            false => Err(LandError::ParentEdits {
                path: wt.to_path_buf(),
                parent: parent.clone(),
                files: both,
            }),
        }
    }

    /// The files of the worktree `wt` with uncommitted changes (untracked ones included).
    fn dirty_files(&self, wt: &Path) -> Result<Vec<String>> {
        let out = self
            .call(wt)?
            .args([
                "status",
                "--porcelain",
                "-z",
                "--untracked-files=all",
                "--no-renames",
            ])
            .stdout()?;
        Ok(out
            .split('\0')
            .filter_map(|entry| entry.get(3..))
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect())
    }

    pub(super) fn refuse_dirty(
        &self,
        wt: &Path,
        files: &[String],
        tree: &str,
    ) -> Result<Vec<String>> {
        let dirty = self.dirty_files(wt)?;
        let both = overlap(files, &dirty);
        if !both.is_empty() && !self.hold_result(wt, &both, tree)? {
            return Err(LandError::Dirty {
                path: wt.to_path_buf(),
                files: both,
                jj: false,
            });
        }
        let ignored = self.ignored_in_the_way(wt, files)?;
        let mut unlike = vec![];
        for file in ignored {
            if !self.hold_result(wt, std::slice::from_ref(&file), tree)? {
                unlike.push(file);
            }
        }
        if !unlike.is_empty() {
            return Err(LandError::Ignored {
                path: wt.to_path_buf(),
                main: wt == self.main,
                files: unlike,
                jj: false,
            });
        }
        Ok(both)
    }

    /// The files of the worktree `wt` that git ignores and a merge writing `files` would
    /// replace (git treats ignored files as expendable): each of `files`, what is under one
    /// that is a directory there, and a parent directory of one that is a file there.
    fn ignored_in_the_way(&self, wt: &Path, files: &[String]) -> Result<Vec<String>> {
        let mut paths: Vec<String> = vec![];
        for file in files {
            if wt.join(file).symlink_metadata().is_ok() {
                paths.push(file.clone());
            }
            let mut parent = Path::new(file).parent();
            while let Some(dir) = parent.filter(|d| !d.as_os_str().is_empty()) {
                if wt.join(dir).symlink_metadata().is_ok_and(|m| !m.is_dir()) {
                    paths.push(dir.to_string_lossy().into_owned());
                }
                parent = dir.parent();
            }
        }
        if paths.is_empty() {
            return Ok(vec![]);
        }
        paths.sort();
        paths.dedup();
        let out = self
            .call(wt)?
            .env("GIT_LITERAL_PATHSPECS", "1")
            .args([
                "ls-files",
                "-z",
                "--others",
                "--ignored",
                "--exclude-standard",
                "--",
            ])
            .args(&paths)
            .stdout()?;
        Ok(out
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect())
    }

    /// Whether every one of `files` in the worktree `wt` has exactly its content in `tree`.
    fn hold_result(&self, wt: &Path, files: &[String], tree: &str) -> Result<bool> {
        if files.iter().any(|f| !wt.join(f).is_file()) {
            return Ok(false);
        }
        let hashes = self
            .call(wt)?
            .args(["hash-object", "--"])
            .args(files)
            .stdout()?;
        let listed = self
            .call(&self.main)?
            .args(["ls-tree", "-z", tree, "--"])
            .args(files)
            .stdout()?;
        let blob = |file: &str| {
            listed.split('\0').find_map(|entry| {
                let (meta, path) = entry.split_once('\t')?;
                (path == file).then(|| meta.rsplit(' ').next().unwrap_or(""))
            })
        };
        let hashes: Vec<&str> = hashes.lines().collect();
        Ok(hashes.len() == files.len()
            && files
                .iter()
                .zip(hashes)
                .all(|(f, hash)| blob(f) == Some(hash)))
    }
}

/// `git ls-files --unmerged -z` output (`<mode> <object> <stage>\t<path>\0`, one entry per
/// stage, sorted by path): each path once.
pub(super) fn parse_unmerged(text: &str) -> Vec<String> {
    let mut files: Vec<String> = text
        .split('\0')
        .filter_map(|entry| Some(entry.split_once('\t')?.1.to_string()))
        .collect();
    files.dedup();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmerged_entries() {
        assert!(parse_unmerged("").is_empty());
        let entries = [
            "100644 aa 1\ta.txt",
            "100644 bb 2\ta.txt",
            "100644 cc 3\ta.txt",
            "100644 dd 2\tsp ace\tx",
            "100644 ee 3\tsp ace\tx",
        ];
        let text = entries.map(|e| format!("{e}\0")).concat();
        let text = text.as_str();
        assert_eq!(parse_unmerged(text), ["a.txt", "sp ace\tx"]);
    }
}
