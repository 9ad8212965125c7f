//! Files of a workspace that no commit keeps: found after the backend recorded the edits, then
//! either kept aside (renamed into `<namespace>/.kept/<id>-<stamp>/`) or discarded because
//! they are disposable build output or the user asked.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// Patterns of disposable build output when `AGENT_WORKSPACE_DISPOSABLE` is unset.
pub(crate) const DEFAULT_DISPOSABLE: &str =
    "target/,node_modules/,__pycache__/,*.pyc,.pytest_cache/,.mypy_cache/,.direnv/";

#[derive(Debug, Error)]
pub(crate) enum AsideError {
    #[error("could not read {}: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error("could not keep {} aside in {}: {source}", path.display(), dest.display())]
    Keep {
        path: PathBuf,
        dest: PathBuf,
        source: io::Error,
    },
}

/// What to discard rather than keep.
pub(crate) struct Policy {
    /// Discard every file no commit keeps (`--discard-untracked`).
    pub discard_all: bool,
    pub disposable: Vec<String>,
}

impl Policy {
    /// Keeps every file no commit holds, build output included (`gc`).
    pub(crate) fn keep_all() -> Policy {
        Policy {
            discard_all: false,
            disposable: vec![],
        }
    }

    /// The disposable patterns from `AGENT_WORKSPACE_DISPOSABLE` (comma-separated; empty means
    /// none), else `configured` (`clean.disposable`), else [`DEFAULT_DISPOSABLE`].
    pub(crate) fn new(discard_all: bool, configured: Option<&[String]>) -> Policy {
        let split = |list: &str| -> Vec<String> {
            list.split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect()
        };
        let disposable = match (std::env::var(crate::vars::DISPOSABLE), configured) {
            (Ok(list), _) => split(&list),
            (Err(_), Some(list)) => list.to_vec(),
            (Err(_), None) => split(DEFAULT_DISPOSABLE),
        };
        Policy {
            discard_all,
            disposable,
        }
    }

    /// The pattern that makes `name` disposable, if any. `dir/` matches directories named
    /// `dir`, `*.ext` names ending in `.ext`, anything else names equal to it, at any depth.
    fn disposable(&self, name: &str, is_dir: bool) -> Option<&str> {
        self.disposable
            .iter()
            .find(|p| match p.strip_suffix('/') {
                Some(dir) => is_dir && name == dir,
                None => match p.strip_prefix('*') {
                    Some(suffix) => name.ends_with(suffix),
                    None => name == p.as_str(),
                },
            })
            .map(String::as_str)
    }
}

/// What became of the files no commit keeps.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Aside {
    /// Where kept files now are (only when some were kept).
    pub kept_dir: Option<PathBuf>,
    pub kept_files: u64,
    pub kept_bytes: u64,
    /// Discarded as disposable build output, and the patterns that matched.
    pub disposable_files: u64,
    pub disposable_bytes: u64,
    pub disposable_patterns: Vec<String>,
    /// Discarded because `--discard-untracked` asked.
    pub discarded_files: u64,
    pub discarded_bytes: u64,
}

/// Sorts the files of `ws` that are not in `tracked` (paths relative to `ws`) and renames
/// those to keep into `dest`, at the same relative path. A directory holding `.git` below the
/// root is a nested repository: no outer commit keeps its files, so it is kept whole.
/// Symlinks are never followed; they are kept as symlinks.
pub(crate) fn set_aside(
    ws: &Path,
    tracked: &HashSet<PathBuf>,
    dest: &Path,
    policy: &Policy,
) -> Result<Aside, AsideError> {
    set_aside_unheld(ws, &|rel| tracked.contains(rel), dest, policy)
}

/// [`set_aside`], where `held` says whether a commit holds a file (relative to `ws`).
pub(crate) fn set_aside_unheld(
    ws: &Path,
    held: &dyn Fn(&Path) -> bool,
    dest: &Path,
    policy: &Policy,
) -> Result<Aside, AsideError> {
    let (mut aside, keep) = sort(ws, held, policy)?;
    for rel in &keep {
        move_entry(&ws.join(rel), &dest.join(rel))?;
    }
    if !keep.is_empty() {
        aside.kept_dir = Some(dest.to_path_buf());
    }
    Ok(aside)
}

/// What [`set_aside`] would do, without moving anything (`kept_dir` stays `None`), where
/// `held` says whether a commit holds a file (relative to `ws`).
pub(crate) fn survey(
    ws: &Path,
    held: &dyn Fn(&Path) -> bool,
    policy: &Policy,
) -> Result<Aside, AsideError> {
    Ok(sort(ws, held, policy)?.0)
}

/// The counts, and the entries to keep (relative to `ws`).
fn sort(
    ws: &Path,
    held: &dyn Fn(&Path) -> bool,
    policy: &Policy,
) -> Result<(Aside, Vec<PathBuf>), AsideError> {
    let mut walk = Walk {
        held,
        policy,
        aside: Aside::default(),
        keep: Vec::new(),
    };
    walk.dir(ws, Path::new(""), None)?;
    Ok((walk.aside, walk.keep))
}

struct Walk<'a> {
    held: &'a dyn Fn(&Path) -> bool,
    policy: &'a Policy,
    aside: Aside,
    /// Entries to rename, relative to the workspace.
    keep: Vec<PathBuf>,
}

impl Walk<'_> {
    /// `disposable` is the pattern an enclosing directory matched.
    fn dir(
        &mut self,
        abs: &Path,
        rel: &Path,
        disposable: Option<String>,
    ) -> Result<(), AsideError> {
        let read = |e| AsideError::Read {
            path: abs.to_path_buf(),
            source: e,
        };
        let mut entries = fs::read_dir(abs)
            .map_err(read)?
            .collect::<io::Result<Vec<_>>>()
            .map_err(read)?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let name = entry.file_name();
            let text = name.to_string_lossy();
            if rel.as_os_str().is_empty() && ours(&text) {
                continue;
            }
            let (abs, rel) = (entry.path(), rel.join(&name));
            let read = |e| AsideError::Read {
                path: abs.clone(),
                source: e,
            };
            // The directory entry's own type (no symlink followed), which needs no `stat`
            // on most file systems: only a file to sort is measured.
            let is_dir = entry.file_type().map_err(read)?.is_dir();
            let pattern = disposable
                .clone()
                .or_else(|| self.policy.disposable(&text, is_dir).map(str::to_string));
            if is_dir && pattern.is_none() && !self.policy.discard_all && is_repo(&abs) {
                let (files, bytes) = measure(&abs)?;
                self.aside.kept_files += files;
                self.aside.kept_bytes += bytes;
                self.keep.push(rel);
            } else if is_dir {
                self.dir(&abs, &rel, pattern)?;
            } else if !(self.held)(&rel) {
                let bytes = fs::symlink_metadata(&abs).map_err(read)?.len();
                self.untracked(rel, bytes, pattern);
            }
        }
        Ok(())
    }

    fn untracked(&mut self, rel: PathBuf, bytes: u64, pattern: Option<String>) {
        let a = &mut self.aside;
        match pattern {
            Some(pattern) => {
                a.disposable_files += 1;
                a.disposable_bytes += bytes;
                if !a.disposable_patterns.contains(&pattern) {
                    a.disposable_patterns.push(pattern);
                }
            }
            None if self.policy.discard_all => {
                a.discarded_files += 1;
                a.discarded_bytes += bytes;
            }
            None => {
                a.kept_files += 1;
                a.kept_bytes += bytes;
                self.keep.push(rel);
            }
        }
    }
}

/// Top-level entries that are the backend's or the tool's own.
fn ours(name: &str) -> bool {
    name == ".jj" || name == ".git" || name.starts_with(crate::store::metadata::FILE_NAME)
}

fn is_repo(dir: &Path) -> bool {
    fs::symlink_metadata(dir.join(".git")).is_ok()
}

/// Files (symlinks count as files) and bytes under `dir`, without following symlinks.
fn measure(dir: &Path) -> Result<(u64, u64), AsideError> {
    let read = |e| AsideError::Read {
        path: dir.to_path_buf(),
        source: e,
    };
    let (mut files, mut bytes) = (0, 0);
    for entry in fs::read_dir(dir).map_err(read)? {
        let entry = entry.map_err(read)?;
        let meta = fs::symlink_metadata(entry.path()).map_err(read)?;
        if meta.is_dir() {
            let (f, b) = measure(&entry.path())?;
            files += f;
            bytes += b;
        } else {
            files += 1;
            bytes += meta.len();
        }
    }
    Ok((files, bytes))
}

/// Renames `from` to `to`, creating `to`'s parents. A rename across filesystems (EXDEV)
/// fails: the caller then keeps the workspace rather than delete what it could not move.
fn move_entry(from: &Path, to: &Path) -> Result<(), AsideError> {
    let fail = |e| AsideError::Keep {
        path: from.to_path_buf(),
        dest: to.to_path_buf(),
        source: e,
    };
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).map_err(fail)?;
    }
    if fs::symlink_metadata(to).is_ok() {
        return Err(fail(io::Error::from(io::ErrorKind::AlreadyExists)));
    }
    fs::rename(from, to).map_err(fail)
}

/// The directory under the namespace that holds kept-aside files.
pub(crate) const KEPT_DIR: &str = ".kept";

/// A fresh directory name `<id>-<UTC stamp>` under `kept_root` that does not exist yet.
pub(crate) fn fresh_dest(kept_root: &Path, id: &str) -> PathBuf {
    let stamp = crate::store::timestamp::Timestamp::now().compact();
    let base = kept_root.join(format!("{id}-{stamp}"));
    let mut dest = base.clone();
    let mut n = 2;
    while fs::symlink_metadata(&dest).is_ok() {
        dest = PathBuf::from(format!("{}.{n}", base.display()));
        n += 1;
    }
    dest
}

/// The kept-aside directories of `id` (every one when `id` is `None`) under `kept_root`.
pub(crate) fn kept_dirs(kept_root: &Path, id: Option<&str>) -> io::Result<Vec<PathBuf>> {
    let entries = match fs::read_dir(kept_root) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(vec![]),
        other => other?,
    };
    let mut dirs = Vec::new();
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().to_string();
        let owner = name.rsplit_once('-').map(|(owner, _)| owner);
        if id.is_none() || owner == id {
            dirs.push(entry.path());
        }
    }
    dirs.sort();
    Ok(dirs)
}

/// When the kept-aside directory `dir` was made, from its name (`<id>-<UTC time>`, maybe with a
/// `.N` suffix, as [`fresh_dest`] names it); `None` for a name of another form.
pub(crate) fn kept_at(dir: &Path) -> Option<std::time::SystemTime> {
    let name = dir.file_name()?.to_str()?;
    let name = name.split_once('.').map_or(name, |(stem, _)| stem);
    let (_, stamp) = name.rsplit_once('-')?;
    crate::store::timestamp::Timestamp::parse_compact(stamp)?.time()
}

/// How long ago the kept-aside directory `dir` was made, judged by the later of the time in
/// its name and its own modification time, so that a clock set back when it was named cannot
/// make it old; a time ahead of `now` counts as new (zero). `None` when the name does not say.
pub(crate) fn kept_age(dir: &Path, now: std::time::SystemTime) -> Option<std::time::Duration> {
    let named = kept_at(dir)?;
    let modified = fs::symlink_metadata(dir).and_then(|m| m.modified()).ok();
    let made = modified.map_or(named, |m| m.max(named));
    Some(now.duration_since(made).unwrap_or_default())
}

/// Deletes one kept-aside directory (or a stray file or symlink in its place) without
/// following symlinks.
pub(crate) fn purge(path: &Path) -> io::Result<()> {
    crate::store::tree::remove(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_names_at_any_depth() {
        let policy = Policy {
            discard_all: false,
            disposable: vec!["target/".into(), "*.pyc".into(), "x".into()],
        };
        assert_eq!(policy.disposable("target", true), Some("target/"));
        assert_eq!(policy.disposable("target", false), None);
        assert_eq!(policy.disposable("a.pyc", false), Some("*.pyc"));
        assert_eq!(policy.disposable("x", false), Some("x"));
        assert_eq!(policy.disposable("y", true), None);
    }

    #[test]
    fn kept_at_reads_the_name() {
        let at = |name: &str| kept_at(Path::new(name));
        let expected = humantime::parse_rfc3339("2026-11-26T22:58:06Z").ok();
        assert_eq!(at("w-20261126T225806Z"), expected);
        assert_eq!(at("w-x-20261126T225806Z.2"), expected);
        assert_eq!(at("w"), None);
        assert_eq!(at("w-2026112XT225806Z"), None);
    }

    #[test]
    fn kept_dirs_select_by_id() {
        let tmp = tempfile::tempdir().unwrap();
        for name in [
            "w-20260101T000000Z",
            "w-x-20260101T000000Z",
            "w-20260101T000000Z.2",
        ] {
            fs::create_dir(tmp.path().join(name)).unwrap();
        }
        let names = |id| {
            kept_dirs(tmp.path(), id)
                .unwrap()
                .iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(Some("w")),
            ["w-20260101T000000Z", "w-20260101T000000Z.2"]
        );
        assert_eq!(names(Some("w-x")), ["w-x-20260101T000000Z"]);
        assert_eq!(names(None).len(), 3);
    }
}
