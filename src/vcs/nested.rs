//! Repositories an agent nests in its workspace: every `.git` and `.jj` below the workspace's
//! root that agent-workspace did not place there. The user's git and jj (and
//! agent-workspace's own calls) would find one before the workspace's store and run what its
//! configuration names (`core.fsmonitor`, aliases, a signing program), so after a sandboxed
//! run each is moved out of the workspace (`store::nested_aside`) before git or jj runs
//! there again.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::Vcs;
use crate::store::nested_aside::{KeptAside, MovedAside};

impl Vcs {
    /// Moves aside every `.git` and `.jj` (directory, file or link) in the workspace at
    /// `ws` that is not the backend's own: the root's `.jj` (jj) or `.git` (git), jj's root
    /// `.git` (left to [`Vcs::own_store_before_bring_back`]), and (git) a submodule's `.git`
    /// file leading into the repository's own git directory. Each goes out of the
    /// workspace into `aside` (or, where it cannot, is renamed in place); returns where.
    ///
    /// One pass over the tree, every directory included (an agent can hide one where the
    /// backend ignores files), links never followed, nothing read but the names and (git) a
    /// nested `.git` file's first line.
    pub(crate) fn move_aside_nested(&self, ws: &Path, aside: &mut KeptAside) -> Vec<MovedAside> {
        let mut moved = vec![];
        let mut dirs = vec![ws.to_path_buf()];
        while let Some(dir) = dirs.pop() {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            let mut found = vec![];
            for entry in entries.flatten() {
                let name = entry.file_name();
                if store_name(&name) {
                    found.push(name);
                } else if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    dirs.push(entry.path());
                }
            }
            for name in found {
                if !self.placed(ws, &dir, &name) {
                    moved.extend(aside.take(&dir, &name));
                }
            }
        }
        moved.sort_by(|a, b| a.path().cmp(b.path()));
        moved
    }

    /// Whether the `name` (`.git` or `.jj`) in `dir` is one the backend placed or owns.
    fn placed(&self, ws: &Path, dir: &Path, name: &OsStr) -> bool {
        let root = dir == ws;
        match self {
            // The root's `.git` is jj's link to its worktree entry, or the agent's: that one
            // is judged before (`move_aside_foreign_git`).
            Vcs::Jj(_) => root,
            Vcs::Git(git) => name == ".git" && (root || git.leads_home(dir, &dir.join(".git"))),
        }
    }
}

fn store_name(name: &OsStr) -> bool {
    matches!(name.as_bytes(), b".git" | b".jj")
}
