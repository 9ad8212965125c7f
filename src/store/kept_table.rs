//! `status`'s table kept whole (`<namespace>/.cache/table.v2`) as data: every row's
//! workspace id, what its cells show (status, parent, workflow, changes) and the moment its
//! UPDATED cell counts from, with what each row and the table stand on. The Ui lays the rows
//! out (`ui::status_table::kept`); a namespace where nothing changed costs one `stat` a
//! workspace, one read of this file and laying the rows out, instead of reading, reconciling
//! and measuring every record again.
//!
//! What the kept table stands on, each compared before it is used (any difference: the table
//! is made anew from the files and kept again):
//! - each row's agent-writable view `<id>/.agent-workflow.json`, by its [`Stamp`], as the
//!   kept records ([`crate::store::summary`]) are;
//! - the state directory `.state`, by its stamp: agent-workspace writes every state
//!   whole, by rename ([`crate::store::state::write`]), and any state added, removed or
//!   replaced changes its directory. While that stamp is as kept, no state is looked at;
//!   when it moved, each row's state `.state/<id>.json` is compared by its own stamp. (A state
//!   edited in place by hand, which agent-workspace never does, is seen once anything else
//!   the table stands on changes, or by `status --json` and `status <ID>`, which read every
//!   record from its files);
//! - the namespace directory, its `.locks` and `.pool` directories, by their stamps: a
//!   workspace directory added, removed, renamed or replaced, a lease taken for the first
//!   time or dropped, a prepared workspace being taken, each changes its directory;
//! - the repository's operation heads (jj): while they are the same, so is jj's view (an
//!   operation id names its view), hence which workspaces jj knows, their working-copy
//!   commits and the answers kept under them. When they moved, the table stands only if jj's
//!   working copies (every name and commit) are still those kept, and no row shows a land
//!   (whether a land still holds depends on the whole repository)
//!   (`table.v2.same-view` notes the latest heads found to have the working copies of those
//!   a table was made at, so that they are compared once);
//! - this build's version (the file's key).
//!
//! Nothing is kept from a file that changed less than [`crate::store::stamp::SETTLED`]
//! before the command began (a second change in the same clock tick could leave its times
//! alike). The caller keeps only tables that depend on nothing else: no run that may be
//! live, no land under way, no problem that needs the backend's recorded paths, no changes
//! that could not be read.
//!
//! The file is a [`Cache`] (name `status-table`), its body the [`Table`] as JSON: a file cut
//! short or damaged in any way, or of an earlier version, is a miss, and is written anew.

use std::borrow::Cow;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::store::cache::Cache;
use crate::store::stamp::{open_dir, Stamp};

/// The file's name in the namespace's cache directory (the version is its header's).
pub(crate) const FILE_NAME: &str = "table.v2";
/// The version of the file's body.
const VERSION: u32 = 3;

fn file(cache: &Path) -> Cache {
    Cache::new(cache.join(FILE_NAME), "status-table", VERSION)
}

/// A kept table: what it stands on, and its rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Table<'a> {
    pub head: Head,
    #[serde(borrow)]
    pub rows: Vec<Row<'a>>,
}

/// What a kept table stands on besides its rows.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Head {
    /// The operation heads it was made at.
    pub heads: String,
    /// The namespace, `.locks` and `.pool` directories' stamps.
    pub dirs: [Option<Stamp>; 3],
    /// The state directory's stamp, when it had settled: while it is the same, no state was
    /// added, removed or replaced in it (agent-workspace writes states by rename), so no
    /// row's state is looked at.
    pub state_dir: Option<Stamp>,
    /// Whether some row shows a land (it then stands only at the same operation heads).
    pub lands: bool,
    /// jj's working copies at `heads` (name and commit, sorted by name), as JSON: parsed
    /// only to be compared, when the heads moved ([`Head::same_working_copies`]).
    pub working_copies: Box<RawValue>,
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        (
            &self.heads,
            self.dirs,
            self.state_dir,
            self.lands,
            self.working_copies.get(),
        ) == (
            &other.heads,
            other.dirs,
            other.state_dir,
            other.lands,
            other.working_copies.get(),
        )
    }
}

impl Head {
    /// jj's working copies `view` (name and commit) as a head keeps them.
    pub(crate) fn working_copies_of(view: &[(String, String)]) -> Box<RawValue> {
        // Strings always serialize (were they not to, `null` matches no view).
        serde_json::value::to_raw_value(view).unwrap_or_default()
    }

    /// Whether jj's working copies `view` are those kept.
    pub(crate) fn same_working_copies(&self, view: &[(String, String)]) -> bool {
        serde_json::from_str::<Vec<(String, String)>>(self.working_copies.get())
            .is_ok_and(|kept| kept == view)
    }
}

/// One row: its workspace id, the stamps of its two files, what it shows, the moment UPDATED
/// counts from, and its hint (for a problem).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Row<'a> {
    #[serde(borrow)]
    pub id: Cow<'a, str>,
    pub state: Option<Stamp>,
    pub view: Option<Stamp>,
    #[serde(borrow)]
    pub shown: Shown<'a>,
    pub updated: Option<SystemTime>,
    pub hint: Option<String>,
    /// A run recorded as running: its supervisor's process id and start, and whether the
    /// row shows it ended (`crashed`). Looked at again each time: a process can die
    /// without any file changing.
    pub run: Option<Run>,
}

/// What a row's cells show but WORKSPACE and UPDATED, as data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Shown<'a> {
    /// The status word (`done`, `crashed`, ...).
    #[serde(borrow)]
    pub status: Cow<'a, str>,
    /// The parent of a child workspace, and whether it is gone.
    pub parent: Option<(String, bool)>,
    pub workflow: Option<String>,
    /// The changes read (`None`: not read; a table whose changes could not be read is never
    /// kept).
    pub changes: Option<Changes>,
}

/// A row's CHANGES and UNLANDED cells, as data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Changes {
    pub files: usize,
    pub added: u64,
    pub removed: u64,
    /// As of jj's last snapshot, taken before the last run ended (the `*`).
    pub behind: bool,
    pub unlanded: usize,
}

/// A run a row shows as live or as ended, by its process (see [`Row::run`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Run {
    pub pid: Option<u32>,
    pub start: Option<u64>,
    pub ended: bool,
}

/// The namespace's open directories, to stamp its files relative to.
pub(crate) struct Dirs {
    namespace: OwnedFd,
    state: Option<OwnedFd>,
}

impl Dirs {
    /// The namespace at `namespace` opened; `None` when it (or its state directory, when
    /// there is one) cannot be.
    pub(crate) fn open(namespace: &Path) -> Option<Dirs> {
        let state = match open_dir(&namespace.join(crate::store::state::DIR_NAME)) {
            Err(rustix::io::Errno::NOENT) => None,
            Err(_) => return None,
            Ok(dir) => Some(dir),
        };
        Some(Dirs {
            namespace: open_dir(namespace).ok()?,
            state,
        })
    }

    /// The stamps of the namespace directory, its `.locks` and its `.pool`.
    pub(crate) fn stamps(&self) -> [Option<Stamp>; 3] {
        [
            Stamp::at(&self.namespace, "."),
            Stamp::at(&self.namespace, ".locks"),
            Stamp::at(&self.namespace, crate::store::layout::POOL_DIR),
        ]
    }

    /// The stamp of the state directory (none when there is none).
    pub(crate) fn state_stamp(&self) -> Option<Stamp> {
        Stamp::at(self.state.as_ref()?, ".")
    }

    /// The stamps of workspace `id`'s state (not looked at, and none, when `no_state`) and
    /// view; `name` is a buffer to build the names in.
    pub(crate) fn row(
        &self,
        id: &str,
        no_state: bool,
        name: &mut String,
    ) -> (Option<Stamp>, Option<Stamp>) {
        let state = match (no_state, &self.state) {
            (false, Some(dir)) => {
                name.clear();
                name.push_str(id);
                name.push_str(".json");
                Stamp::at(dir, name)
            }
            _ => None,
        };
        name.clear();
        name.push_str(id);
        name.push('/');
        name.push_str(crate::store::metadata::FILE_NAME);
        (state, Stamp::at(&self.namespace, name))
    }
}

/// The body of the table kept in the cache directory `cache`, to read with [`parse`]
/// (`None`: there is none, or it is not exactly what this build kept).
pub(crate) fn read(cache: &Path) -> Option<Vec<u8>> {
    file(cache).get(env!("CARGO_PKG_VERSION").as_bytes())
}

/// The table in `body` (as [`read`] gives it), its text borrowed from it where it can be.
pub(crate) fn parse(body: &[u8]) -> Option<Table<'_>> {
    serde_json::from_slice(body).ok()
}

/// Keeps `table` in the cache directory `cache` (written whole, by rename); a table that
/// cannot be written is simply not kept.
pub(crate) fn write(cache: &Path, table: &Table<'_>) {
    if crate::store::fsutil::create_dir_nofollow(cache).is_ok() {
        let _ = file(cache).put_json(env!("CARGO_PKG_VERSION").as_bytes(), table);
    }
}

/// The file that names the latest operation heads known to have the same working copies as
/// those a kept table was made at.
fn same_view_file(cache: &Path) -> Cache {
    Cache::new(cache.join("table.v2.same-view"), "same-view", 2)
}

fn same_view_key(made_at: &str, now: &str) -> String {
    format!("{made_at}\n{now}")
}

/// Whether jj's working copies at operation heads `now` are known (from the cache directory
/// `cache`) to be those at `made_at`: a fact about two operations' views, which never change.
pub(crate) fn same_view(cache: &Path, made_at: &str, now: &str) -> bool {
    same_view_file(cache)
        .get(same_view_key(made_at, now).as_bytes())
        .is_some()
}

/// Notes in the cache directory `cache` that jj's working copies at operation heads `now`
/// are those at `made_at` (see [`same_view`]).
pub(crate) fn note_same_view(cache: &Path, made_at: &str, now: &str) {
    let _ = same_view_file(cache).put(same_view_key(made_at, now).as_bytes(), b"");
}

/// Removes the kept table of the cache directory `cache` (it no longer stands).
pub(crate) fn forget(cache: &Path) {
    file(cache).forget();
}

/// Whether every one of `stamps` was settled when the command began at `began`.
pub(crate) fn settled<'s>(
    mut stamps: impl Iterator<Item = &'s Option<Stamp>>,
    began: SystemTime,
) -> bool {
    stamps.all(|s| s.as_ref().is_none_or(|s| s.settled(began)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn sample() -> Table<'static> {
        Table {
            head: Head {
                heads: "abc,def".into(),
                dirs: [
                    Some(Stamp::new([1, 2, 3, 4, 5, 6, 7])),
                    None,
                    Some(Stamp::new([-1; 7])),
                ],
                state_dir: Some(Stamp::new([3; 7])),
                lands: false,
                working_copies: Head::working_copies_of(&[
                    ("default".into(), "00ff".into()),
                    ("w\t1".into(), "11".into()),
                ]),
            },
            rows: vec![
                Row {
                    id: "w1".into(),
                    state: None,
                    view: Some(Stamp::new([9, -9, 0, i64::MAX, i64::MIN, 1, 2])),
                    shown: Shown {
                        status: "crashed".into(),
                        parent: Some(("p\t\"q\"".into(), true)),
                        workflow: Some("a\tb\\c\nd\r".into()),
                        changes: Some(Changes {
                            files: 3,
                            added: 120,
                            removed: 4,
                            behind: true,
                            unlanded: 2,
                        }),
                    },
                    updated: Some(SystemTime::UNIX_EPOCH + Duration::new(1_700_000_000, 5)),
                    hint: Some("do this\n  and that".into()),
                    run: Some(Run {
                        pid: Some(42),
                        start: None,
                        ended: true,
                    }),
                },
                Row {
                    id: "w2".into(),
                    state: Some(Stamp::new([8; 7])),
                    view: None,
                    shown: Shown {
                        status: "done".into(),
                        parent: None,
                        workflow: None,
                        changes: None,
                    },
                    updated: None,
                    hint: None,
                    run: None,
                },
            ],
        }
    }

    #[test]
    fn a_kept_table_reads_back_as_written_and_a_damaged_one_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()), None, "nothing kept");
        write(dir.path(), &sample());
        let body = read(dir.path()).unwrap();
        assert_eq!(parse(&body), Some(sample()));
        // Plain text is borrowed from the file, not copied.
        let table = parse(&body).unwrap();
        assert!(matches!(table.rows[1].id, Cow::Borrowed(_)));
        assert!(matches!(table.rows[1].shown.status, Cow::Borrowed(_)));
        let path = dir.path().join(FILE_NAME);
        let whole = std::fs::read(&path).unwrap();
        for cut in [1, whole.len() / 2, whole.len() - 1] {
            std::fs::write(&path, &whole[..cut]).unwrap();
            assert_eq!(read(dir.path()), None, "cut at {cut}");
        }
        // The earlier version's text: a miss.
        std::fs::write(&path, "agent-workspace status table\t0.1.0\nheads\tabc\n").unwrap();
        assert_eq!(read(dir.path()), None);
        // Another build's table is not this build's.
        let other =
            String::from_utf8(whole)
                .unwrap()
                .replacen(env!("CARGO_PKG_VERSION"), "0.0.0-other", 1);
        std::fs::write(&path, other).unwrap();
        assert_eq!(read(dir.path()), None);
        // A body of another shape is no table.
        assert_eq!(parse(br#"{"head":{}}"#), None);
        write(dir.path(), &sample());
        forget(dir.path());
        assert_eq!(read(dir.path()), None);
    }

    #[test]
    fn working_copies_are_compared_name_by_name() {
        let view = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(n, c)| (n.to_string(), c.to_string()))
                .collect()
        };
        let head = sample().head;
        assert!(head.same_working_copies(&view(&[("default", "00ff"), ("w\t1", "11")])));
        assert!(!head.same_working_copies(&view(&[("default", "00ff")])));
        assert!(!head.same_working_copies(&view(&[("default", "00ff"), ("w\t1", "12")])));
        assert!(!head.same_working_copies(&view(&[
            ("default", "00ff"),
            ("w\t1", "11"),
            ("w2", "")
        ])));
    }

    #[test]
    fn the_same_view_is_noted_for_two_heads_only() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!same_view(dir.path(), "a", "b"));
        note_same_view(dir.path(), "a", "b");
        assert!(same_view(dir.path(), "a", "b"));
        assert!(!same_view(dir.path(), "a", "c"));
        assert!(!same_view(dir.path(), "a\nb", ""));
    }
}
