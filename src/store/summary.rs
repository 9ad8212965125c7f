//! The records of a whole namespace kept in one file (`<namespace>/.cache/records.v2`), for
//! the `status` table: one read instead of each workspace's state and view.
//!
//! A kept record stands only while both files it was read from are exactly as they were:
//! the same device, inode, size, modification and change times. Every save replaces a file
//! (a new inode), and any write in place moves its change time, which nobody but the kernel
//! can set. A file whose change time is within [`SETTLED`] of the moment this command began
//! is never kept: a second change in the same clock tick could leave its times alike.
//! The table's records leave out what it never shows (the run history, trust digests).
//!
//! The file has one line per workspace, fields separated by tabs: its id, the two stamps
//! (seven numbers joined by commas, or `-` for no file), `t` when tampered and `l` when
//! legacy (else `-`), then the record's JSON on one line (JSON escapes every tab and
//! newline inside a string). Finding a line's fields is a byte search, not a JSON parse: a
//! thousand rows are read at the cost of copying them.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::store::metadata::{self, Loaded, Origin, Record};

/// The file's name in the namespace's cache directory; the version is in the name.
const FILE_NAME: &str = "records.v2";
/// The file an earlier version kept the records in, removed when this one is written.
const SUPERSEDED: &str = "records.v1";

/// How long after its last change a file's times are trusted to tell every later change.
const SETTLED: Duration = Duration::from_secs(2);

/// A file as `stat` sees it: device, inode, size, modification and change times (seconds
/// and nanoseconds).
pub(crate) type Stamp = [i64; 7];

/// Whether a file stamped `stamp` last changed (by its change time, which nobody but the
/// kernel sets) at least [`SETTLED`] before `began`: only then do its times tell every later
/// change, since a second change in the same clock tick could leave them alike.
pub(crate) fn settled(stamp: &Stamp, began: SystemTime) -> bool {
    let changed = SystemTime::UNIX_EPOCH
        + Duration::new(
            u64::try_from(stamp[5]).unwrap_or(u64::MAX / 2),
            u32::try_from(stamp[6]).unwrap_or(0),
        );
    changed + SETTLED < began
}

/// One kept record and the stamps of the files it was read from (`None`: no such file).
/// The record is kept as its JSON text, parsed only when it is used.
struct Row {
    state: Option<Stamp>,
    view: Option<Stamp>,
    tampered: bool,
    legacy: bool,
    record: String,
    /// Whether this command read its workspace (rows of removed workspaces are dropped).
    used: bool,
}

/// The namespace's kept records, read once; [`Records::keep`] writes them back when any was
/// read anew.
pub(crate) struct Records {
    file: PathBuf,
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
        let file = cache.join(FILE_NAME);
        let rows =
            crate::store::fsutil::read_untrusted(&file, crate::store::fsutil::UNTRUSTED_LIMIT)
                .ok()
                .map(|text| parse_rows(&text))
                .unwrap_or_default();
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
        let state = self.state.as_ref().and_then(|dir| stamp(dir, &name));
        name.clear();
        name.push_str(id);
        name.push('/');
        name.push_str(metadata::FILE_NAME);
        let view = self.namespace.as_ref().and_then(|dir| stamp(dir, &name));
        self.name = name;
        let known = state.is_some() || view.is_some();
        if let Some(row) = self.rows.get_mut(id) {
            row.used = true;
            if row.state == state && row.view == view && known {
                if let Ok(mut record) = serde_json::from_str::<Box<Record>>(&row.record) {
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
        settled(stamp, self.began)
    }

    /// Writes the kept records back when any changed, leaving out workspaces not read this
    /// time (removed ones); a file that cannot be written is simply not kept.
    pub(crate) fn keep(mut self) {
        let before = self.rows.len();
        self.rows.retain(|_, row| row.used);
        if !self.changed && self.rows.len() == before {
            return;
        }
        let text = rows_text(&self.rows);
        if let Some(dir) = self.file.parent() {
            if crate::store::fsutil::create_dir_nofollow(dir).is_ok()
                && crate::store::fsutil::write_atomic(&self.file, text.as_bytes()).is_ok()
            {
                // The earlier version's file, superseded by this one (no link is followed:
                // unlink removes the name).
                let _ = std::fs::remove_file(dir.join(SUPERSEDED));
            }
        }
    }
}

/// The rows in the file's format (see the module's comment).
fn rows_text(rows: &HashMap<String, Row>) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    let stamp = |text: &mut String, stamp: &Option<Stamp>| match stamp {
        Some(s) => {
            // Writing to a String cannot fail.
            let _ = write!(
                text,
                "{},{},{},{},{},{},{}",
                s[0], s[1], s[2], s[3], s[4], s[5], s[6]
            );
        }
        None => text.push('-'),
    };
    for (id, row) in rows {
        text.push_str(id);
        text.push('\t');
        stamp(&mut text, &row.state);
        text.push('\t');
        stamp(&mut text, &row.view);
        text.push_str(if row.tampered { "\tt" } else { "\t-" });
        text.push_str(if row.legacy { "\tl\t" } else { "\t-\t" });
        text.push_str(&row.record);
        text.push('\n');
    }
    text
}

/// The rows of the file's `text`; a line that is not one is left out (its workspace's
/// record is then read from its files).
fn parse_rows(text: &[u8]) -> HashMap<String, Row> {
    let Ok(text) = std::str::from_utf8(text) else {
        return HashMap::new();
    };
    let stamp = |field: &str| -> Option<Option<Stamp>> {
        if field == "-" {
            return Some(None);
        }
        let mut stamp: Stamp = [0; 7];
        let mut parts = field.split(',');
        for n in &mut stamp {
            *n = parts.next()?.parse().ok()?;
        }
        parts.next().is_none().then_some(Some(stamp))
    };
    let row = |line: &str| -> Option<(String, Row)> {
        let mut fields = line.splitn(6, '\t');
        let id = fields.next()?;
        let state = stamp(fields.next()?)?;
        let view = stamp(fields.next()?)?;
        let tampered = fields.next()? == "t";
        let legacy = fields.next()? == "l";
        let record = fields.next()?;
        (!id.is_empty() && record.starts_with('{')).then(|| {
            let row = Row {
                state,
                view,
                tampered,
                legacy,
                record: record.to_string(),
                used: false,
            };
            (id.to_string(), row)
        })
    };
    text.lines().filter_map(row).collect()
}

/// The record's JSON without what the table never shows, nor what a load sets itself or
/// reads as absent (nulls, empty lists), so the kept file stays small.
fn trimmed(record: &Record) -> Option<String> {
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
    serde_json::to_string(&fields).ok()
}

pub(crate) fn open_dir(path: &Path) -> rustix::io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// The stamp of `name` under the directory `dir`, never following a symlink at its end.
pub(crate) fn stamp(dir: &OwnedFd, name: &str) -> Option<Stamp> {
    let st = rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).ok()?;
    Some([
        st.st_dev as i64,
        st.st_ino as i64,
        st.st_size,
        st.st_mtime,
        st.st_mtime_nsec as i64,
        st.st_ctime,
        st.st_ctime_nsec as i64,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_rows_read_back_as_written_and_a_bad_line_is_left_out() {
        let row = |state, tampered, record: &str| Row {
            state,
            view: Some([1, -2, 3, 4, 5, 6, 7]),
            tampered,
            legacy: !tampered,
            record: record.to_string(),
            used: true,
        };
        let mut rows = HashMap::new();
        rows.insert("w1".to_string(), row(None, true, r#"{"a":"x\ty\nz"}"#));
        rows.insert("w.2".to_string(), row(Some([9; 7]), false, "{}"));
        let text = rows_text(&rows);
        let mut text = text.into_bytes();
        text.extend_from_slice(b"w3\t1,2\t-\t-\t-\t{}\nw4\t-\t-\t-\t-\tnot json\n\n");
        let read = parse_rows(&text);
        assert_eq!(read.len(), 2, "{}", String::from_utf8_lossy(&text));
        for (id, row) in &rows {
            let back = &read[id];
            assert_eq!(
                (
                    back.state,
                    back.view,
                    back.tampered,
                    back.legacy,
                    &back.record
                ),
                (row.state, row.view, row.tampered, row.legacy, &row.record)
            );
        }
        assert!(parse_rows(b"\xff\xfe").is_empty());
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
