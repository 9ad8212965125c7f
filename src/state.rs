//! The state agent-workspace keeps about each workspace outside every workspace, in
//! `<namespace>/.state/<id>.json`: the authority for trust digests, branch, backend and the
//! supervisor's identity. The in-workspace record is a view of it, sealed by its digest so a
//! changed view is detected.

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::fsutil::FsError;

type Result<T> = std::result::Result<T, FsError>;

/// The state directory's name inside a namespace (a dot-name: never a workspace).
pub const DIR_NAME: &str = ".state";

/// The state file's content: the record and the digests of the views written from it.
#[derive(Debug, Serialize, Deserialize)]
pub struct Sealed {
    pub state_version: u64,
    /// The digest of the view written with this state.
    pub view_sha256: Option<String>,
    /// The digest of the view before it (a reader may see the new state and the old view).
    #[serde(default)]
    pub previous_view_sha256: Option<String>,
    pub record: Value,
}

/// The state file of the workspace at `workspace` (`<namespace>/<id>`).
pub fn path(workspace: &Path) -> PathBuf {
    let id = workspace.file_name().unwrap_or_default().to_string_lossy();
    let namespace = workspace.parent().unwrap_or(Path::new("/"));
    namespace.join(DIR_NAME).join(format!("{id}.json"))
}

pub fn digest(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// What reading a state file found.
pub enum Found {
    Missing,
    Ok(Sealed),
    Corrupt(String),
}

/// Reads the state of `workspace`, never following a symlink.
pub fn read(workspace: &Path) -> Found {
    let file = path(workspace);
    let dir = file.parent().unwrap_or(Path::new("/"));
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() || !meta.is_dir() => {
            return Found::Corrupt(format!("{} is a symlink", dir.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Found::Missing,
        _ => {}
    }
    let mut text = Vec::with_capacity(4096);
    let read = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&file)
        .and_then(|mut f| f.read_to_end(&mut text));
    match read {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Found::Missing,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Found::Corrupt(format!("{} is a symlink", file.display()))
        }
        Err(e) => return Found::Corrupt(format!("cannot read {}: {e}", file.display())),
    }
    match serde_json::from_slice::<Sealed>(&text) {
        Ok(sealed) => Found::Ok(sealed),
        Err(e) => Found::Corrupt(format!("{e} in {}", file.display())),
    }
}

/// The digest of the view file as it is now, or `None` when it cannot be read.
pub fn view_digest(view: &Path) -> Option<String> {
    let mut text = Vec::with_capacity(4096);
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(view)
        .and_then(|mut f| f.read_to_end(&mut text))
        .ok()?;
    Some(digest(&text))
}

/// Writes the state of `workspace` atomically (a temp file, then a rename), refusing a
/// symlinked state directory or file.
pub fn write(workspace: &Path, record: Value, view_sha256: String) -> Result<()> {
    let file = path(workspace);
    let dir = file.parent().unwrap_or(Path::new("/")).to_path_buf();
    ensure_dir(&dir)?;
    let previous = match read(workspace) {
        Found::Ok(old) => old.view_sha256,
        Found::Corrupt(why) if why.ends_with("is a symlink") => return Err(symlink(&file)),
        _ => None,
    };
    let sealed = Sealed {
        state_version: 1,
        view_sha256: Some(view_sha256),
        previous_view_sha256: previous,
        record,
    };
    let mut text = serde_json::to_vec_pretty(&sealed)
        .map_err(|e| FsError::io("encode", &file, std::io::Error::other(e)))?;
    text.push(b'\n');
    let tmp = dir.join(format!(
        ".{}.tmp.{}",
        file.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)
        .and_then(|mut f| f.write_all(&text));
    if let Err(e) = written.and_then(|()| fs::rename(&tmp, &file)) {
        let _ = fs::remove_file(&tmp);
        return Err(FsError::io("write", &file, e));
    }
    Ok(())
}

/// Checks that the state directory of `workspace` is a real directory (or missing), so the
/// state can be removed with the workspace; call before removing anything.
pub fn check(workspace: &Path) -> Result<()> {
    let file = path(workspace);
    let dir = file.parent().unwrap_or(Path::new("/"));
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() || !meta.is_dir() => Err(symlink(dir)),
        _ => Ok(()),
    }
}

/// Removes the state of a removed workspace (nothing when it has none).
pub fn remove(workspace: &Path) -> Result<()> {
    check(workspace)?;
    let file = path(workspace);
    match fs::remove_file(&file) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(FsError::io("remove", &file, e)),
        _ => Ok(()),
    }
}

/// Moves an unreadable state file aside, returning where it went (`None` when there is none);
/// refuses a symlink.
pub fn keep_aside(workspace: &Path, stamp: u64) -> Result<Option<PathBuf>> {
    let from = path(workspace);
    let dir = from.parent().unwrap_or(Path::new("/"));
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() || !meta.is_dir() => return Err(symlink(dir)),
        Err(_) => return Ok(None),
        Ok(_) => {}
    }
    let Ok(meta) = fs::symlink_metadata(&from) else {
        return Ok(None);
    };
    if meta.file_type().is_symlink() || !meta.is_file() {
        return Err(symlink(&from));
    }
    let to = from.with_extension(format!("json.corrupt.{stamp}"));
    fs::rename(&from, &to).map_err(|e| FsError::io("move aside", &from, e))?;
    Ok(Some(to))
}

fn ensure_dir(dir: &Path) -> Result<()> {
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() || !meta.is_dir() => Err(symlink(dir)),
        Ok(_) => Ok(()),
        Err(_) => match fs::create_dir(dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => ensure_dir(dir),
            Err(e) => Err(FsError::io("create", dir, e)),
        },
    }
}

fn symlink(path: &Path) -> FsError {
    FsError::Symlink {
        path: path.to_path_buf(),
    }
}
