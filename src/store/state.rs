//! The state agent-workspace keeps about each workspace outside every workspace, in
//! `<namespace>/.state/<id>.json`: the authority for trust digests, branch, backend and the
//! supervisor's identity. The in-workspace record is a view of it, sealed by its digest so a
//! changed view is detected.

use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use crate::store::fsutil::{FsError, UNTRUSTED_LIMIT};

type Result<T> = std::result::Result<T, FsError>;

/// The state directory's name inside a namespace (a dot-name: never a workspace).
pub(crate) const DIR_NAME: &str = ".state";

/// The state file's content: the record (left unparsed, for the caller to read as its own
/// type, or read as `R` by [`read_with`]) and the digests of the views written from it.
#[derive(Debug, Deserialize)]
pub(crate) struct Sealed<R = Box<RawValue>> {
    #[allow(dead_code)] // read to reject a file that is not a state; one version so far
    pub state_version: u64,
    #[serde(flatten)]
    pub seal: Seal,
    pub record: R,
}

/// The digests of the views a state was written with.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Seal {
    /// The digest of the view written with this state.
    pub view_sha256: Option<String>,
    /// The digest of the view before it (a reader may see the new state and the old view).
    #[serde(default)]
    pub previous_view_sha256: Option<String>,
}

impl Seal {
    /// Whether `view` (a view's digest) is one this state was written with.
    pub(crate) fn seals(&self, view: Option<&str>) -> bool {
        view.is_some()
            && (view == self.view_sha256.as_deref() || view == self.previous_view_sha256.as_deref())
    }
}

/// The seal as written, before the record's JSON (which is the view's text, written as is,
/// so a save serialises the record once).
#[derive(Serialize)]
struct SealOut<'a> {
    state_version: u64,
    view_sha256: &'a str,
    previous_view_sha256: Option<&'a str>,
}

/// The state file of the workspace at `workspace` (`<namespace>/<id>`).
pub(crate) fn path(workspace: &Path) -> PathBuf {
    let id = workspace.file_name().unwrap_or_default().to_string_lossy();
    let namespace = workspace.parent().unwrap_or(Path::new("/"));
    namespace.join(DIR_NAME).join(format!("{id}.json"))
}

pub(crate) fn digest(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// What reading a state file found.
pub(crate) enum Found<T> {
    Missing,
    Ok(T),
    Corrupt(String),
}

/// Reads the state of `workspace`, never following a symlink.
pub(crate) fn read(workspace: &Path) -> Found<Sealed> {
    read_with(workspace)
}

/// Reads the state of `workspace` with its record read as `R` in the same pass (a record
/// that is no `R` makes it `Corrupt`, as a state that is no state does).
pub(crate) fn read_with<R: serde::de::DeserializeOwned>(workspace: &Path) -> Found<Sealed<R>> {
    let found = read_as::<Sealed<R>>(workspace);
    if let Found::Ok(sealed) = &found {
        remember(workspace, sealed.seal.view_sha256.as_deref());
    }
    found
}

/// The digest of the view the state of `workspace` was last written with: as this process
/// last read or wrote it (it holds the lease while it writes), else read from the file.
pub(crate) fn view_seal(workspace: &Path) -> Found<Option<String>> {
    if let Some(known) = remembered(workspace) {
        return Found::Ok(known);
    }
    match read_seal(workspace) {
        Found::Ok(seal) => Found::Ok(seal.view_sha256),
        Found::Missing => Found::Missing,
        Found::Corrupt(why) => Found::Corrupt(why),
    }
}

/// The seal this process last read or wrote for each state file, so a save does not parse
/// the whole state again to learn what it replaces.
static SEALS: Mutex<Vec<(PathBuf, Option<String>)>> = Mutex::new(Vec::new());

fn remember(workspace: &Path, view: Option<&str>) {
    if let Ok(mut seals) = SEALS.lock() {
        seals.retain(|(w, _)| w != workspace);
        seals.push((workspace.to_path_buf(), view.map(str::to_string)));
    }
}

fn forget(workspace: &Path) {
    if let Ok(mut seals) = SEALS.lock() {
        seals.retain(|(w, _)| w != workspace);
    }
}

fn remembered(workspace: &Path) -> Option<Option<String>> {
    let seals = SEALS.lock().ok()?;
    seals
        .iter()
        .find(|(w, _)| w == workspace)
        .map(|(_, v)| v.clone())
}

/// Reads only the seal of the state of `workspace` (the record is skipped, not built).
pub(crate) fn read_seal(workspace: &Path) -> Found<Seal> {
    read_as(workspace)
}

/// Reads the state of `workspace` as `T`: any part of it, the rest skipped, not built.
pub(crate) fn read_as<T: serde::de::DeserializeOwned>(workspace: &Path) -> Found<T> {
    let file = path(workspace);
    let dir = file.parent().unwrap_or(Path::new("/"));
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() || !meta.is_dir() => {
            return Found::Corrupt(format!("{} is a symlink", dir.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Found::Missing,
        _ => {}
    }
    let text = match crate::store::fsutil::read_untrusted(&file, UNTRUSTED_LIMIT) {
        Ok(text) => text,
        Err(e) if crate::store::fsutil::is_missing(&e) => return Found::Missing,
        Err(FsError::Symlink { .. }) => {
            return Found::Corrupt(format!("{} is a symlink", file.display()))
        }
        Err(e) => return Found::Corrupt(format!("cannot read {}: {e}", file.display())),
    };
    match serde_json::from_slice::<T>(&text) {
        Ok(sealed) => Found::Ok(sealed),
        Err(e) => Found::Corrupt(format!("{e} in {}", file.display())),
    }
}

/// The digest of the view file as it is now, or `None` when it cannot be read.
/// (A FIFO, a device or a huge file there cannot be read: it is refused, never waited on.)
pub(crate) fn view_digest(view: &Path) -> Option<String> {
    let text = crate::store::fsutil::read_untrusted(view, UNTRUSTED_LIMIT).ok()?;
    Some(digest(&text))
}

/// Writes the state of `workspace` atomically (a temp file, then a rename), refusing a
/// symlinked state directory or file.
/// `record` is the record's JSON text: the view's, whose digest is `view_sha256`.
pub(crate) fn write(workspace: &Path, record: &[u8], view_sha256: &str) -> Result<()> {
    let file = path(workspace);
    let dir = file.parent().unwrap_or(Path::new("/")).to_path_buf();
    ensure_dir(&dir)?;
    let previous = match view_seal(workspace) {
        Found::Ok(old) => old,
        Found::Corrupt(why) if why.ends_with("is a symlink") => return Err(symlink(&file)),
        _ => None,
    };
    let seal = SealOut {
        state_version: 1,
        view_sha256,
        previous_view_sha256: previous.as_deref(),
    };
    let mut text = serde_json::to_vec(&seal)
        .map_err(|e| FsError::io("encode", &file, std::io::Error::other(e)))?;
    text.pop(); // the closing brace: the record follows
    text.extend_from_slice(b",\"record\":");
    text.extend_from_slice(record);
    text.extend_from_slice(b"}\n");
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
    if let Err(e) = written.and_then(|()| crate::store::fsutil::replace(&tmp, &file)) {
        let _ = fs::remove_file(&tmp);
        return Err(FsError::io("write", &file, e));
    }
    remember(workspace, Some(view_sha256));
    Ok(())
}

/// Checks that the state directory of `workspace` is a real directory (or missing), so the
/// state can be removed with the workspace; call before removing anything.
pub(crate) fn check(workspace: &Path) -> Result<()> {
    let file = path(workspace);
    let dir = file.parent().unwrap_or(Path::new("/"));
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() || !meta.is_dir() => Err(symlink(dir)),
        _ => Ok(()),
    }
}

/// Removes the state of a removed workspace (nothing when it has none).
pub(crate) fn remove(workspace: &Path) -> Result<()> {
    check(workspace)?;
    forget(workspace);
    let file = path(workspace);
    // The setup's log (see `workspace::setup`) goes with the state.
    let _ = fs::remove_file(file.with_extension("setup.log"));
    match fs::remove_file(&file) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(FsError::io("remove", &file, e)),
        _ => Ok(()),
    }
}

/// Moves an unreadable state file aside, returning where it went (`None` when there is none);
/// refuses a symlink.
pub(crate) fn keep_aside(workspace: &Path, stamp: u64) -> Result<Option<PathBuf>> {
    forget(workspace);
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
