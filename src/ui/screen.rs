//! The terminal `status --watch` redraws: the alternate screen, frames drawn in place.

use std::io::{IsTerminal, Write};

use crate::error::{CliError, Result};
use crate::ui::output;
use rustix::termios::Termios;

/// The terminal while watching: the alternate screen, no cursor, no line wrapping; each
/// frame overwrites the last in place; keys come one at a time without echo (so `q` quits).
/// Dropping it restores the terminal.
pub(crate) struct Screen {
    /// stdin's terminal settings before, when stdin is a terminal.
    keys: Option<Termios>,
}

impl Screen {
    /// Whether stdout is a terminal, the one thing a screen can be drawn on.
    pub(crate) fn possible() -> bool {
        std::io::stdout().is_terminal()
    }

    pub(crate) fn enter() -> Result<Screen> {
        write_out("\x1b[?1049h\x1b[?25l\x1b[?7l")?;
        Ok(Screen { keys: raw_keys() })
    }

    /// Waits up to `timeout` for a key on stdin; whether it was `q` (or `Q`). Without a
    /// terminal on stdin it only waits.
    pub(crate) fn quit_key(&self, timeout: std::time::Duration) -> bool {
        if self.keys.is_none() {
            std::thread::sleep(timeout);
            return false;
        }
        use rustix::event::{PollFd, PollFlags, Timespec};
        let stdin = std::io::stdin();
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        let timeout = Timespec::try_from(timeout).ok();
        let ready = rustix::event::poll(&mut fds, timeout.as_ref()).unwrap_or(0);
        if ready == 0 || !fds[0].revents().contains(PollFlags::IN) {
            return false;
        }
        let mut buf = [0u8; 16];
        let n = rustix::io::read(&stdin, &mut buf).unwrap_or(0);
        buf[..n].iter().any(|b| matches!(b, b'q' | b'Q'))
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
        if let Some(before) = &self.keys {
            let now = rustix::termios::OptionalActions::Now;
            let _ = rustix::termios::tcsetattr(std::io::stdin(), now, before);
        }
        let _ = write_out("\x1b[?7h\x1b[?25h\x1b[?1049l");
    }
}

/// Puts stdin's terminal into non-canonical mode without echo (signals still work: Ctrl-C
/// stays SIGINT); its settings before, or `None` when stdin is no terminal.
fn raw_keys() -> Option<Termios> {
    use rustix::termios::{LocalModes, OptionalActions, SpecialCodeIndex};
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return None;
    }
    let before = rustix::termios::tcgetattr(&stdin).ok()?;
    let mut keys = before.clone();
    keys.local_modes &= !(LocalModes::ICANON | LocalModes::ECHO);
    keys.special_codes[SpecialCodeIndex::VMIN] = 1;
    keys.special_codes[SpecialCodeIndex::VTIME] = 0;
    rustix::termios::tcsetattr(&stdin, OptionalActions::Now, &keys).ok()?;
    Some(before)
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
