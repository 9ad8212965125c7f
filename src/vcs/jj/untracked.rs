//! What jj does not track around a land: files of the target working copy no commit holds
//! where the land would write (jj leaves them as they are and records, in that working copy,
//! a change that reverts the landed file), and files of the workspace jj left out of its
//! commits (too big to snapshot, outside `snapshot.auto-track`, inside a nested
//! repository), which a land does not bring.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::Jj;
use crate::store::layout::WorkspaceId;
use crate::vcs::land::{LandError, Result};

impl Jj {
    /// Refuses a land into the working copy at `dir` when a path it writes (`files`), or a
    /// directory one of them needs, is taken on disk by something the target working-copy
    /// commit `commit` does not track: an ignored file, one too big for jj to snapshot, a
    /// directory holding such files where the land writes a file. Read with `lstat`: a
    /// symlink is never followed.
    pub(super) fn refuse_untracked_in_the_way(
        &self,
        dir: &Path,
        files: &[String],
        commit: &str,
    ) -> Result<()> {
        let found = on_disk(dir, files);
        if found.is_empty() {
            return Ok(());
        }
        let tracked = self.tracked_among(commit, &found)?;
        let untracked: Vec<String> = found.into_iter().filter(|p| !tracked.contains(p)).collect();
        if untracked.is_empty() {
            return Ok(());
        }
        Err(LandError::Ignored {
            path: dir.to_path_buf(),
            main: dir == self.main,
            files: untracked,
            jj: true,
        })
    }

    /// Which of `paths` (relative to the repository's root) commit `commit` holds as files.
    fn tracked_among(&self, commit: &str, paths: &[String]) -> Result<HashSet<String>> {
        let out = self
            .query()?
            .args(["file", "list", "-r", commit, "-T", r#"path ++ "\0""#, "--"])
            .args(paths.iter().map(|p| format!("root-file:{}", literal(p))))
            .stdout()?;
        Ok(out
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect())
    }

    /// The files of workspace `id` at `ws` that jj does not track and does not ignore, so
    /// that none of its commits holds them: new files larger than
    /// `snapshot.max-new-file-size`, files outside `snapshot.auto-track`, a nested
    /// repository (named as a directory). Call it after a snapshot of the workspace. Read as
    /// what git, given no index, finds neither ignored nor among the files jj tracks.
    pub(crate) fn left_out(&self, id: &WorkspaceId, ws: &Path) -> crate::vcs::Result<Vec<PathBuf>> {
        let out = self
            .git_without_index(ws)?
            .args(["ls-files", "-z", "--others", "--exclude-standard"])
            .stdout()?;
        let on_disk = crate::vcs::split_nul(&out);
        if on_disk.is_empty() {
            return Ok(vec![]);
        }
        let tracked: HashSet<PathBuf> = self.tracked(id)?.into_iter().collect();
        Ok(on_disk
            .into_iter()
            .filter(|p| !tracked.contains(p) && !p.starts_with(".jj"))
            .collect())
    }
}

/// What is on disk under `dir` where a land writes `files` (paths relative to `dir`): each
/// of them that exists (file, symlink or anything else), every file under one that is a
/// directory, and the first parent directory of one that exists as something else (a
/// symlink included: nothing below it is looked at, so none is followed). Sorted, once each.
fn on_disk(dir: &Path, files: &[String]) -> Vec<String> {
    let mut found: Vec<String> = vec![];
    'files: for file in files {
        // Each parent from the top: `lstat` follows every component but the last.
        let mut at = PathBuf::new();
        let parts: Vec<_> = Path::new(file).components().collect();
        for (i, part) in parts.iter().enumerate() {
            at.push(part);
            let Ok(meta) = dir.join(&at).symlink_metadata() else {
                continue 'files;
            };
            let last = i + 1 == parts.len();
            match (meta.is_dir(), last) {
                (true, false) => {}
                (true, true) => under(dir, &at, &mut found),
                (false, _) => {
                    found.push(at.to_string_lossy().into_owned());
                    continue 'files;
                }
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

/// Adds every entry but directories under `rel` (a directory of `root`), relative to
/// `root`; an unreadable directory is named itself.
fn under(root: &Path, rel: &Path, found: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(root.join(rel)) else {
        found.push(rel.to_string_lossy().into_owned());
        return;
    };
    for entry in entries.flatten() {
        let path = rel.join(entry.file_name());
        match entry.file_type() {
            Ok(t) if t.is_dir() => under(root, &path, found),
            _ => found.push(path.to_string_lossy().into_owned()),
        }
    }
}

/// `path` as a jj string literal (fileset and revset syntax): quoted, `"` and `\` escaped.
fn literal(path: &str) -> String {
    let mut out = String::with_capacity(path.len() + 2);
    out.push('"');
    for c in path.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(literal("a b/c.txt"), r#""a b/c.txt""#);
        assert_eq!(literal(r#"q"u\o"#), r#""q\"u\\o""#);
    }

    #[test]
    fn what_is_in_the_way() {
        let dir = std::env::temp_dir().join(format!("aw-in-the-way-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("cache/deep")).unwrap();
        std::fs::write(dir.join("cache/deep/x"), "x").unwrap();
        std::fs::write(dir.join("gen"), "g").unwrap();
        std::fs::write(dir.join("a.txt"), "a").unwrap();
        std::os::unix::fs::symlink("/", dir.join("link")).unwrap();
        let files = [
            "a.txt",
            "new.txt",
            "cache",
            "gen/x.txt",
            "link/etc",
            "gen/y/z",
        ]
        .map(String::from);
        assert_eq!(
            on_disk(&dir, &files),
            ["a.txt", "cache/deep/x", "gen", "link"]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
