//! Conflicts a git worktree holds unresolved: unmerged index entries (a merge, `git stash
//! pop` or a cherry-pick stopped half-way) and conflict-marker lines its changes add.
//! `checkpoint` and `clean` refuse both before they commit, `land` before anything moves:
//! git would otherwise record the markers as content.

use std::path::{Path, PathBuf};

use super::Git;
use crate::store::layout::WorkspaceId;
use crate::vcs::error::{Result, VcsError};
use crate::vcs::markers::marked_files;

/// `git diff` options for [`Git::marked_files`]: no context, only files with a line that
/// starts a marker added or removed (`-G`), whatever the user's diff configuration says.
const MARKER_DIFF: &[&str] = &[
    "diff",
    "-U0",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--find-renames",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "-G^(<<<<<<<|>>>>>>>)",
];

impl Git {
    /// Refuses the worktree at `ws` while its index has unmerged entries, naming them and
    /// the operation that left them (if any) with how to conclude or abort it.
    pub(super) fn refuse_unmerged(&self, ws: &Path) -> Result<()> {
        let out = self
            .call(ws)?
            .args(["ls-files", "--unmerged", "-z"])
            .stdout()?;
        let files = super::land_target::parse_unmerged(&out);
        if files.is_empty() {
            return Ok(());
        }
        let git_dir = self
            .call(ws)?
            .args(["rev-parse", "--absolute-git-dir"])
            .stdout()?;
        // The index is read already: only the operation is asked.
        let busy = self.in_progress(ws, Path::new(git_dir.trim_end_matches('\n')), true)?;
        let (operation, how) = match busy {
            Some(busy) if busy.operation => (Some(busy.what), busy.how),
            _ => (None, String::new()),
        };
        Err(VcsError::Unmerged {
            ws: ws.to_path_buf(),
            files,
            operation,
            how,
        })
    }

    /// The files in which `git diff <range>` (run in `dir`) adds a line that starts a
    /// conflict marker (`<<<<<<<` or `>>>>>>>`, as jj's land looks for): a line already
    /// there is the file's content, never counted.
    fn marked_files(&self, dir: &Path, range: &[&str]) -> Result<Vec<String>> {
        let out = self.call(dir)?.args(MARKER_DIFF).args(range).stdout()?;
        Ok(marked_files(&out))
    }

    /// The files in which `tip` adds a conflict-marker line to what it has in common with
    /// `onto`: against each of their merge bases (a line one of them holds is content);
    /// none when they have no merge base (git merges no unrelated histories).
    pub(super) fn marked_since_merge_base(&self, onto: &str, tip: &str) -> Result<Vec<String>> {
        let (_, bases) = self
            .call(&self.main)?
            .args(["merge-base", "--all", onto, tip])
            .stdout_allowing(&[1])?;
        let mut marked: Option<Vec<String>> = None;
        for base in bases.split_whitespace() {
            let files = self.marked_files(&self.main, &[base, tip])?;
            marked = Some(match marked {
                None => files,
                Some(before) => before.into_iter().filter(|f| files.contains(f)).collect(),
            });
        }
        Ok(marked.unwrap_or_default())
    }

    /// Refuses what workspace `id` (the worktree at `ws`) has staged when it adds conflict
    /// markers to HEAD: the index is put back as `backup` holds it first.
    pub(super) fn refuse_staged_markers(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        backup: &IndexBackup,
    ) -> Result<()> {
        let files = self.marked_files(ws, &["--cached"])?;
        if files.is_empty() {
            return Ok(());
        }
        backup.restore()?;
        Err(VcsError::Markers {
            id: id.clone(),
            ws: ws.to_path_buf(),
            files,
            landing: false,
        })
    }

    /// A copy of the index of the worktree at `ws`, to put back when what was staged for a
    /// commit is refused; `None` when it has no index.
    pub(super) fn index_backup(&self, ws: &Path) -> Result<IndexBackup> {
        let git_dir = self
            .call(ws)?
            .args(["rev-parse", "--absolute-git-dir"])
            .stdout()?;
        let git_dir = PathBuf::from(git_dir.trim_end_matches('\n'));
        let real = git_dir.join("index");
        let path = git_dir.join(format!(
            "agent-workspace-backup.{}.index",
            std::process::id()
        ));
        let copied = super::index::copy_index(&real, &path)?;
        Ok(IndexBackup { path, real, copied })
    }
}

/// A copy of a worktree's index (its bytes and mtime), deleted when dropped.
pub(super) struct IndexBackup {
    path: PathBuf,
    real: PathBuf,
    /// Whether there was an index to copy.
    copied: bool,
}

impl IndexBackup {
    /// Puts the copy back as the worktree's index (none, when it had none).
    fn restore(&self) -> Result<()> {
        let io = |path: &Path, source| VcsError::Io {
            action: "restore the index",
            path: path.to_path_buf(),
            source,
        };
        match self.copied {
            true => std::fs::rename(&self.path, &self.real).map_err(|e| io(&self.real, e)),
            false => match std::fs::remove_file(&self.real) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(&self.real, e)),
                _ => Ok(()),
            },
        }
    }
}

impl Drop for IndexBackup {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
