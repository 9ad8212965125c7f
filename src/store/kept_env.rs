//! The environment direnv loaded for a workspace, kept for the next run by direnv's own
//! reload rule (`Layout::kept_env`: in the namespace's cache, outside every workspace and hidden
//! from every sandbox).
//!
//! A kept environment stands only while its key (a digest of what direnv was given: the
//! caller's environment, the workspace's path, the direnv binary) is the same and every file
//! the evaluation read is exactly as it was: there or not, and the same device, inode, size,
//! modification and change times (the change time nobody but the kernel sets). A file that
//! changed less than the status cache's settling time before the evaluation began is never
//! kept ([`Stamp::settled`]). Anything unreadable or damaged is no
//! environment: direnv evaluates again.
//!
//! The file is a [`Cache`] (name `direnv-env`) under the key, its body as JSON: each file
//! read with its stamp (`null` for a missing file), then the environment's names and values
//! (text, or an array of bytes where they are not UTF-8). Anything else there is a miss:
//! direnv evaluates again. It lives in a directory only its owner can enter: an `.envrc` may
//! export secrets.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::store::cache::Cache;
use crate::store::fsutil;
use crate::store::stamp::Stamp;

/// The version of the file's body.
const VERSION: u32 = 2;

/// A file as it is now: its stamp, or `None` when it is not there. `Err` when it cannot be
/// told (a permission error): such a file is never trusted to be unchanged.
pub(crate) fn stamp(path: &Path) -> Result<Option<Stamp>, ()> {
    Stamp::of_path(path)
}

/// What the file keeps.
#[derive(Serialize, Deserialize)]
struct Kept {
    /// Each file the evaluation read: its stamp then, and its path.
    files: Vec<(Option<Stamp>, Bytes)>,
    /// The environment: each name and its value.
    env: Vec<(Bytes, Bytes)>,
}

/// Bytes of a path or a variable, kept as text when they are UTF-8.
struct Bytes(Vec<u8>);

impl Serialize for Bytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(&self.0) {
            Ok(text) => s.serialize_str(text),
            Err(_) => s.collect_seq(&self.0),
        }
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Bytes, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Bytes;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("text or an array of bytes")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Bytes, E> {
                Ok(Bytes(text.as_bytes().to_vec()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Bytes, A::Error> {
                let mut bytes = vec![];
                while let Some(b) = seq.next_element::<u8>()? {
                    bytes.push(b);
                }
                Ok(Bytes(bytes))
            }
        }
        d.deserialize_any(Visit)
    }
}

fn kept_file(file: &Path) -> Cache {
    Cache::new(file.to_path_buf(), "direnv-env", VERSION)
}

/// The environment kept at `file` when its key is `key` and every file it was read from is
/// as it was; `None` otherwise (missing, damaged, stale).
pub(crate) fn load(file: &Path, key: &str) -> Option<Vec<(OsString, OsString)>> {
    let kept: Kept = kept_file(file).get_json(key.as_bytes())?;
    for (then, path) in &kept.files {
        if stamp(Path::new(OsStr::from_bytes(&path.0))).ok()? != *then {
            return None;
        }
    }
    let env = kept
        .env
        .into_iter()
        .map(|(name, value)| (OsString::from_vec(name.0), OsString::from_vec(value.0)));
    Some(env.collect())
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
    let mut kept = Kept {
        files: Vec::with_capacity(files.len()),
        env: Vec::with_capacity(env.len()),
    };
    for read in files {
        let Ok(now) = stamp(&read.path) else {
            return false;
        };
        let gone_or_came = read.existed.is_some_and(|e| e != now.is_some());
        let touched = match (read.modtime, now) {
            (Some(then), Some(now)) => then != now.modified_secs(),
            _ => false,
        };
        if gone_or_came || touched || read.before.is_some_and(|b| b != now) {
            return false;
        }
        if now.is_some_and(|s| !s.settled(began)) {
            return false;
        }
        let path = read.path.as_os_str().as_bytes().to_vec();
        kept.files.push((now, Bytes(path)));
    }
    for (name, value) in env {
        let (name, value) = (name.as_bytes(), value.as_bytes());
        if name.is_empty() || name.contains(&b'=') || name.contains(&0) || value.contains(&0) {
            return false;
        }
        kept.env.push((Bytes(name.to_vec()), Bytes(value.to_vec())));
    }
    let Some(dir) = file.parent() else {
        return false;
    };
    let cache = dir.parent().unwrap_or(dir);
    fsutil::create_dir_nofollow(cache).is_ok()
        && private_dir(dir)
        && kept_file(file).put_json(key.as_bytes(), &kept).is_ok()
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
            modtime: Some(now.modified_secs() - 10),
            before: None,
        };
        assert!(!keep(&file, "k", later, &[touched], &env()));
        let same = Read {
            path: there.clone(),
            existed: Some(true),
            modtime: Some(now.modified_secs()),
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
        // The earlier version's file (NUL-separated fields, a checksum last): a miss.
        let earlier = b"agent-workspace direnv environment v1\0k\x000\0A=1\0";
        fs::write(&file, earlier).expect("write");
        assert_eq!(load(&file, "k"), None);
    }

    #[test]
    fn names_and_values_that_are_not_utf8_read_back_as_they_were() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let file = dir.path().join("env").join("kept");
        let later = SystemTime::now() + Duration::from_secs(5);
        let odd = vec![
            (
                OsString::from_vec(b"A\xff".to_vec()),
                OsString::from_vec(b"\xfe\x01".to_vec()),
            ),
            ("B".into(), "plain".into()),
        ];
        let watched = dir.path().join("w\u{e9}");
        fs::write(&watched, "x").expect("write");
        let files = [
            Read::path(watched),
            Read::path(PathBuf::from(OsString::from_vec(b"/no\xff".to_vec()))),
        ];
        assert!(keep(&file, "k", later, &files, &odd));
        assert_eq!(load(&file, "k"), Some(odd));
    }
}
