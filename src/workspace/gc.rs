//! `gc`: which workspaces the configured retention (`retention.<status>`) lets go, and why.
//! The removal itself is `remove::remove`, as for `clean`: edits kept, unkept files kept
//! aside, nothing outside the root deleted.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use crate::config::RetentionStatus;
use crate::store::layout::WorkspaceId;
use crate::store::lock;
use crate::workspace::inventory::{Entry, Problem};

/// Why a workspace is past its retention.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Expiry {
    /// The status whose retention applies.
    pub status: RetentionStatus,
    /// That status's configured retention.
    pub retention: Duration,
    /// How long ago the workspace reached it (its run finished, its land, its last update).
    pub age: Duration,
}

/// A workspace past its retention, and whether it must be left alone anyway.
pub(crate) struct Candidate {
    pub entry: Entry,
    pub expiry: Expiry,
    /// Why it is kept although expired (a live run, another process holding it, a problem).
    pub skip: Option<String>,
}

/// The entries whose status has a retention they have outlived, in the inventory's order.
pub(crate) fn select(
    entries: Vec<Entry>,
    retention: &BTreeMap<RetentionStatus, Duration>,
    lease: impl Fn(&WorkspaceId) -> std::path::PathBuf,
    now: SystemTime,
) -> Vec<Candidate> {
    entries
        .into_iter()
        .filter_map(|entry| {
            let status = RetentionStatus::of(entry.status())?;
            let kept_for = *retention.get(&status)?;
            let since = reached_at(&entry, status)?;
            let age = now.duration_since(since).unwrap_or_default();
            if age < kept_for {
                return None;
            }
            let skip = refusal(&entry, lock::is_held(&lease(&entry.id)));
            Some(Candidate {
                entry,
                expiry: Expiry {
                    status,
                    retention: kept_for,
                    age,
                },
                skip,
            })
        })
        .collect()
}

/// Keeps the candidates of `retention.landed` whose land is not verified now (`landed`
/// tells whether all of a workspace's work is in its land's target): a land undone, or work
/// made since, is not removed as landed.
pub(crate) fn verify_landed(candidates: &mut [Candidate], landed: impl Fn(&Entry) -> bool) {
    for c in candidates.iter_mut() {
        if c.expiry.status == RetentionStatus::Landed && c.skip.is_none() && !landed(&c.entry) {
            c.skip = Some(
                "its work is not all in its land's target now (work since the land, or the land undone)"
                    .into(),
            );
        }
    }
}

/// When the workspace reached its status: its land for `landed`, else the end of its last
/// run, else its record's last update. Unknown (never expired) without a readable record.
fn reached_at(entry: &Entry, status: RetentionStatus) -> Option<SystemTime> {
    let record = entry.record.as_ref()?;
    let land = record.land.as_ref().map(|l| &l.at);
    let at = match status {
        RetentionStatus::Landed => land,
        _ => None,
    };
    at.or(record.finished_at.as_ref())
        .unwrap_or(&record.updated_at)
        .time()
}

/// Why an expired workspace is kept: `gc` removes only what `clean` would without `--force`.
fn refusal(entry: &Entry, lease_held: bool) -> Option<String> {
    if entry.is_live() {
        let pid = entry.record.as_ref().and_then(|r| r.pid).unwrap_or(0);
        return Some(format!("a run is live (pid {pid}); gc never stops a run"));
    }
    if lease_held {
        return Some(
            "another agent-workspace process holds it (creating, running or cleaning it)".into(),
        );
    }
    match &entry.problem {
        None | Some(Problem::Crashed | Problem::Renamed(_) | Problem::TamperedRecord) => None,
        Some(problem) => Some(format!(
            "it has a problem ({}); look at `agent-workspace status {}` and clean it by hand",
            problem.code(),
            entry.id
        )),
    }
}

/// A duration in its largest whole unit: `7d`, `3h`, `12m`, `40s`.
pub(crate) fn short(duration: Duration) -> String {
    let secs = duration.as_secs();
    match secs {
        s if s >= 86_400 => format!("{}d", s / 86_400),
        s if s >= 3_600 => format!("{}h", s / 3_600),
        s if s >= 60 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::short;
    use std::time::Duration;

    #[test]
    fn durations_read_in_their_largest_unit() {
        assert_eq!(short(Duration::from_secs(7 * 86_400)), "7d");
        assert_eq!(short(Duration::from_secs(90 * 60)), "1h");
        assert_eq!(short(Duration::from_secs(1800)), "30m");
        assert_eq!(short(Duration::from_secs(5)), "5s");
    }
}
