//! One voice: nothing outside `src/ui/` writes to stdout or stderr, or spells the words of a
//! diagnostic (`Error:`, `Warning:`, `Hint:`) itself; commands say everything through the
//! `Ui` they are handed. clippy's `disallowed-macros` (clippy.toml) refuses `println!` and
//! friends as they are written; this scan also covers the direct handles and the words, which
//! no compiler check sees.

use std::fs;
use std::path::{Path, PathBuf};

use crate::architecture::src;

/// What only `src/ui/` may write: the printing macros, the standard streams, the words of
/// the diagnostic vocabulary.
const SPEAKING: [&str; 10] = [
    "println!",
    "eprintln!",
    "print!(",
    "eprint!(",
    "dbg!(",
    "io::stdout()",
    "io::stderr()",
    "\"Error: ",
    "Warning: ",
    "Hint: ",
];

/// Files outside `src/ui/` that may hold one of those words because they read them: the
/// backends' stderr classifiers recognise jj's and git's own warnings.
const READERS: [&str; 4] = [
    "vcs/classify.rs",
    "vcs/jj/classify.rs",
    "vcs/git/classify.rs",
    "exec/classify.rs",
];

/// One line per place outside `src/ui/` that speaks: `path:line: text`.
fn speakers(root: &Path) -> Vec<String> {
    let mut found = vec![];
    for file in rust_files(root) {
        let rel = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel.starts_with("ui/") || READERS.contains(&rel.as_str()) {
            continue;
        }
        let text = fs::read_to_string(&file).unwrap();
        found.extend(speaking_lines(&text).map(|(n, line)| format!("src/{rel}:{n}: {line}")));
    }
    found
}

/// The lines of `text` (numbered from 1) that speak, comments left out.
fn speaking_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().filter_map(|(i, line)| {
        let code = line.trim_start();
        let speaks = !code.starts_with("//") && SPEAKING.iter().any(|w| code.contains(w));
        speaks.then_some((i + 1, code))
    })
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = vec![];
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

#[test]
fn nothing_outside_the_ui_prints_or_spells_a_diagnostic() {
    let root = src();
    assert!(
        rust_files(&root).len() > 100,
        "no sources read under {}",
        root.display()
    );
    let found = speakers(&root);
    assert!(
        found.is_empty(),
        "say these through ui::Ui (data, error, warning, hint, note) instead:\n{}",
        found.join("\n")
    );
}

/// The scan sees each way of speaking, and not a comment about one.
#[test]
fn the_scan_finds_each_way_of_speaking() {
    for word in SPEAKING {
        let line = format!("    let _ = {word}x");
        assert_eq!(speaking_lines(&line).count(), 1, "{line}");
    }
    assert_eq!(
        speaking_lines("    // eprintln!(\"Warning: x\")").count(),
        0
    );
}

/// Whether a line of code matches a backend's stderr text.
fn reads_stderr_text(line: &str) -> bool {
    let code = line.trim_start();
    !code.starts_with("//")
        && code.contains("stderr")
        && [
            ".contains(",
            ".starts_with(",
            ".lines()",
            ".split_once(",
            ".find(",
        ]
        .iter()
        .any(|m| code.contains(m))
}

/// A program's stderr is read in one place per program: jj's and git's in
/// `vcs/{jj,git}/classify.rs`, bubblewrap's (and a full disk's words) in `exec/classify.rs`,
/// where their wording is tested against what the pinned versions print.
#[test]
fn only_the_classifiers_match_a_program_s_stderr() {
    let root = src();
    let mut found = vec![];
    for file in rust_files(&root) {
        let rel = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if READERS.contains(&rel.as_str()) {
            continue;
        }
        let text = fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            if reads_stderr_text(line) {
                found.push(format!("src/{rel}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "match a program's stderr in its classifier (vcs/<backend>/classify.rs, exec/classify.rs) instead:\n{}",
        found.join("\n")
    );
    assert!(reads_stderr_text(
        r#"Err(e) if e.stderr().contains("is not a working tree") => Ok(()),"#
    ));
}
