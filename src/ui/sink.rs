//! The one output sink every command is handed: data to stdout; errors, warnings, hints and
//! notes to stderr in one vocabulary; the progress line; whether colour is on.
//!
//! Nothing else in the crate writes to stdout or stderr (`tests/it/voice.rs` holds that, and
//! clippy's `disallowed-macros` refuses `println!` and friends outside this folder).

use std::fmt::Display;
use std::io::{IsTerminal, Write};

use crate::error::{CliError, Result};
use crate::ui::output::{self, ColorChoice};
use crate::ui::progress_line::ProgressLine;
use crate::ui::report;
use crate::workspace::Note;

/// Where a command's output goes, and how it looks.
pub struct Ui {
    colour: bool,
}

impl Ui {
    /// The sink for `--color choice` (`NO_COLOR` and whether stdout is a terminal decide
    /// `auto`).
    pub fn new(choice: ColorChoice) -> Ui {
        Ui {
            colour: output::colour(choice),
        }
    }

    /// Whether colour is on for stdout.
    pub(crate) fn colour(&self) -> bool {
        self.colour
    }

    /// Prints data on stdout, its control characters escaped ([`output::escape_controls`]:
    /// what an agent wrote is shown, never obeyed by the terminal); a reader that went away
    /// (broken pipe) is not an error.
    pub fn data(&self, text: &str) -> Result<()> {
        output::print(&output::escape_controls(text))
    }

    /// Prints text made whole by this tool and read by a program or a person as it is (help,
    /// shell completions and their scripts: completions are separated by control
    /// characters), not escaped; a reader that went away is not an error.
    pub fn generated(&self, text: &str) -> Result<()> {
        output::print(text)
    }

    /// Prints bytes on stdout as they are (a patch); a reader that went away is not an error.
    pub(crate) fn data_bytes(&self, bytes: &[u8]) -> Result<()> {
        output::print_bytes(bytes)
    }

    /// Prints data holding `anstyle` escapes on stdout, through `anstream`: kept when colour is
    /// on, stripped when it is off. The caller escapes what it styles first
    /// ([`output::escape_controls`]).
    pub(crate) fn styled_data(&self, text: &str) -> Result<()> {
        output::print(&self.paint(text))
    }

    /// `text`, holding `anstyle` escapes, as stdout shows it: as is when colour is on, the
    /// escapes stripped through `anstream` when it is off.
    pub(crate) fn paint(&self, text: &str) -> String {
        // Printable ASCII and newlines hold no escape: stripping would leave them as they are
        // (a thousand-row table is not run through the stripper's state machine).
        let plain = || {
            text.bytes()
                .all(|b| b == b'\n' || (b' '..=b'~').contains(&b))
        };
        match self.colour || plain() {
            true => text.to_string(),
            false => anstream::adapter::strip_str(text).to_string(),
        }
    }

    /// An error: `Error: message`, its causes, its hint.
    pub fn error(&self, err: &CliError) {
        stderr(&format!("{}\n", render_error(err)));
    }

    /// A failure of a command asked for `--json`, as a document on stdout
    /// (`schema/failure.schema.json`); a reader that went away is not an error.
    pub fn error_json(&self, err: &CliError, exit_code: u8) {
        let doc = crate::error::FailureJson {
            schema_version: 1,
            error: err.to_json(),
            exit_code,
        };
        // Invariant: strings, a list of strings and numbers always serialize.
        let mut text = serde_json::to_string_pretty(&doc).expect("an error object serializes");
        text.push('\n');
        let _ = self.data(&text);
    }

    /// The same document written to `path` (`run --failure-file`, which `mcp` reads: a
    /// run's stdout is its command's); a file that cannot be written is left out.
    pub fn error_json_file(&self, path: &std::path::Path, err: &CliError, exit_code: u8) {
        let doc = crate::error::FailureJson {
            schema_version: 1,
            error: err.to_json(),
            exit_code,
        };
        if let Ok(text) = serde_json::to_vec(&doc) {
            let _ = crate::store::fsutil::write_atomic(path, &text);
        }
    }

    /// Stdin and stdout handed whole to a protocol that owns them (`mcp`: JSON-RPC messages,
    /// one a line); nothing else may read or write there while it runs. When both are pipes
    /// (as MCP clients start servers) they are read and written without blocking, on the
    /// runtime's own thread, rather than through a blocking thread per message.
    pub(crate) fn protocol_stdio(
        &self,
    ) -> (rmcp::transport::StdioReader, rmcp::transport::StdioWriter) {
        rmcp::transport::stdio_pipes()
    }

    /// `Warning: message`.
    pub(crate) fn warning(&self, message: impl Display) {
        stderr(&format!("{}\n", warning_line(message)));
    }

    /// `Warning: message` and what to do about it.
    pub(crate) fn warning_with_hint(&self, message: impl Display, hint: impl Display) {
        stderr(&format!("{}\nHint: {hint}\n", warning_line(message)));
    }

    /// `Hint: text`, after a warning or an error.
    pub(crate) fn hint(&self, hint: impl Display) {
        stderr(&format!("Hint: {hint}\n"));
    }

    /// A line of what happened on the way (removed, skipped, finished), on stderr.
    pub(crate) fn note(&self, line: impl Display) {
        stderr(&format!("{line}\n"));
    }

    /// A note that helps a person at a terminal only (what a mark in a table means): left
    /// out when stderr is not a terminal.
    pub(crate) fn note_for_person(&self, line: impl Display) {
        if std::io::stderr().is_terminal() {
            self.note(line);
        }
    }

    /// The notes of opening a workspace, one line each. The sizes and times of copied files
    /// help a person at a terminal; scripts get quiet.
    pub(crate) fn notes(&self, notes: &[Note]) {
        let terminal = std::io::stderr().is_terminal();
        for n in notes {
            if matches!(n, Note::Copied { .. }) && !terminal {
                continue;
            }
            self.note(report::note(n));
        }
    }

    /// The progress line about `subject` (such as `workspace w`): drawn on stderr while it
    /// lives, when stderr is a terminal; erased when dropped.
    pub(crate) fn progress(&self, subject: &str) -> ProgressLine {
        ProgressLine::on_stderr(subject)
    }
}

/// The one rendering of an error: `Error: message`, a `Caused by:` per cause (continuation
/// lines indented under it), then `Hint: hint`.
pub(crate) fn render_error(err: &CliError) -> String {
    let mut text = format!("Error: {}", err.message);
    for cause in &err.causes {
        for (i, line) in cause.lines().enumerate() {
            let lead = if i == 0 { "Caused by: " } else { "           " };
            text.push_str(&format!("\n{lead}{}", cause_line(line)));
        }
    }
    if let Some(hint) = &err.hint {
        text.push_str(&format!("\nHint: {hint}"));
    }
    text
}

/// A line of a cause (a helper's stderr, say) as shown under this error: its own `Error:` /
/// `error:` label goes and its `Hint:` reads `hint:`, so an error shows one `Error:` and one
/// `Hint:`.
fn cause_line(line: &str) -> String {
    let line = line
        .strip_prefix("Error: ")
        .or_else(|| line.strip_prefix("error: "))
        .unwrap_or(line);
    match line.strip_prefix("Hint: ") {
        Some(rest) => format!("hint: {rest}"),
        None => line.to_string(),
    }
}

/// `Warning: message`, the words of a warning wherever it is shown (stderr, a redrawn screen).
pub(crate) fn warning_line(message: impl Display) -> String {
    format!("Warning: {message}")
}

/// Writes to stderr, control characters escaped ([`output::escape_controls`]); a stderr
/// that cannot be written to is not worth failing the command for.
fn stderr(text: &str) {
    let text = output::escape_controls(text);
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_all(text.as_bytes())
        .and_then(|()| stderr.flush());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A helper's own `Error:` and `Hint:` never stand as a second error or hint.
    #[test]
    fn a_cause_shows_without_its_own_error_and_hint_labels() {
        let err = CliError::failure("cannot resolve revision \"x\"")
            .cause("Error: Revision `x` doesn't exist\nHint: Did you mean `y`?\nerror: more")
            .hint("pass one that exists");
        assert_eq!(
            render_error(&err),
            "Error: cannot resolve revision \"x\"\n\
             Caused by: Revision `x` doesn't exist\n\
             \x20          hint: Did you mean `y`?\n\
             \x20          more\n\
             Hint: pass one that exists"
        );
    }

    #[test]
    fn an_error_renders_message_causes_and_hint() {
        let err = CliError::failure("could not do it")
            .cause("first\nsecond line")
            .cause("another")
            .hint("try this");
        assert_eq!(
            render_error(&err),
            "Error: could not do it\nCaused by: first\n           second line\nCaused by: another\nHint: try this"
        );
        assert_eq!(render_error(&CliError::usage("bad")), "Error: bad");
    }

    #[test]
    fn paint_strips_escapes_only_without_colour() {
        let styled = "a \u{1b}[32mdone\u{1b}[0m b";
        assert_eq!(Ui { colour: true }.paint(styled), styled);
        assert_eq!(Ui { colour: false }.paint(styled), "a done b");
        // Printable ASCII and newlines stay as they are, with or without the stripper.
        let plain: String = (b' '..=b'~').map(char::from).chain(['\n']).collect();
        assert_eq!(Ui { colour: false }.paint(&plain), plain);
        assert_eq!(anstream::adapter::strip_str(&plain).to_string(), plain);
    }
}
