//! File locks (flock) on dedicated `.lock` files; every error names its path.
//!
//! A lock file may be deleted by the process holding it (`clean` removes a workspace's lease
//! with the workspace). Whoever was waiting on it then holds a lock on a file no longer at
//! that path, so every acquisition checks that its file is still the one at the path, and
//! starts over if not.
//!
//! Lock files are opened without following symlinks (see [`crate::store::fsutil`]).

use std::fs::{self, File, TryLockError};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::store::fsutil;
use crate::store::fsutil::FsError;

/// A held lock, released when dropped (or when the process dies).
#[derive(Debug)]
pub(crate) struct Lock {
    file: File,
    path: PathBuf,
}

impl Lock {
    /// The descriptor holding the lock, for a process that must hold it too (the guard).
    pub(crate) fn fd(&self) -> std::os::fd::RawFd {
        std::os::fd::AsRawFd::as_raw_fd(&self.file)
    }

    /// Another descriptor of the same open file, sharing the lock: a process handed it holds
    /// the lock for as long as it keeps it, whatever becomes of this one.
    pub(crate) fn share(&self) -> std::io::Result<std::os::fd::OwnedFd> {
        self.file.try_clone().map(std::os::fd::OwnedFd::from)
    }

    /// Deletes the lock file while still holding it, so nobody can take the old file's lock
    /// and believe it guards the path.
    pub(crate) fn remove(self) {
        let _ = fsutil::remove_file(&self.path);
        drop(self.file);
    }
}

/// A lock that could not be opened or taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The lock file could not be opened (or is a symlink).
    #[error(transparent)]
    Open(FsError),
    /// flock(2) failed on it.
    #[error("could not lock {}", path.display())]
    Lock {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

type Result<T> = std::result::Result<T, LockError>;

fn open(path: &Path) -> Result<File> {
    fsutil::open_nofollow(path).map_err(LockError::Open)
}

fn lock_failed(path: &Path, e: std::io::Error) -> LockError {
    LockError::Lock {
        path: path.to_path_buf(),
        source: e,
    }
}

/// Whether the locked `file` is still the file at `path`.
fn still_at(file: &File, path: &Path) -> bool {
    match (file.metadata(), fs::symlink_metadata(path)) {
        (Ok(held), Ok(now)) => held.ino() == now.ino() && held.dev() == now.dev(),
        _ => false,
    }
}

/// Takes the lock, waiting for any holder to release it.
pub(crate) fn exclusive(path: &Path) -> Result<Lock> {
    loop {
        let file = open(path)?;
        file.lock().map_err(|e| lock_failed(path, e))?;
        if still_at(&file, path) {
            return Ok(Lock {
                file,
                path: path.to_path_buf(),
            });
        }
    }
}

/// Takes the lock, waiting at most `timeout` for its holder to release it.
pub(crate) fn wait_exclusive(path: &Path, timeout: std::time::Duration) -> Result<Option<Lock>> {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if let Some(lock) = try_exclusive(path)? {
            return Ok(Some(lock));
        }
        if std::time::Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Whether someone holds the lock at `path` (a missing file is not held). Never creates it.
pub(crate) fn is_held(path: &Path) -> bool {
    let Ok(file) = crate::store::fsutil::open_existing_nofollow(path) else {
        return false;
    };
    matches!(file.try_lock(), Err(TryLockError::WouldBlock))
}

/// Takes the lock if nobody holds it.
pub(crate) fn try_exclusive(path: &Path) -> Result<Option<Lock>> {
    loop {
        let file = open(path)?;
        match file.try_lock() {
            Ok(()) if still_at(&file, path) => {
                return Ok(Some(Lock {
                    file,
                    path: path.to_path_buf(),
                }))
            }
            Ok(()) => continue,
            Err(TryLockError::WouldBlock) => return Ok(None),
            Err(TryLockError::Error(e)) => return Err(lock_failed(path, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_whose_file_was_removed_is_not_taken() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("w.lock");
        let held = exclusive(&path).unwrap();
        assert!(try_exclusive(&path).unwrap().is_none());
        // Someone opened the old file before it was removed: their lock is on a stale file.
        let stale = File::open(&path).unwrap();
        held.remove();
        assert!(!path.exists());
        stale.try_lock().unwrap();
        assert!(!still_at(&stale, &path));
        // A new acquisition makes a new file and gets it, even while the stale one is held.
        let fresh = try_exclusive(&path).unwrap().expect("the new file is free");
        assert!(still_at(&fresh.file, &path));
    }
}
