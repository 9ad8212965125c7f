//! How much disk a directory tree takes and when its files last changed, never following a
//! symlink.

use std::collections::HashSet;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A tree's disk usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Usage {
    /// Bytes allocated on disk (`st_blocks` × 512), each hard-linked file counted once.
    pub allocated: u64,
    /// The newest modification time of anything in the tree outside the version-control
    /// directories (`.jj`, `.git`) and agent-workspace's record.
    pub newest: Option<SystemTime>,
}

/// Names whose modification times are the tools', not the workspace user's.
fn tool_owned(name: &std::ffi::OsStr) -> bool {
    name == ".jj" || name == ".git" || name.to_string_lossy().starts_with(".agent-workflow.json")
}

/// Walks `root` without following symlinks (a symlink counts as itself). Entries that vanish
/// or cannot be read while walking are left out.
pub(crate) fn usage(root: &Path) -> Usage {
    let mut seen: HashSet<(u64, u64)> = HashSet::new();
    let mut usage = Usage::default();
    // Each directory to read, and whether its entries' times count.
    let mut pending: Vec<(PathBuf, bool)> = vec![(root.to_path_buf(), true)];
    if let Ok(meta) = fs::symlink_metadata(root) {
        count(&meta, false, &mut seen, &mut usage);
        if !meta.is_dir() {
            return usage;
        }
    }
    while let Some((dir, timed)) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            let timed = timed && !tool_owned(&entry.file_name());
            count(&meta, timed, &mut seen, &mut usage);
            if meta.is_dir() {
                pending.push((entry.path(), timed));
            }
        }
    }
    usage
}

fn count(meta: &fs::Metadata, timed: bool, seen: &mut HashSet<(u64, u64)>, usage: &mut Usage) {
    if seen.insert((meta.dev(), meta.ino())) {
        usage.allocated += meta.blocks() * 512;
    }
    if timed {
        let time = UNIX_EPOCH + Duration::new(meta.mtime().max(0) as u64, meta.mtime_nsec() as u32);
        usage.newest = usage.newest.max(Some(time));
    }
}

/// What is kept free on a file system beyond what a step writes: room for the backend's
/// own small files (jj's operation, view and index; git's refs and logs) and our records.
pub(crate) const MARGIN: u64 = 8 << 20;

/// Bytes free to an unprivileged writer on the file system holding `path`; `None` when it
/// cannot be asked.
pub(crate) fn free_bytes(path: &Path) -> Option<u64> {
    let stat = rustix::fs::statvfs(path).ok()?;
    Some(stat.f_bavail * stat.f_frsize)
}

/// Not enough free space for a write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "not enough free space on the file system of {}: {} needed ({} to write and {} kept free), {} free",
    dir.display(),
    human(bytes + MARGIN),
    human(*bytes),
    human(MARGIN),
    human(*free)
)]
pub struct NoRoom {
    pub dir: PathBuf,
    pub bytes: u64,
    pub free: u64,
}

/// Checks, before writing `bytes` into `dir` (or the nearest existing directory above it),
/// that its file system has them free plus [`MARGIN`]. Passes when free space cannot be
/// asked.
pub(crate) fn check_room(dir: &Path, bytes: u64) -> Result<(), NoRoom> {
    let existing = dir.ancestors().find(|d| fs::symlink_metadata(d).is_ok());
    let Some(free) = existing.and_then(free_bytes) else {
        return Ok(());
    };
    match free >= bytes.saturating_add(MARGIN) {
        true => Ok(()),
        false => Err(NoRoom {
            dir: dir.to_path_buf(),
            bytes,
            free,
        }),
    }
}

/// The bytes of the files under `root` (outside `.jj` and `.git` at its root, symlinks not
/// followed, entries `skip` names by their path relative to `root` left out) changed after
/// `since`: what recording its edits may write.
pub(crate) fn changed_since(root: &Path, since: SystemTime, skip: &dyn Fn(&Path) -> bool) -> u64 {
    let mut total = 0;
    let mut pending = vec![(root.to_path_buf(), true)];
    while let Some((dir, top)) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if top && (entry.file_name() == ".jj" || entry.file_name() == ".git") {
                continue;
            }
            let path = entry.path();
            if path.strip_prefix(root).is_ok_and(skip) {
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                pending.push((path, false));
            } else if meta.is_file() {
                let changed = UNIX_EPOCH
                    + Duration::new(meta.ctime().max(0) as u64, meta.ctime_nsec() as u32);
                if changed >= since {
                    total += meta.len();
                }
            }
        }
    }
    total
}

/// `bytes` in binary units with one decimal (`12.5 MiB`), bytes below 1 KiB.
pub(crate) fn human(bytes: u64) -> String {
    bytesize::ByteSize::b(bytes).display().iec().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes() {
        assert_eq!(human(0), "0 B");
        assert_eq!(human(1023), "1023 B");
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(5 * 1024 * 1024), "5.0 MiB");
    }

    #[test]
    fn hard_links_count_once_and_symlinks_are_not_followed() {
        let dir = std::env::temp_dir().join(format!("aw-disk-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("tree")).unwrap();
        fs::write(dir.join("big"), vec![1u8; 1 << 20]).unwrap();
        fs::write(dir.join("tree/file"), vec![1u8; 64 << 10]).unwrap();
        let alone = usage(&dir.join("tree")).allocated;
        fs::hard_link(dir.join("tree/file"), dir.join("tree/link")).unwrap();
        std::os::unix::fs::symlink(dir.join("big"), dir.join("tree/sym")).unwrap();
        let with_links = usage(&dir.join("tree")).allocated;
        let _ = fs::remove_dir_all(&dir);
        assert!(alone >= 64 << 10, "{alone}");
        // The hard link adds nothing; the symlink adds at most a block of its own.
        assert!(with_links - alone <= 4096, "{alone} -> {with_links}");
    }
}
