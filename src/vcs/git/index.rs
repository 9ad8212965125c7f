//! Copies of a worktree's index, for building a tree without writing the real one.
//!
//! git trusts an index entry whose stat data (size, mtime, inode, ctime) matches the file,
//! except a "racily clean" one: an entry whose mtime is not older than the index file's own
//! mtime, whose contents git compares instead. That is how git sees a same-size rewrite made
//! in the second the index was written. A copy with a newer mtime turns such an entry into a
//! trusted one, and the rewrite goes unseen through it: a copy keeps the index's mtime.

use std::fs;
use std::io::{ErrorKind, Read};
use std::path::Path;

use crate::vcs::{Result, VcsError};

/// Copies the index at `real` to `to` (replaced atomically) with the mtime `real` has, so
/// git holds the same entries racily clean in both. False when there is no index at `real`
/// (nothing is written).
pub(super) fn copy_index(real: &Path, to: &Path) -> Result<bool> {
    let read_error = |source| VcsError::Io {
        action: "read",
        path: real.to_path_buf(),
        source,
    };
    // The worktree's git directory is writable by whatever runs in the workspace: a FIFO
    // there is refused rather than waited on.
    let opened = {
        use std::os::unix::fs::OpenOptionsExt;
        fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(real)
    };
    let mut file = match opened {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(read_error(e)),
    };
    if !file.metadata().map_err(read_error)?.is_file() {
        return Err(read_error(std::io::Error::new(
            ErrorKind::InvalidInput,
            "not a regular file",
        )));
    }
    // git replaces an index by renaming a new file over it: the bytes and the mtime come
    // from the one open file, never from two different indexes.
    let mut bytes = vec![];
    file.read_to_end(&mut bytes).map_err(read_error)?;
    let mtime = file
        .metadata()
        .and_then(|m| m.modified())
        .map_err(read_error)?;
    crate::store::fsutil::write_atomic(to, &bytes)?;
    crate::store::fsutil::open_existing_nofollow(to)?
        .set_modified(mtime)
        .map_err(|source| VcsError::Io {
            action: "set the mtime of",
            path: to.to_path_buf(),
            source,
        })?;
    Ok(true)
}
