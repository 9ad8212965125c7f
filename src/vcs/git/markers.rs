//! Conflicts a git worktree holds unresolved: unmerged index entries (a merge, `git stash
//! pop` or a cherry-pick stopped half-way) and conflict-marker lines its changes add.
//! `checkpoint` and `clean` refuse both before they commit, `land` before anything moves:
//! git would otherwise record the markers as content.

use std::path::{Path, PathBuf};

use super::Git;
use crate::vcs::error::{Result, VcsError};

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
        id: &str,
        ws: &Path,
        backup: &IndexBackup,
    ) -> Result<()> {
        let files = self.marked_files(ws, &["--cached"])?;
        if files.is_empty() {
            return Ok(());
        }
        backup.restore()?;
        Err(VcsError::Markers {
            id: id.to_string(),
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

/// The files of a `git diff` whose added lines start a conflict marker, once each, in the
/// order met. A path is read from the `+++ b/<path>` header (a deleted file has
/// `/dev/null`); a path git quotes (`"b/sp\303\251cial"`) is unquoted.
fn marked_files(diff: &str) -> Vec<String> {
    let mut files: Vec<String> = vec![];
    let mut file: Option<String> = None;
    let mut header = false;
    for line in diff.lines() {
        if line.starts_with("diff --git ") {
            header = true;
            file = None;
        } else if header && line.starts_with("@@") {
            header = false;
        } else if header {
            if let Some(path) = line.strip_prefix("+++ ") {
                file = new_path(path);
            }
        } else if let Some(added) = line.strip_prefix('+') {
            let marker = added.starts_with("<<<<<<<") || added.starts_with(">>>>>>>");
            if let Some(path) = file.as_ref().filter(|_| marker) {
                if !files.contains(path) {
                    files.push(path.clone());
                }
            }
        }
    }
    files
}

/// The path of a `+++` header: `b/<path>` as it is, or quoted the way git quotes (C
/// escapes, octal bytes); git ends a path holding a space with a tab.
fn new_path(text: &str) -> Option<String> {
    let text = text.strip_suffix('\t').unwrap_or(text);
    let Some(quoted) = text.strip_prefix('"') else {
        return text.strip_prefix("b/").map(str::to_string);
    };
    let quoted = quoted.strip_suffix('"')?;
    let mut bytes = vec![];
    let mut chars = quoted.bytes();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        let escaped = match chars.next()? {
            b'a' => 7,
            b'b' => 8,
            b't' => b'\t',
            b'n' => b'\n',
            b'v' => 11,
            b'f' => 12,
            b'r' => b'\r',
            d @ b'0'..=b'7' => {
                let mut value = u32::from(d - b'0');
                for _ in 0..2 {
                    value = value * 8 + u32::from(chars.next()?.checked_sub(b'0')?);
                }
                u8::try_from(value).ok()?
            }
            other => other,
        };
        bytes.push(escaped);
    }
    let text = String::from_utf8_lossy(&bytes);
    text.strip_prefix("b/").map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_lines_added_name_their_file() {
        let diff = concat!(
            "diff --git a/a.txt b/a.txt\n",
            "--- a/a.txt\n",
            "+++ b/a.txt\n",
            "@@ -1 +1,2 @@\n",
            "+ <<<<<<< not at the start\n",
            "-<<<<<<< removed\n",
            "diff --git \"a/sp ace\\\"q.txt\" \"b/sp ace\\\"q.txt\"\n",
            "new file mode 100644\n",
            "--- /dev/null\n",
            "+++ \"b/sp ace\\\"q.txt\"\t\n",
            "@@ -0,0 +1,2 @@\n",
            "+>>>>>>> x\n",
            "+<<<<<<< again\n",
            "diff --git \"a/\\303\\251.txt\" \"b/\\303\\251.txt\"\n",
            "--- /dev/null\n",
            "+++ \"b/\\303\\251.txt\"\n",
            "@@ -0,0 +1 @@\n",
            "+<<<<<<< y\n",
            "diff --git a/two words.txt b/two words.txt\n",
            "--- a/two words.txt\t\n",
            "+++ b/two words.txt\t\n",
            "@@ -0,0 +1 @@\n",
            "++++ b/not-a-header\n",
            "+>>>>>>> theirs\n",
            "diff --git a/gone.txt b/gone.txt\n",
            "deleted file mode 100644\n",
            "--- a/gone.txt\n",
            "+++ /dev/null\n",
            "@@ -1 +0,0 @@\n",
            "-<<<<<<< gone\n",
        );
        assert_eq!(
            marked_files(diff),
            ["sp ace\"q.txt", "é.txt", "two words.txt"]
        );
        assert!(marked_files("").is_empty());
    }
}
