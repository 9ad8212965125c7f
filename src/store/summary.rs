//! The records of a whole namespace kept in one file (`<namespace>/.cache/records.v2`), for
//! the `status` table: one read instead of each workspace's state and view.
//!
//! A kept record stands only while both files it was read from are exactly as they were:
//! the same device, inode, size, modification and change times. Every save replaces a file
//! (a new inode), and any write in place moves its change time, which nobody but the kernel
//! can set. A file whose change time is within [`crate::store::stamp::SETTLED`] of the moment this command began
//! is never kept: a second change in the same clock tick could leave its times alike.
//! The table's records leave out what it never shows (the run history, trust digests).
//!
//! The file is a [`Cache`] (name `records`), its body a JSON object from each workspace's id
//! to its row: the two stamps (`null` for no file), whether the record was tampered with or
//! legacy, and the record itself, which is parsed only when its row is used.
//!
//! A real cache: anything else there (an earlier version's file, a torn or damaged one) is
//! a miss, and every record is then read from its files.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::store::cache::Cache;
use crate::store::metadata::{self, Loaded, Origin, Record};
use crate::store::stamp::{open_dir, Stamp};

/// The file's name in the namespace's cache directory (the version is its header's).
const FILE_NAME: &str = "records.v2";
/// The version of the file's body.
const VERSION: u32 = 3;
/// The file an earlier version kept the records in, removed when this one is written.
const SUPERSEDED: &str = "records.v1";

/// One kept record and the stamps of the files it was read from (`None`: no such file).
/// The record is kept as its JSON text, parsed only when it is used.
#[derive(Serialize, Deserialize)]
struct Row {
    state: Option<Stamp>,
    view: Option<Stamp>,
    #[serde(default)]
    tampered: bool,
    #[serde(default)]
    legacy: bool,
    record: Box<RawValue>,
    /// Whether this command read its workspace (rows of removed workspaces are dropped).
    #[serde(skip)]
    used: bool,
}

/// The namespace's kept records, read once; [`Records::keep`] writes them back when any was
/// read anew.
pub(crate) struct Records {
    file: Cache,
    dir: PathBuf,
    began: SystemTime,
    namespace: Option<OwnedFd>,
    state: Option<OwnedFd>,
    rows: HashMap<String, Row>,
    changed: bool,
    name: String,
}

impl Records {
    /// The kept records of the namespace at `namespace`, whose cache directory is `cache`
    /// (none when they cannot be read: every record is then read from its files).
    pub(crate) fn open(namespace: &Path, cache: &Path) -> Records {
        let began = SystemTime::now();
        let file = Cache::new(cache.join(FILE_NAME), "records", VERSION);
        let rows: HashMap<String, Row> = file.get_json(b"").unwrap_or_default();
        // A state directory that is not there means no workspace has a state; one that is
        // there but cannot be opened (or a namespace that cannot) turns the kept records off.
        let state = match open_dir(&namespace.join(crate::store::state::DIR_NAME)) {
            Err(rustix::io::Errno::NOENT) => Ok(None),
            other => other.map(Some),
        };
        let (namespace, state) = match (open_dir(namespace), state) {
            (Ok(namespace), Ok(state)) => (Some(namespace), state),
            _ => (None, None),
        };
        Records {
            file,
            dir: cache.to_path_buf(),
            began,
            namespace,
            state,
            rows,
            changed: false,
            name: String::new(),
        }
    }

    /// [`metadata::load`] of the workspace at `workspace`, from the kept record while its
    /// files are unchanged. A kept record has no run history, command, trust digests or
    /// fields of newer versions: it is for the table only.
    pub(crate) fn load(&mut self, workspace: &Path) -> Loaded {
        let (Some(id), true) = (
            workspace.file_name().and_then(|n| n.to_str()),
            self.namespace.is_some(),
        ) else {
            return metadata::load(workspace);
        };
        // One name buffer for every workspace of the table.
        let mut name = std::mem::take(&mut self.name);
        name.clear();
        name.push_str(id);
        name.push_str(".json");
        let state = self.state.as_ref().and_then(|dir| Stamp::at(dir, &name));
        name.clear();
        name.push_str(id);
        name.push('/');
        name.push_str(metadata::FILE_NAME);
        let view = self
            .namespace
            .as_ref()
            .and_then(|dir| Stamp::at(dir, &name));
        self.name = name;
        let known = state.is_some() || view.is_some();
        if let Some(row) = self.rows.get_mut(id) {
            row.used = true;
            if row.state == state && row.view == view && known {
                if let Ok(mut record) = serde_json::from_str::<Box<Record>>(row.record.get()) {
                    record.workspace_path = workspace.to_path_buf();
                    if let Some(id) = crate::store::layout::WorkspaceId::read(id) {
                        record.workspace_id = id;
                    }
                    record.origin = match (row.tampered, row.legacy) {
                        (true, _) => Origin::Tampered,
                        (_, true) => Origin::Legacy,
                        _ => Origin::State,
                    };
                    return Loaded::Ok(record);
                }
            }
        }
        let loaded = metadata::load(workspace);
        let settled = [state, view].iter().flatten().all(|s| self.settled(s));
        let row = match &loaded {
            Loaded::Ok(record) if settled && known => trimmed(record).map(|text| Row {
                state,
                view,
                tampered: record.origin == Origin::Tampered,
                legacy: record.origin == Origin::Legacy,
                record: text,
                used: true,
            }),
            _ => None,
        };
        match row {
            Some(row) => {
                self.rows.insert(id.to_string(), row);
                self.changed = true;
            }
            None => self.changed |= self.rows.remove(id).is_some(),
        }
        loaded
    }

    /// Whether a file stamped `stamp` last changed long enough before this command began.
    fn settled(&self, stamp: &Stamp) -> bool {
        stamp.settled(self.began)
    }

    /// Writes the kept records back when any changed, leaving out workspaces not read this
    /// time (removed ones); a file that cannot be written is simply not kept.
    pub(crate) fn keep(mut self) {
        let before = self.rows.len();
        self.rows.retain(|_, row| row.used);
        if !self.changed && self.rows.len() == before {
            return;
        }
        let dir = &self.dir;
        if crate::store::fsutil::create_dir_nofollow(dir).is_ok()
            && self.file.put_json(b"", &self.rows).is_ok()
        {
            // The earlier version's file, superseded by this one (no link is followed:
            // unlink removes the name).
            let _ = std::fs::remove_file(dir.join(SUPERSEDED));
        }
    }
}

/// The record's JSON without what the table never shows, nor what a load sets itself or
/// reads as absent (nulls, empty lists), so the kept file stays small.
fn trimmed(record: &Record) -> Option<Box<RawValue>> {
    let mut kept = record.clone();
    kept.runs.clear();
    kept.command.clear();
    kept.envrc_sha256 = None;
    kept.base_envrc_sha256 = None;
    kept.envrc_loads_base = None;
    kept.envrc_loads_allowed.clear();
    kept.checked_op_heads = None;
    kept.copied = None;
    kept.tools = None;
    kept.extra.clear();
    kept.workspace_path = PathBuf::new();
    let serde_json::Value::Object(mut fields) = serde_json::to_value(&kept).ok()? else {
        return None;
    };
    // Every field that may be left out reads back as null or empty (`Option`, or
    // `#[serde(default)]`).
    fields.retain(|name, value| match value {
        serde_json::Value::Null => false,
        serde_json::Value::Array(a) => {
            !(a.is_empty() && matches!(name.as_str(), "command" | "runs"))
        }
        serde_json::Value::Object(o) => !(o.is_empty() && name == "envrc_loads_allowed"),
        _ => true,
    });
    RawValue::from_string(serde_json::to_string(&fields).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_rows_read_back_as_written_and_anything_else_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().join(FILE_NAME), "records", VERSION);
        let row = |state, tampered, record: &str| Row {
            state,
            view: Some(Stamp::new([1, -2, 3, 4, 5, 6, 7])),
            tampered,
            legacy: !tampered,
            record: RawValue::from_string(record.to_string()).unwrap(),
            used: true,
        };
        let mut rows = HashMap::new();
        rows.insert("w1".to_string(), row(None, true, r#"{"a":"x\ty\nz"}"#));
        rows.insert(
            "w.2".to_string(),
            row(Some(Stamp::new([9; 7])), false, "{}"),
        );
        cache.put_json(b"", &rows).unwrap();
        let read: HashMap<String, Row> = cache.get_json(b"").unwrap();
        assert_eq!(read.len(), 2);
        for (id, row) in &rows {
            let back = &read[id];
            assert_eq!(
                (
                    back.state,
                    back.view,
                    back.tampered,
                    back.legacy,
                    back.record.get()
                ),
                (
                    row.state,
                    row.view,
                    row.tampered,
                    row.legacy,
                    row.record.get()
                )
            );
        }
        // The earlier version's lines: a miss, every record read from its files.
        let earlier = "w1\t-\t1,2,3,4,5,6,7\t-\t-\t{}\n";
        std::fs::write(dir.path().join(FILE_NAME), earlier).unwrap();
        assert!(cache.get_json::<HashMap<String, Row>>(b"").is_none());
    }

    #[test]
    fn a_state_directory_that_cannot_be_opened_turns_the_kept_records_off() {
        let dir = tempfile::tempdir().unwrap();
        let ns = dir.path().join("ns");
        std::fs::create_dir_all(ns.join("w1")).unwrap();
        // No state directory: the kept records are on, no workspace has a state.
        let records = Records::open(&ns, &ns.join(".cache"));
        assert!(records.namespace.is_some() && records.state.is_none());
        // A state directory replaced by a symlink: off, every record read from its files.
        std::fs::create_dir(dir.path().join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), ns.join(".state")).unwrap();
        let mut records = Records::open(&ns, &ns.join(".cache"));
        assert!(records.namespace.is_none());
        // As the files say: a symlinked state directory is refused.
        assert!(matches!(records.load(&ns.join("w1")), Loaded::Corrupt(_)));
        assert!(records.rows.is_empty());
    }
}
