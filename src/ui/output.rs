//! Writing to stdout: aligned columns, and a closed pipe treated as a quiet success.

use std::io::Write;

use crate::error::{CliError, Result};

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
            Some(s) => out.push_str(&format!(
                "{}{s}{}{s:#}{}",
                &line[..start],
                &line[start..end],
                &line[end..]
            )),
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
    for row in &rows {
        let row = row.as_ref();
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  ", width = widths[i]));
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
