//! `copy.include` patterns: which ignored or untracked files of the main workspace a new
//! workspace gets a copy of, and finding them without following a symlink.
//!
//! The supported subset of gitignore's syntax: a pattern is a path relative to the main
//! workspace's root (a leading `/` changes nothing); `*` matches any run of characters and `?`
//! one character, both inside one path component; a trailing `/` matches directories only.
//! Unlike a `.gitignore`, a pattern without an inner `/` matches at the top level only
//! (`target/` is `<main>/target`, not every `target` below), so finding matches never walks the
//! whole tree. `!`, `**`, `[...]` and `\` are refused, as are `.` and `..` components.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Top-level names that belong to the backend or to agent-workspace, never copied.
fn reserved(name: &str) -> bool {
    matches!(name, ".jj" | ".git" | ".direnv")
        || name.starts_with(crate::store::metadata::FILE_NAME)
}

/// One `copy.include` pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    text: String,
    components: Vec<String>,
    dir_only: bool,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{text:?} {why}")]
pub struct PatternError {
    text: String,
    why: &'static str,
}

impl Pattern {
    pub fn parse(text: &str) -> Result<Pattern, PatternError> {
        let refuse = |why| {
            Err(PatternError {
                text: text.to_string(),
                why,
            })
        };
        let body = text.strip_prefix('/').unwrap_or(text);
        let dir_only = body.ends_with('/');
        let body = body.trim_end_matches('/');
        if body.is_empty() {
            return refuse("is empty; name a file or directory such as \"target/\" or \".env\"");
        }
        if text.starts_with('!') {
            return refuse("negates; negation (!) is not supported");
        }
        if body.contains("**") {
            return refuse("uses **; only * and ? (inside one path component) are supported");
        }
        if body.contains(['[', ']', '\\']) {
            return refuse("uses [...] or \\; only * and ? are supported");
        }
        let components: Vec<String> = body.split('/').map(str::to_string).collect();
        if components
            .iter()
            .any(|c| c.is_empty() || c == "." || c == "..")
        {
            return refuse("has an empty, . or .. component");
        }
        if reserved(&components[0]) {
            return refuse("names the backend's or agent-workspace's own files");
        }
        Ok(Pattern {
            text: text.to_string(),
            components,
            dir_only,
        })
    }
}

/// Whether `name` matches the component `glob` (`*` any run, `?` one character).
fn glob_match(glob: &str, name: &str) -> bool {
    let (g, n): (Vec<char>, Vec<char>) = (glob.chars().collect(), name.chars().collect());
    let (mut gi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if gi < g.len() && (g[gi] == '?' || g[gi] == n[ni]) {
            gi += 1;
            ni += 1;
        } else if gi < g.len() && g[gi] == '*' {
            star = Some(gi);
            mark = ni;
            gi += 1;
        } else if let Some(s) = star {
            gi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    g[gi..].iter().all(|c| *c == '*')
}

/// The entries of `main` (relative paths) that `patterns` match, sorted, none inside another.
/// Directories on the way must be real directories: a symlink is never followed.
pub(crate) fn matches(main: &Path, patterns: &[Pattern]) -> io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for pattern in patterns {
        walk(main, PathBuf::new(), pattern, 0, &mut found)?;
    }
    found.sort();
    found.dedup();
    let mut outer: Vec<PathBuf> = Vec::new();
    for path in found {
        if !outer.iter().any(|o| path.starts_with(o)) {
            outer.push(path);
        }
    }
    Ok(outer)
}

fn walk(
    main: &Path,
    rel: PathBuf,
    pattern: &Pattern,
    depth: usize,
    found: &mut Vec<PathBuf>,
) -> io::Result<()> {
    let glob = &pattern.components[depth];
    let last = depth + 1 == pattern.components.len();
    let names: Vec<String> = if glob.contains(['*', '?']) {
        match fs::read_dir(main.join(&rel)) {
            Ok(entries) => entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|name| glob_match(glob, name))
                .collect(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        }
    } else {
        vec![glob.clone()]
    };
    for name in names {
        if depth == 0 && reserved(&name) {
            continue;
        }
        let path = rel.join(&name);
        let Ok(meta) = fs::symlink_metadata(main.join(&path)) else {
            continue;
        };
        let real_dir = meta.is_dir() && !meta.file_type().is_symlink();
        if !last {
            if real_dir {
                walk(main, path, pattern, depth + 1, found)?;
            }
        } else if real_dir || !pattern.dir_only {
            found.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_inside_one_component() {
        assert!(glob_match("*.local", "db.local"));
        assert!(glob_match("*", ".env"));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("*.local", "db.local.bak"));
        assert!(glob_match("*.local*", "db.local.bak"));
    }

    #[test]
    fn unsupported_patterns_are_refused() {
        for bad in [
            "", "/", "!x", "a/**/b", "[ab]", "a\\b", "../x", "a//b", ".jj", ".git/",
        ] {
            assert!(Pattern::parse(bad).is_err(), "{bad:?}");
        }
        let p = Pattern::parse("/crates/*/target/").unwrap();
        assert_eq!(p.components, ["crates", "*", "target"]);
        assert!(p.dir_only);
    }

    #[test]
    fn matches_never_follow_symlinks() {
        let tmp = tempfile::tempdir().unwrap();
        let main = tmp.path();
        fs::create_dir_all(main.join("target/debug")).unwrap();
        fs::create_dir_all(main.join("outside/target")).unwrap();
        fs::write(main.join(".env"), "A=1").unwrap();
        fs::write(main.join("target"), "").unwrap_err();
        std::os::unix::fs::symlink(main.join("outside"), main.join("sub")).unwrap();
        let patterns: Vec<Pattern> = ["target/", ".env", "sub/target/", "target/debug/"]
            .iter()
            .map(|p| Pattern::parse(p).unwrap())
            .collect();
        let found = matches(main, &patterns).unwrap();
        assert_eq!(found, [PathBuf::from(".env"), PathBuf::from("target")]);
    }
}
