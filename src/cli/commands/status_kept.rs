//! `status`'s own table (no option) answered from the table kept whole in the namespace's
//! cache ([`kept_table`]) while nothing it stands on changed, and kept again each time it is
//! made from the files. What it stands on, and what is never kept, is said in
//! [`kept_table`]'s comment and in [`keepable`].

use std::time::SystemTime;

use crate::store::kept_table::{self, Dirs, Head, Row, Table};
use crate::store::metadata::Status;
use crate::ui::report;
use crate::ui::status_table;
use crate::workspace::context::Context;
use crate::workspace::details::Extra;
use crate::workspace::inventory::{self, Entry, Problem};

/// The moment a table began to be made, and the repository's state then.
pub(super) struct Began {
    at: SystemTime,
    heads: Option<String>,
}

/// Notes the moment and the repository's operation heads, before anything is read.
pub(super) fn begin(ctx: &Context) -> Began {
    Began {
        at: SystemTime::now(),
        heads: ctx.vcs.table_heads(),
    }
}

/// The kept table, as `status` prints it: the table's text, whether the note on `*` follows
/// it, and the hints (one line a workspace with a problem).
pub(super) struct Answer {
    pub table: String,
    pub behind: bool,
    /// Whether the table's lines are printable ASCII (nothing to strip without colour).
    pub plain: bool,
    pub hints: String,
}

/// The table kept for this namespace, laid out as of now, when all it stands on is unchanged.
pub(super) fn answer(ctx: &Context) -> Option<Answer> {
    let cache = ctx.layout.cache();
    let body = kept_table::read(&cache)?;
    let kept = kept_table::parse(&body)?;
    let head = &kept.head;
    let dirs = Dirs::open(&ctx.layout.dir)?;
    (dirs.stamps() == head.dirs).then_some(())?;
    let heads = ctx.vcs.table_heads()?;
    if heads != head.heads {
        // Another operation: the table stands if jj's working copies are those it was made
        // with, and no row shows a land (which the whole repository decides).
        (!head.lands).then_some(())?;
        if !kept_table::same_view(&cache, &head.heads, &heads) {
            let view = ctx.vcs.table_view(&heads)?;
            head.same_working_copies(&view).then_some(())?;
            // Known for these heads now: the next table needs no look at jj's view.
            kept_table::note_same_view(&cache, &head.heads, &heads);
        }
    }
    // No state added, removed or replaced (states are written by rename): none is looked at.
    let states_as_kept = head.state_dir.is_some() && dirs.state_stamp() == head.state_dir;
    let mut hints = String::new();
    let mut name = String::new();
    for row in &kept.rows {
        let (state, view) = dirs.row(&row.id, states_as_kept, &mut name);
        (view == row.view && (states_as_kept || state == row.state)).then_some(())?;
        // A run shown live (or ended) must still be so: its process may have died since.
        if let Some(run) = row.run {
            let path = ctx.layout.dir.join(&*row.id);
            (inventory::run_ended(&path, run.pid, run.start) == run.ended).then_some(())?;
        }
        if let Some(hint) = &row.hint {
            push_hint(&mut hints, &row.id, hint);
        }
    }
    let mut table = String::with_capacity(64 << 10);
    status_table::kept(&kept.rows, SystemTime::now(), &mut table).then_some(())?;
    let plain = table
        .bytes()
        .all(|b| b == b'\n' || (b' '..=b'~').contains(&b));
    let behind = kept
        .rows
        .iter()
        .any(|r| r.shown.changes.is_some_and(|c| c.behind));
    Some(Answer {
        table,
        behind,
        plain,
        hints,
    })
}

/// Keeps the table made from `entries` and `extra` (their records read after `began`),
/// shown as `shown`, or removes the kept one when this table cannot be kept.
pub(super) fn keep(ctx: &Context, began: &Began, entries: &[Entry], extra: &[Extra], shown: &str) {
    let cache = ctx.layout.cache();
    match made(ctx, began, entries, extra, shown) {
        Some(table) => kept_table::write(&cache, &table),
        None => kept_table::forget(&cache),
    }
}

/// The hints below the table, as `status` prints them: `<id>: <hint>` a line.
pub(super) fn hints<'a>(rows: impl Iterator<Item = (&'a str, Option<&'a str>)>) -> String {
    let mut hints = String::new();
    for (id, hint) in rows {
        if let Some(hint) = hint {
            push_hint(&mut hints, id, hint);
        }
    }
    hints
}

/// One line of [`hints`]: `<id>: <hint>`.
fn push_hint(hints: &mut String, id: &str, hint: &str) {
    hints.push_str(id);
    hints.push_str(": ");
    hints.push_str(hint);
    hints.push('\n');
}

/// Whether the row of `entry` depends on nothing but what [`kept_table`] compares: a
/// directory with a record read from its files, no land under way (the next command
/// finishes it), no problem that needs the backend's recorded paths, changes read (an error
/// may not last), no disk usage. A run recorded as running is kept with whether the row
/// shows it ended, unless a mismatch hides that.
fn keepable(entry: &Entry, extra: &Extra) -> bool {
    let Some(record) = &entry.record else {
        return false;
    };
    let running = record.status == Status::Running;
    let problem = match &entry.problem {
        None | Some(Problem::TamperedRecord) => true,
        Some(Problem::Mismatch(_)) => !running,
        Some(Problem::Crashed) => running,
        Some(_) => false,
    };
    problem
        && record.land_intent.is_none()
        && extra.usage.is_none()
        && !matches!(extra.changes, Some(Err(_)))
}

/// The table to keep, when every row can be kept, every file it stands on had settled, and
/// laid out again from what is kept it is `shown`, byte for byte.
fn made<'a>(
    ctx: &Context,
    began: &Began,
    entries: &'a [Entry],
    extra: &[Extra],
    shown: &str,
) -> Option<Table<'a>> {
    let at_start = began.heads.as_deref()?;
    let all = entries.iter().zip(extra).all(|(e, x)| keepable(e, x));
    (all && !inventory::drifted(ctx, entries)).then_some(())?;
    // The same operation heads as when the records were read: the view the rows were made
    // from is the one of these heads.
    let heads = ctx.vcs.table_heads()?;
    (heads == at_start).then_some(())?;
    let view = ctx.vcs.table_view(&heads)?;
    let dirs = Dirs::open(&ctx.layout.dir)?;
    let mut name = String::new();
    let mut stamps = vec![];
    let rows: Vec<Row<'_>> = entries
        .iter()
        .zip(extra)
        .map(|(e, x)| {
            let (state, view) = dirs.row(&e.id, false, &mut name);
            stamps.extend([state, view]);
            Row {
                id: e.id.as_str().into(),
                state,
                view,
                shown: status_table::shown(e, x),
                updated: e.shown_updated_at().and_then(|t| t.time()),
                hint: e.problem.as_ref().map(|p| report::problem_hint(p, e)),
                run: e
                    .record
                    .as_ref()
                    .filter(|r| r.status == Status::Running)
                    .map(|r| {
                        kept_table::Run {
                            pid: r.pid,
                            start: r.pid_start,
                            // What the row shows (read with the record), not asked again.
                            ended: e.problem == Some(Problem::Crashed),
                        }
                    }),
            }
        })
        .collect();
    let head = Head {
        heads,
        dirs: dirs.stamps(),
        // Taken after the rows' stamps: a state added since is in it (and then unsettled).
        state_dir: dirs.state_stamp().filter(|s| s.settled(began.at)),
        lands: entries
            .iter()
            .any(|e| e.record.as_ref().is_some_and(|r| r.shown_land().is_some())),
        working_copies: Head::working_copies_of(&view),
    };
    // Laid out from what is kept, as of now, it must be what was shown (a cell that
    // turned in between, such as `4s ago` to `5s ago`, only means it is not kept this time).
    let mut again = String::new();
    let fits = status_table::kept(&rows, SystemTime::now(), &mut again);
    let table = Table { head, rows };
    let settled = kept_table::settled(table.head.dirs.iter().chain(&stamps), began.at);
    (fits && again == shown && settled).then_some(table)
}
