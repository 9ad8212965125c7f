//! What a backend declares for a sandboxed command (`exec::sandbox` mounts it as data): the
//! paths it must write outside the workspace, and those that stay read-only.

use std::fs;
use std::path::{Path, PathBuf};

use super::Vcs;
use crate::exec::sandbox::{BackendPaths, SandboxError};
use crate::repo::Repo;

impl Vcs {
    /// The paths a sandboxed command in the workspace at `ws` of `repo` needs beyond it.
    /// With an own store (`own_store`) the repository's store is not mounted at all, so it
    /// needs none; a colocated jj workspace's `.git` file stays read-only either way.
    pub(crate) fn sandbox_paths(
        &self,
        repo: &Repo,
        ws: &Path,
        own_store: bool,
    ) -> Result<BackendPaths, SandboxError> {
        let mut paths = match own_store {
            true => BackendPaths::default(),
            false => self.store_paths(repo)?,
        };
        // jj 0.46's colocated workspace: its `.git` file names the repository's worktree
        // entry. Read-only, as a git worktree's `.git` is, so the agent cannot point the
        // user's git at a directory of its own (anything else there is moved aside after
        // the run).
        let link = ws.join(".git");
        if matches!(self, Vcs::Jj(_)) && fs::symlink_metadata(&link).is_ok_and(|m| m.is_file()) {
            paths.read_only.push(link);
        }
        Ok(paths)
    }

    /// The repository's store, writable, with its git `config` and `hooks` read-only.
    ///
    /// jj's `store/git_target` lives in the store every sandbox may write, so it is trusted
    /// only to name a directory the repository owns: inside the store, or the colocated
    /// `.git` of the main working copy. Anything else is refused, never mounted.
    fn store_paths(&self, repo: &Repo) -> Result<BackendPaths, SandboxError> {
        let mut git_dirs = vec![];
        let mut writable = vec![repo.store.clone()];
        match self {
            Vcs::Git(_) => git_dirs.push(repo.store.clone()),
            Vcs::Jj(_) => {
                let store = repo.store.join("store");
                if let Some(git) = jj_git_dir(repo, &store)? {
                    if !git.starts_with(&repo.store) {
                        writable.push(git.clone());
                    }
                    git_dirs.push(git);
                }
            }
        }
        let read_only = git_dirs
            .iter()
            .flat_map(|g| [g.join("config"), g.join("hooks")])
            .collect();
        Ok(BackendPaths {
            writable,
            read_only,
        })
    }
}

/// The git directory jj's `store/git_target` names, when it is one the repository owns;
/// none when the file is absent (a store without git).
fn jj_git_dir(repo: &Repo, store: &Path) -> Result<Option<PathBuf>, SandboxError> {
    let file = store.join("git_target");
    if fs::symlink_metadata(&file).is_err() {
        return Ok(None);
    }
    let text = crate::store::fsutil::read_untrusted_string(&file, 4096).map_err(|e| {
        SandboxError::GitTarget {
            named: file.clone(),
            reason: e.to_string(),
        }
    })?;
    let named = store.join(text.trim_end_matches(['\n', '\r']));
    let colocated = fs::canonicalize(repo.root.join(".git")).ok();
    match fs::canonicalize(&named) {
        Ok(git) if git.starts_with(&repo.store) || Some(&git) == colocated.as_ref() => {
            Ok(Some(git))
        }
        Ok(git) => Err(SandboxError::GitTarget {
            named: git,
            reason: "outside the repository's store and its colocated .git".into(),
        }),
        Err(e) => Err(SandboxError::GitTarget {
            named,
            reason: e.to_string(),
        }),
    }
}
