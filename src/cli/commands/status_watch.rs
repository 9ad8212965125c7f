//! `status --watch`: the status table redrawn on a terminal until interrupted.
//!
//! Records and the liveness of runs are local files, read on every tick; the backend is asked
//! which workspaces it knows only when its stamp (jj's operation heads, git's worktree
//! records) changed since it was last asked.

use std::time::{Duration, Instant, SystemTime};

use crate::cli::invocation::Invocation;
use crate::error::{CliError, Result};
use crate::exec::signals;
use crate::ui::output;
use crate::ui::report;
use crate::ui::screen::Screen;
use crate::ui::sink::warning_line;
use crate::ui::status_table::{self, Columns};
use crate::vcs::{self, Registered, Vcs};
use crate::workspace::details::Extra;
use crate::workspace::inventory::{self, Entry};

/// How often a wait between redraws looks for Ctrl-C (a key wakes it at once).
const POLL: Duration = Duration::from_millis(50);

pub(in crate::cli) fn cmd_status_watch(
    inv: &Invocation,
    interval: Duration,
    paths: bool,
) -> Result<i32> {
    let ui = inv.ui;
    if !Screen::possible() {
        return Err(CliError::usage(
            "status --watch redraws a terminal, and stdout is not one; a program reads `status --json`",
        )
        .hint("run `agent-workspace status --json` (as often as needed) from a program or a pipe, or --watch in a terminal"));
    }
    signals::install();
    let ctx = inv.context()?;
    let mut asked = Registrations::default();
    let screen = Screen::enter()?;
    loop {
        asked.refresh(&ctx.vcs);
        let (mut entries, warning) = inventory::all_with(
            &ctx,
            &mut |with_paths| asked.get(&ctx.vcs, with_paths),
            None,
        );
        // Lands shown only while they hold (the answer kept while the repository is unchanged).
        crate::workspace::land::follow(&ctx, &mut entries);
        let text = frame(&entries, warning.as_ref(), interval, paths);
        let text = ui.paint(&text);
        screen.draw(&text)?;
        match wait(&screen, interval) {
            Some(Stop::Signal(sig)) => {
                drop(screen);
                return Ok(128 + sig);
            }
            Some(Stop::Quit) => return Ok(0),
            None => {}
        }
    }
}

/// Why watching ends: a signal (Ctrl-C), or `q` pressed.
enum Stop {
    Signal(i32),
    Quit,
}

/// Waits `interval`, or less when a signal arrives or `q` is pressed.
fn wait(screen: &Screen, interval: Duration) -> Option<Stop> {
    let until = Instant::now() + interval;
    loop {
        if let Some(sig) = signals::received() {
            return Some(Stop::Signal(sig));
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        if screen.quit_key(left.min(POLL)) {
            return Some(Stop::Quit);
        }
    }
}

/// One screen: a title, the table with run times and exit codes, then what is wrong.
fn frame(entries: &[Entry], warning: Option<&CliError>, interval: Duration, paths: bool) -> String {
    let mut text = format!(
        "agent-workspace status, every {}s (q or Ctrl-C to stop)\n\n",
        interval.as_secs_f64()
    );
    let extra: Vec<Extra> = entries.iter().map(|_| Extra::default()).collect();
    let columns = Columns {
        run_time_at: Some(SystemTime::now()),
        paths,
        ..Columns::default()
    };
    let mut table = String::new();
    status_table::table(entries, &extra, columns, &mut table);
    table =
        output::style_second_column(&output::escape_controls(&table), status_table::status_style);
    text += &table;
    if let Some(warning) = warning {
        text += &format!(
            "\n{}\n",
            warning_line(format!(
                "could not ask the backend which workspaces it knows: {}",
                output::escape_controls(&warning.message)
            ))
        );
    }
    for entry in entries {
        if let Some(problem) = &entry.problem {
            let hint = report::problem_hint(problem, entry);
            text += &format!("{}: {}\n", entry.id, output::escape_controls(&hint));
        }
    }
    text
}

/// The backend's answers, kept while its registrations stamp stays the same.
#[derive(Default)]
struct Registrations {
    stamp: Option<String>,
    names: Option<Vec<Registered>>,
    list: Option<Vec<Registered>>,
}

impl Registrations {
    /// Forgets the answers when the stamp changed (or cannot be read).
    fn refresh(&mut self, vcs: &Vcs) {
        let stamp = vcs.registrations_stamp();
        if stamp.is_none() || stamp != self.stamp {
            *self = Registrations {
                stamp,
                ..Registrations::default()
            };
        }
    }

    /// The names (or with `with_paths` the list), from the backend only when not kept.
    fn get(&mut self, vcs: &Vcs, with_paths: bool) -> vcs::Result<Vec<Registered>> {
        let kept = match with_paths {
            true => &mut self.list,
            false => &mut self.names,
        };
        if let Some(answer) = kept {
            return Ok(answer.clone());
        }
        let answer = match with_paths {
            true => vcs.list()?,
            false => vcs.names()?,
        };
        *kept = Some(answer.clone());
        Ok(answer)
    }
}
