//! `status --watch`: the status table redrawn on a terminal until interrupted.
//!
//! Records and the liveness of runs are local files, read on every tick; the backend is asked
//! which workspaces it knows only when its stamp (jj's operation heads, git's worktree
//! records) changed since it was last asked.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant, SystemTime};

use crate::cli::GlobalArgs;
use crate::context::Context;
use crate::error::{CliError, Result};
use crate::inventory::{self, Entry};
use crate::output;
use crate::report;
use crate::signals;
use crate::status_table::{self, Columns};
use crate::vcs::{self, Registered, Vcs};
use crate::workspace::details::Extra;

/// How often a wait between redraws looks for Ctrl-C.
const POLL: Duration = Duration::from_millis(50);

pub fn cmd_status_watch(global: &GlobalArgs, interval: Duration) -> Result<i32> {
    if !std::io::stdout().is_terminal() {
        return Err(CliError::usage(
            "status --watch redraws a terminal, and stdout is not one; a program reads `status --json`",
        )
        .hint("run `agent-workspace status --json` (as often as needed) from a program or a pipe, or --watch in a terminal"));
    }
    signals::install();
    let ctx = Context::open(global)?;
    let colour = output::colour(global.color);
    let mut asked = Registrations::default();
    let screen = Screen::enter()?;
    loop {
        asked.refresh(&ctx.vcs);
        let (mut entries, warning) =
            inventory::all_with(&ctx, &mut |with_paths| asked.get(&ctx.vcs, with_paths));
        // Lands shown only while they hold (the answer kept while the repository is unchanged).
        crate::workspace::land::follow(&ctx, &mut entries);
        let text = frame(&entries, warning.as_ref(), interval, colour);
        screen.draw(&text)?;
        if let Some(sig) = wait(interval) {
            drop(screen);
            return Ok(128 + sig);
        }
    }
}

/// Sleeps `interval`, or less when a signal arrives: then that signal.
fn wait(interval: Duration) -> Option<i32> {
    let until = Instant::now() + interval;
    loop {
        if let Some(sig) = signals::received() {
            return Some(sig);
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        std::thread::sleep(left.min(POLL));
    }
}

/// One screen: a title, the table with run times and exit codes, then what is wrong.
fn frame(
    entries: &[Entry],
    warning: Option<&CliError>,
    interval: Duration,
    colour: bool,
) -> String {
    let mut text = format!(
        "agent-workspace status, every {}s (Ctrl-C to stop)\n\n",
        interval.as_secs_f64()
    );
    let extra: Vec<Extra> = entries.iter().map(|_| Extra::default()).collect();
    let columns = Columns {
        size: false,
        run_time_at: Some(SystemTime::now()),
    };
    let mut table = String::new();
    status_table::table(entries, &extra, columns, &mut table);
    if colour {
        table = output::style_second_column(&table, status_table::status_style);
    }
    text += &table;
    if let Some(warning) = warning {
        text += &format!(
            "\nWarning: could not ask the backend which workspaces it knows: {}\n",
            warning.message
        );
    }
    for entry in entries {
        if let Some(problem) = &entry.problem {
            text += &format!("{}: {}\n", entry.id, report::problem_hint(problem, entry));
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

/// The terminal while watching: the alternate screen, no cursor, no line wrapping; each
/// frame overwrites the last in place. Dropping it restores the terminal.
struct Screen;

impl Screen {
    fn enter() -> Result<Screen> {
        write_out("\x1b[?1049h\x1b[?25l\x1b[?7l")?;
        Ok(Screen)
    }

    /// Writes `text` from the top-left corner, clearing the rest of each line and of the
    /// screen; lines beyond the terminal's height are left out.
    fn draw(&self, text: &str) -> Result<()> {
        let rows = output::terminal_rows().unwrap_or(u16::MAX) as usize;
        let mut out = String::from("\x1b[H");
        let lines: Vec<&str> = text.lines().collect();
        let fits = lines.len() < rows;
        let shown = if fits {
            lines.len()
        } else {
            rows.saturating_sub(2)
        };
        for line in &lines[..shown] {
            out += line;
            out += "\x1b[K\r\n";
        }
        if !fits {
            out += &format!(
                "({} more lines: make the terminal taller)\x1b[K",
                lines.len() - shown
            );
        }
        out += "\x1b[J";
        write_out(&out)
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = write_out("\x1b[?7h\x1b[?25h\x1b[?1049l");
    }
}

fn write_out(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| {
            CliError::failure("could not write to the terminal")
                .cause(e.to_string())
                .hint("the workspaces were not changed by watching them")
        })
}
