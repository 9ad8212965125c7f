//! Writing to stdout: aligned columns, and a closed pipe treated as a quiet success.

use std::io::Write;

use crate::error::{CliError, Result};

/// `text` with every control character but newline and tab written as an escape (`\x1b`,
/// `\u{9b}`), and the characters that reorder what follows them (bidirectional overrides
/// and isolates) too: what an agent wrote (a commit description, a file or branch name)
/// can neither move the cursor, erase lines, retitle the terminal nor hide text from the
/// person reading it. Text of printable characters only is returned as it is.
pub(crate) fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    fn hidden(c: char) -> bool {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }
    if !text.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            c if !hidden(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `--color`: whether output may hold colour escapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Whether stdout gets colour: `--color always|never`, else none when `NO_COLOR` is set (to
/// anything but the empty string), else only on a terminal. Asked only when printing.
pub(crate) fn colour(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::IsTerminal::is_terminal(&std::io::stdout())
        }
    }
}

/// Styles the second column of every line but the header, in a table whose first two columns
/// hold no spaces (ids and statuses), so the alignment computed without escapes stays.
pub(crate) fn style_second_column(
    table: &str,
    style: impl Fn(&str) -> Option<anstyle::Style>,
) -> String {
    let mut out = String::with_capacity(table.len() + 64);
    for (n, line) in table.lines().enumerate() {
        let first_end = line.find(' ').unwrap_or(line.len());
        let gap = line[first_end..].len() - line[first_end..].trim_start().len();
        let start = first_end + gap;
        let end = line[start..].find(' ').map_or(line.len(), |i| start + i);
        match style(&line[start..end]).filter(|_| n > 0 && start < end) {
            Some(s) => {
                use std::fmt::Write as _;
                // Writing to a String cannot fail.
                let _ = write!(
                    out,
                    "{}{s}{}{s:#}{}",
                    &line[..start],
                    &line[start..end],
                    &line[end..]
                );
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// Appends rows (arrays or vectors of cells, all of one length) as left-aligned columns
/// separated by two spaces.
pub(crate) fn columns<I, R>(rows: I, out: &mut String)
where
    I: IntoIterator<Item = R>,
    R: AsRef<[String]>,
{
    let rows: Vec<R> = rows.into_iter().collect();
    let mut widths: Vec<usize> = vec![];
    for row in &rows {
        widths.resize(widths.len().max(row.as_ref().len()), 0);
        for (w, cell) in widths.iter_mut().zip(row.as_ref()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut line = String::new();
    for row in &rows {
        let row = row.as_ref();
        line.clear();
        for (i, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if i + 1 < row.len() {
                // Padded to the column's width in characters, then the two spaces between.
                let pad = widths[i].saturating_sub(cell.chars().count()) + 2;
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// Prints to stdout; a reader that went away (broken pipe) is not an error.
pub(crate) fn print(text: &str) -> Result<()> {
    print_bytes(text.as_bytes())
}

/// Prints bytes to stdout as they are; a reader that went away (broken pipe) is not an error.
pub(crate) fn print_bytes(bytes: &[u8]) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::failure("could not write to stdout")
            .cause(e.to_string())
            .hint("check where stdout goes (a full disk or a closed file); the workspaces were not changed by the printing")),
    }
}

/// The height of the terminal on stdout, when it is one that says.
pub(crate) fn terminal_rows() -> Option<u16> {
    let size = rustix::termios::tcgetwinsize(std::io::stdout()).ok()?;
    (size.ws_row > 0).then_some(size.ws_row)
}

#[cfg(test)]
mod tests {
    use super::escape_controls;

    #[test]
    fn control_characters_are_shown_never_obeyed() {
        assert!(matches!(
            escape_controls("plain text\tand\nlines"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(escape_controls("a\x1b[2Kb"), "a\\x1b[2Kb");
        assert_eq!(escape_controls("x\ry"), "x\\x0dy");
        assert_eq!(escape_controls("\x07\x7f"), "\\x07\\x7f");
        assert_eq!(escape_controls("c1 \u{9b}31m"), "c1 \\u{9b}31m");
        assert_eq!(escape_controls("abc\u{202e}fdp.exe"), "abc\\u{202e}fdp.exe");
        assert_eq!(escape_controls("naïve café"), "naïve café");
    }

    use super::*;

    #[test]
    fn columns_pad_by_characters_and_trim_each_line() {
        let row = |cells: &[&str]| cells.iter().map(|c| c.to_string()).collect::<Vec<_>>();
        let rows = vec![
            row(&["ID", "STATUS", "WHAT"]),
            row(&["wé", "done", ""]),
            row(&["a-longer-id", "", "x  "]),
        ];
        let mut out = String::new();
        columns(&rows, &mut out);
        // As `format!("{cell:<width$}  ")` pads: by characters, not bytes.
        let mut expected = String::new();
        for r in &rows {
            let line = format!("{:<11}  {:<6}  {}", r[0], r[1], r[2]);
            expected.push_str(line.trim_end());
            expected.push('\n');
        }
        assert_eq!(out, expected);
        assert_eq!(out.lines().nth(1), Some("wé           done"));
    }
}
