//! What `status <ID>` adds to a workspace's record: its commits and changed files (the
//! numbers of `diff --stat`), its disk usage, and when it was last active.

use std::time::SystemTime;

use crate::error::CliError;
use crate::store::disk::{self, Usage};
use crate::vcs::diff::WorkCommit;
use crate::workspace::context::Context;
use crate::workspace::inventory::{Entry, Problem};

/// A workspace's changes since its base, in numbers (and its commits).
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct ChangeCounts {
    pub commits: Vec<WorkCommit>,
    pub files: usize,
    pub insertions: u64,
    pub deletions: u64,
    pub binary: usize,
}

/// What is measured beyond the records: disk usage (`--size`), and for one workspace its
/// changes since its base and its last activity.
#[derive(Default)]
pub(crate) struct Extra {
    pub usage: Option<Usage>,
    pub changes: Option<Result<ChangeCounts, CliError>>,
    pub last_activity: Option<String>,
}

/// Measures, per entry, what is asked: disk usage with `size`, changes and last activity
/// for the view of `one` workspace; nothing (no backend call, no walk) for a plain table.
pub(crate) fn measure(ctx: &Context, entries: &[Entry], one: bool, size: bool) -> Vec<Extra> {
    entries
        .iter()
        .map(|entry| {
            let usage = size.then(|| self::usage(entry)).flatten();
            match one {
                true => Extra {
                    changes: changes(ctx, entry),
                    last_activity: last_activity(entry, usage.as_ref()),
                    usage,
                },
                false => Extra {
                    usage,
                    ..Extra::default()
                },
            }
        })
        .collect()
}

/// The changes of the workspace of `entry`, or `None` when it has no directory and record
/// to compare (a problem `status` already shows).
pub(crate) fn changes(ctx: &Context, entry: &Entry) -> Option<Result<ChangeCounts, CliError>> {
    let record = entry.record.as_ref()?;
    let comparable = match &entry.problem {
        None => true,
        Some(p) => matches!(
            p,
            Problem::Crashed | Problem::TamperedRecord | Problem::Mismatch(_)
        ),
    };
    if !comparable {
        return None;
    }
    Some(
        super::changes::read(ctx, record, &entry.path).map(|found| ChangeCounts {
            files: found.files.len(),
            insertions: found.files.iter().map(|f| f.insertions).sum(),
            deletions: found.files.iter().map(|f| f.deletions).sum(),
            binary: found.files.iter().filter(|f| f.binary).count(),
            commits: found.commits,
        }),
    )
}

/// The disk usage of the workspace of `entry`, when its directory is a real one.
pub(crate) fn usage(entry: &Entry) -> Option<Usage> {
    let meta = std::fs::symlink_metadata(&entry.path).ok()?;
    meta.is_dir().then(|| disk::usage(&entry.path))
}

/// The newest of the record's last update and, when measured, the newest file time.
pub(crate) fn last_activity(entry: &Entry, usage: Option<&Usage>) -> Option<String> {
    let recorded = entry
        .updated_at()
        .and_then(crate::store::metadata::parse_time);
    let newest: Option<SystemTime> = recorded.max(usage.and_then(|u| u.newest));
    newest.map(|t| humantime::format_rfc3339_seconds(t).to_string())
}
