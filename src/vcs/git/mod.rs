//! git invocations for the worktree backend, one method per call, each parser beside its call.

mod checkpoint;
pub(crate) mod classify;
mod diff;
mod gitlinks;
mod held;
mod index;
mod keep;
mod land;
mod land_disk;
mod land_edits;
mod land_merge;
mod land_target;
mod markers;
mod own_store;
mod own_store_refs;
mod pool;
mod untracked;
pub(crate) use own_store::{Checkout, BUNDLE_LIMIT, EXPORT_REFS};
pub(crate) use own_store_refs::{private_key, private_refs, stat_key};
pub(crate) use pool::BranchPlan;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::{Created, Registered};
use crate::exec::process::{Call, ProcessError};
use crate::repo::Repo;
use crate::store::layout::WorkspaceId;
use crate::vcs::error::{Result, VcsError};
use classify::Failure;

/// The branch prefix used when `AGENT_WORKSPACE_BRANCH_PREFIX` is not set.
pub(crate) const DEFAULT_PREFIX: &str = "agent-workspace/";

/// A git repository, addressed through its main worktree.
pub(crate) struct Git {
    main: PathBuf,
    common: PathBuf,
    prefix: String,
    /// The namespace directory: a worktree directly inside it is ours, whatever its branch.
    namespace: PathBuf,
    binary: OnceLock<PathBuf>,
}

impl Git {
    pub(crate) fn new(repo: &Repo, namespace: &Path, prefix: Option<String>) -> Git {
        let prefix = prefix.unwrap_or_else(|| DEFAULT_PREFIX.into());
        Git {
            main: repo.root.clone(),
            common: repo.store.clone(),
            prefix,
            namespace: namespace.to_path_buf(),
            binary: OnceLock::new(),
        }
    }

    /// The branch of workspace `id`.
    pub(crate) fn branch(&self, id: &WorkspaceId) -> String {
        format!("{}{id}", self.prefix)
    }

    /// The git binary this runs, found once.
    fn binary_path(&self) -> Result<PathBuf> {
        Ok(match self.binary.get() {
            Some(bin) => bin,
            None => {
                let found = crate::exec::process::find("git")?;
                self.binary.get_or_init(|| found)
            }
        }
        .clone())
    }

    fn call(&self, dir: &Path) -> Result<Call> {
        let bin = self.binary_path()?;
        // No optional locks: a read (`status`, `diff`) never refreshes a worktree's index,
        // so it cannot make a concurrent `git add` of a live run fail on `index.lock`.
        Ok(Call::new(bin)
            .arg("-C")
            .arg(dir)
            .env("LC_ALL", "C")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0"))
    }

    pub(crate) fn list(&self) -> Result<Vec<Registered>> {
        let out = self
            .call(&self.main)?
            .args(["worktree", "list", "--porcelain", "-z"])
            .stdout()?;
        // The main worktree is the repository itself: never a workspace, whatever its branch.
        let mut found = parse_worktrees(&out, &self.prefix, &self.namespace);
        found.retain(|w| w.path.as_deref() != Some(self.main.as_path()));
        Ok(found)
    }

    /// The modification times of the worktree records (`<common>/worktrees` and each entry
    /// in it) and of the namespace directory: a worktree added, removed, moved, switched to
    /// another branch or deleted by hand changes one of them.
    pub(crate) fn worktrees_stamp(&self) -> Option<String> {
        let records = self.common.join("worktrees");
        let mut dirs = vec![self.namespace.clone(), records.clone()];
        if let Ok(entries) = std::fs::read_dir(&records) {
            dirs.extend(entries.filter_map(|e| Some(e.ok()?.path())));
        }
        dirs.sort();
        let mut stamp = String::new();
        for dir in &dirs {
            let time = std::fs::symlink_metadata(dir)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            stamp += &format!("{}={time};", dir.display());
        }
        Some(stamp)
    }

    pub(crate) fn resolve_base(&self, rev: Option<&str>) -> Result<Vec<String>> {
        let rev = rev.unwrap_or("HEAD");
        let out = self
            .call(&self.main)?
            .args(["rev-parse", "--verify", "--end-of-options"])
            .arg(format!("{rev}^{{commit}}"))
            .stdout()
            .map_err(|source| VcsError::UnknownRevision {
                rev: rev.to_string(),
                jj: false,
                source: Box::new(source),
            })?;
        Ok(vec![out.trim().to_string()])
    }

    fn branch_tip(&self, branch: &str) -> Result<Option<String>> {
        let out = self
            .call(&self.main)?
            .args(["rev-parse", "--verify", "--quiet"])
            .arg(format!("refs/heads/{branch}"))
            .stdout();
        match out {
            Ok(sha) => Ok(Some(sha.trim().to_string())),
            Err(ProcessError::Failed { code: Some(1), .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Adds a worktree on the workspace's branch: a new branch at `base`, or the existing
    /// branch when the base was not asked for explicitly (or matches it).
    pub(crate) fn worktree_add(
        &self,
        id: &WorkspaceId,
        path: &Path,
        base: &[String],
        explicit: bool,
    ) -> Result<Created> {
        let branch = self.branch(id);
        let tip = self.branch_tip(&branch)?;
        let mut call = self.call(&self.main)?.args(["worktree", "add", "--quiet"]);
        let new_branch = match &tip {
            Some(tip) if explicit && base.first() != Some(tip) => {
                return Err(VcsError::BranchElsewhere {
                    branch,
                    tip: tip[..tip.len().min(12)].to_string(),
                })
            }
            Some(_) => {
                call = call.arg(path).arg(&branch);
                false
            }
            None => {
                call = call
                    .args(["-b", &branch])
                    .arg(path)
                    .arg(base.first().map_or("HEAD", String::as_str));
                true
            }
        };
        if let Err(e) = call.stdout() {
            if new_branch && self.branch_tip(&branch).ok().flatten().is_some() {
                let _ = self.delete_branch(&branch, true);
            }
            return Err(VcsError::CreateFailed {
                what: "git worktree",
                id: id.clone(),
                path: path.to_path_buf(),
                source: Box::new(e),
            });
        }
        let start = match new_branch {
            true => self.branch_tip(&branch).ok().flatten(),
            false => None,
        };
        Ok(Created {
            branch: Some(branch),
            new_branch,
            start,
        })
    }

    /// What [`Git::worktree_add`] of `id` on `base` will make: its branch, whether the branch
    /// is new, and the commit a new one starts at.
    pub(crate) fn plan_worktree(&self, id: &WorkspaceId, base: &[String]) -> Result<Created> {
        let branch = self.branch(id);
        let new_branch = self.branch_tip(&branch)?.is_none();
        let start = match new_branch {
            true => Some(self.rev(base.first().map_or("HEAD", String::as_str))?),
            false => None,
        };
        Ok(Created {
            branch: Some(branch),
            new_branch,
            start,
        })
    }

    /// The full commit id `rev` names.
    fn rev(&self, rev: &str) -> Result<String> {
        let out = self
            .call(&self.main)?
            .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
            .arg(format!("{rev}^{{commit}}"))
            .stdout()?;
        Ok(out.trim().to_string())
    }

    /// Deletes `branch` if it still points at `start` (unknown: never): what a rolled-back
    /// creation made, and nothing anyone committed since.
    pub(crate) fn delete_branch_at(&self, branch: &str, start: &Option<String>) -> Result<()> {
        match (self.branch_tip(branch)?, start) {
            (Some(tip), Some(start)) if &tip == start => self.delete_branch(branch, true),
            _ => Ok(()),
        }
    }

    /// Unregisters the worktree at `path`; its directory is expected to be gone already.
    pub(crate) fn worktree_forget(&self, path: &Path) -> Result<()> {
        let out = self
            .call(&self.main)?
            .args(["worktree", "remove", "--force", "--force"])
            .arg(path)
            .stdout();
        match out {
            Ok(_) => Ok(()),
            Err(e) if classify::failure(e.stderr()) == Failure::NotAWorktree => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Deletes a workspace branch: only when fully merged unless `force`.
    pub(crate) fn delete_branch(&self, branch: &str, force: bool) -> Result<()> {
        let flag = if force { "-D" } else { "-d" };
        let out = self
            .call(&self.main)?
            .args(["branch", "--quiet", flag, "--end-of-options", branch])
            .stdout();
        match out {
            Ok(_) => Ok(()),
            Err(e) if !force && classify::failure(e.stderr()) == Failure::NotFullyMerged => {
                Err(VcsError::NotMerged {
                    branch: branch.to_string(),
                })
            }
            Err(source) => Err(VcsError::BranchDelete {
                branch: branch.to_string(),
                source: Box::new(source),
            }),
        }
    }

    /// The content of `file` at `commit`: `None` when the commit has no such file; a commit
    /// that cannot be read is an error, never taken for a missing file.
    pub(crate) fn file_at(&self, commit: &str, file: &str) -> Result<Option<Vec<u8>>> {
        let listed = self
            .call(&self.main)?
            .args(["ls-tree", "-z", "--end-of-options"])
            .arg(format!("{commit}^{{commit}}"))
            .arg("--")
            .arg(file)
            .stdout()?;
        let Some(object) = parse_blob_entry(&listed) else {
            return Ok(None);
        };
        let out = self
            .call(&self.main)?
            .args(["cat-file", "blob", object])
            .stdout()?;
        Ok(Some(out.into_bytes()))
    }

    pub(crate) fn exclude_file(&self) -> Option<PathBuf> {
        Some(self.common.join("info").join("exclude"))
    }
}

/// The object id of a blob in `git ls-tree -z` output (`<mode> blob <id>\t<path>\0`), if the
/// entry is one.
fn parse_blob_entry(text: &str) -> Option<&str> {
    let (meta, _path) = text.split('\0').next()?.split_once('\t')?;
    let mut fields = meta.split(' ');
    match (fields.next(), fields.next(), fields.next()) {
        (Some(_mode), Some("blob"), Some(id)) => Some(id),
        _ => None,
    }
}

/// The worktrees that are ours: those directly inside `namespace` (named by their directory,
/// whatever branch they are on), and those elsewhere on a branch under `prefix` (named by the
/// rest of the branch name). Fields are NUL-separated and records end with an empty field, so
/// no byte of a path can confuse the parse.
fn parse_worktrees(text: &str, prefix: &str, namespace: &Path) -> Vec<Registered> {
    let mut found = vec![];
    for record in text.split("\0\0") {
        let mut path = None;
        let mut branch = None;
        for field in record.split('\0') {
            if let Some(p) = field.strip_prefix("worktree ") {
                path = Some(PathBuf::from(p));
            } else if let Some(b) = field.strip_prefix("branch refs/heads/") {
                branch = Some(b.to_string());
            }
        }
        let Some(path) = path else { continue };
        let by_dir = (path.parent() == Some(namespace))
            .then(|| path.file_name().and_then(|n| n.to_str()))
            .flatten();
        let by_branch = branch.as_deref().and_then(|b| b.strip_prefix(prefix));
        if let Some(name) = by_dir.or(by_branch) {
            found.push(Registered {
                name: name.to_string(),
                path: Some(path),
            });
        }
    }
    found
}

/// Runs `add` (a `git add --all ...` call in the worktree at `ws`); a file git refuses to add
/// (a FIFO, a socket, a device the agent left) is named in the error.
fn add_all(add: Call, ws: &Path) -> Result<()> {
    let Err(err) = add.stdout() else {
        return Ok(());
    };
    let Some(rel) = classify::unaddable(err.stderr()) else {
        return Err(err.into());
    };
    use std::os::unix::fs::FileTypeExt;
    let path = ws.join(rel);
    let kind = match std::fs::symlink_metadata(&path).map(|m| m.file_type()) {
        Ok(t) if t.is_fifo() => "FIFO",
        Ok(t) if t.is_socket() => "socket",
        Ok(t) if t.is_block_device() || t.is_char_device() => "device",
        _ => "file that is no regular file, symlink or repository",
    };
    Err(VcsError::Unaddable { path, kind })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_entries() {
        let id = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";
        assert_eq!(
            parse_blob_entry(&format!("100644 blob {id}\t.envrc\0")),
            Some(id)
        );
        assert_eq!(
            parse_blob_entry(&format!("040000 tree {id}\t.envrc\0")),
            None
        );
        assert_eq!(parse_blob_entry(""), None);
    }

    #[test]
    fn worktree_list() {
        let text = "worktree /r\0HEAD ab\0branch refs/heads/main\0\0\
                    worktree /ns/w1\0HEAD ab\0branch refs/heads/agent-workspace/w1\0prunable gone\0\0\
                    worktree /elsewhere\0HEAD cd\0detached\0\0\
                    worktree /ns/w\n2\0HEAD cd\0branch refs/heads/other/w2\0\0";
        let parsed = parse_worktrees(text, DEFAULT_PREFIX, Path::new("/ns"));
        assert_eq!(
            parsed,
            vec![
                Registered {
                    name: "w1".into(),
                    path: Some("/ns/w1".into())
                },
                Registered {
                    name: "w\n2".into(),
                    path: Some("/ns/w\n2".into())
                }
            ]
        );
    }
}
