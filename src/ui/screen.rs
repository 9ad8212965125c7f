//! The terminal `status --watch` redraws: the alternate screen, frames drawn in place.

use std::io::{IsTerminal, Write};

use crate::error::{CliError, Result};
use crate::ui::output;

/// The terminal while watching: the alternate screen, no cursor, no line wrapping; each
/// frame overwrites the last in place. Dropping it restores the terminal.
pub(crate) struct Screen;

impl Screen {
    /// Whether stdout is a terminal, the one thing a screen can be drawn on.
    pub(crate) fn possible() -> bool {
        std::io::stdout().is_terminal()
    }

    pub(crate) fn enter() -> Result<Screen> {
        write_out("\x1b[?1049h\x1b[?25l\x1b[?7l")?;
        Ok(Screen)
    }

    /// Writes `text` from the top-left corner, clearing the rest of each line and of the
    /// screen; lines beyond the terminal's height are left out.
    pub(crate) fn draw(&self, text: &str) -> Result<()> {
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
