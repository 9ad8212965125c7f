//! What agent-workspace keeps beside a sandboxed workspace's own store, in
//! `<namespace>/.private/<id>/` (never mounted into a sandbox, so no agent writes it):
//! `synced` (what the store was made from or last brought back to), `made` (the store's own
//! state when it was made) and `gitlinks` (git: the worktree's gitlinks, listed once per
//! index). Each is a [`Cache`].
//!
//! `synced` and `made` are state, not derived data: losing `synced` would leave the store's
//! work unbrought back, losing `made` would only ask the store again what it holds. So a
//! file of the form before [`Cache`] (plain text, written whole by rename) is read once more
//! in that form, until the next write replaces it; a file in the cache's form that is not
//! exactly what was written (torn, damaged) is nothing, as a missing one is. `gitlinks` is a
//! cache: anything else there is listed again.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::store::cache::{Cache, Found};
use crate::store::fsutil;

/// What `synced` records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Synced {
    /// The user's store's working-copy commit of the workspace the store matches.
    pub commit: String,
    /// That commit's parents.
    pub parents: Vec<String>,
    /// The store's own operation heads (git: its refs and index, as data) then.
    pub op: String,
    /// The user's store's operation heads (git: the worktree's checkout key) then.
    pub user_op: String,
    /// The shared objects the store borrows.
    pub base_objects: Option<PathBuf>,
}

/// Longest an earlier form's `synced` or `made` is read.
const EARLIER_LIMIT: usize = 64 << 10;

fn synced_file(dir: &Path) -> Cache {
    Cache::new(dir.join("synced"), "private-synced", 1)
}

fn made_file(dir: &Path) -> Cache {
    Cache::new(dir.join("made"), "private-made", 1)
}

/// The `synced` of the store at `dir`, in this form or the one before it.
pub(crate) fn read_synced(dir: &Path) -> Option<Synced> {
    match synced_file(dir).find(b"") {
        Found::Kept(body) => serde_json::from_slice(&body).ok(),
        Found::Earlier(bytes) if bytes.len() <= EARLIER_LIMIT => {
            parse_earlier_synced(std::str::from_utf8(&bytes).ok()?)
        }
        Found::Earlier(_) | Found::Nothing => None,
    }
}

/// Records `synced` for the store at `dir` (atomically).
pub(crate) fn write_synced(dir: &Path, synced: &Synced) -> fsutil::Result<()> {
    synced_file(dir).put_json(b"", synced)
}

/// The `made` of the store at `dir` (its own state when made), in this form or the one
/// before it.
pub(crate) fn read_made(dir: &Path) -> Option<String> {
    match made_file(dir).find(b"") {
        Found::Kept(body) => String::from_utf8(body).ok(),
        Found::Earlier(bytes) if bytes.len() <= EARLIER_LIMIT => String::from_utf8(bytes).ok(),
        Found::Earlier(_) | Found::Nothing => None,
    }
}

/// Records the store at `dir`'s own state as it was made (atomically).
pub(crate) fn write_made(dir: &Path, state: &str) -> fsutil::Result<()> {
    made_file(dir).put(b"", state.as_bytes())
}

fn gitlinks_file(file: &Path) -> Cache {
    Cache::new(file.to_path_buf(), "private-gitlinks", 1)
}

/// The gitlinks kept at `file` for the index whose key is `key`.
pub(crate) fn gitlinks(file: &Path, key: &str) -> Option<Vec<String>> {
    gitlinks_file(file).get_json(key.as_bytes())
}

/// Keeps `links` at `file` for the index whose key is `key`; a file that cannot be written
/// is only a miss next time.
pub(crate) fn keep_gitlinks(file: &Path, key: &str, links: &[String]) {
    let _ = gitlinks_file(file).put_json(key.as_bytes(), links);
}

/// `synced` as the version before [`Cache`] wrote it: `commit <id>`, `parents <ids>`, `op
/// <heads>`, `user-op <key>`, `base <path or nothing>`, a line each.
fn parse_earlier_synced(text: &str) -> Option<Synced> {
    let mut fields = std::collections::HashMap::new();
    for line in text.lines() {
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        fields.insert(key, value);
    }
    let base = fields.get("base")?;
    Some(Synced {
        commit: fields.get("commit")?.to_string(),
        parents: fields
            .get("parents")?
            .split_whitespace()
            .map(str::to_string)
            .collect(),
        op: fields.get("op")?.to_string(),
        user_op: fields.get("user-op")?.to_string(),
        base_objects: (!base.is_empty()).then(|| PathBuf::from(base)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synced() -> Synced {
        Synced {
            commit: "abc".into(),
            parents: vec!["p1".into(), "p2".into()],
            op: "o1,o2".into(),
            user_op: "u1 7".into(),
            base_objects: Some("/x/objects".into()),
        }
    }

    #[test]
    fn synced_reads_back_what_it_wrote() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_synced(dir.path()), None);
        write_synced(dir.path(), &synced()).unwrap();
        assert_eq!(read_synced(dir.path()), Some(synced()));
        let rootless = Synced {
            parents: vec![],
            base_objects: None,
            ..synced()
        };
        write_synced(dir.path(), &rootless).unwrap();
        assert_eq!(read_synced(dir.path()), Some(rootless));
    }

    #[test]
    fn synced_of_the_version_before_is_read_and_a_damaged_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("synced");
        // As the version before wrote it.
        let earlier = "commit abc\nparents p1 p2\nop o1,o2\nuser-op u1 7\nbase /x/objects\n";
        std::fs::write(&path, earlier).unwrap();
        assert_eq!(read_synced(dir.path()), Some(synced()));
        std::fs::write(&path, "commit abc\nparents \nop o\nuser-op u\nbase \n").unwrap();
        let rootless = read_synced(dir.path()).unwrap();
        assert_eq!((rootless.parents.len(), rootless.base_objects), (0, None));
        // Cut short (no `base` line): nothing.
        std::fs::write(&path, &earlier[..earlier.len() - 20]).unwrap();
        assert_eq!(read_synced(dir.path()), None);
        // The next write replaces it in this form.
        write_synced(dir.path(), &synced()).unwrap();
        assert!(std::fs::read(&path)
            .unwrap()
            .starts_with(b"agent-workspace cache "));
        // This form torn or changed: nothing, never read as the earlier form.
        let whole = std::fs::read(&path).unwrap();
        std::fs::write(&path, &whole[..whole.len() - 1]).unwrap();
        assert_eq!(read_synced(dir.path()), None);
        let mut changed = whole.clone();
        let at = changed.len() - 3;
        changed[at] ^= 1;
        std::fs::write(&path, &changed).unwrap();
        assert_eq!(read_synced(dir.path()), None);
        // A symlink to the earlier form's text is never followed.
        std::fs::remove_file(&path).unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, earlier).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        assert_eq!(read_synced(dir.path()), None);
    }

    #[test]
    fn made_of_the_version_before_is_read_and_a_damaged_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_made(dir.path()), None);
        let path = dir.path().join("made");
        std::fs::write(&path, "op-heads-1").unwrap();
        assert_eq!(read_made(dir.path()).as_deref(), Some("op-heads-1"));
        write_made(dir.path(), "op-heads-2").unwrap();
        assert_eq!(read_made(dir.path()).as_deref(), Some("op-heads-2"));
        let whole = std::fs::read(&path).unwrap();
        std::fs::write(&path, &whole[..whole.len() - 1]).unwrap();
        assert_eq!(read_made(dir.path()), None, "torn");
    }

    #[test]
    fn gitlinks_stand_under_their_index_key_only() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("gitlinks");
        assert_eq!(gitlinks(&file, "k1"), None);
        let links = vec!["sub".to_string(), "a\nb".to_string()];
        keep_gitlinks(&file, "k1", &links);
        assert_eq!(gitlinks(&file, "k1"), Some(links));
        assert_eq!(gitlinks(&file, "k2"), None, "another index");
        // The version before's text (the key, then a path a line): listed again.
        std::fs::write(&file, "k1\nsub\n").unwrap();
        assert_eq!(gitlinks(&file, "k1"), None);
    }
}
