//! The tools bundle: files and directories of the main workspace (`tools.paths`) copied into
//! every workspace (`tools.dir`), so a workspace started on an old revision still has the
//! repository's current recipes and scripts. Symlinks are followed only to targets inside the
//! repository; everything is written below the bundle directory, never through a symlink.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::store::fsutil::{self, FsError};

/// How deep symlinks to directories may nest before the walk stops (a loop guard).
const MAX_DEPTH: usize = 40;

/// What a workspace's record keeps about its bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct Recorded {
    /// The bundle directory, relative to the workspace.
    pub dir: String,
    /// The sha256 of the copied content (`AGENT_TOOLS_VERSION`).
    pub version: String,
    /// The main workspace's root the paths were copied from (`AGENT_TOOLS_SOURCE`).
    pub source: PathBuf,
    /// The paths copied (relative to `source`).
    pub paths: Vec<String>,
    /// A digest of the sources' (inode, size, mtime) when last checked: the content is
    /// hashed again only when it changes.
    pub stamp: String,
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    pub synced_at: crate::store::timestamp::Timestamp,
}

/// One entry of the bundle, relative to the bundle directory.
#[derive(Debug)]
pub(crate) struct Item {
    pub rel: PathBuf,
    /// The file's bytes and mode; `None` for a directory.
    pub file: Option<(Vec<u8>, u32)>,
}

/// The bundle's content as read from the sources.
#[derive(Debug, Default)]
pub(crate) struct Content {
    pub items: Vec<Item>,
    /// The paths that exist and were copied.
    pub paths: Vec<String>,
    /// Symlinks not followed because they point outside the repository (or nowhere).
    pub skipped: Vec<PathBuf>,
    pub version: String,
}

/// The paths of `paths` that exist under `root` (a symlink counts; it is checked when read).
pub(crate) fn existing(root: &Path, paths: &[String]) -> Vec<String> {
    paths
        .iter()
        .filter(|p| fs::symlink_metadata(root.join(p)).is_ok())
        .cloned()
        .collect()
}

/// How long after its last change an entry's timestamps are not trusted to show its next
/// one: a file system stamps writes with a coarse clock (a write in the same tick leaves
/// mtime and ctime as they were), so a stamp taken that soon is made never to match (it is
/// "racy", as git calls it) and the content is read again next time.
const RACY: Duration = Duration::from_secs(1);

/// A digest of the (inode, size, mtime, ctime, mode) of every entry of `paths` under `root`:
/// cheap to take (no file is read), and changed by any edit (the ctime even when the mtime
/// was put back). Never the same twice while an entry changed less than [`RACY`] ago.
pub(crate) fn stamp(root: &Path, paths: &[String]) -> String {
    stamp_at(root, paths, SystemTime::now())
}

fn stamp_at(root: &Path, paths: &[String], now: SystemTime) -> String {
    let mut hasher = Sha256::new();
    let mut newest = Duration::ZERO;
    for path in paths {
        stamp_entry(&root.join(path), path.as_ref(), 0, &mut hasher, &mut newest);
    }
    let now = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    if newest + RACY > now {
        hasher.update(format!(
            "racy\0{}\0{}\0",
            now.as_nanos(),
            std::process::id()
        ));
    }
    format!("{:x}", hasher.finalize())
}

fn stamp_entry(at: &Path, rel: &Path, depth: usize, hasher: &mut Sha256, newest: &mut Duration) {
    let Ok(meta) = fs::metadata(at) else {
        hasher.update(format!("{}\0missing\0", rel.display()));
        return;
    };
    hasher.update(format!(
        "{}\0{}\0{}\0{}\0{}\0{}\0{}\0{}\0",
        rel.display(),
        meta.ino(),
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
        meta.mode()
    ));
    for (secs, nanos) in [
        (meta.mtime(), meta.mtime_nsec()),
        (meta.ctime(), meta.ctime_nsec()),
    ] {
        let at = Duration::new(secs.max(0) as u64, nanos.clamp(0, 999_999_999) as u32);
        *newest = (*newest).max(at);
    }
    if meta.is_dir() && depth < MAX_DEPTH {
        for (name, path) in sorted_entries(at) {
            stamp_entry(&path, &rel.join(name), depth + 1, hasher, newest);
        }
    }
}

fn sorted_entries(dir: &Path) -> Vec<(std::ffi::OsString, PathBuf)> {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| (e.file_name(), e.path()))
        .collect();
    entries.sort();
    entries
}

/// Reads the bundle's content from `paths` under `root` (the main workspace's root, which
/// bounds where a symlink may lead).
pub(crate) fn read(root: &Path, paths: &[String]) -> io::Result<Content> {
    let canonical_root = fs::canonicalize(root)?;
    let mut content = Content::default();
    for path in existing(root, paths) {
        let mut made = PathBuf::new();
        // Parents of a nested path (`docs/x.md`) are directories of the bundle too.
        if let Some(parent) = Path::new(&path).parent() {
            for part in parent.components() {
                made.push(part);
                if !content.items.iter().any(|i| i.rel == made) {
                    content.items.push(Item {
                        rel: made.clone(),
                        file: None,
                    });
                }
            }
        }
        read_entry(
            &canonical_root,
            &root.join(&path),
            path.as_ref(),
            0,
            &mut content,
        )
        .map_err(|e| match e.kind() {
            io::ErrorKind::InvalidInput => {
                io::Error::new(e.kind(), format!("tools.paths entry {path}: {e}"))
            }
            _ => e,
        })?;
        content.paths.push(path);
    }
    let mut hasher = Sha256::new();
    for item in &content.items {
        match &item.file {
            None => hasher.update(format!("D\0{}\0", item.rel.display())),
            Some((bytes, mode)) => {
                hasher.update(format!(
                    "F\0{}\0{:o}\0{}\0",
                    item.rel.display(),
                    mode,
                    bytes.len()
                ));
                hasher.update(bytes);
            }
        }
    }
    content.version = format!("{:x}", hasher.finalize());
    Ok(content)
}

/// The entries of the bundle in workspace `ws` (workspace-relative) when they hold exactly
/// what the tool copied there (`recorded.version`): a removal need not keep them aside, the
/// repository holds their sources. None when anything of it was changed or removed, or the
/// bundle directory is not a plain directory: then they are kept like any file no commit
/// holds. A file added beside the copied paths is never among them.
pub(crate) fn untouched(ws: &Path, recorded: &Recorded) -> Vec<PathBuf> {
    let rel = Path::new(&recorded.dir);
    let plain = rel
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    let dir = ws.join(rel);
    if !plain || !fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
        return vec![];
    }
    match read(&dir, &recorded.paths) {
        Ok(content) if content.version == recorded.version && content.skipped.is_empty() => {
            content.items.iter().map(|i| rel.join(&i.rel)).collect()
        }
        _ => vec![],
    }
}

fn read_entry(
    root: &Path,
    at: &Path,
    rel: &Path,
    depth: usize,
    content: &mut Content,
) -> io::Result<()> {
    let meta = fs::symlink_metadata(at)?;
    let meta = if meta.file_type().is_symlink() {
        match fs::canonicalize(at) {
            // `scripts/up -> ..` would copy the whole checkout (its .env, .git and .jj) into
            // every workspace, once per level of nesting.
            Ok(target) if holds_the_checkout(root, &target) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "{} leads to the repository's root, .git or .jj ({})",
                        rel.display(),
                        target.display()
                    ),
                ));
            }
            Ok(target) if target.starts_with(root) && depth < MAX_DEPTH => fs::metadata(&target)?,
            _ => {
                content.skipped.push(rel.to_path_buf());
                return Ok(());
            }
        }
    } else {
        meta
    };
    if meta.is_dir() {
        content.items.push(Item {
            rel: rel.to_path_buf(),
            file: None,
        });
        for (name, path) in sorted_entries(at) {
            read_entry(root, &path, &rel.join(name), depth + 1, content)?;
        }
    } else if meta.is_file() {
        let bytes = fs::read(at)?;
        content.items.push(Item {
            rel: rel.to_path_buf(),
            file: Some((bytes, meta.mode() & 0o777)),
        });
    }
    Ok(())
}

/// Whether `target` is the repository's root `root` (or above it), or is or lies in its
/// `.git` or `.jj`.
fn holds_the_checkout(root: &Path, target: &Path) -> bool {
    root.starts_with(target)
        || target.starts_with(root.join(".git"))
        || target.starts_with(root.join(".jj"))
}

/// Writes `content` into `bundle` (a directory inside the workspace `ws`): each top-level
/// entry is built in a scratch directory and renamed into place; entries named in `previous`
/// that are no longer configured are removed; anything else in `bundle` is left alone.
pub(crate) fn install(
    ws: &Path,
    bundle: &Path,
    content: &Content,
    previous: &[String],
) -> Result<(), FsError> {
    let mut at = ws.to_path_buf();
    for part in bundle.strip_prefix(ws).unwrap_or(bundle).components() {
        at.push(part);
        fsutil::create_dir_nofollow(&at)?;
    }
    let scratch = bundle.join(format!(".sync.{}", std::process::id()));
    if fs::symlink_metadata(&scratch).is_ok() {
        remove_entry(&scratch).map_err(|e| FsError::io("remove", &scratch, e))?;
    }
    fsutil::create_dir_nofollow(&scratch)?;
    let written = write_items(&scratch, content).and_then(|()| {
        let mut tops: Vec<&str> = previous.iter().map(|p| top(p)).collect();
        tops.extend(content.paths.iter().map(|p| top(p)));
        tops.sort();
        tops.dedup();
        for name in tops {
            let target = bundle.join(name);
            if fs::symlink_metadata(&target).is_ok() {
                remove_entry(&target).map_err(|e| FsError::io("remove", &target, e))?;
            }
            let built = scratch.join(name);
            if fs::symlink_metadata(&built).is_ok() {
                fs::rename(&built, &target).map_err(|e| FsError::io("write", &target, e))?;
            }
        }
        Ok(())
    });
    let _ = remove_entry(&scratch);
    written
}

/// Removes a file, symlink or whole directory, never following a symlink.
fn remove_entry(path: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(path)?;
    match meta.is_dir() {
        true => fs::remove_dir_all(path),
        false => fs::remove_file(path),
    }
}

fn top(path: &str) -> &str {
    match Path::new(path).components().next() {
        Some(Component::Normal(name)) => name.to_str().unwrap_or(path),
        _ => path,
    }
}

fn write_items(scratch: &Path, content: &Content) -> Result<(), FsError> {
    for item in &content.items {
        let to = scratch.join(&item.rel);
        match &item.file {
            None => {
                fsutil::create_dir_nofollow(&to)?;
            }
            Some((bytes, mode)) => {
                let mut file = fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .custom_flags(libc::O_NOFOLLOW)
                    .mode(*mode)
                    .open(&to)
                    .map_err(|e| FsError::io("write", &to, e))?;
                file.write_all(bytes)
                    .and_then(|()| file.set_permissions(fs::Permissions::from_mode(*mode)))
                    .map_err(|e| FsError::io("write", &to, e))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_checkout_and_its_stores_are_never_bundled() {
        let root = Path::new("/r/repo");
        for target in [
            "/r/repo",
            "/r",
            "/",
            "/r/repo/.git",
            "/r/repo/.jj/repo/store",
        ] {
            assert!(holds_the_checkout(root, Path::new(target)), "{target}");
        }
        for target in [
            "/r/repo/scripts",
            "/r/repo/.github",
            "/r/repo/.gitignore",
            "/r/other",
        ] {
            assert!(!holds_the_checkout(root, Path::new(target)), "{target}");
        }
    }

    use super::*;

    #[test]
    fn links_outside_are_skipped_and_content_is_versioned() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        fs::create_dir_all(root.join("scripts/deep")).unwrap();
        fs::write(root.join("scripts/deep/a.sh"), "echo a").unwrap();
        fs::write(tmp.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(tmp.path().join("secret"), root.join("scripts/out")).unwrap();
        std::os::unix::fs::symlink("deep/a.sh", root.join("scripts/in")).unwrap();
        let paths = vec!["scripts".to_string(), "missing".to_string()];
        let content = read(&root, &paths).unwrap();
        assert_eq!(content.paths, ["scripts"]);
        assert_eq!(content.skipped, [PathBuf::from("scripts/out")]);
        let ws = tmp.path().join("ws");
        fs::create_dir(&ws).unwrap();
        install(&ws, &ws.join(".tools"), &content, &[]).unwrap();
        assert_eq!(
            fs::read_to_string(ws.join(".tools/scripts/in")).unwrap(),
            "echo a"
        );
        assert!(!ws.join(".tools/scripts/out").exists());
        let later = SystemTime::now() + Duration::from_secs(60);
        let before = stamp_at(&root, &paths, later);
        fs::write(root.join("scripts/deep/a.sh"), "echo b").unwrap();
        assert_ne!(stamp_at(&root, &paths, later), before);
        assert_ne!(read(&root, &paths).unwrap().version, content.version);
    }

    /// Sources that changed within [`RACY`] give a stamp that never matches (their next
    /// change may keep their timestamps); once older, the same sources give the same stamp.
    #[test]
    fn a_stamp_of_fresh_sources_never_matches() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("agents.just"), "a:\n").unwrap();
        let paths = vec!["agents.just".to_string()];
        let now = SystemTime::now();
        assert_ne!(
            stamp_at(tmp.path(), &paths, now),
            stamp_at(tmp.path(), &paths, now + Duration::from_nanos(1))
        );
        let later = now + RACY + Duration::from_millis(10);
        assert_eq!(
            stamp_at(tmp.path(), &paths, later),
            stamp_at(tmp.path(), &paths, later)
        );
    }
}
