//! Writing to stdout: aligned columns, and a closed pipe treated as a quiet success.

use std::io::Write;

use crate::error::{CliError, Result};

/// Appends rows as left-aligned columns separated by two spaces.
pub fn columns<I: IntoIterator<Item = [String; N]>, const N: usize>(rows: I, out: &mut String) {
    let rows: Vec<[String; N]> = rows.into_iter().collect();
    let mut widths = [0usize; N];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in &rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == N {
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
pub fn print(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::failure("could not write to stdout")
            .cause(e.to_string())
            .hint("check where stdout goes (a full disk or a closed file); the workspaces were not changed by the printing")),
    }
}
