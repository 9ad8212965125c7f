//! The directory that carries a stale jj working copy's files across
//! `jj workspace update-stale`, made so that a repair interrupted at any point (even by
//! SIGKILL) can be resumed: `<scratch>/files/` holds the copy, and `<scratch>/complete` is
//! written (atomically) only once the copy is whole. Without that marker the workspace was not
//! touched yet and the directory is a partial copy to throw away; with it, the copy is the
//! truth to put back.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

const MARKER: &str = "complete";

/// Where the copied files are.
pub fn files(scratch: &Path) -> PathBuf {
    scratch.join("files")
}

/// Whether `scratch` holds a whole copy still to be put back.
pub fn is_complete(scratch: &Path) -> bool {
    fs::symlink_metadata(scratch.join(MARKER)).is_ok_and(|m| m.is_file())
}

/// Whether anything (a partial or whole copy) is at `scratch`.
pub fn exists(scratch: &Path) -> bool {
    fs::symlink_metadata(scratch).is_ok()
}

/// Marks the copy whole: written to a temporary file, synced, then renamed into place.
pub fn mark_complete(scratch: &Path) -> io::Result<()> {
    let tmp = scratch.join(format!("{MARKER}.tmp"));
    let mut file = fs::File::create(&tmp)?;
    file.write_all(b"copied\n")?;
    file.sync_all()?;
    fs::rename(&tmp, scratch.join(MARKER))?;
    fs::File::open(scratch)?.sync_all()
}

/// Removes the directory: the marker first, so that an interruption leaves a partial copy
/// (never a "whole" one missing files) behind.
pub fn discard(scratch: &Path) -> io::Result<()> {
    match fs::remove_file(scratch.join(MARKER)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    match fs::symlink_metadata(scratch) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(scratch),
        Ok(_) => fs::remove_file(scratch),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}
