//! The git side of a colocated jj workspace (jj 0.46 and later): whether a new workspace is
//! made one (`jj.colocate`), its registration in git taken out exactly when the workspace
//! goes, repaired when its directory moves, and its `.git` file checked as the data an agent
//! can write.
//!
//! jj 0.46 makes a workspace of a colocated repository a git worktree: a `.git` file in the
//! workspace naming `<git dir>/worktrees/<entry>`, whose `gitdir` file names the workspace's
//! `.git` back. `workspace forget` unregisters it only while the directory is still there;
//! a directory moved aside or deleted first leaves the entry registered ("prunable"), and
//! `workspace add` of the same path then fails.

use std::path::{Path, PathBuf};

use super::{Jj, COLOCATING_VERSION};
use crate::config::Colocate;
use crate::store::fsutil::read_untrusted_string;
use crate::vcs::error::{Result, VcsError};

/// The most a `.git` file or a worktree entry's `gitdir` file is read of.
const LINK_LIMIT: u64 = 4096;

impl Jj {
    /// Sets how new workspaces are colocated (`jj.colocate`).
    pub(crate) fn colocate(mut self, colocate: Colocate) -> Jj {
        self.colocate = colocate;
        self
    }

    /// The flag `workspace add` gets: jj 0.46 and later are always told (`--colocate` or
    /// `--no-colocate`, `auto` following the main workspace), older releases make no
    /// colocated workspace and take no flag; asking them for one is an error.
    pub(super) fn colocation_flag(&self) -> Result<Option<&'static str>> {
        let version = self.version();
        let able = version.is_some_and(|v| v >= COLOCATING_VERSION);
        let colocated = match (self.colocate, able) {
            (Colocate::Always, false) => {
                return Err(VcsError::CannotColocate {
                    version: version.map_or("this jj".into(), |(major, minor)| {
                        format!("jj {major}.{minor}")
                    }),
                })
            }
            (_, false) => return Ok(None),
            (Colocate::Always, true) => true,
            (Colocate::Never, true) => false,
            (Colocate::Auto, true) => self.main_is_colocated(),
        };
        Ok(Some(match colocated {
            true => "--colocate",
            false => "--no-colocate",
        }))
    }

    /// Whether the main workspace is colocated: its `.git` is the store's git directory.
    fn main_is_colocated(&self) -> bool {
        let own = std::fs::canonicalize(self.main.join(".git"));
        let store = self
            .git_dir()
            .and_then(|dir| std::fs::canonicalize(dir).ok());
        matches!((own, store), (Ok(own), Some(store)) if own == store)
    }

    /// The worktree entry git keeps for the workspace at `ws`: the directory under
    /// `<git dir>/worktrees/` whose `gitdir` names `ws/.git`. Read from git's own files (the
    /// repository's, never the workspace's).
    fn worktree_entry(&self, ws: &Path) -> Option<PathBuf> {
        let git_dir = std::fs::canonicalize(self.git_dir()?).ok()?;
        let entries = std::fs::read_dir(git_dir.join("worktrees")).ok()?;
        let link = real(ws).join(".git");
        entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .find(|entry| {
                read_untrusted_string(&entry.join("gitdir"), LINK_LIMIT)
                    .is_ok_and(|text| Path::new(text.trim_end_matches('\n')) == link)
            })
    }

    /// Takes the git worktree registration of the workspace that was at `ws` out of the
    /// repository, once its directory is gone (jj's forget left it because the directory
    /// was moved or deleted first): exactly that entry, and the `jj-worktree-*` branch jj
    /// named for it when git holds it and it is merged (a branch holding commits of its own
    /// stays). Nothing when the directory is still there or git has no entry for it.
    pub(crate) fn unregister_worktree(&self, ws: &Path) -> Result<()> {
        if std::fs::symlink_metadata(ws).is_ok() {
            return Ok(());
        }
        let Some(entry) = self.worktree_entry(ws) else {
            return Ok(());
        };
        let branch = read_untrusted_string(&entry.join("HEAD"), LINK_LIMIT)
            .ok()
            .and_then(|head| {
                let name = head.trim().strip_prefix("ref: refs/heads/")?.to_string();
                name.starts_with("jj-worktree-").then_some(name)
            });
        // Without --force git removes only a worktree whose directory is missing or clean;
        // this one's is missing.
        self.git()?.args(["worktree", "remove"]).arg(ws).stdout()?;
        if let Some(branch) = branch {
            // `-d` deletes only a merged branch; one that does not exist is no error here.
            let _ = self.git()?.args(["branch", "-d", "--", &branch]).stdout();
        }
        Ok(())
    }

    /// Points git's entry of the workspace now at `ws` (moved there from elsewhere, e.g. a
    /// prepared workspace taken under its id) back at it: `git worktree repair`. Nothing
    /// for a workspace that is no git worktree.
    pub(crate) fn repair_worktree(&self, ws: &Path) -> Result<()> {
        if !std::fs::symlink_metadata(ws.join(".git")).is_ok_and(|m| m.is_file()) {
            return Ok(());
        }
        self.git()?.args(["worktree", "repair"]).arg(ws).stdout()?;
        Ok(())
    }

    /// Whether the `.git` at `ws` is what jj made there: none where git has no worktree
    /// entry for `ws`, else a plain file naming exactly that entry. Anything else (written by
    /// whoever could write the workspace) is data, never to be followed by git.
    pub(crate) fn git_link_is_ours(&self, ws: &Path) -> bool {
        let link = ws.join(".git");
        let entry = self.worktree_entry(ws);
        match (std::fs::symlink_metadata(&link), entry) {
            (Err(_), None) => true,
            (Ok(meta), Some(entry)) if meta.is_file() => read_untrusted_string(&link, LINK_LIMIT)
                .ok()
                .and_then(|text| {
                    text.trim_end_matches('\n')
                        .strip_prefix("gitdir: ")
                        .map(PathBuf::from)
                })
                .is_some_and(|named| named == entry),
            _ => false,
        }
    }
}

/// `path` with its links resolved as git records it, also once `path` itself is gone (its
/// parent resolved).
fn real(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => std::fs::canonicalize(parent)
            .map(|p| p.join(name))
            .unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    }
}
