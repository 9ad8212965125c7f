//! The one reader of jj's stderr: what a failed (or finished) jj command said, in the terms
//! agent-workspace acts on. Every match on jj's wording is here, tested on what jj 0.45.1
//! prints (captured from real commands; the integration tests run the same situations end to
//! end). Programs read jj's machine output (`-T`); its stderr is read only where jj says
//! something no template gives.

use std::path::PathBuf;

/// What a failed jj command reported, as far as agent-workspace tells failures apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// Another workspace rewrote this one's commits: `workspace update-stale` is due.
    Stale,
    /// The workspace is not (or no longer) registered: `jj workspace forget` ran, or it never
    /// was added.
    NoWorkingCopy,
    /// `file show` of a path the revision does not hold.
    NoSuchPath,
    /// Anything else: reported as jj said it.
    Other,
}

/// Sorts a failed jj command by its stderr.
pub(crate) fn failure(stderr: &str) -> Failure {
    if stderr.contains("working copy is stale") {
        Failure::Stale
    } else if stderr.contains("doesn't have a working-copy commit") {
        Failure::NoWorkingCopy
    } else if stderr.contains("No such path") {
        Failure::NoSuchPath
    } else {
        Failure::Other
    }
}

/// The files jj's "Refused to snapshot some files" warning names (too large to snapshot),
/// each with jj's reason, in the order named, each once.
pub(crate) fn refused_snapshot(stderr: &str) -> Vec<(PathBuf, String)> {
    let mut found: Vec<(PathBuf, String)> = vec![];
    let mut inside = false;
    for line in stderr.lines() {
        if line.starts_with("Warning: Refused to snapshot") {
            inside = true;
            continue;
        }
        match line.strip_prefix("  ") {
            Some(item) if inside && !item.starts_with(' ') => {
                let (path, why) = item.rsplit_once(": ").unwrap_or((item, "refused by jj"));
                let path = PathBuf::from(path);
                if !found.iter().any(|(p, _)| *p == path) {
                    found.push((path, why.to_string()));
                }
            }
            _ => inside = false,
        }
    }
    found
}

/// What jj says after an operation it did not integrate, before the operation's id.
const UNINTEGRATED: &str = "--no-integrate-operation was requested: ";

/// The id of the operation a `--no-integrate-operation` command wrote and left
/// unintegrated, when it wrote one (a step that changed nothing writes none).
pub(crate) fn unintegrated_operation(stderr: &str) -> Option<&str> {
    stderr
        .lines()
        .find_map(|l| l.split_once(UNINTEGRATED).map(|(_, op)| op.trim()))
        .filter(|op| !op.is_empty() && op.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    // What jj 0.45.1 printed (`--no-pager --color=never --quiet`, as agent-workspace calls it).

    /// `jj log -r @` in a workspace whose commit another workspace rebased.
    const STALE: &str = "Error: The working copy is stale (not updated since operation 635c4b3fe154).\nHint: Run `jj workspace update-stale` to update it.\nSee https://docs.jj-vcs.dev/latest/working-copy/#stale-working-copy for more information.\n";
    /// `jj log -r @` in a workspace's directory after `jj workspace forget ws2`.
    const FORGOTTEN: &str = "Error: Workspace `ws2` doesn't have a working-copy commit\n";
    /// `jj file show -r @ 'root-file:"nope"'`.
    const NO_PATH: &str = "Error: No such path: nope\n";
    /// `jj --config snapshot.max-new-file-size=1000 log -r @` beside a 3000-byte new file.
    const REFUSED: &str = "Warning: Refused to snapshot some files:\n  big.bin: 2.9KiB (3000 bytes); the maximum size allowed is 1.0KiB (1000 bytes)\n";
    /// `jj --no-integrate-operation describe -m zz` (without `--quiet`, as a land's steps run).
    const UNINTEGRATED_OP: &str =
        "Operation left uncommitted because --no-integrate-operation was requested: 977121aa387e\n";

    #[test]
    fn failures_are_told_apart() {
        assert_eq!(failure(STALE), Failure::Stale);
        assert_eq!(failure(FORGOTTEN), Failure::NoWorkingCopy);
        assert_eq!(failure(NO_PATH), Failure::NoSuchPath);
        assert_eq!(failure(REFUSED), Failure::Other);
        assert_eq!(failure(""), Failure::Other);
    }

    #[test]
    fn refused_files() {
        let found = refused_snapshot(REFUSED);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, PathBuf::from("big.bin"));
        assert_eq!(
            found[0].1,
            "2.9KiB (3000 bytes); the maximum size allowed is 1.0KiB (1000 bytes)"
        );
        // Two warnings, a path holding ": ", jj's hint after the list: each file once.
        let stderr = "Warning: Refused to snapshot some files:\n  big.bin: 1.9MiB (2000000 bytes); the maximum size allowed is 1.0MiB (1048576 bytes)\n  a: b.bin: 2.0MiB (2 bytes); the maximum\nHint: This is to prevent large files\n  * Add the file(s) to `.gitignore`\nWarning: Refused to snapshot some files:\n  big.bin: 1.9MiB\n";
        let found = refused_snapshot(stderr);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[1].0, PathBuf::from("a: b.bin"));
        assert!(refused_snapshot("Warning: something else\n  x: y\n").is_empty());
        assert!(refused_snapshot(STALE).is_empty());
    }

    #[test]
    fn unintegrated_operations() {
        assert_eq!(
            unintegrated_operation(UNINTEGRATED_OP),
            Some("977121aa387e")
        );
        assert_eq!(unintegrated_operation("Nothing changed.\n"), None);
        assert_eq!(
            unintegrated_operation("x --no-integrate-operation was requested: not-hex\n"),
            None
        );
    }
}
