//! The status table, as `status` prints it and `status --watch` redraws it: one row per
//! workspace, its status coloured, a parent's column only where some workspace is a child.

use std::time::{Duration, SystemTime};

use crate::store::disk;
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

/// The cells of `e`'s row in `status`'s own table (as [`table`] makes them with only the
/// CHANGES columns) but UPDATED, and the time that cell counts from: what
/// [`plain_table`] lays out again as of another moment.
pub(crate) fn plain_row(e: &Entry, x: &Extra, parents: bool) -> (Vec<String>, Option<SystemTime>) {
    let now = SystemTime::UNIX_EPOCH;
    let cells = plain_columns(parents).map(|i| cell(e, x, i, now)).collect();
    (cells, e.shown_updated_at().and_then(|t| t.time()))
}

/// `status`'s own table laid out but for its last column, UPDATED, whose cells move with the
/// clock: each line's text up to that column, padded as [`table`] pads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    /// The header line up to UPDATED.
    pub header: String,
    /// Each row's line up to UPDATED.
    pub rows: Vec<String>,
    /// The widest UPDATED column these lines stand for (a wider one leaves the id column too
    /// little room: [`table`] then puts long ids on lines of their own); `None`: any.
    pub room: Option<usize>,
}

/// The header of `status`'s own table's last column.
const UPDATED: &str = "UPDATED";

/// Lays out rows of [`plain_row`] cells as [`table`] does, but for UPDATED; `None` when even
/// the narrowest UPDATED column leaves too little room for the ids.
pub(crate) fn plain_layout(parents: bool, rows: &[Vec<String>]) -> Option<Layout> {
    let header: Vec<&str> = plain_columns(parents).map(|i| HEADER[i]).collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        (row.len() == widths.len()).then_some(())?;
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    // As in [`fit`]: the ids fit while they are no wider than what the other columns leave.
    let middle: usize = widths[1..].iter().map(|w| w + 2).sum();
    let room = match widths[0] <= "WORKSPACE".len() {
        true => None,
        false => Some(WIDTH.checked_sub(widths[0] + middle + 2)?),
    };
    room.is_none_or(|r| r >= UPDATED.len()).then_some(())?;
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut line = String::new();
        for (cell, w) in cells.zip(&widths) {
            line.push_str(cell);
            line.extend(std::iter::repeat_n(' ', w - cell.chars().count() + 2));
        }
        line
    };
    Some(Layout {
        header: line(&mut header.iter().copied()),
        rows: rows
            .iter()
            .map(|r| line(&mut r.iter().map(String::as_str)))
            .collect(),
        room,
    })
}

/// Appends `status`'s own table from its [`Layout`] (`header` and each row's line up to
/// UPDATED, with the moment its UPDATED cell counts from) as of `now`; `false`, with `out`
/// as it was, when an UPDATED cell is wider than the layout stands for.
pub(crate) fn plain_table<'a>(
    header: &str,
    room: Option<usize>,
    rows: impl Iterator<Item = (&'a str, Option<SystemTime>)>,
    now: SystemTime,
    out: &mut String,
) -> bool {
    let start = out.len();
    let mut widest = plain_header(header, out);
    for (line, updated) in rows {
        widest = widest.max(plain_line(line, updated, now, out));
    }
    if !plain_fits(room, widest) {
        out.truncate(start);
        return false;
    }
    true
}

/// [`plain_table`]'s header line, appended to `out`; gives the width of its UPDATED cell.
pub(crate) fn plain_header(header: &str, out: &mut String) -> usize {
    out.push_str(header);
    out.push_str(UPDATED);
    out.push('\n');
    UPDATED.len()
}

/// One of [`plain_table`]'s lines, appended to `out`; gives the width of its UPDATED cell.
pub(crate) fn plain_line(
    line: &str,
    updated: Option<SystemTime>,
    now: SystemTime,
    out: &mut String,
) -> usize {
    out.push_str(line);
    let cell = out.len();
    match updated {
        Some(t) => ago_into(t, now, out),
        None => out.push('-'),
    }
    let width = out[cell..].chars().count();
    out.push('\n');
    width
}

/// Whether lines laid out for an UPDATED column of `room` (`None`: any) still fit when its
/// widest cell is `widest`.
pub(crate) fn plain_fits(room: Option<usize>, widest: usize) -> bool {
    room.is_none_or(|r| widest <= r)
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

/// `clean`, or the files changed since the base and their lines: `3 files +120 -4`; with a
/// `*` when jj's last snapshot predates the last run's end (see [`BEHIND_NOTE`]).
fn changes_text(extra: &Extra) -> String {
    let mark = |c: &crate::workspace::details::ChangeCounts| match c.may_be_behind {
        true => "*",
        false => "",
    };
    match &extra.changes {
        Some(Ok(c)) if c.files_count == 0 => format!("clean{}", mark(c)),
        Some(Ok(c)) => format!(
            "{} +{} -{}{}",
            match c.files_count {
                1 => "1 file".to_string(),
                n => format!("{n} files"),
            },
            c.added,
            c.removed,
            mark(c)
        ),
        Some(Err(_)) => "?".into(),
        None => "-".into(),
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
    match &extra.changes {
        Some(Ok(c)) => c.unlanded_commits_count.to_string(),
        Some(Err(_)) => "?".into(),
        None => "-".into(),
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
            let rows = vec![cells("a", "review"), cells(id, "-")];
            let updated = [ago_secs(3), ago_secs(secs)];
            let mut all = vec![header.map(String::from).to_vec()];
            for (row, at) in rows.iter().zip(updated) {
                let mut row = row.clone();
                row.push(at.map_or("-".into(), |t| ago(t, now)));
                all.push(row);
            }
            let mut expected = String::new();
            fit(all, false, &mut expected);
            let mut got = String::new();
            let laid = plain_layout(false, &rows).is_some_and(|layout| {
                let lines = layout.rows.iter().map(String::as_str).zip(updated);
                plain_table(&layout.header, layout.room, lines, now, &mut got)
            });
            assert_eq!(laid, kept, "{id} {secs}: {expected}");
            match laid {
                true => assert_eq!(got, expected),
                // The table puts the id on a line of its own.
                false => assert!(expected.lines().any(|l| l == id), "{expected}"),
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
