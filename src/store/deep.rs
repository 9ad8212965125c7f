//! Directory trees deeper than a path can name: an entry whose path passes `PATH_MAX` (4096
//! bytes on Linux) cannot be read by jj or git, nor by anything that names files by path. A
//! workspace holding one is found out before it is recorded, and the directory where such
//! a chain is cut (the deepest one a path still names comfortably) is moved aside whole.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The longest path the kernel takes, terminator included.
const PATH_MAX: usize = 4096;

/// A chain reaching [`PATH_MAX`] is cut at its deepest directory whose path is at most this
/// long: short enough to be renamed by path, its subtree then kept whole.
const CUT: usize = 2048;

/// The directories under `root` (relative to it, shallowest first) where a chain of
/// directories whose entries' paths reach `PATH_MAX` is cut; empty when none does. The
/// backend's own `.jj` and `.git` at the root are not looked into; symlinks are not followed.
pub(crate) fn too_deep(root: &Path) -> io::Result<Vec<PathBuf>> {
    let mut cuts = vec![];
    let deep = walk(root, root, &mut cuts)?;
    // The root itself is past the cut (a workspace path of 2 KB): its top entries are cut.
    if deep && cuts.is_empty() {
        for entry in entries(root)? {
            if entry.1 && !is_backend(&entry.0) {
                cuts.push(PathBuf::from(&entry.0));
            }
        }
    }
    Ok(cuts)
}

/// Whether `dir` (under `root`) holds an entry whose path reaches `PATH_MAX` below any cut
/// recorded in `cuts`.
fn walk(root: &Path, dir: &Path, cuts: &mut Vec<PathBuf>) -> io::Result<bool> {
    let mut deep = false;
    for (name, is_dir) in entries(dir)? {
        if dir == root && is_backend(&name) {
            continue;
        }
        let child = dir.join(&name);
        if child.as_os_str().len() + 1 >= PATH_MAX {
            deep = true;
            continue;
        }
        if !is_dir || !walk(root, &child, cuts)? {
            continue;
        }
        match child.as_os_str().len() <= CUT {
            true => cuts.push(child.strip_prefix(root).unwrap_or(&child).to_path_buf()),
            false => deep = true,
        }
    }
    Ok(deep)
}

/// The names in `dir` and whether each is a directory (not following symlinks), read whole
/// before any is looked into, so no descriptor stays open down the tree.
fn entries(dir: &Path) -> io::Result<Vec<(std::ffi::OsString, bool)>> {
    let mut found = vec![];
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let is_dir = entry.file_type()?.is_dir();
        found.push((entry.file_name(), is_dir));
    }
    Ok(found)
}

/// A cut as said: its first two components, then how many levels in all, each component's
/// control characters escaped (the agent named them).
pub(crate) fn words(cut: &Path) -> String {
    let parts: Vec<String> = cut
        .components()
        .map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .chars()
                .map(|ch| match ch.is_control() {
                    true => ch.escape_default().to_string(),
                    false => ch.to_string(),
                })
                .collect()
        })
        .collect();
    match parts.len() {
        0..=2 => format!("{}/…", parts.join("/")),
        n => format!("{}/… ({n} levels)", parts[..2].join("/")),
    }
}

fn is_backend(name: &std::ffi::OsStr) -> bool {
    name == ".jj" || name == ".git"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Makes `levels` directories of `name` under `dir` by relative steps (no path names
    /// the deepest), with a file at the bottom.
    fn chain(dir: &Path, name: &str, levels: usize) {
        let mut fd = rustix::fs::open(
            dir,
            rustix::fs::OFlags::DIRECTORY,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        for _ in 0..levels {
            rustix::fs::mkdirat(&fd, name, rustix::fs::Mode::from_raw_mode(0o755)).unwrap();
            fd = rustix::fs::openat(
                &fd,
                name,
                rustix::fs::OFlags::DIRECTORY,
                rustix::fs::Mode::empty(),
            )
            .unwrap();
        }
        let file = rustix::fs::openat(
            &fd,
            "deep.txt",
            rustix::fs::OFlags::CREATE | rustix::fs::OFlags::WRONLY,
            rustix::fs::Mode::from_raw_mode(0o644),
        )
        .unwrap();
        drop(file);
    }

    #[test]
    fn a_chain_past_path_max_is_cut_where_a_path_still_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("src/shallow")).unwrap();
        fs::create_dir_all(root.join(".jj/repo")).unwrap();
        chain(&root.join("src"), &"d".repeat(20), 250);
        let cuts = too_deep(root).unwrap();
        assert_eq!(cuts.len(), 1, "{cuts:?}");
        let cut = &cuts[0];
        assert!(cut.starts_with("src/dddddddddddddddddddd"), "{cut:?}");
        let full = root.join(cut).as_os_str().len();
        assert!(full <= CUT && full > CUT - 21, "{full}");
    }

    #[test]
    fn a_tree_a_path_names_whole_has_nothing_to_cut() {
        let dir = tempfile::tempdir().unwrap();
        chain(dir.path(), &"d".repeat(20), 100);
        assert!(too_deep(dir.path()).unwrap().is_empty());
    }
}
