//! Copying files of the main workspace into a new workspace: copy-on-write clones
//! (`ioctl(FICLONE)`) where the file system supports them, else a plain copy; never a hard
//! link, never a symlink followed, never an existing file overwritten.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What a copy did, kept in the record (`copied`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct Copied {
    /// Regular files created.
    #[serde(rename = "files_count", alias = "files")]
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Files cloned copy-on-write (sharing blocks until either side writes).
    #[serde(rename = "reflinked_count", alias = "reflinked")]
    pub reflinked: u64,
    /// Files copied byte by byte (the file system cannot clone).
    #[serde(rename = "copied_count", alias = "copied")]
    pub copied: u64,
    /// Symlinks created (their targets stay inside the main workspace).
    #[serde(rename = "symlinks_count", alias = "symlinks")]
    pub symlinks: u64,
    /// Entries left alone because the new workspace already has them (checked out files).
    #[serde(rename = "existing_count", alias = "existing")]
    pub existing: u64,
    /// Symlinks not copied because they point outside the main workspace (or are absolute).
    #[serde(rename = "outside_symlinks_count", alias = "outside_symlinks")]
    pub outside_symlinks: u64,
}

/// A copy that failed, naming the path.
#[derive(Debug, thiserror::Error)]
#[error("could not {action} {}: {source}", path.display())]
pub(crate) struct CopyError {
    pub action: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

/// Copies `main/rel` to `dest/rel`. The directories above `dest/rel` are created when missing;
/// where one of them is a symlink or a file the entry is skipped (counted as existing).
pub(crate) fn copy_into(
    main: &Path,
    dest: &Path,
    rel: &Path,
    copied: &mut Copied,
) -> Result<(), CopyError> {
    let mut at = dest.to_path_buf();
    for part in rel.parent().into_iter().flat_map(Path::components) {
        at.push(part);
        match crate::store::fsutil::create_dir_nofollow(&at) {
            Ok(_) => {}
            Err(
                crate::store::fsutil::FsError::Symlink { .. }
                | crate::store::fsutil::FsError::NotADirectory { .. },
            ) => {
                copied.existing += 1;
                return Ok(());
            }
            Err(e) => return Err(err("create", &at)(io::Error::other(e.to_string()))),
        }
    }
    entry(main, rel, &dest.join(rel), copied)
}

fn err<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> CopyError + 'a {
    move |source| CopyError {
        action,
        path: path.to_path_buf(),
        source,
    }
}

fn entry(main: &Path, rel: &Path, to: &Path, copied: &mut Copied) -> Result<(), CopyError> {
    let from = main.join(rel);
    let meta = fs::symlink_metadata(&from).map_err(err("inspect", &from))?;
    let existing = match fs::symlink_metadata(to) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(err("inspect", to)(e)),
    };
    let kind = meta.file_type();
    if kind.is_dir() {
        return dir(main, rel, to, &meta, existing, copied);
    }
    if existing.is_some() {
        copied.existing += 1;
        return Ok(());
    }
    if kind.is_symlink() {
        let target = fs::read_link(&from).map_err(err("read", &from))?;
        if !stays_inside(rel, &target) {
            copied.outside_symlinks += 1;
            return Ok(());
        }
        std::os::unix::fs::symlink(&target, to).map_err(err("create", to))?;
        copied.symlinks += 1;
    } else if kind.is_file() {
        file(&from, to, meta.permissions().mode(), copied)?;
    }
    // Sockets, fifos and devices are not copied.
    Ok(())
}

/// Copies the directory `main/rel` to `to`, merging into a real directory already there.
fn dir(
    main: &Path,
    rel: &Path,
    to: &Path,
    meta: &fs::Metadata,
    existing: Option<fs::Metadata>,
    copied: &mut Copied,
) -> Result<(), CopyError> {
    let from = main.join(rel);
    let created = match existing {
        // Merge into a checked-out directory, leaving it and its files as they are.
        Some(m) if m.is_dir() && !m.file_type().is_symlink() => false,
        Some(_) => {
            copied.existing += 1;
            return Ok(());
        }
        None => {
            fs::create_dir(to).map_err(err("create", to))?;
            true
        }
    };
    let mut names: Vec<_> = fs::read_dir(&from)
        .map_err(err("read", &from))?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<io::Result<_>>()
        .map_err(err("read", &from))?;
    names.sort();
    for name in names {
        entry(main, &rel.join(&name), &to.join(&name), copied)?;
    }
    if !created {
        return Ok(());
    }
    let mode = fs::Permissions::from_mode(meta.permissions().mode());
    fs::set_permissions(to, mode).map_err(err("set permissions of", to))
}

/// Whether a symlink at `rel` (relative to the main workspace) with `target` points inside the
/// main workspace, judged by its text alone (absolute targets never qualify: in the new
/// workspace they would still point into the main one).
fn stays_inside(rel: &Path, target: &Path) -> bool {
    let mut depth: Vec<&std::ffi::OsStr> = rel
        .parent()
        .into_iter()
        .flat_map(Path::components)
        .map(Component::as_os_str)
        .collect();
    for part in target.components() {
        match part {
            Component::Normal(name) => depth.push(name),
            Component::CurDir => {}
            Component::ParentDir => {
                if depth.pop().is_none() {
                    return false;
                }
            }
            Component::RootDir | Component::Prefix(_) => return false,
        }
    }
    true
}

fn file(from: &Path, to: &Path, mode: u32, copied: &mut Copied) -> Result<(), CopyError> {
    let mut src = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(from)
        .map_err(err("open", from))?;
    // O_EXCL (create_new) never opens an existing file or follows a symlink.
    let mut dst = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode & 0o7777)
        .custom_flags(libc::O_NOFOLLOW)
        .open(to)
        .map_err(err("create", to))?;
    let meta = src.metadata().map_err(err("inspect", from))?;
    let bytes = meta.len();
    if clone(&src, &dst) {
        copied.reflinked += 1;
    } else {
        io::copy(&mut src, &mut dst).map_err(err("copy into", to))?;
        copied.copied += 1;
    }
    // Build tools compare times (cargo: a unit against its dependencies' outputs): the
    // copies keep the originals' so a copied cache stays as fresh as it was.
    let mut times = fs::FileTimes::new();
    if let Ok(t) = meta.modified() {
        times = times.set_modified(t);
    }
    if let Ok(t) = meta.accessed() {
        times = times.set_accessed(t);
    }
    dst.set_times(times).map_err(err("set the times of", to))?;
    copied.files += 1;
    copied.bytes += bytes;
    Ok(())
}

/// Clones `src`'s blocks into the empty `dst` (copy-on-write); false where unsupported.
#[cfg(target_os = "linux")]
fn clone(src: &File, dst: &File) -> bool {
    rustix::fs::ioctl_ficlone(dst, src).is_ok()
}

#[cfg(not(target_os = "linux"))]
fn clone(_src: &File, _dst: &File) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn symlinks_inside_are_judged_by_text() {
        assert!(stays_inside(Path::new("target/a"), Path::new("b")));
        assert!(stays_inside(Path::new("target/a"), Path::new("../x")));
        assert!(!stays_inside(Path::new("target/a"), Path::new("../../x")));
        assert!(!stays_inside(Path::new("a"), Path::new("/etc/passwd")));
    }

    #[test]
    fn copies_are_separate_files_and_existing_ones_stay() {
        let tmp = tempfile::tempdir().unwrap();
        let (main, dest) = (tmp.path().join("main"), tmp.path().join("dest"));
        fs::create_dir_all(main.join("target/debug")).unwrap();
        fs::create_dir_all(dest.join("target")).unwrap();
        fs::write(main.join("target/debug/bin"), "built").unwrap();
        fs::write(main.join("target/kept"), "main").unwrap();
        fs::write(dest.join("target/kept"), "tracked").unwrap();
        std::os::unix::fs::symlink("/etc", main.join("target/out")).unwrap();
        std::os::unix::fs::symlink("debug/bin", main.join("target/in")).unwrap();
        fs::set_permissions(dest.join("target"), fs::Permissions::from_mode(0o700)).unwrap();
        let mut copied = Copied::default();
        copy_into(&main, &dest, Path::new("target"), &mut copied).unwrap();
        let mode = fs::metadata(dest.join("target"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(
            mode & 0o777,
            0o700,
            "a checked-out directory's mode changed"
        );
        assert_eq!(
            fs::read_to_string(dest.join("target/debug/bin")).unwrap(),
            "built"
        );
        assert_eq!(
            fs::read_to_string(dest.join("target/kept")).unwrap(),
            "tracked"
        );
        let (a, b) = (
            fs::metadata(main.join("target/debug/bin")).unwrap(),
            fs::metadata(dest.join("target/debug/bin")).unwrap(),
        );
        assert_ne!(a.ino(), b.ino());
        assert_eq!(a.modified().unwrap(), b.modified().unwrap());
        assert!(fs::symlink_metadata(dest.join("target/out")).is_err());
        assert_eq!(
            fs::read_link(dest.join("target/in")).unwrap(),
            Path::new("debug/bin")
        );
        assert_eq!(
            (
                copied.files,
                copied.existing,
                copied.outside_symlinks,
                copied.symlinks
            ),
            (1, 1, 1, 1)
        );
    }
}
