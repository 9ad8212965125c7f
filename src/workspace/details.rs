//! What `status` adds to a workspace's record: its commits and changed files (the numbers
//! of `diff --stat`), its disk usage, and (`status <ID>`) when it was last active.

use std::time::SystemTime;

use crate::error::CliError;
use crate::store::disk::{self, Usage};
use crate::store::timestamp::Timestamp;
use crate::vcs::diff::WorkCommit;
use crate::workspace::context::Context;
use crate::workspace::inventory::{Entry, Problem};

/// A workspace's changes since its base, in numbers (and its commits).
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct ChangeCounts {
    pub commits: Vec<WorkCommit>,
    /// How many of `commits` are not in the target of the land the status shows (all of
    /// them when none is shown).
    pub unlanded_commits_count: usize,
    pub files_count: usize,
    pub added: u64,
    pub removed: u64,
    pub binary_count: usize,
    /// The moment the files show: `live-files`, or `last-snapshot` (jj read without
    /// snapshotting: the table always, one workspace while a run holds it).
    #[cfg_attr(test, schemars(extend("enum" = ["live-files", "last-snapshot"])))]
    pub files_as_of: &'static str,
    /// With `last-snapshot`: when jj wrote the working-copy commit read.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    pub snapshot_at: Option<Timestamp>,
    /// With `last-snapshot`: its last run started or ended after that snapshot, so files it
    /// wrote may be missing (`diff <ID>` reads them now).
    pub may_be_behind: bool,
}

/// What is measured beyond the records: disk usage (`--size`), its changes since its base,
/// and for one workspace its last activity.
#[derive(Default)]
pub(crate) struct Extra {
    pub usage: Option<Usage>,
    pub changes: Option<Result<ChangeCounts, CliError>>,
    pub last_activity: Option<Timestamp>,
}

/// How many workspaces' changes are read at once.
const READERS: usize = 4;

/// Measures, per entry, what is asked: disk usage with `size`, changes (for the table read
/// without any snapshot: a few cheap backend queries per workspace, several workspaces at
/// once), and for the view of `one` workspace its last activity.
pub(crate) fn measure(ctx: &Context, entries: &[Entry], one: bool, size: bool) -> Vec<Extra> {
    let changes = read_all(ctx, entries, one);
    entries
        .iter()
        .zip(changes)
        .map(|(entry, changes)| {
            let usage = size.then(|| self::usage(entry)).flatten();
            Extra {
                changes,
                last_activity: one.then(|| last_activity(entry, usage.as_ref())).flatten(),
                usage,
            }
        })
        .collect()
}

/// [`changes`] of every entry: first those whose answers the backend kept (no process),
/// then the rest [`READERS`] at a time. jj snapshots only for the view of one workspace no
/// live run holds; the table never snapshots.
fn read_all(
    ctx: &Context,
    entries: &[Entry],
    one: bool,
) -> Vec<Option<Result<ChangeCounts, CliError>>> {
    // One moment for the whole table, and the cache directory made once.
    let _pin = ctx.vcs.pin_view(!one);
    let mut all: Vec<_> = (0..entries.len()).map(|_| None).collect();
    let mut rest = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let Some(record) = comparable(entry) else {
            continue;
        };
        let snapshot = one && !entry.is_live();
        match (!snapshot)
            .then(|| {
                ctx.vcs
                    .kept_changes(&entry.id, crate::vcs::diff::Since::of(record))
            })
            .flatten()
        {
            Some(found) => all[i] = Some(Ok(counts(record, found))),
            None => rest.push(i),
        }
    }
    if rest.is_empty() {
        return all;
    }
    let prepared = crate::store::fsutil::create_dir_nofollow(&ctx.layout.cache()).is_ok();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let found = std::sync::Mutex::new(Vec::with_capacity(rest.len()));
    let work = || loop {
        let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Some(&i) = rest.get(n) else { break };
        let entry = &entries[i];
        let counts = changes(ctx, entry, one && !entry.is_live(), prepared);
        if let Ok(mut found) = found.lock() {
            found.push((i, counts));
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..READERS.min(rest.len()) {
            scope.spawn(work);
        }
        work();
    });
    for (i, counts) in found.into_inner().unwrap_or_default() {
        all[i] = counts;
    }
    all
}

/// The record of `entry` when its workspace has a directory and record to compare with its
/// base (otherwise a problem `status` already shows).
fn comparable(entry: &Entry) -> Option<&crate::store::metadata::Record> {
    let record = entry.record.as_ref()?;
    let comparable = match &entry.problem {
        None => true,
        Some(p) => matches!(
            p,
            Problem::Crashed | Problem::TamperedRecord | Problem::Mismatch(_)
        ),
    };
    comparable.then_some(record)
}

/// The changes of the workspace of `entry`, or `None` when it has no directory and record
/// to compare (a problem `status` already shows). With `snapshot`, jj snapshots its files
/// first; `prepared` when the namespace's cache directory was made already.
fn changes(
    ctx: &Context,
    entry: &Entry,
    snapshot: bool,
    prepared: bool,
) -> Option<Result<ChangeCounts, CliError>> {
    let record = comparable(entry)?;
    Some(
        match prepared {
            true => {
                super::changes::read_prepared(ctx, &entry.id, record, &entry.path, snapshot, false)
            }
            false => super::changes::read(ctx, &entry.id, record, &entry.path, snapshot, false),
        }
        .map(|found| counts(record, found)),
    )
}

/// The numbers of `found`, the changes of the workspace whose record is `record`.
fn counts(
    record: &crate::store::metadata::Record,
    found: crate::vcs::diff::Changes,
) -> ChangeCounts {
    // The last land's commits, unless it was not applied or is known undone.
    let undone = record.shown_land().is_some()
        && record.land_check == crate::store::metadata::LandCheck::Undone;
    let landed: Vec<&str> = record
        .land
        .as_ref()
        .filter(|land| !land.unapplied && !undone)
        .map(|land| land.commits.iter().map(String::as_str).collect())
        .unwrap_or_default();
    // jj: a landed commit is known by its change, so one the user reworded or rebased in
    // the target since is still landed.
    let landed_changes: &[String] = match undone {
        true => &[],
        false => record.landed_changes(),
    };
    let is_landed = |c: &WorkCommit| {
        landed.contains(&c.commit_id.as_str())
            || c.change_id
                .as_ref()
                .is_some_and(|ch| landed_changes.contains(ch))
    };
    // The run's last moment jj may not have seen: its start while it runs, else its end.
    let run_moment = match record.status {
        crate::store::metadata::Status::Running => record.started_at.as_ref(),
        _ => record.finished_at.as_ref(),
    };
    ChangeCounts {
        files_count: found.files.len(),
        added: found.files.iter().map(|f| f.added).sum(),
        removed: found.files.iter().map(|f| f.removed).sum(),
        binary_count: found.files.iter().filter(|f| f.binary).count(),
        unlanded_commits_count: found.commits.iter().filter(|c| !is_landed(c)).count(),
        files_as_of: found.as_of.code(),
        snapshot_at: found.as_of.snapshot_at().cloned(),
        may_be_behind: match (&found.as_of, run_moment) {
            (crate::vcs::diff::AsOf::LastSnapshot(at), Some(run)) => {
                let at = at.as_ref().and_then(Timestamp::time);
                let run = run.time();
                // Both to the second: a run that ended in the snapshot's second may have
                // written after it (a fresh workspace's first quick run), so it may be behind.
                at.is_none_or(|at| run.is_some_and(|run| run >= at))
            }
            _ => false,
        },
        commits: found.commits,
    }
}

/// The disk usage of the workspace of `entry`, when its directory is a real one.
pub(crate) fn usage(entry: &Entry) -> Option<Usage> {
    let meta = std::fs::symlink_metadata(&entry.path).ok()?;
    meta.is_dir().then(|| disk::usage(&entry.path))
}

/// The newest of the record's last update and, when measured, the newest file time.
pub(crate) fn last_activity(entry: &Entry, usage: Option<&Usage>) -> Option<Timestamp> {
    let recorded = entry.updated_at().and_then(|t| t.time());
    let newest: Option<SystemTime> = recorded.max(usage.and_then(|u| u.newest));
    newest.map(Timestamp::from_time)
}
