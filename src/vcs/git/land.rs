//! Landing<GitLanded> a git worktree: its branch merged into a target branch, computed with
//! `git merge-tree` before anything moves, so a conflicted merge changes nothing.

use std::path::{Path, PathBuf};

use super::land_edits::{no_branch, WorkHead};
use super::Git;
use crate::exec::process::ProcessError;
use crate::store::layout::WorkspaceId;
use crate::vcs::land::{GitLanded, LandError, Landing, Plan, Result, Target, TargetKind};
use crate::vcs::VcsError;

/// How many times a land is planned again on a target that moved while it was planned.
const ATTEMPTS: usize = 3;

impl Git {
    /// Lands workspace `plan.id`; see [`crate::vcs::Vcs::land`]. Everything is decided on
    /// a commit of the uncommitted changes that no ref holds; only a land that will happen
    /// commits them to the workspace's branch and moves the target.
    ///
    /// The target moves only from the commit the plan merged onto (compare and swap): one
    /// that moved meanwhile (a commit made there) plans the land again, up to [`ATTEMPTS`]
    /// times.
    pub(crate) fn land(&self, plan: &Plan) -> Result<Landing<GitLanded>> {
        let mut attempt = 1;
        let mut landing = loop {
            match self.land_or_plan(plan) {
                Err(LandError::TargetMoved) if attempt < ATTEMPTS => attempt += 1,
                Err(LandError::TargetMoved) => {
                    return Err(LandError::TargetChanging {
                        path: self.main.clone(),
                    })
                }
                other => break other?,
            }
        };
        if plan.watching {
            landing.files_as_of = Some(crate::vcs::diff::AsOf::LiveFiles);
        }
        Ok(landing)
    }

    fn land_or_plan(&self, plan: &Plan) -> Result<Landing<GitLanded>> {
        let target = match self.land_branch(&plan.target) {
            // A rebase detaches HEAD: say that, not only that HEAD is detached.
            Err(LandError::DetachedMain) => {
                self.refuse_in_progress(&self.main)?;
                return Err(LandError::DetachedMain);
            }
            other => other?,
        };
        let onto = self
            .branch_tip(&target)?
            .ok_or_else(|| no_branch(&target))?;
        let checked_out = self.worktree_on(&target)?;
        if let Some(wt) = &checked_out {
            self.refuse_in_progress(wt)?;
        }
        self.refuse_rebasing(&target)?;
        let branch = self.branch(plan.id);
        let branch_tip = self
            .branch_tip(&branch)?
            .ok_or_else(|| no_branch(&branch))?;
        // A merge or rebase stopped in the workspace: its files may hold conflict markers.
        self.refuse_unmerged(plan.ws)?;
        self.refuse_in_progress(plan.ws)?;
        let head = self.work_head(plan, &branch, &branch_tip)?;
        let start = match &head {
            WorkHead::Branch => branch_tip.clone(),
            WorkHead::Detached { commit } => commit.clone(),
        };
        let unsaved = self.unsaved_commit(plan.id, plan.ws, &start)?;
        let trial_tip = unsaved.as_ref().map_or(start, |u| u.commit.clone());
        // Markers a conflict left (committed or not) are lines the workspace adds.
        let marked = self.marked_since_merge_base(&onto, &trial_tip)?;
        if !marked.is_empty() {
            return Err(VcsError::Markers {
                id: plan.id.clone(),
                ws: plan.ws.to_path_buf(),
                files: marked,
                landing: true,
            }
            .into());
        }
        let fork = self.fork_copy(plan, &onto, &trial_tip)?;
        let fork = fork.as_deref();
        if let (Some(fork), Some(wt), Target::Workspace { id: parent, .. }) =
            (fork, &checked_out, &plan.target)
        {
            self.refuse_parent_edits(wt, parent, fork, &trial_tip)?;
        }
        let (mut landing, mut tree) = self.merge_plan(plan, &target, &onto, &trial_tip, fork)?;
        landing.by.target_before = Some(onto.clone());
        if landing.commits.is_empty() || !landing.conflicts.is_empty() {
            return Ok(landing);
        }
        let mut already = vec![];
        if let Some(wt) = &checked_out {
            already = self.refuse_dirty(wt, &landing.files, &tree)?;
        }
        if plan.dry_run {
            return Ok(landing);
        }
        let (tip, recorded_edits) = self.save(plan, &head, &branch_tip, unsaved)?;
        if tip != trial_tip {
            (landing, tree) = self.merge_plan(plan, &target, &onto, &tip, fork)?;
            landing.by.target_before = Some(onto.clone());
            if !landing.conflicts.is_empty() {
                return Ok(landing);
            }
            if let Some(wt) = &checked_out {
                already = self.refuse_dirty(wt, &landing.files, &tree)?;
            }
        }
        // A child's copy of its parent's state is never fast-forwarded onto the target: the
        // merge commit holds the child's own changes only.
        let new = match fork.is_none() && self.is_ancestor(&onto, &tip)? {
            true => tip.clone(),
            false => self.merge_commit(&tree, &onto, &tip, plan.id, &target)?,
        };
        if self.branch_tip(&target)?.as_deref() != Some(onto.as_str()) {
            return Err(LandError::TargetMoved);
        }
        if let Some(wt) = &checked_out {
            crate::vcs::land::room_for_land(wt, plan.ws, &landing.files)?;
        }
        let moved = match &checked_out {
            Some(wt) => {
                // Changes the merge brings as they are: staged, so the fast-forward keeps them.
                if !already.is_empty() {
                    self.call(wt)?.args(["add", "--"]).args(&already).stdout()?;
                }
                self.call(wt)?
                    .args(["merge", "--ff-only", "--quiet", &new])
                    .stdout()
            }
            None => self
                .call(&self.main)?
                .args(["update-ref", "-m", "agent-workspace land"])
                .arg(format!("refs/heads/{target}"))
                .args([&new, &onto])
                .stdout(),
        };
        if let Err(err) = moved {
            // A commit made there since the check: `--ff-only` and update-ref's old value
            // refuse to move the branch, and the land is planned again.
            return match self.branch_tip(&target)?.as_deref() == Some(onto.as_str()) {
                true => match (&checked_out, super::classify::write_failed(err.stderr())) {
                    (Some(wt), true) => Err(self.put_back_after_full_disk(wt, &landing.files)),
                    _ => Err(err.into()),
                },
                false => Err(LandError::TargetMoved),
            };
        }
        landing.undo = Some(self.undo(&target, checked_out.as_deref(), &onto, &new, &already));
        if let WorkHead::Detached { commit } = head {
            landing.by.reattached_head = Some(commit);
        }
        landing.recorded_edits = recorded_edits;
        landing.by.merge_commit = Some(new);
        landing.applied = true;
        Ok(landing)
    }

    /// The command that reverts a land that moved `target` from `old` to `new`, and nothing
    /// else: refused by git once the branch moved on. A branch checked out in a worktree is
    /// put back with `git reset --keep` there, only while that worktree is on it at `new`;
    /// `--keep` refuses to touch a file with changes of its own. Files the worktree held as the
    /// land brought them (`already`) get that content back, uncommitted, as before the land.
    fn undo(
        &self,
        target: &str,
        worktree: Option<&Path>,
        old: &str,
        new: &str,
        already: &[String],
    ) -> String {
        let q = crate::exec::process::quote;
        let Some(wt) = worktree else {
            let main = q(&self.main.display().to_string());
            return format!(
                "git -C {main} update-ref {} {old} {new}",
                q(&format!("refs/heads/{target}"))
            );
        };
        let path = wt.display().to_string();
        let wt = q(&path);
        let mut reset = format!("git -C {wt} reset --quiet --keep {old}");
        if !already.is_empty() {
            let files: Vec<String> = already.iter().map(|f| q(f)).collect();
            reset += &format!(
                " && git -C {wt} restore --source={new} --worktree -- {}",
                files.join(" ")
            );
        }
        let expected = q(&format!("refs/heads/{target}@{new}"));
        let moved = q(&format!(
            "not undone: {target} is no longer at {} in {path}",
            &new[..new.len().min(12)],
        ));
        format!(
            "if test \"$(git -C {wt} symbolic-ref -q HEAD)@$(git -C {wt} rev-parse -q --verify HEAD)\" = {expected}; then {reset}; else echo {moved} >&2; false; fi"
        )
    }

    /// The commit a child workspace started from that holds a copy of its parent's
    /// uncommitted state (see [`Git::fork_point`]): the record's one base commit, made as
    /// such for this workspace (its subject says so), when the
    /// workspace's work `tip` is built on it, the target (at `onto`) does not hold it, and
    /// it sits right on the target's history. None of its changes belong to the child: the
    /// parent keeps them as its own edits.
    pub(super) fn fork_copy(&self, plan: &Plan, onto: &str, tip: &str) -> Result<Option<String>> {
        let [fork] = plan.base else {
            return Ok(None);
        };
        // The base comes from the record: only an object id reaches git.
        if fork.is_empty() || !fork.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(None);
        }
        if !self.is_ancestor(fork, tip)? || self.is_ancestor(fork, onto)? {
            return Ok(None);
        }
        let out = self
            .call(&self.main)?
            .args(["show", "--no-patch", "--format=%P%x00%s", fork])
            .stdout()?;
        let (parents, subject) = out.trim_end().split_once('\0').unwrap_or_default();
        if !subject.starts_with(&super::checkpoint::fork_prefix(plan.id)) {
            return Ok(None);
        }
        let mut ids = parents.split_whitespace();
        let (Some(parent), None) = (ids.next(), ids.next()) else {
            return Ok(None);
        };
        Ok(self.is_ancestor(parent, onto)?.then(|| fork.clone()))
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

    /// The workspace whose files or branch a land onto the local branch `rev` changes: the
    /// one of ours that has it checked out, or whose branch it is. git's name for a worktree
    /// (its directory's, or its branch's past the prefix) is one of ours only as an id.
    pub(crate) fn onto_workspace(&self, rev: &str) -> crate::vcs::Result<Option<WorkspaceId>> {
        let ours = self.list()?;
        if let Ok(Some(wt)) = self.worktree_on(rev) {
            if let Some(found) = ours
                .iter()
                .find(|r| r.path.as_deref() == Some(wt.as_path()))
            {
                return Ok(WorkspaceId::parse(&found.name).ok());
            }
        }
        Ok(rev
            .strip_prefix(&self.prefix)
            .filter(|id| ours.iter().any(|r| r.name == *id))
            .and_then(|id| WorkspaceId::parse(id).ok()))
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

    pub(super) fn is_ancestor(&self, ancestor: &str, of: &str) -> crate::vcs::Result<bool> {
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
        id: &WorkspaceId,
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
    pub(crate) fn is_landed(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        target: &str,
    ) -> crate::vcs::Result<bool> {
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
