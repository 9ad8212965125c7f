//! Landing a git worktree: its branch merged into a target branch, computed with
//! `git merge-tree` before anything moves, so a conflicted merge changes nothing.

use std::path::{Path, PathBuf};

use super::Git;
use crate::process::ProcessError;
use crate::vcs::land::{overlap, LandError, Landing, Plan, Result, Target, TargetKind};

impl Git {
    /// Lands workspace `plan.id`; see [`crate::vcs::Vcs::land`]. Everything is decided on
    /// a commit of the uncommitted changes that no ref holds; only a land that will happen
    /// commits them to the workspace's branch and moves the target.
    pub fn land(&self, plan: &Plan) -> Result<Landing> {
        let target = self.land_branch(&plan.target)?;
        let onto = self
            .branch_tip(&target)?
            .ok_or_else(|| no_branch(&target))?;
        let branch = self.branch(plan.id);
        let tip = self
            .branch_tip(&branch)?
            .ok_or_else(|| no_branch(&branch))?;
        let unsaved = self.unsaved_commit(plan.id, plan.ws, &tip)?;
        let trial_tip = unsaved.as_ref().map_or(tip, |u| u.commit.clone());
        let (mut landing, mut tree) = self.merge_plan(plan, &target, &onto, &trial_tip)?;
        if landing.commits.is_empty() || !landing.conflicts.is_empty() {
            return Ok(landing);
        }
        let checked_out = self.worktree_on(&target)?;
        let mut already = vec![];
        if let Some(wt) = &checked_out {
            already = self.refuse_dirty(wt, &landing.files, &tree)?;
        }
        if plan.dry_run {
            return Ok(landing);
        }
        let (tip, recorded_edits) = match unsaved {
            Some(unsaved) => self.save(plan, unsaved)?,
            None => (trial_tip.clone(), false),
        };
        if tip != trial_tip {
            (landing, tree) = self.merge_plan(plan, &target, &onto, &tip)?;
            if !landing.conflicts.is_empty() {
                return Ok(landing);
            }
        }
        let new = match self.is_ancestor(&onto, &tip)? {
            true => tip.clone(),
            false => self.merge_commit(&tree, &onto, &tip, plan.id, &target)?,
        };
        match &checked_out {
            Some(wt) => {
                // Changes the merge brings as they are: staged, so the fast-forward keeps them.
                if !already.is_empty() {
                    self.call(wt)?.args(["add", "--"]).args(&already).stdout()?;
                }
                self.call(wt)?
                    .args(["merge", "--ff-only", "--quiet", &new])
                    .stdout()?
            }
            None => self
                .call(&self.main)?
                .args(["update-ref", "-m", "agent-workspace land"])
                .arg(format!("refs/heads/{target}"))
                .args([&new, &onto])
                .stdout()?,
        };
        landing.recorded_edits = recorded_edits;
        landing.merge_commit = Some(new);
        landing.applied = true;
        Ok(landing)
    }

    /// The branch a land goes to: the main worktree's, the parent workspace's, or the local
    /// branch `--onto` names.
    fn land_branch(&self, target: &Target) -> Result<String> {
        match target {
            Target::Workspace { id, .. } => Ok(self.branch(id)),
            Target::Main => {
                let out = self
                    .call(&self.main)?
                    .args(["symbolic-ref", "--quiet", "--short", "HEAD"])
                    .stdout()
                    .map_err(|_| LandError::DetachedMain)?;
                Ok(out.trim().to_string())
            }
            Target::Rev(rev) => {
                if self.branch_tip(rev)?.is_some() {
                    return Ok(rev.clone());
                }
                let kind = match self.resolve_base(Some(rev)).is_ok() {
                    true => TargetKind::GitCommit,
                    false => TargetKind::GitUnknown,
                };
                Err(LandError::UnknownTarget {
                    rev: rev.clone(),
                    why: "no local branch has that name".into(),
                    kind,
                })
            }
        }
    }

    /// The worktree that has `branch` checked out, if any.
    fn worktree_on(&self, branch: &str) -> Result<Option<PathBuf>> {
        let out = self
            .call(&self.main)?
            .args(["worktree", "list", "--porcelain", "-z"])
            .stdout()?;
        let wanted = format!("branch refs/heads/{branch}");
        Ok(out.split("\0\0").find_map(|record| {
            let mut fields = record.split('\0');
            let path = fields.next()?.strip_prefix("worktree ")?;
            fields.any(|f| f == wanted).then(|| PathBuf::from(path))
        }))
    }

    /// Refuses a land whose target worktree has changes (untracked files included) in files
    /// the land would change, unless each such file already holds what the merge (`tree`)
    /// brings (a child's fork of its parent's uncommitted changes): those are returned.
    fn refuse_dirty(&self, wt: &Path, files: &[String], tree: &str) -> Result<Vec<String>> {
        let out = self
            .call(wt)?
            .args([
                "status",
                "--porcelain",
                "-z",
                "--untracked-files=all",
                "--no-renames",
            ])
            .stdout()?;
        let dirty: Vec<String> = out
            .split('\0')
            .filter_map(|entry| entry.get(3..))
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        let both = overlap(files, &dirty);
        if both.is_empty() || self.hold_result(wt, &both, tree)? {
            return Ok(both);
        }
        Err(LandError::Dirty {
            path: wt.to_path_buf(),
            files: both,
            jj: false,
        })
    }

    /// Whether every one of `files` in the worktree `wt` has exactly its content in `tree`.
    fn hold_result(&self, wt: &Path, files: &[String], tree: &str) -> Result<bool> {
        if files.iter().any(|f| !wt.join(f).is_file()) {
            return Ok(false);
        }
        let hashes = self
            .call(wt)?
            .args(["hash-object", "--"])
            .args(files)
            .stdout()?;
        let listed = self
            .call(&self.main)?
            .args(["ls-tree", "-z", tree, "--"])
            .args(files)
            .stdout()?;
        let blob = |file: &str| {
            listed.split('\0').find_map(|entry| {
                let (meta, path) = entry.split_once('\t')?;
                (path == file).then(|| meta.rsplit(' ').next().unwrap_or(""))
            })
        };
        let hashes: Vec<&str> = hashes.lines().collect();
        Ok(hashes.len() == files.len()
            && files
                .iter()
                .zip(hashes)
                .all(|(f, hash)| blob(f) == Some(hash)))
    }

    fn is_ancestor(&self, ancestor: &str, of: &str) -> crate::vcs::Result<bool> {
        let out = self
            .call(&self.main)?
            .args(["merge-base", "--is-ancestor", ancestor, of])
            .stdout();
        match out {
            Ok(_) => Ok(true),
            Err(ProcessError::Failed { code: Some(1), .. }) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    fn merge_commit(
        &self,
        tree: &str,
        onto: &str,
        tip: &str,
        id: &str,
        target: &str,
    ) -> Result<String> {
        let out = self
            .call(&self.main)?
            .args(["commit-tree", tree, "-p", onto, "-p", tip, "-m"])
            .arg(format!("Merge workspace {id} into {target}"))
            .stdout()?;
        Ok(out.trim().to_string())
    }

    /// Whether the work of workspace `id` at `ws` is all on `target`: nothing uncommitted and
    /// its branch contained in the target branch.
    pub fn is_landed(&self, id: &str, ws: &Path, target: &str) -> crate::vcs::Result<bool> {
        let status = self
            .call(ws)?
            .args(["status", "--porcelain", "-z", "--untracked-files=all"])
            .stdout()?;
        if !status.is_empty() {
            return Ok(false);
        }
        match self.branch_tip(target)? {
            Some(onto) => {
                let branch = format!("refs/heads/{}", self.branch(id));
                self.is_ancestor(&branch, &onto)
            }
            None => Ok(false),
        }
    }
}

pub(super) fn no_branch(branch: &str) -> LandError {
    LandError::NoBranch {
        branch: branch.to_string(),
    }
}
