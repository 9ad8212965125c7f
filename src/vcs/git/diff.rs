//! What a git worktree changed since its base: its commits, and its files (uncommitted and
//! untracked ones included), compared by git with the base and the untracked ones counted
//! here, or recorded in a tree through a temporary index, so neither the worktree's index
//! nor any branch changes.

use std::fs;
use std::path::{Path, PathBuf};

use super::Git;
use crate::exec::process::Call;
use crate::vcs::diff::{self, Changes, FileChange, FileStatus, DIFF_ARGS, PATCH_ARGS};
use crate::vcs::{Result, VcsError};

impl Git {
    /// The changes of the worktree at `ws` against `base`; `scratch` is a path for the
    /// temporary index (deleted before returning).
    /// Without `tree`, no tree is written and `latest` is left empty (the counts and the
    /// summary never show it), and nothing is added to an index where git's own comparison
    /// of the files with `base` and its list of untracked files say everything: see
    /// [`Git::files_without_index`].
    pub(crate) fn changes(
        &self,
        ws: &Path,
        base: &str,
        scratch: &Path,
        tree: bool,
    ) -> Result<Changes> {
        // The commits do not depend on the files: listed meanwhile.
        let log = self
            .call(ws)?
            .args(["log", "-z", "--format=%H%x00%B", "--end-of-options"])
            .arg(format!("{base}..HEAD"))
            .arg("--")
            .start()?;
        let (latest, files) = match tree {
            true => self.files_through_index(ws, base, scratch, true)?,
            false => match self.files_without_index(ws, base, scratch)? {
                Some(files) => (String::new(), files),
                None => self.files_through_index(ws, base, scratch, false)?,
            },
        };
        Ok(Changes {
            against: base.to_string(),
            latest,
            commits: diff::parse_work_commits(&log.wait()?, 2),
            files,
            as_of: diff::AsOf::LiveFiles,
        })
    }

    /// The changed files without adding every file to an index: git compares the tracked
    /// files with `base` (through a copy of the worktree's index) and lists the untracked
    /// ones (side by side), whose lines are counted here (`untracked.rs`), or, where git
    /// could count them otherwise or one may be a deleted file renamed, by git through an
    /// index of those few paths ([`Git::few_files`]). `None` where even that could differ
    /// from what git finds through an index with every file added (a submodule or a
    /// conflict in the comparison, a nested repository) or could not be done.
    fn files_without_index(
        &self,
        ws: &Path,
        base: &str,
        scratch: &Path,
    ) -> Result<Option<Vec<FileChange>>> {
        // `git diff` writes back the index it refreshed (whatever `GIT_OPTIONAL_LOCKS`
        // says): it is given a copy, so the worktree's own is never written.
        let copied = super::index::copy_index(&self.index_of(ws)?, scratch);
        let _cleanup = Scratch(scratch.to_path_buf());
        if !copied? {
            return Ok(None);
        }
        let with_index = |c: Call| c.env("GIT_INDEX_FILE", scratch);
        let tracked = with_index(self.call(ws)?)
            .args(DIFF_ARGS)
            .args([base, "--"])
            .start()?;
        let untracked = with_index(self.call(ws)?)
            .args(["ls-files", "-z", "--others", "--exclude-standard", "--"])
            .start()?;
        let (tracked, untracked) = (tracked.wait(), untracked.wait());
        // A comparison git could not make (a file it cannot hash: a FIFO the agent left in
        // place of a tracked file) is made again the whole way, which names what failed.
        let (Ok(tracked), Ok(untracked)) = (tracked, untracked) else {
            return Ok(None);
        };
        let mut files = diff::parse_changes(&tracked);
        if untracked.is_empty() {
            return Ok(Some(files));
        }
        let listed: Vec<&str> = untracked.split('\0').filter(|p| !p.is_empty()).collect();
        // A repository inside the worktree is listed as its directory.
        if !plain_records(&tracked) || listed.iter().any(|p| p.ends_with('/')) {
            return Ok(None);
        }
        let rename_source = files
            .iter()
            .any(|f| matches!(f.status, FileStatus::Deleted | FileStatus::Renamed));
        let counted = match rename_source {
            true => None,
            false => super::untracked::count(ws, &untracked, &self.sources(ws)?),
        };
        match counted {
            Some(created) => files.extend(created),
            None => match self.few_files(ws, base, scratch, &files, &listed)? {
                Some(few) => files = few,
                None => return Ok(None),
            },
        }
        sort_as_git(&mut files);
        Ok(Some(files))
    }

    /// `files` (git's comparison of the tracked files with `base`) with the `untracked` files
    /// counted and paired by git: only the paths that can take part in a rename (deleted,
    /// created and renamed ones) are compared again, through an index of their own holding
    /// the created and untracked files as they are on disk. Renames pair only deleted with
    /// created files, so that comparison pairs them as one of the whole worktree would.
    /// `None` when the paths are too many for a command line or git cannot add one.
    fn few_files(
        &self,
        ws: &Path,
        base: &str,
        scratch: &Path,
        files: &[FileChange],
        untracked: &[&str],
    ) -> Result<Option<Vec<FileChange>>> {
        let mut add: Vec<&str> = untracked.to_vec();
        let mut named: std::collections::BTreeSet<&str> = untracked.iter().copied().collect();
        for file in files {
            match file.status {
                FileStatus::Modified => continue,
                FileStatus::Created | FileStatus::Renamed => add.push(&file.path),
                FileStatus::Deleted => {}
            }
            named.insert(&file.path);
            named.extend(file.old_path.as_deref());
        }
        let bytes: usize = named.iter().map(|p| p.len() + 1).sum::<usize>() * 2;
        if named.len() > FEW_PATHS || bytes > FEW_PATHS_BYTES {
            return Ok(None);
        }
        let mut few = scratch.as_os_str().to_owned();
        few.push(".few");
        let few = PathBuf::from(few);
        let _cleanup = Scratch(few.clone());
        let _ = fs::remove_file(&few);
        let with_index = |c: Call| {
            c.env("GIT_INDEX_FILE", &few)
                .env("GIT_LITERAL_PATHSPECS", "1")
        };
        // Any file git cannot add (a FIFO, a socket) is reported by the path that adds all.
        let added = with_index(self.call(ws)?)
            .args(["update-index", "--add", "--"])
            .args(&add)
            .stdout();
        if added.is_err() {
            return Ok(None);
        }
        let compared = with_index(self.call(ws)?)
            .args(DIFF_ARGS)
            .args(["--cached", base, "--"])
            .args(&named)
            .stdout()?;
        let mut kept: Vec<FileChange> = files
            .iter()
            .filter(|f| {
                !named.contains(f.path.as_str())
                    && !f.old_path.as_deref().is_some_and(|o| named.contains(o))
            })
            .cloned()
            .collect();
        kept.extend(diff::parse_changes(&compared));
        Ok(Some(kept))
    }

    /// The changed files through a copy of the worktree's index with every file added
    /// (`add -A`), and with `tree` the tree of that index (else an empty string).
    fn files_through_index(
        &self,
        ws: &Path,
        base: &str,
        scratch: &Path,
        tree: bool,
    ) -> Result<(String, Vec<FileChange>)> {
        // A copy of the index keeps its cached file stats (`add` rehashes only what changed)
        // and its mtime (see `index.rs`); without an index, `add -A` builds one from scratch.
        let copied = super::index::copy_index(&self.index_of(ws)?, scratch);
        let _cleanup = Scratch(scratch.to_path_buf());
        copied?;
        let with_index = |c: Call| c.env("GIT_INDEX_FILE", scratch);
        super::add_all(
            with_index(self.call(ws)?).args(["add", "--all", "--", "."]),
            ws,
        )?;
        // Both only read the temporary index (write-tree replaces it atomically).
        let tree = match tree {
            true => Some(with_index(self.call(ws)?).arg("write-tree").start()?),
            false => None,
        };
        let files = with_index(self.call(ws)?)
            .args(DIFF_ARGS)
            .args(["--cached", base, "--"])
            .start()?;
        let (tree, files) = (tree.map(|t| t.wait()), files.wait());
        Ok((
            tree.transpose()?.unwrap_or_default().trim().to_string(),
            diff::parse_changes(&files?),
        ))
    }

    /// Where git reads the worktree at `ws`'s configuration and attributes.
    fn sources(&self, ws: &Path) -> Result<super::untracked::Sources> {
        let index = self.index_of(ws)?;
        let git_dir = index.parent().unwrap_or(ws).to_path_buf();
        // A linked worktree's git directory names the common one; the main one is it.
        let common_dir =
            match crate::store::fsutil::read_untrusted_string(&git_dir.join("commondir"), 4096) {
                Ok(text) => git_dir.join(text.trim_end()),
                Err(_) => git_dir.clone(),
            };
        Ok(super::untracked::Sources {
            git_dir,
            common_dir,
            git: self.binary_path()?,
        })
    }

    /// The worktree's index, from the `gitdir:` line of its `.git` file (as git finds it),
    /// else as git reports it.
    pub(super) fn index_of(&self, ws: &Path) -> Result<PathBuf> {
        let dot_git = ws.join(".git");
        if let Some(dir) = crate::store::fsutil::read_untrusted_string(&dot_git, 4096)
            .ok()
            .and_then(|text| Some(text.strip_prefix("gitdir: ")?.trim_end().to_string()))
        {
            return Ok(ws.join(dir).join("index"));
        }
        let index = self
            .call(ws)?
            .args(["rev-parse", "--git-path", "index"])
            .stdout()
            .map_err(|e| VcsError::NotAWorktree {
                path: ws.to_path_buf(),
                source: Box::new(e),
            })?;
        Ok(ws.join(index.trim_end_matches('\n')))
    }

    /// The git-format patch from `from` to `to` (commits or trees).
    pub(crate) fn patch(&self, from: &str, to: &str) -> Result<Vec<u8>> {
        Ok(self
            .call(&self.main)?
            .args(PATCH_ARGS)
            .args([from, to, "--"])
            .stdout_bytes()?)
    }
}

/// Most paths [`Git::few_files`] names on a command line, and their bytes (twice: they are
/// given to two commands, each far below the system's limit).
const FEW_PATHS: usize = 1000;
const FEW_PATHS_BYTES: usize = 256 << 10;

/// Puts `files` in the order git lists a comparison: by the bytes of each path (a rename's
/// new one).
fn sort_as_git(files: &mut [FileChange]) {
    files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
}

/// A temporary index, deleted (with a lock file git may have left) when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
        let mut lock = self.0.clone().into_os_string();
        lock.push(".lock");
        let _ = fs::remove_file(lock);
    }
}

/// Whether every record of a `git diff -z --raw` is of a plain file or symlink (no
/// submodule) and no path is unmerged: what adding every file to an index leaves alike.
fn plain_records(text: &str) -> bool {
    text.split('\0')
        .filter_map(|token| token.strip_prefix(':'))
        .all(|meta| {
            let mut fields = meta.split(' ');
            let modes = [fields.next(), fields.next()];
            let status = meta.rsplit(' ').next().unwrap_or("");
            !modes.contains(&Some("160000")) && !status.starts_with('U')
        })
}
