//! What a failure report shows of the files a test left.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use super::{Outcome, TestEnv};

/// The files under `dir`, three levels deep (not inside `.jj` or `.git`).
pub(super) fn listing(dir: &Path) -> String {
    let mut out = format!("files under {}:\n", dir.display());
    list_dir(dir, 0, 3, &mut out);
    out
}

fn list_dir(dir: &Path, depth: usize, max: usize, out: &mut String) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        let kind = match entry.file_type() {
            Ok(t) if t.is_symlink() => "@",
            Ok(t) if t.is_dir() => "/",
            _ => "",
        };
        let _ = writeln!(
            out,
            "{}{}{kind}",
            "  ".repeat(depth + 1),
            name.to_string_lossy()
        );
        if kind == "/" && depth + 1 < max && name != ".jj" && name != ".git" {
            list_dir(&entry.path(), depth + 1, max, out);
        }
    }
}

impl TestEnv {
    /// What commands said on stderr, for one snapshot: for each, `$ ` and its arguments, its
    /// exit code, then its stderr, all through [`TestEnv::normalize`].
    pub fn transcript(&self, outcomes: &[&Outcome]) -> String {
        let mut out = String::new();
        for outcome in outcomes {
            let args = outcome.cmdline.split_once(' ').map_or("", |(_, args)| args);
            let code = outcome
                .code()
                .map_or_else(|| "killed by a signal".to_string(), |c| format!("exit {c}"));
            let _ = writeln!(out, "$ {args}\n[{code}]");
            out.push_str(&self.normalize(&outcome.stderr));
        }
        out
    }
}
