//! The status table, as `status` prints it and `status --watch` redraws it: one row per
//! workspace, its status coloured, a parent's column only where some workspace is a child.

use std::time::{Duration, SystemTime};

use crate::store::disk;
use crate::store::metadata::{self, Status};
use crate::ui::output;
use crate::workspace::details::Extra;
use crate::workspace::inventory::Entry;

/// Which optional columns the table has.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Columns {
    /// SIZE (`--size`).
    pub size: bool,
    /// RUN TIME and EXIT (`--watch`), a running run's time counted up to this moment.
    pub run_time_at: Option<SystemTime>,
}

/// Appends the table: WORKSPACE STATUS [PARENT] WORKFLOW [RUN TIME EXIT] UPDATED BACKEND
/// [SIZE] PATH.
pub(crate) fn table(entries: &[Entry], extra: &[Extra], columns: Columns, out: &mut String) {
    let parents = entries
        .iter()
        .any(|e| e.record.as_ref().is_some_and(|r| r.parent.is_some()));
    let shown = [
        true,
        true,
        parents,
        true,
        columns.run_time_at.is_some(),
        columns.run_time_at.is_some(),
        true,
        true,
        columns.size,
        true,
    ];
    let header = [
        "WORKSPACE",
        "STATUS",
        "PARENT",
        "WORKFLOW",
        "RUN TIME",
        "EXIT",
        "UPDATED",
        "BACKEND",
        "SIZE",
        "PATH",
    ]
    .map(String::from);
    let now = columns.run_time_at.unwrap_or_else(SystemTime::now);
    let rows = entries.iter().zip(extra).map(|(e, x)| {
        let record = e.record.as_ref();
        [
            e.id.clone(),
            e.status().to_string(),
            parent_text(e),
            record
                .and_then(|r| r.workflow.clone())
                .unwrap_or_else(|| "-".into()),
            run_time(e, now).map_or("-".into(), human_duration),
            record
                .and_then(|r| r.exit_code)
                .filter(|_| !e.is_live())
                .map_or("-".into(), |c| c.to_string()),
            e.updated_at().unwrap_or("-").to_string(),
            record.map_or("-", |r| r.backend.as_str()).to_string(),
            x.usage.map_or("-".into(), |u| disk::human(u.allocated)),
            e.path.display().to_string(),
        ]
    });
    let selected = std::iter::once(header).chain(rows).map(|row| {
        row.into_iter()
            .zip(shown)
            .filter_map(|(cell, shown)| shown.then_some(cell))
            .collect::<Vec<_>>()
    });
    output::columns(selected, out);
}

/// The colour of a status in the table: green done, cyan running, yellow interrupted, red an
/// error, a crash or a problem; idle plain.
pub(crate) fn status_style(status: &str) -> Option<anstyle::Style> {
    use anstyle::AnsiColor::{Cyan, Green, Red, Yellow};
    let colour = match status {
        "idle" => return None,
        "done" => Green,
        "running" => Cyan,
        "interrupted" => Yellow,
        _ => Red,
    };
    let style = anstyle::Style::new().fg_color(Some(colour.into()));
    Some(if matches!(colour, Red) {
        style.bold()
    } else {
        style
    })
}

/// The parent of a child workspace and whether it is gone (the child is then orphaned): one
/// stat, no backend call.
pub(crate) fn parent(entry: &Entry) -> Option<(&str, bool)> {
    let parent = entry.record.as_ref()?.parent.as_deref()?;
    let gone = entry
        .path
        .parent()
        .is_none_or(|ns| std::fs::symlink_metadata(ns.join(parent)).is_err());
    Some((parent, gone))
}

/// The parent as the table and the detail view show it.
pub(crate) fn parent_text(entry: &Entry) -> String {
    match parent(entry) {
        Some((p, true)) => format!("{p} (orphaned)"),
        Some((p, false)) => p.to_string(),
        None => "-".into(),
    }
}

/// How long the latest run took, or for a live run how long it has run up to `now`.
fn run_time(entry: &Entry, now: SystemTime) -> Option<Duration> {
    let record = entry.record.as_ref()?;
    let started = metadata::parse_time(record.started_at.as_deref()?)?;
    let ended = match (&record.finished_at, record.status) {
        (_, Status::Running) if entry.is_live() => now,
        (Some(finished), _) => metadata::parse_time(finished)?,
        (None, _) => return None,
    };
    Some(ended.duration_since(started).unwrap_or_default())
}

/// `42s`, `3m05s`, `2h07m`.
fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_seconds_minutes_or_hours() {
        let d = Duration::from_secs;
        assert_eq!(human_duration(d(0)), "0s");
        assert_eq!(human_duration(d(59)), "59s");
        assert_eq!(human_duration(d(185)), "3m05s");
        assert_eq!(human_duration(d(7620)), "2h07m");
    }
}
