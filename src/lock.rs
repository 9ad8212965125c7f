//! File locks (flock) on dedicated `.lock` files; every error names its path.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;

use crate::error::{CliError, Result};

/// A held lock, released when dropped (or when the process dies).
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

fn open(path: &Path) -> Result<File> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| CliError::io("open the lock file", path, &e))
}

/// Takes the lock, waiting for any holder to release it.
pub fn exclusive(path: &Path) -> Result<Lock> {
    let file = open(path)?;
    file.lock().map_err(|e| CliError::io("lock", path, &e))?;
    Ok(Lock { _file: file })
}

/// Takes the lock if nobody holds it.
pub fn try_exclusive(path: &Path) -> Result<Option<Lock>> {
    let file = open(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(Lock { _file: file })),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(CliError::io("lock", path, &e)),
    }
}
