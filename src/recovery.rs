//! The directory that carries a stale jj working copy's unrecorded edits across
//! `jj workspace update-stale`, made so that a repair interrupted at any point (even by
//! SIGKILL) can be resumed: `<scratch>/files/` holds the copy, and `<scratch>/complete` is
//! written (atomically) only once the copy is whole; it names the commit the working copy
//! last recorded. Without that marker the workspace was not touched yet and the directory is
//! a partial copy to throw away; with it, the copy and that commit say what the edits were.
//! `<scratch>/updated` is written (atomically) once the working copy was updated: the commit
//! it was updated to and the kept-aside directory for edits that do not merge, so a resumed
//! repair merges the same three versions and keeps the same files in the same place.

use std::fs;
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

const MARKER: &str = "complete";
const UPDATED: &str = "updated";

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

/// Marks the copy whole, naming `recorded`, the commit the working copy last recorded (none
/// when jj no longer knows it), and the visible commits of its change before the update.
pub fn mark_complete(
    scratch: &Path,
    recorded: Option<&str>,
    siblings: &[String],
) -> io::Result<()> {
    let text = match recorded {
        Some(commit) => format!("recorded {commit}\nsiblings {}\n", siblings.join(" ")),
        None => "copied\n".to_string(),
    };
    write_synced(scratch, MARKER, text.as_bytes())
}

/// The commit the working copy last recorded, as the marker names it: `None` for a copy whose
/// marker names none (jj had lost it, or an older version made the copy).
pub fn recorded(scratch: &Path) -> Option<String> {
    let text = fs::read_to_string(scratch.join(MARKER)).ok()?;
    let commit = text.lines().next()?.strip_prefix("recorded ")?;
    is_commit_id(commit).then(|| commit.to_string())
}

/// The visible commits of the recorded commit's change before the update, as the marker
/// names them.
pub fn siblings(scratch: &Path) -> Vec<String> {
    let text = fs::read_to_string(scratch.join(MARKER)).unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("siblings "))
        .map(|list| {
            list.split(' ')
                .filter(|c| is_commit_id(c))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// What a repair decided once the working copy was updated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Updated {
    /// The commit `update-stale` checked out.
    pub commit: String,
    /// Where edits that do not merge are kept.
    pub kept: PathBuf,
}

/// Records [`Updated`]; written once, before any file of the workspace is written.
pub fn mark_updated(scratch: &Path, updated: &Updated) -> io::Result<()> {
    let mut text = format!("{}\n", updated.commit).into_bytes();
    text.extend_from_slice(updated.kept.as_os_str().as_bytes());
    text.push(b'\n');
    write_synced(scratch, UPDATED, &text)
}

/// The [`Updated`] a repair recorded, if it got that far.
pub fn updated(scratch: &Path) -> Option<Updated> {
    let bytes = fs::read(scratch.join(UPDATED)).ok()?;
    let text = bytes.strip_suffix(b"\n")?;
    let split = text.iter().position(|b| *b == b'\n')?;
    let commit = std::str::from_utf8(&text[..split]).ok()?;
    let kept = &text[split + 1..];
    if !is_commit_id(commit) || kept.is_empty() {
        return None;
    }
    Some(Updated {
        commit: commit.to_string(),
        kept: PathBuf::from(std::ffi::OsStr::from_bytes(kept)),
    })
}

fn is_commit_id(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Writes `scratch/name`: to a temporary file, synced, then renamed into place.
fn write_synced(scratch: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    let tmp = scratch.join(format!("{name}.tmp"));
    let mut file = fs::File::create(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    fs::rename(&tmp, scratch.join(name))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_names_the_recorded_commit_or_none() {
        let tmp = tempfile::tempdir().unwrap();
        let scratch = tmp.path();
        assert!(!is_complete(scratch));
        let siblings_before = ["0123abcd".to_string(), "4567".to_string()];
        mark_complete(scratch, Some("0123abcd"), &siblings_before).unwrap();
        assert!(is_complete(scratch));
        assert_eq!(recorded(scratch).as_deref(), Some("0123abcd"));
        assert_eq!(siblings(scratch), siblings_before);
        mark_complete(scratch, None, &[]).unwrap();
        assert_eq!(recorded(scratch), None);
        // What an older version wrote.
        fs::write(scratch.join(MARKER), "copied\n").unwrap();
        assert_eq!(recorded(scratch), None);
    }

    #[test]
    fn the_update_is_read_back_as_written() {
        let tmp = tempfile::tempdir().unwrap();
        let scratch = tmp.path();
        assert_eq!(updated(scratch), None);
        let written = Updated {
            commit: "89ef".into(),
            kept: PathBuf::from("/root/ns/.kept/w-20260101T000000Z"),
        };
        mark_updated(scratch, &written).unwrap();
        assert_eq!(updated(scratch), Some(written));
        fs::write(scratch.join(UPDATED), "not a commit\n/x\n").unwrap();
        assert_eq!(updated(scratch), None);
    }
}
