//! Copying a working copy's files without following symlinks, used to carry a stale working
//! copy's edits across `jj workspace update-stale`.

use std::fs;
use std::io;
use std::path::Path;

/// Top-level entries that belong to the tool or the backend, not to the user's files.
fn skipped(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy();
    name == ".jj"
        || name == ".git"
        || name == ".direnv"
        || name.starts_with(crate::metadata::FILE_NAME)
}

/// Copies the user's files of `from` into the new directory `to`.
pub fn copy(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        if !skipped(&entry.file_name()) {
            copy_entry(&entry.path(), &to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

/// Copies one file, symlink (as a symlink) or directory tree from `from` to the new `to`.
pub fn copy_entry(from: &Path, to: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(from)?;
    if meta.file_type().is_symlink() {
        std::os::unix::fs::symlink(fs::read_link(from)?, to)
    } else if meta.is_dir() {
        fs::create_dir(to)?;
        for entry in fs::read_dir(from)? {
            let entry = entry?;
            copy_entry(&entry.path(), &to.join(entry.file_name()))?;
        }
        fs::set_permissions(to, meta.permissions())
    } else {
        fs::copy(from, to).map(|_| ())
    }
}

/// Removes a file, symlink or whole directory at `path`, never following a symlink.
pub fn remove(path: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(path)?;
    if meta.is_dir() && !meta.file_type().is_symlink() {
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_keeps_symlinks_and_skips_the_backend_s_files() {
        let tmp = tempfile::tempdir().unwrap();
        let (ws, backup) = (tmp.path().join("ws"), tmp.path().join("backup"));
        fs::create_dir_all(ws.join("dir")).unwrap();
        fs::create_dir_all(ws.join(".jj")).unwrap();
        fs::write(ws.join("dir/a"), "edited").unwrap();
        fs::write(ws.join(".jj/keep"), "jj").unwrap();
        std::os::unix::fs::symlink("dir/a", ws.join("link")).unwrap();
        copy(&ws, &backup).unwrap();
        assert!(!backup.join(".jj").exists());
        assert_eq!(fs::read_to_string(backup.join("dir/a")).unwrap(), "edited");
        assert_eq!(
            fs::read_link(backup.join("link")).unwrap(),
            Path::new("dir/a")
        );
    }
}
