//! The environment direnv loaded for a workspace, kept for the next run by direnv's own
//! reload rule (`Layout::kept_env`: in the namespace's cache, outside every workspace and hidden
//! from every sandbox).
//!
//! A kept environment stands only while its key (a digest of what direnv was given: the
//! caller's environment, the workspace's path, the direnv binary) is the same and every file
//! the evaluation read is exactly as it was: there or not, and the same device, inode, size,
//! modification and change times (the change time nobody but the kernel sets). A file that
//! changed less than the status cache's settling time before the evaluation began is never
//! kept ([`crate::store::summary::settled`]). Anything unreadable or damaged is no
//! environment: direnv evaluates again.
//!
//! The file is NUL-separated fields: a magic line, the key, the number of files, each file's
//! stamp (seven numbers joined by commas, or `-` for a missing file) and path, then the
//! environment's `NAME=value` entries; it ends with the sha256 of everything before it. It
//! lives in a directory only its owner can enter: an `.envrc` may export secrets.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::store::fsutil;
use crate::store::summary::{settled, Stamp};

/// The first field of every kept environment; the version is in it.
const MAGIC: &[u8] = b"agent-workspace direnv environment v1";

/// A file as it is now: its stamp, or `None` when it is not there. `Err` when it cannot be
/// told (a permission error): such a file is never trusted to be unchanged.
pub(crate) fn stamp(path: &Path) -> Result<Option<Stamp>, ()> {
    match fs::metadata(path) {
        Ok(m) => Ok(Some([
            m.dev() as i64,
            m.ino() as i64,
            m.size() as i64,
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
        ])),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(_) => Err(()),
    }
}

/// The environment kept at `file` when its key is `key` and every file it was read from is
/// as it was; `None` otherwise (missing, damaged, stale).
pub(crate) fn load(file: &Path, key: &str) -> Option<Vec<(OsString, OsString)>> {
    let bytes = fsutil::read_untrusted(file, fsutil::UNTRUSTED_LIMIT).ok()?;
    let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(64)?)?;
    if format!("{:x}", Sha256::digest(body)).as_bytes() != sum {
        return None;
    }
    let mut fields = body.split(|b| *b == 0);
    if fields.next()? != MAGIC || fields.next()? != key.as_bytes() {
        return None;
    }
    let count: usize = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
    for _ in 0..count {
        let kept = parse_stamp(fields.next()?)?;
        let path = Path::new(OsStr::from_bytes(fields.next()?));
        if stamp(path).ok()? != kept {
            return None;
        }
    }
    let mut env = vec![];
    for entry in fields {
        if entry.is_empty() {
            continue;
        }
        let at = entry.iter().position(|b| *b == b'=')?;
        let (name, value) = (&entry[..at], &entry[at + 1..]);
        env.push((
            OsString::from_vec(name.to_vec()),
            OsString::from_vec(value.to_vec()),
        ));
    }
    Some(env)
}

/// A file an evaluation read, and what is known of it from then: a file not like that now
/// changed since (a deletion, or a rename of an older file over it, leaves no time behind).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Read {
    pub path: PathBuf,
    /// Whether it was there when the evaluation read it (as direnv reports it).
    pub existed: Option<bool>,
    /// Its modification time in seconds when the evaluation read it (as direnv reports it).
    pub modtime: Option<i64>,
    /// Its stamp taken before the evaluation began.
    pub before: Option<Option<Stamp>>,
}

#[cfg(test)]
impl Read {
    /// A file known only by its path.
    pub(crate) fn path(path: PathBuf) -> Read {
        Read {
            path,
            existed: None,
            modtime: None,
            before: None,
        }
    }
}

/// Keeps `env`, evaluated from `key` by an evaluation that began at `began` and read
/// `files`, at `file`: only when every file is settled, can be stamped and is as it was
/// when read; atomically. Whether it was kept; a file that cannot be written is simply not
/// kept.
pub(crate) fn keep(
    file: &Path,
    key: &str,
    began: SystemTime,
    files: &[Read],
    env: &[(OsString, OsString)],
) -> bool {
    let mut body = vec![];
    let mut field = |bytes: &[u8]| {
        body.extend_from_slice(bytes);
        body.push(0);
    };
    field(MAGIC);
    field(key.as_bytes());
    field(files.len().to_string().as_bytes());
    for read in files {
        let Ok(now) = stamp(&read.path) else {
            return false;
        };
        let gone_or_came = read.existed.is_some_and(|e| e != now.is_some());
        let touched = match (read.modtime, now) {
            (Some(then), Some(now)) => then != now[3],
            _ => false,
        };
        if gone_or_came || touched || read.before.is_some_and(|b| b != now) {
            return false;
        }
        let path = &read.path;
        match now {
            Some(s) if !settled(&s, began) => return false,
            Some(s) => field(s.map(|n| n.to_string()).join(",").as_bytes()),
            None => field(b"-"),
        }
        field(path.as_os_str().as_bytes());
    }
    for (name, value) in env {
        let (name, value) = (name.as_bytes(), value.as_bytes());
        if name.is_empty() || name.contains(&b'=') || name.contains(&0) || value.contains(&0) {
            return false;
        }
        field(&[name, b"=", value].concat());
    }
    let sum = format!("{:x}", Sha256::digest(&body));
    body.extend_from_slice(sum.as_bytes());
    let Some(dir) = file.parent() else {
        return false;
    };
    let cache = dir.parent().unwrap_or(dir);
    fsutil::create_dir_nofollow(cache).is_ok()
        && private_dir(dir)
        && fsutil::write_atomic(file, &body).is_ok()
}

/// Makes `dir` a directory only its owner can enter (an `.envrc` may export secrets, and the
/// namespace's cache is readable by others), tightening one that exists; false when it is
/// not a real directory.
fn private_dir(dir: &Path) -> bool {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            match fs::symlink_metadata(dir) {
                Ok(m) if m.is_dir() && m.permissions().mode() & 0o077 == 0 => true,
                Ok(m) if m.is_dir() => {
                    fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).is_ok()
                }
                _ => false,
            }
        }
        Err(_) => false,
    }
}

/// Forgets what is kept at `file` (a run that evaluated but could not keep its result).
pub(crate) fn forget(file: &Path) {
    let _ = fs::remove_file(file);
}

fn parse_stamp(field: &[u8]) -> Option<Option<Stamp>> {
    if field == b"-" {
        return Some(None);
    }
    let text = std::str::from_utf8(field).ok()?;
    let numbers: Vec<i64> = text
        .split(',')
        .map(|n| n.parse().ok())
        .collect::<Option<_>>()?;
    Some(Some(numbers.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn env() -> Vec<(OsString, OsString)> {
        vec![
            ("A".into(), "1".into()),
            ("B".into(), "x=y\nz".into()),
            ("EMPTY".into(), "".into()),
        ]
    }

    #[test]
    fn a_kept_environment_reads_back_while_its_files_are_unchanged() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let watched = dir.path().join("watched");
        fs::write(&watched, "one").expect("write");
        let missing = dir.path().join("missing");
        let file = dir.path().join("cache").join("env").join("kept");
        let later = SystemTime::now() + Duration::from_secs(5);
        let files = [Read::path(watched.clone()), Read::path(missing.clone())];
        assert!(keep(&file, "k1", later, &files, &env()));
        assert_eq!(load(&file, "k1"), Some(env()));
        let mode = fs::metadata(file.parent().unwrap()).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o700
        );
        assert_eq!(load(&file, "k2"), None, "another key");
        fs::write(&missing, "").expect("write");
        assert_eq!(load(&file, "k1"), None, "a missing file appeared");
        fs::remove_file(&missing).expect("remove");
        assert_eq!(load(&file, "k1"), Some(env()));
        fs::write(&watched, "two").expect("write");
        assert_eq!(load(&file, "k1"), None, "a file changed");
    }

    #[test]
    fn a_file_changed_just_before_the_evaluation_is_never_kept() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let watched = dir.path().join("watched");
        fs::write(&watched, "one").expect("write");
        let file = dir.path().join("env").join("kept");
        assert!(!keep(
            &file,
            "k",
            SystemTime::now(),
            &[Read::path(watched)],
            &env()
        ));
        assert!(!file.exists());
    }

    #[test]
    fn a_file_gone_or_changed_since_it_was_read_is_never_kept() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let file = dir.path().join("env").join("kept");
        let later = SystemTime::now() + Duration::from_secs(5);
        let there = dir.path().join("there");
        fs::write(&there, "x").expect("write");
        let gone = Read {
            path: dir.path().join("gone"),
            existed: Some(true),
            modtime: None,
            before: None,
        };
        assert!(!keep(&file, "k", later, &[gone], &env()));
        let came = Read {
            path: there.clone(),
            existed: Some(false),
            modtime: None,
            before: None,
        };
        assert!(!keep(&file, "k", later, &[came], &env()));
        let changed = Read {
            path: there.clone(),
            existed: None,
            modtime: None,
            before: Some(None),
        };
        assert!(!keep(&file, "k", later, &[changed], &env()));
        let now = stamp(&there).expect("stamped").expect("there");
        let touched = Read {
            path: there.clone(),
            existed: Some(true),
            modtime: Some(now[3] - 10),
            before: None,
        };
        assert!(!keep(&file, "k", later, &[touched], &env()));
        let same = Read {
            path: there.clone(),
            existed: Some(true),
            modtime: Some(now[3]),
            before: Some(Some(now)),
        };
        assert!(keep(&file, "k", later, &[same], &env()));
    }

    #[test]
    fn a_damaged_file_is_no_environment() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let file = dir.path().join("env").join("kept");
        let later = SystemTime::now() + Duration::from_secs(5);
        assert!(keep(&file, "k", later, &[], &env()));
        let mut bytes = fs::read(&file).expect("read");
        let at = bytes.iter().position(|b| *b == b'1').expect("a value");
        bytes[at] = b'2';
        fs::write(&file, &bytes).expect("write");
        assert_eq!(load(&file, "k"), None);
        fs::write(&file, b"garbage").expect("write");
        assert_eq!(load(&file, "k"), None);
        fs::write(&file, b"").expect("write");
        assert_eq!(load(&file, "k"), None);
    }
}
