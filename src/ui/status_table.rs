//! The status table, as `status` prints it and `status --watch` redraws it: one row per
//! workspace, its status coloured, a parent's column only where some workspace is a child.

use std::time::{Duration, SystemTime};

use crate::store::disk;
use crate::store::kept_table::{Changes, Row, Shown};
use crate::store::metadata::Status;
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
    /// CHANGES and UNLANDED (not `--watch`, which redraws too often to ask the backend).
    pub changes: bool,
    /// PATH (`--paths`).
    pub paths: bool,
}

/// The width the table keeps to: a workspace id too long to fit its row in it goes on a
/// line of its own, the rest of its row below it.
pub(crate) const WIDTH: usize = 80;

/// The table's columns, in order (each shown or not).
const HEADER: [&str; 11] = [
    "WORKSPACE",
    "STATUS",
    "PARENT",
    "WORKFLOW",
    "RUN TIME",
    "EXIT",
    "CHANGES",
    "UNLANDED",
    "UPDATED",
    "SIZE",
    "PATH",
];

/// Appends the table: WORKSPACE STATUS [PARENT] WORKFLOW [RUN TIME EXIT] [CHANGES UNLANDED]
/// UPDATED [SIZE] [PATH].
pub(crate) fn table(entries: &[Entry], extra: &[Extra], columns: Columns, out: &mut String) {
    let parents = has_parents(entries);
    let shown = [
        true,
        true,
        parents,
        true,
        columns.run_time_at.is_some(),
        columns.run_time_at.is_some(),
        columns.changes,
        columns.changes,
        true,
        columns.size,
        columns.paths,
    ];
    let header = HEADER.map(String::from);
    let now = columns.run_time_at.unwrap_or_else(SystemTime::now);
    // Only the shown columns' cells are made (a thousand rows of a path nobody asked for
    // cost as much as the rest of the row).
    let columns_shown: Vec<usize> = (0..shown.len()).filter(|&i| shown[i]).collect();
    let mut selected: Vec<Vec<String>> = Vec::with_capacity(entries.len() + 1);
    selected.push(columns_shown.iter().map(|&i| header[i].clone()).collect());
    for (e, x) in entries.iter().zip(extra) {
        selected.push(columns_shown.iter().map(|&i| cell(e, x, i, now)).collect());
    }
    fit(selected, columns.paths, out);
}

/// One cell of the table: column `column` (as numbered in [`table`]) of `e`'s row.
fn cell(e: &Entry, x: &Extra, column: usize, now: SystemTime) -> String {
    let record = e.known_record();
    match column {
        0 => e.id.to_string(),
        1 => e.status().to_string(),
        2 => parent_text(e),
        3 => record
            .and_then(|r| r.workflow.clone())
            .unwrap_or_else(|| "-".into()),
        4 => run_time(e, now).map_or("-".into(), human_duration),
        5 => record
            .and_then(|r| r.exit_code)
            .filter(|_| !e.is_live())
            .map_or("-".into(), |c| c.to_string()),
        6 => changes_text(x),
        7 => unlanded_text(x),
        8 => e
            .shown_updated_at()
            .and_then(|t| t.time())
            .map_or("-".into(), |t| ago(t, now)),
        9 => x.usage.map_or("-".into(), |u| disk::human(u.allocated)),
        _ => e.path.display().to_string(),
    }
}

/// The columns of `status`'s own table (no option) before UPDATED, with PARENT when
/// `parents`, numbered as in [`table`].
fn plain_columns(parents: bool) -> impl Iterator<Item = usize> {
    [0, 1, 2, 3, 6, 7]
        .into_iter()
        .filter(move |&i| i != 2 || parents)
}

/// Whether `status`'s own table has a PARENT column: some workspace is a child.
pub(crate) fn has_parents(entries: &[Entry]) -> bool {
    entries
        .iter()
        .any(|e| e.record.as_ref().is_some_and(|r| r.parent.is_some()))
}

/// What `e`'s row in `status`'s own table shows, as data the table keeps
/// ([`crate::store::kept_table`]) and [`kept`] lays out again.
pub(crate) fn shown<'e>(e: &'e Entry, x: &Extra) -> Shown<'e> {
    Shown {
        status: e.status().into(),
        parent: parent(e).map(|(p, gone)| (p.to_string(), gone)),
        workflow: e.known_record().and_then(|r| r.workflow.clone()),
        changes: match changes_of(x) {
            Some(Ok(c)) => Some(c),
            _ => None,
        },
    }
}

/// The header of `status`'s own table's last column.
const UPDATED: &str = "UPDATED";

/// Appends `status`'s own table laid out from kept `rows` as of `now`, as [`table`] lays it
/// out from the files (with only the CHANGES columns); `false`, with `out` as it was, when
/// an id is too long for its row (the table then puts it on a line of its own).
pub(crate) fn kept(rows: &[Row<'_>], now: SystemTime, out: &mut String) -> bool {
    let parents = rows.iter().any(|r| r.shown.parent.is_some());
    let columns: Vec<usize> = plain_columns(parents).collect();
    let count = columns.len() + 1;
    let mut widths: Vec<usize> = columns.iter().map(|&i| HEADER[i].len()).collect();
    widths.push(UPDATED.len());
    // Every cell made once, into one buffer: where each ends and its width.
    let mut cells_text = String::with_capacity(rows.len() * 64);
    let mut cells: Vec<(usize, usize)> = Vec::with_capacity(rows.len() * count);
    for row in rows {
        for (k, &column) in columns.iter().enumerate() {
            let start = cells_text.len();
            kept_cell(row, column, &mut cells_text);
            let width = cells_text[start..].chars().count();
            widths[k] = widths[k].max(width);
            cells.push((cells_text.len(), width));
        }
        let start = cells_text.len();
        match row.updated {
            Some(t) => ago_into(t, now, &mut cells_text),
            None => cells_text.push('-'),
        }
        // ASCII.
        let width = cells_text.len() - start;
        widths[count - 1] = widths[count - 1].max(width);
        cells.push((cells_text.len(), width));
    }
    // As [`fit`]: the ids fit while they are no wider than what the other columns leave.
    let rest: usize = widths[1..].iter().map(|w| w + 2).sum();
    if widths[0] > WIDTH.saturating_sub(rest).max("WORKSPACE".len()) {
        return false;
    }
    // As [`output::columns`]: each cell padded to its column's width, then two spaces; the
    // last (UPDATED, never blank) as it is.
    let pad = |out: &mut String, k: usize, width: usize| {
        if k + 1 < count {
            out.extend(std::iter::repeat_n(' ', widths[k] - width + 2));
        }
    };
    for (k, header) in columns
        .iter()
        .map(|&i| HEADER[i])
        .chain([UPDATED])
        .enumerate()
    {
        out.push_str(header);
        pad(out, k, header.len());
    }
    out.push('\n');
    let mut start = 0;
    for row in cells.chunks(count) {
        for (k, &(end, width)) in row.iter().enumerate() {
            out.push_str(&cells_text[start..end]);
            pad(out, k, width);
            start = end;
        }
        out.push('\n');
    }
    true
}

/// Appends column `column` (as numbered in [`table`]) of the kept `row`, as [`cell`] makes it.
fn kept_cell(row: &Row<'_>, column: usize, out: &mut String) {
    let shown = &row.shown;
    match column {
        0 => out.push_str(&row.id),
        1 => out.push_str(&shown.status),
        2 => push_parent(
            shown.parent.as_ref().map(|(p, gone)| (p.as_str(), *gone)),
            out,
        ),
        3 => out.push_str(shown.workflow.as_deref().unwrap_or("-")),
        6 => push_changes(shown.changes.map(Ok), out),
        _ => push_unlanded(shown.changes.map(Ok), out),
    }
}

/// Lays `rows` out as columns within [`WIDTH`] (the last column, a path, excepted when
/// `paths`): an id longer than the room left by the other columns goes on its own line.
fn fit(rows: Vec<Vec<String>>, paths: bool, out: &mut String) {
    let count = rows.first().map_or(0, Vec::len);
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    // The room the other columns leave (a path, shown last, may run past it).
    let rest: usize = (1..count.saturating_sub(usize::from(paths)))
        .map(|i| width(i) + 2)
        .sum();
    let room = WIDTH.saturating_sub(rest).max("WORKSPACE".len());
    if width(0) <= room {
        return output::columns(rows, out);
    }
    // A long id is printed alone, its row below it with an empty id cell.
    let long: Vec<Option<String>> = rows
        .iter()
        .map(|r| (r[0].chars().count() > room).then(|| r[0].clone()))
        .collect();
    let rows = rows.into_iter().zip(&long).map(|(mut row, long)| {
        if long.is_some() {
            row[0].clear();
        }
        row
    });
    let mut table = String::new();
    output::columns(rows, &mut table);
    for (line, id) in table.lines().zip(long) {
        if let Some(id) = id {
            out.push_str(&id);
            out.push('\n');
        }
        out.push_str(line);
        out.push('\n');
    }
}

/// A row's changes as data: `Err` when they could not be read, `None` when not asked.
fn changes_of(extra: &Extra) -> Option<Result<Changes, ()>> {
    match &extra.changes {
        Some(Ok(c)) => Some(Ok(Changes {
            files: c.files_count,
            added: c.added,
            removed: c.removed,
            behind: c.may_be_behind,
            unlanded: c.unlanded_commits_count,
        })),
        Some(Err(_)) => Some(Err(())),
        None => None,
    }
}

/// `clean`, or the files changed since the base and their lines: `3 files +120 -4`; with a
/// `*` when jj's last snapshot predates the last run's end (see [`BEHIND_NOTE`]).
fn changes_text(extra: &Extra) -> String {
    let mut text = String::new();
    push_changes(changes_of(extra), &mut text);
    text
}

/// [`changes_text`] of `changes`, appended to `out`.
fn push_changes(changes: Option<Result<Changes, ()>>, out: &mut String) {
    use std::fmt::Write as _;
    match changes {
        Some(Ok(c)) => {
            // Writing to a String cannot fail.
            let _ = match c.files {
                0 => write!(out, "clean"),
                1 => write!(out, "1 file +{} -{}", c.added, c.removed),
                n => write!(out, "{n} files +{} -{}", c.added, c.removed),
            };
            if c.behind {
                out.push('*');
            }
        }
        Some(Err(())) => out.push('?'),
        None => out.push('-'),
    }
}

/// What a `*` after the changes means, for the note below the table.
pub(crate) const BEHIND_NOTE: &str = "*: as of jj's last snapshot, taken before its last run ended (the table never snapshots); `agent-workspace diff ID` reads its files now";

/// Whether some row's changes carry the `*` of [`BEHIND_NOTE`].
pub(crate) fn any_behind(extra: &[Extra]) -> bool {
    extra
        .iter()
        .any(|x| matches!(&x.changes, Some(Ok(c)) if c.may_be_behind))
}

/// The commits not yet landed, or `-` when they could not be read.
fn unlanded_text(extra: &Extra) -> String {
    let mut text = String::new();
    push_unlanded(changes_of(extra), &mut text);
    text
}

/// [`unlanded_text`] of `changes`, appended to `out`.
fn push_unlanded(changes: Option<Result<Changes, ()>>, out: &mut String) {
    use std::fmt::Write as _;
    match changes {
        // Writing to a String cannot fail.
        Some(Ok(c)) => drop(write!(out, "{}", c.unlanded)),
        Some(Err(())) => out.push('?'),
        None => out.push('-'),
    }
}

/// How long before `now` the time `then` was: `just now`, `42s ago`, `5m ago`, `3h ago`,
/// `2d ago`.
pub(crate) fn ago(then: SystemTime, now: SystemTime) -> String {
    let mut text = String::new();
    ago_into(then, now, &mut text);
    text
}

/// [`ago`], appended to `out`.
fn ago_into(then: SystemTime, now: SystemTime, out: &mut String) {
    let s = now.duration_since(then).unwrap_or_default().as_secs();
    let (n, unit) = match s {
        0..5 => return out.push_str("just now"),
        5..60 => (s, "s ago"),
        60..3600 => (s / 60, "m ago"),
        3600..86400 => (s / 3600, "h ago"),
        _ => (s / 86400, "d ago"),
    };
    // The digits by hand: a table of a thousand rows makes a thousand cells.
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend(digits[at..].iter().map(|&d| char::from(d)));
    out.push_str(unit);
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
    let parent = entry.record.as_ref()?.parent.as_ref()?;
    // A name that is no id names no workspace: shown as written, never joined into a path.
    let gone = parent.id().map_or(true, |id| {
        entry
            .path
            .parent()
            .is_none_or(|ns| std::fs::symlink_metadata(ns.join(id.as_str())).is_err())
    });
    Some((parent.as_written(), gone))
}

/// The parent as the table and the detail view show it.
pub(crate) fn parent_text(entry: &Entry) -> String {
    let mut text = String::new();
    push_parent(parent(entry), &mut text);
    text
}

/// [`parent_text`] of a parent and whether it is gone, appended to `out`.
fn push_parent(parent: Option<(&str, bool)>, out: &mut String) {
    match parent {
        Some((p, gone)) => {
            out.push_str(p);
            if gone {
                out.push_str(" (orphaned)");
            }
        }
        None => out.push('-'),
    }
}

/// How long the latest run took, or for a live run how long it has run up to `now`.
fn run_time(entry: &Entry, now: SystemTime) -> Option<Duration> {
    let record = entry.record.as_ref()?;
    let started = record.started_at.as_ref()?;
    match (&record.finished_at, record.status) {
        (_, Status::Running) if entry.is_live() => started.age(now),
        (Some(finished), _) => started.until(finished),
        (None, _) => None,
    }
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

    #[test]
    fn a_long_id_goes_on_its_own_line_and_rows_keep_to_the_width() {
        let row = |cells: &[&str]| cells.iter().map(|c| c.to_string()).collect::<Vec<_>>();
        let long = "x".repeat(70);
        let rows = vec![
            row(&["WORKSPACE", "STATUS", "CHANGES"]),
            row(&["w1", "done", "clean"]),
            row(&[&long, "running", "2 files +3 -1"]),
        ];
        let mut out = String::new();
        fit(rows, false, &mut out);
        assert_eq!(
            out,
            format!(
                "WORKSPACE  STATUS   CHANGES\nw1         done     clean\n{long}\n           running  2 files +3 -1\n"
            )
        );
        assert!(out.lines().all(|l| l.chars().count() <= WIDTH));
        // Short ids: the table as it is.
        let mut short = String::new();
        fit(
            vec![row(&["WORKSPACE", "STATUS"]), row(&["w1", "done"])],
            false,
            &mut short,
        );
        assert_eq!(short, "WORKSPACE  STATUS\nw1         done\n");
    }

    #[test]
    fn a_kept_layout_lays_out_as_the_table_does_or_not_at_all() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        let ago_secs = |s: u64| Some(now - Duration::from_secs(s));
        let cells = |id: &str, workflow: &str| -> Vec<String> {
            [id, "done", workflow, "clean", "0"]
                .map(String::from)
                .to_vec()
        };
        let header = [
            "WORKSPACE",
            "STATUS",
            "WORKFLOW",
            "CHANGES",
            "UNLANDED",
            "UPDATED",
        ];
        let cases = [
            ("w1", 0, true),
            ("w1", 4000 * 86400, true),
            (&*"x".repeat(33), 0, true),
            (&*"x".repeat(33), 4000 * 86400, false),
            (&*"x".repeat(40), 7, false),
        ];
        for (id, secs, kept) in cases {
            let rows = [cells("a", "review"), cells(id, "-")];
            let updated = [ago_secs(3), ago_secs(secs)];
            let mut all = vec![header.map(String::from).to_vec()];
            for (row, at) in rows.iter().zip(updated) {
                let mut row = row.clone();
                row.push(at.map_or("-".into(), |t| ago(t, now)));
                all.push(row);
            }
            let mut expected = String::new();
            fit(all, false, &mut expected);
            let kept_rows: Vec<Row<'_>> = rows
                .iter()
                .zip(updated)
                .map(|(cells, updated)| Row {
                    id: cells[0].as_str().into(),
                    state: None,
                    view: None,
                    shown: Shown {
                        status: cells[1].as_str().into(),
                        parent: None,
                        workflow: (cells[2] != "-").then(|| cells[2].clone()),
                        changes: Some(Changes {
                            files: 0,
                            added: 0,
                            removed: 0,
                            behind: false,
                            unlanded: 0,
                        }),
                    },
                    updated,
                    hint: None,
                    run: None,
                })
                .collect();
            let mut got = String::from("before\n");
            let laid = super::kept(&kept_rows, now, &mut got);
            let got = got.strip_prefix("before\n").unwrap_or("?").to_string();
            assert_eq!(laid, kept, "{id} {secs}: {expected}");
            match laid {
                true => assert_eq!(got, expected),
                // The table puts the id on a line of its own; nothing was appended.
                false => {
                    assert!(expected.lines().any(|l| l == id), "{expected}");
                    assert_eq!(got, "");
                }
            }
        }
    }

    #[test]
    fn times_read_as_how_long_ago() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let ago_secs = |s| ago(now - Duration::from_secs(s), now);
        assert_eq!(ago_secs(0), "just now");
        assert_eq!(ago_secs(42), "42s ago");
        assert_eq!(ago_secs(300), "5m ago");
        assert_eq!(ago_secs(3 * 3600 + 5), "3h ago");
        assert_eq!(ago_secs(2 * 86400), "2d ago");
        // Every boundary, and numbers of one to several digits.
        assert_eq!(ago_secs(4), "just now");
        assert_eq!(ago_secs(5), "5s ago");
        assert_eq!(ago_secs(59), "59s ago");
        assert_eq!(ago_secs(60), "1m ago");
        assert_eq!(ago_secs(3599), "59m ago");
        assert_eq!(ago_secs(3600), "1h ago");
        assert_eq!(ago_secs(86399), "23h ago");
        assert_eq!(ago_secs(86400), "1d ago");
        assert_eq!(ago_secs(999_999), "11d ago");
        let long = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000 * 86400 + 7);
        assert_eq!(ago(SystemTime::UNIX_EPOCH, long), "1000d ago");
        // A time in the future (a clock set back) is now.
        assert_eq!(ago(now + Duration::from_secs(9), now), "just now");
    }
}
