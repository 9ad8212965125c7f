//! git invocations for the worktree backend, one method per call, each parser beside its call.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use super::{Created, Head, Kept, Registered};
use crate::error::{CliError, Result};
use crate::process::{Call, ProcessError};
use crate::repo::Repo;

/// The branch prefix used when `AGENT_WORKSPACE_BRANCH_PREFIX` is not set.
pub const DEFAULT_PREFIX: &str = "agent-workspace/";

/// A git repository, addressed through its main worktree.
pub struct Git {
    main: PathBuf,
    common: PathBuf,
    prefix: String,
    /// The namespace directory: a worktree directly inside it is ours, whatever its branch.
    namespace: PathBuf,
    binary: OnceCell<PathBuf>,
}

impl Git {
    pub fn new(repo: &Repo, namespace: &Path) -> Git {
        let prefix = crate::vars::non_empty(crate::vars::BRANCH_PREFIX)
            .unwrap_or_else(|| DEFAULT_PREFIX.into());
        Git {
            main: repo.root.clone(),
            common: repo.store.clone(),
            prefix,
            namespace: namespace.to_path_buf(),
            binary: OnceCell::new(),
        }
    }

    /// The branch of workspace `id`.
    pub fn branch(&self, id: &str) -> String {
        format!("{}{id}", self.prefix)
    }

    fn call(&self, dir: &Path) -> Result<Call> {
        let bin = match self.binary.get() {
            Some(bin) => bin,
            None => {
                let found = which::which("git").map_err(|_| {
                    CliError::failure("git was not found on PATH").hint("install git")
                })?;
                self.binary.get_or_init(|| found)
            }
        };
        Ok(Call::new(bin)
            .arg("-C")
            .arg(dir)
            .env("LC_ALL", "C")
            .env("GIT_TERMINAL_PROMPT", "0"))
    }

    pub fn list(&self) -> Result<Vec<Registered>> {
        let out = self
            .call(&self.main)?
            .args(["worktree", "list", "--porcelain", "-z"])
            .stdout()?;
        // The main worktree is the repository itself: never a workspace, whatever its branch.
        let mut found = parse_worktrees(&out, &self.prefix, &self.namespace);
        found.retain(|w| w.path.as_deref() != Some(self.main.as_path()));
        Ok(found)
    }

    pub fn resolve_base(&self, rev: Option<&str>) -> Result<Vec<String>> {
        let rev = rev.unwrap_or("HEAD");
        let out = self
            .call(&self.main)?
            .args(["rev-parse", "--verify", "--end-of-options"])
            .arg(format!("{rev}^{{commit}}"))
            .stdout()
            .map_err(|e| {
                CliError::failure(format!("cannot resolve revision {rev:?}"))
                    .cause(e.stderr().to_string())
                    .hint("pass --base-change a commit, branch or tag that exists")
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
    pub fn worktree_add(
        &self,
        id: &str,
        path: &Path,
        base: &[String],
        explicit: bool,
    ) -> Result<Created> {
        let branch = self.branch(id);
        let tip = self.branch_tip(&branch)?;
        let mut call = self.call(&self.main)?.args(["worktree", "add", "--quiet"]);
        let new_branch = match &tip {
            Some(tip) if explicit && base.first() != Some(tip) => {
                return Err(CliError::failure(format!(
                    "branch {branch} already exists at {}, not at the --base-change asked for",
                    &tip[..tip.len().min(12)]
                ))
                .hint(format!(
                    "drop --base-change to reuse the branch, or delete it: git branch -D {branch}"
                )))
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
            return Err(CliError::failure(format!(
                "could not create git worktree {id:?} at {}",
                path.display()
            ))
            .cause(e.to_string())
            .cause(e.stderr().to_string())
            .hint(crate::error::creation_hint(&e)));
        }
        Ok(Created {
            branch: Some(branch),
            new_branch,
        })
    }

    /// Unregisters the worktree at `path`; its directory is expected to be gone already.
    pub fn worktree_forget(&self, path: &Path) -> Result<()> {
        let out = self
            .call(&self.main)?
            .args(["worktree", "remove", "--force", "--force"])
            .arg(path)
            .stdout();
        match out {
            Ok(_) => Ok(()),
            Err(e) if e.stderr().contains("is not a working tree") => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Commits any uncommitted changes of the worktree to its branch, so removing it loses
    /// nothing; reports the branch and its tip.
    pub fn keep_edits(&self, id: &str, path: Option<&Path>) -> Result<Kept> {
        let branch = self.branch(id);
        let mut committed = false;
        let mut head = None;
        if let Some(ws) = path {
            let status = self
                .call(ws)?
                .args(["status", "--porcelain", "-z", "--untracked-files=all"])
                .stdout();
            let status = match status {
                // Its administrative files are gone: git no longer knows this worktree.
                Err(e) if e.stderr().contains("not a git repository") => {
                    return Ok(Kept::Unregistered)
                }
                other => other?,
            };
            if !status.is_empty() {
                // Committed on whatever HEAD is: a branch, or a detached HEAD kept below.
                self.call(ws)?.args(["add", "--all"]).stdout()?;
                let commit = self
                    .call(ws)?
                    .args(["commit", "--quiet", "--no-verify", "-m"])
                    .arg(format!(
                        "agent-workspace: uncommitted changes of workspace {id}"
                    ))
                    .stdout();
                if let Err(e) = commit {
                    return Err(self.commit_failed(ws, e));
                }
                committed = true;
            }
            head = self.keep_head(ws, &branch)?;
        }
        let commit = self.branch_tip(&branch)?.unwrap_or_default();
        if commit.is_empty() && head.is_none() {
            return Ok(Kept::Nothing);
        }
        Ok(Kept::Branch {
            branch,
            commit,
            committed,
            head,
        })
    }

    /// A failed commit of the uncommitted changes: unstage what `add --all` staged, so the
    /// worktree is left as the agent had it, and say so.
    fn commit_failed(&self, ws: &Path, e: ProcessError) -> CliError {
        let unstaged = self
            .call(ws)
            .and_then(|c| Ok(c.args(["reset", "--quiet"]).stdout()?));
        let err = CliError::failure(format!(
            "could not commit the uncommitted changes of {}; the workspace is kept",
            ws.display()
        ))
        .cause(e.to_string())
        .cause(e.stderr().to_string());
        match unstaged {
            Ok(_) => err.hint(format!(
                "nothing was left staged; fix the commit (e.g. its signing setup: `git -C {} config commit.gpgsign false`) or commit the changes yourself, then clean again",
                ws.display()
            )),
            Err(reset) => err.cause(reset.to_string()).hint(format!(
                "the changes are still staged in {}; fix the commit or commit them yourself, then clean again",
                ws.display()
            )),
        }
    }

    /// Where the worktree at `ws` has its HEAD, when not on `branch`; a detached HEAD that
    /// `branch` does not contain gets a branch of its own, `<branch>-detached-<short>`, so that
    /// removing the worktree leaves it reachable.
    fn keep_head(&self, ws: &Path, branch: &str) -> Result<Option<Head>> {
        let on = self
            .call(ws)?
            .args(["symbolic-ref", "--quiet", "--short", "HEAD"])
            .stdout();
        let commit = match self
            .call(ws)?
            .args(["rev-parse", "--verify", "--quiet", "HEAD"])
            .stdout()
        {
            Ok(sha) => sha.trim().to_string(),
            // No commit at all on HEAD (an unborn branch): nothing to keep reachable.
            Err(_) => return Ok(None),
        };
        match on {
            Ok(name) if name.trim() == branch => Ok(None),
            Ok(name) => Ok(Some(Head {
                branch: name.trim().to_string(),
                commit,
                created: false,
            })),
            Err(ProcessError::Failed { code: Some(1), .. }) => {
                let contained = self
                    .call(&self.main)?
                    .args(["merge-base", "--is-ancestor", &commit])
                    .arg(format!("refs/heads/{branch}"))
                    .stdout()
                    .is_ok();
                if contained {
                    return Ok(None);
                }
                let keeper = format!("{branch}-detached-{}", &commit[..commit.len().min(12)]);
                if self.branch_tip(&keeper)?.as_deref() != Some(commit.as_str()) {
                    self.call(&self.main)?
                        .args(["branch", "--quiet", "--end-of-options", &keeper, &commit])
                        .stdout()?;
                }
                Ok(Some(Head {
                    branch: keeper,
                    commit,
                    created: true,
                }))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The commits on `tips` not on `base`, newest first.
    pub fn work_commits(&self, tips: &[&str], base: &[String]) -> Result<Vec<super::Commit>> {
        // Only object ids reach the command line: the base comes from a file the workspace
        // can write.
        let hex = |c: &&str| !c.is_empty() && c.bytes().all(|b| b.is_ascii_hexdigit());
        let out = self
            .call(&self.main)?
            .args(["log", "--format=%H%x09%s%x00"])
            .args(tips.iter().copied().filter(hex))
            .arg("--not")
            .args(base.iter().map(String::as_str).filter(hex))
            .arg("--")
            .stdout()?;
        Ok(super::parse_commits(&out))
    }

    /// The files of the worktree at `ws` that git tracks, relative to `ws`.
    pub fn tracked(&self, ws: &Path) -> Result<Vec<PathBuf>> {
        let out = self.call(ws)?.args(["ls-files", "-z"]).stdout()?;
        Ok(super::split_nul(&out))
    }

    /// Deletes a workspace branch: only when fully merged unless `force`.
    pub fn delete_branch(&self, branch: &str, force: bool) -> Result<()> {
        let flag = if force { "-D" } else { "-d" };
        let out = self
            .call(&self.main)?
            .args(["branch", "--quiet", flag, "--end-of-options", branch])
            .stdout();
        match out {
            Ok(_) => Ok(()),
            Err(e) if !force && e.stderr().contains("is not fully merged") => Err(
                CliError::failure(format!("branch {branch} is not fully merged"))
                    .hint("pass --force to delete it anyway"),
            ),
            Err(e) => {
                Err(CliError::from(e).hint(format!("delete it by hand: git branch -D {branch}")))
            }
        }
    }

    /// The content of `file` at `commit`: `None` when the commit has no such file; a commit
    /// that cannot be read is an error, never taken for a missing file.
    pub fn file_at(&self, commit: &str, file: &str) -> Result<Option<Vec<u8>>> {
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

    pub fn exclude_file(&self) -> Option<PathBuf> {
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
