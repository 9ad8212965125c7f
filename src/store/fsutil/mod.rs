//! File operations on agent-workspace's own directories that never follow a symlink, and
//! atomic writes. Every error names the path it was about.
//!
//! The workspace root is the user's choice and may be reached through symlinks; everything
//! this tool creates below it (namespace directories, `.locks/`, `.cache/`, lease files,
//! records, workspace directories) is opened without following one, so a symlink planted
//! there can neither redirect a write nor a deletion outside the root.
//!
//! Files are opened with `O_NOFOLLOW`; on Linux, where the kernel has `openat2`, an absolute
//! path is opened with `RESOLVE_NO_SYMLINKS`, so no component of it can be a symlink even if
//! one is swapped in after the directories were checked (the root is canonical, so it holds
//! none of its own).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::{long_component, name_too_long_message};

/// A file operation that failed or was refused.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    #[error("{} is a symlink; refusing to follow it", path.display())]
    Symlink { path: PathBuf },
    #[error("{} is not a directory", path.display())]
    NotADirectory { path: PathBuf },
    #[error("{}", name_too_long_message(path, component))]
    NameTooLong { path: PathBuf, component: String },
    #[error("{} is a {kind}, not a regular file; refusing to open it", path.display())]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("{} is larger than {limit} bytes; refusing to read it", path.display())]
    TooLarge { path: PathBuf, limit: u64 },
    #[error("could not {action} {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl FsError {
    /// Classifies an I/O error about `path`: a symlink met where none may be, a name too
    /// long, or a plain failure.
    pub fn io(action: &'static str, path: &Path, source: io::Error) -> FsError {
        match source.raw_os_error() {
            Some(libc::ELOOP) => FsError::Symlink {
                path: first_symlink(path).unwrap_or_else(|| path.into()),
            },
            Some(libc::ENAMETOOLONG) => match long_component(path) {
                Some(component) => FsError::NameTooLong {
                    path: path.into(),
                    component,
                },
                None => FsError::Io {
                    action,
                    path: path.into(),
                    source,
                },
            },
            _ => FsError::Io {
                action,
                path: path.into(),
                source,
            },
        }
    }
}

pub(crate) type Result<T, E = FsError> = std::result::Result<T, E>;

/// The first component of `path` (from the top) that is a symlink.
fn first_symlink(path: &Path) -> Option<PathBuf> {
    let mut at = PathBuf::new();
    for part in path.components() {
        at.push(part);
        if fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return Some(at);
        }
    }
    None
}

/// Opens `path` with `options` plus `O_NOFOLLOW`, and on Linux through `openat2` with
/// `RESOLVE_NO_SYMLINKS` when `path` is absolute and the kernel supports it.
fn open_with(path: &Path, options: &mut OpenOptions, flags: i32) -> io::Result<File> {
    #[cfg(target_os = "linux")]
    if path.is_absolute() {
        if let Some(opened) = openat2_no_symlinks(path, flags) {
            return opened;
        }
    }
    let _ = flags;
    options
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | (flags & libc::O_NONBLOCK))
        .open(path)
}

/// `openat2(path, flags, RESOLVE_NO_SYMLINKS)`; `None` when the kernel (or a sandbox) does
/// not offer it.
#[cfg(target_os = "linux")]
fn openat2_no_symlinks(path: &Path, flags: i32) -> Option<io::Result<File>> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    use rustix::io::Errno;
    let oflags = OFlags::from_bits_retain((flags | libc::O_NOFOLLOW | libc::O_CLOEXEC) as u32);
    let mode = Mode::from_bits_retain(if flags & libc::O_CREAT != 0 { 0o666 } else { 0 });
    let opened = rustix::fs::openat2(
        rustix::fs::CWD,
        path,
        oflags,
        mode,
        ResolveFlags::NO_SYMLINKS,
    );
    match opened {
        Ok(fd) => Some(Ok(File::from(fd))),
        Err(Errno::NOSYS | Errno::PERM | Errno::TOOBIG) => None,
        Err(err) => Some(Err(err.into())),
    }
}

/// Makes `to` a hard link to the file `from`, as `std::fs::hard_link` does (neither path's
/// last symlink followed), by the system call itself: one libc symbol fewer for every
/// process of this binary to resolve as it starts, the guard of each run among them.
pub(crate) fn hard_link(from: &Path, to: &Path) -> io::Result<()> {
    use rustix::fs::{AtFlags, CWD};
    Ok(rustix::fs::linkat(CWD, from, CWD, to, AtFlags::empty())?)
}

/// Checks that `path` is a real directory (not a symlink to one). `Ok(false)` when it does
/// not exist.
pub(crate) fn is_real_dir(path: &Path) -> Result<bool> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(FsError::Symlink { path: path.into() }),
        Ok(meta) if !meta.is_dir() => Err(FsError::NotADirectory { path: path.into() }),
        Ok(_) => Ok(true),
        // A file where a directory above it should be, or a name no directory can have:
        // `path` does not exist either (creating it reports why).
        Err(e)
            if e.kind() == io::ErrorKind::NotFound
                || matches!(e.raw_os_error(), Some(libc::ENOTDIR | libc::ENAMETOOLONG)) =>
        {
            Ok(false)
        }
        Err(e) => Err(FsError::io("inspect", path, e)),
    }
}

/// Creates directory `path` unless it exists (returning whether it made it); refuses when it
/// is a symlink or a file. Its parent must exist.
pub(crate) fn create_dir_nofollow(path: &Path) -> Result<bool> {
    if let Some(name) = long_component(path) {
        return Err(FsError::NameTooLong {
            path: path.into(),
            component: name,
        });
    }
    match fs::create_dir(path) {
        Ok(()) => Ok(true),
        // mkdir never follows a symlink in its last component: EEXIST tells us something is
        // there, and what it is is checked below.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => is_real_dir(path).map(|_| false),
        Err(e) => Err(FsError::io("create", path, e)),
    }
}

/// Opens (creating it if needed) the regular file at `path` for writing without following a
/// symlink in its last component or blocking on a FIFO; its parent is checked to be a real
/// directory.
pub(crate) fn open_nofollow(path: &Path) -> Result<File> {
    if let Some(parent) = path.parent() {
        is_real_dir(parent)?;
    }
    // A FIFO without a reader fails the non-blocking open (ENXIO): say what it is instead.
    if let Ok(meta) = fs::symlink_metadata(path) {
        if let Some(kind) = not_regular(meta.file_type()).filter(|k| *k != "symlink") {
            return Err(FsError::NotRegular {
                path: path.into(),
                kind,
            });
        }
    }
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true);
    let file = open_with(
        path,
        &mut options,
        libc::O_CREAT | libc::O_WRONLY | libc::O_NONBLOCK,
    )
    .map_err(|e| FsError::io("open", path, e))?;
    regular(file, path)
}

/// `file` (opened at `path` without blocking) when it is a regular file: a FIFO or a device
/// planted there is refused rather than read or written.
fn regular(file: File, path: &Path) -> Result<File> {
    let meta = file.metadata().map_err(|e| FsError::io("open", path, e))?;
    match not_regular(meta.file_type()) {
        None => Ok(file),
        Some(kind) => Err(FsError::NotRegular {
            path: path.into(),
            kind,
        }),
    }
}

/// What a file of type `t` is when it is not a regular file.
fn not_regular(t: fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    match () {
        _ if t.is_file() => None,
        _ if t.is_symlink() => Some("symlink"),
        _ if t.is_dir() => Some("directory"),
        _ if t.is_fifo() => Some("FIFO"),
        _ if t.is_socket() => Some("socket"),
        _ => Some("device"),
    }
}

/// Opens an existing regular file at `path` for reading, never following a symlink, never
/// blocking on a FIFO and never creating it.
pub(crate) fn open_existing_nofollow(path: &Path) -> Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    let file = open_with(path, &mut options, libc::O_RDONLY | libc::O_NONBLOCK)
        .map_err(|e| FsError::io("open", path, e))?;
    regular(file, path)
}

/// The most a small file read from a place an agent can write may hold (records, state,
/// `.envrc` and what it loads, configuration).
pub(crate) const UNTRUSTED_LIMIT: u64 = 16 << 20;

/// Whether `err` says the file is not there (as opposed to unreadable or refused).
pub(crate) fn is_missing(err: &FsError) -> bool {
    matches!(err, FsError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
}

/// Reads the file at `path`, which an agent may have replaced: never following a symlink,
/// never blocking on open (a FIFO or a device is refused, not waited on), only a regular
/// file, and at most `limit` bytes.
pub(crate) fn read_untrusted(path: &Path, limit: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    // Looked at before opening, so a device is never opened; checked again on the open
    // descriptor, so a swap in between is caught.
    let before = fs::symlink_metadata(path).map_err(|e| FsError::io("read", path, e))?;
    if before.file_type().is_symlink() {
        return Err(FsError::Symlink { path: path.into() });
    }
    if let Some(kind) = not_regular(before.file_type()) {
        return Err(FsError::NotRegular {
            path: path.into(),
            kind,
        });
    }
    let mut options = OpenOptions::new();
    options.read(true);
    let file = open_with(path, &mut options, libc::O_RDONLY | libc::O_NONBLOCK)
        .map_err(|e| FsError::io("open", path, e))?;
    let file = regular(file, path)?;
    // Sized from the size seen before opening: read in one call rather than in doubling
    // chunks (a thousand records are read per `status`).
    let expected = usize::try_from(before.len().min(limit)).unwrap_or(0);
    let mut bytes = Vec::with_capacity(expected.saturating_add(1));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| FsError::io("read", path, e))?;
    if bytes.len() as u64 > limit {
        return Err(FsError::TooLarge {
            path: path.into(),
            limit,
        });
    }
    Ok(bytes)
}

/// [`read_untrusted`] of a UTF-8 text file.
pub(crate) fn read_untrusted_string(path: &Path, limit: u64) -> Result<String> {
    let bytes = read_untrusted(path, limit)?;
    String::from_utf8(bytes).map_err(|e| {
        FsError::io(
            "read",
            path,
            io::Error::new(io::ErrorKind::InvalidData, e.utf8_error()),
        )
    })
}

/// Writes `bytes` to `path` atomically: a new temp file beside it (created with
/// `O_EXCL|O_NOFOLLOW`, so nothing planted there is written through), then a rename over
/// `path` (which replaces a symlink rather than following it). The parent must be a real
/// directory.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    if !is_real_dir(parent)? {
        return Err(FsError::io(
            "write",
            path,
            io::Error::from(io::ErrorKind::NotFound),
        ));
    }
    let (tmp, mut file) = create_temp(path)?;
    let written = file.write_all(bytes).and_then(|()| replace(&tmp, path));
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(FsError::io("write", path, e));
    }
    Ok(())
}

/// Moves the new file `tmp` to `path`, atomically for every reader. When `path` exists (on
/// Linux), the two are exchanged and `tmp`, now the old file, is removed: a rename over an
/// existing file makes ext4 start writing the new file's data out on the spot
/// (`auto_da_alloc`), which cost a run about a millisecond per replaced file; an exchange does
/// not. Otherwise (nothing at `path`, another OS, a file system without exchange), a rename.
/// Like the rename, neither follows a symlink at `path`. A crash between the exchange and the
/// removal leaves the old file under the temp name (`doctor` reports such leftovers).
pub(crate) fn replace(tmp: &Path, path: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{RenameFlags, CWD};
        let exchange = || -> io::Result<()> {
            Ok(rustix::fs::renameat_with(
                CWD,
                tmp,
                CWD,
                path,
                RenameFlags::EXCHANGE,
            )?)
        };
        let err = match exchange() {
            Ok(()) => match fs::remove_file(tmp) {
                Ok(()) => return Ok(()),
                // What was at `path` is not a file (a directory): put it back and fail as a
                // rename over it would, so nothing of it moves.
                Err(e) => {
                    exchange()?;
                    return Err(e);
                }
            },
            Err(err) => err,
        };
        match err.raw_os_error() {
            Some(libc::ENOENT | libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP) => {}
            _ => return Err(err),
        }
    }
    fs::rename(tmp, path)
}

/// A fresh temp file `<path>.tmp.<pid>.<n>`; a name already taken (by a crashed process of
/// the same pid) is skipped.
fn create_temp(path: &Path) -> Result<(PathBuf, File)> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = path.with_file_name(format!("{name}.tmp.{}.{n}", std::process::id()));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        let opened = open_with(
            &tmp,
            &mut options,
            libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY,
        );
        match opened {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 1000 => continue,
            Err(e) => return Err(FsError::io("create", &tmp, e)),
        }
    }
}

/// Deletes directory `name` inside `parent` and everything in it, only when both are real
/// directories: neither a symlinked parent nor a symlinked entry is followed
/// (`remove_dir_all` itself removes symlinks inside the tree without following them).
pub(crate) fn remove_dir_checked(parent: &Path, name: &str) -> Result<()> {
    let path = parent.join(name);
    if name.is_empty() || name == "." || name == ".." || name.contains('/') {
        return Err(FsError::NotADirectory { path });
    }
    if !is_real_dir(parent)? {
        return Err(FsError::io(
            "remove",
            &path,
            io::Error::from(io::ErrorKind::NotFound),
        ));
    }
    if !is_real_dir(&path)? {
        return Err(FsError::io(
            "remove",
            &path,
            io::Error::from(io::ErrorKind::NotFound),
        ));
    }
    fs::remove_dir_all(&path).map_err(|e| FsError::io("remove", &path, e))
}

/// Removes the file at `path` (a symlink there is removed, never followed); a missing file
/// is not an error.
pub(crate) fn remove_file(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(FsError::io("remove", path, e)),
    }
}

/// What `pick` makes of each name in directory `dir` (UTF-8 names only; `.` and `..` left
/// out), in no particular order; nothing when `dir` cannot be read. The names are read into
/// one buffer, with nothing allocated for a name `pick` passes over: the commands that look
/// for their journals list directories of thousands of entries on every run.
pub(crate) fn names_where<T>(dir: &Path, mut pick: impl FnMut(&str) -> Option<T>) -> Vec<T> {
    use rustix::fs::{Mode, OFlags, RawDir};
    let mut found = vec![];
    let Ok(fd) = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return found;
    };
    let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 16 << 10];
    let mut entries = RawDir::new(fd, &mut buf);
    while let Some(Ok(entry)) = entries.next() {
        let Ok(name) = entry.file_name().to_str() else {
            continue;
        };
        if name != "." && name != ".." {
            found.extend(pick(name));
        }
    }
    found
}

#[cfg(test)]
mod tests;
