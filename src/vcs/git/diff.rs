//! What a git worktree changed since its base: its commits, and its files (uncommitted and
//! untracked ones included) recorded in a tree through a temporary index, so neither the
//! worktree's index nor any branch changes.

use std::fs;
use std::path::{Path, PathBuf};

use super::Git;
use crate::exec::process::Call;
use crate::vcs::diff::{self, Changes, DIFF_ARGS, PATCH_ARGS};
use crate::vcs::{Result, VcsError};

impl Git {
    /// The changes of the worktree at `ws` against `base`; `scratch` is a path for the
    /// temporary index (deleted before returning).
    /// Without `tree`, no tree is written and `latest` is left empty (the counts and the
    /// summary never show it): one git process fewer.
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
        let (tree, files, log) = (tree.map(|t| t.wait()), files.wait(), log.wait());
        Ok(Changes {
            against: base.to_string(),
            latest: tree.transpose()?.unwrap_or_default().trim().to_string(),
            commits: diff::parse_work_commits(&log?, 2),
            files: diff::parse_changes(&files?),
            as_of: diff::AsOf::LiveFiles,
        })
    }

    /// The worktree's index, from the `gitdir:` line of its `.git` file (as git finds it),
    /// else as git reports it.
    fn index_of(&self, ws: &Path) -> Result<PathBuf> {
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
