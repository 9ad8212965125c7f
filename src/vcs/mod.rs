//! The version-control backends: jj workspaces and git worktrees behind one enum.

mod checkpoint;
pub(crate) mod classify;
pub(crate) mod diff;
pub(crate) mod discover;
pub(crate) mod error;
pub(crate) mod git;
pub(crate) mod jj;
pub(crate) mod land;
mod markers;
mod nested;
pub(crate) mod own_store;
mod packs;
mod pool;
mod sandbox;

pub(crate) use checkpoint::{Recorded, Unrecorded};

use std::path::{Path, PathBuf};

pub(crate) use crate::repo::Backend;
use crate::repo::Repo;
use crate::store::layout::WorkspaceId;
use crate::store::metadata::LandTarget;
pub(crate) use error::{Result, VcsError};

/// A workspace the backend knows by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Registered {
    /// The name as the backend lists it, not a [`WorkspaceId`]: jj lists its main workspace
    /// (`default`), workspaces made without this tool and names a `jj workspace rename`
    /// gave, which need not be ids; a caller that takes one for a workspace of its own
    /// parses it first.
    pub name: String,
    /// Where the backend believes it lives, when it records that.
    pub path: Option<PathBuf>,
}

/// What was kept of a workspace's edits when it was removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kept {
    /// The working-copy commit stays in the repository under this change id.
    Change {
        change_id: String,
        commit_id: String,
    },
    /// The worktree's branch keeps its commits; `committed` says whether uncommitted
    /// changes were committed to it first.
    Branch {
        branch: String,
        commit: String,
        committed: bool,
        /// Where the worktree's HEAD was, when not on `branch`.
        head: Option<Head>,
    },
    /// The working copy had no edits; nothing needed keeping.
    Nothing,
    /// The backend no longer knows the workspace, so nothing could be recorded.
    Unregistered,
}

/// A git worktree's HEAD that was not on the workspace's branch, and the branch that keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Head {
    pub branch: String,
    pub commit: String,
    /// Whether `branch` was created to keep a detached HEAD reachable.
    pub created: bool,
}

/// A commit a gitlink of a removed git worktree names (a submodule's, or a nested
/// repository's), and where it is kept now that the worktree's own git area is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeptLink {
    /// The gitlink's path in the worktree.
    pub path: String,
    pub commit: String,
    /// Whether it is a submodule's (its git directory in the worktree's git area), not a
    /// nested repository's.
    pub submodule: bool,
    /// The repository it was fetched into and the ref there that keeps it; `None` when no
    /// repository the worktree had holds it (it existed nowhere before the removal).
    pub kept: Option<(PathBuf, String)>,
}

/// A commit that holds a workspace's work: its id, its change id (jj) and the first line of
/// its description; in JSON the shape every output gives a commit.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct Commit {
    #[serde(rename = "commit_id")]
    pub id: String,
    /// jj's change id; none for git.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_id: Option<String>,
    pub subject: String,
}

pub(crate) const COMMIT_TEMPLATE_JJ: &str =
    r#"commit_id ++ "\t" ++ change_id ++ "\t" ++ description.first_line() ++ "\0""#;

/// The git log format [`parse_commits`] reads: no change id.
pub(crate) const COMMIT_FORMAT_GIT: &str = "--format=%H%x09%x09%s%x00";

/// Parses `<id>\t<change id or nothing>\t<subject>` records, each ended by NUL (and maybe a
/// newline).
fn parse_commits(text: &str) -> Vec<Commit> {
    text.split('\0')
        .filter_map(|rec| {
            let (id, rest) = rec.trim_start_matches('\n').split_once('\t')?;
            let (change, subject) = rest.split_once('\t')?;
            Some(Commit {
                id: id.to_string(),
                change_id: (!change.is_empty()).then(|| change.to_string()),
                subject: subject.to_string(),
            })
        })
        .collect()
}

/// Splits NUL-terminated paths (`-z` or a `"\0"` template) into relative paths.
pub(crate) fn split_nul(text: &str) -> Vec<PathBuf> {
    text.split('\0')
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// What creating a workspace made, so a failure later can undo exactly that.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Created {
    /// The branch the workspace is on (git).
    pub branch: Option<String>,
    /// Whether that branch was created by this call.
    pub new_branch: bool,
    /// The commit a new branch starts at: a rollback deletes the branch only while it is
    /// still there (anything else on it is someone's work).
    pub start: Option<String>,
}

/// A repository's backend, ready to run its commands.
pub(crate) enum Vcs {
    Jj(jj::Jj),
    Git(git::Git),
}

impl Vcs {
    /// Whether a workspace is a git worktree of the repository, so that tools that look
    /// for a git repository (a coding agent reading its project's settings) find the
    /// repository's own files from inside it: git's always are; jj's are workspaces of jj
    /// (a colocated one under jj 0.46 is a git worktree too, which this does not count on).
    pub(crate) fn workspaces_are_git_worktrees(&self) -> bool {
        matches!(self, Vcs::Git(_))
    }
}

/// The program a repository of `backend` needs (jj when none is known yet: the default).
pub(crate) fn program(backend: Option<Backend>) -> &'static str {
    match backend {
        Some(Backend::Git) => "git",
        Some(Backend::Jj) | None => "jj",
    }
}

impl Vcs {
    /// `cache_dir` (the namespace's `.locks`) is where a backend may keep answers that are
    /// expensive to recompute; its parent is the namespace directory.
    /// `branch_prefix` is git's (default [`git::DEFAULT_PREFIX`]), `colocate` jj's.
    pub(crate) fn new(
        repo: &Repo,
        cache_dir: &Path,
        branch_prefix: Option<String>,
        colocate: crate::config::Colocate,
    ) -> Vcs {
        match repo.backend {
            Backend::Jj => Vcs::Jj(jj::Jj::new(repo, cache_dir.to_path_buf()).colocate(colocate)),
            Backend::Git => Vcs::Git(git::Git::new(
                repo,
                cache_dir.parent().unwrap_or(cache_dir),
                branch_prefix,
            )),
        }
    }

    /// Refuses an id this backend cannot take: jj's main workspace `default`, which must never
    /// be adopted, forgotten or deleted, and for git an id that makes no valid branch name.
    /// Checked before anything is created, without running the backend.
    pub(crate) fn check_id(&self, id: &WorkspaceId) -> Result<()> {
        match self {
            Vcs::Jj(_) if id == jj::MAIN_WORKSPACE => {
                Err(VcsError::MainWorkspace { id: id.clone() })
            }
            Vcs::Jj(_) => Ok(()),
            Vcs::Git(git) => {
                let branch = git.branch(id);
                match crate::refname::branch_problem(&branch) {
                    None => Ok(()),
                    Some(why) => Err(VcsError::BadBranch {
                        id: id.clone(),
                        branch,
                        why: why.to_string(),
                    }),
                }
            }
        }
    }

    /// The ignored files (with `dirs`, ignored directories as one entry) of the workspace at
    /// `ws`, relative to it.
    pub(crate) fn ignored_files(&self, ws: &Path, dirs: bool) -> Result<Vec<PathBuf>> {
        match self {
            Vcs::Jj(jj) => jj.ignored_files(ws, dirs),
            Vcs::Git(git) => git.ignored_files(ws, dirs),
        }
    }

    /// Whether a prepared workspace can be taken before the base of the new one is known
    /// (jj: the base is settled after the take; git's take needs the branch's base first).
    pub(crate) fn takes_before_base(&self) -> bool {
        matches!(self, Vcs::Jj(_))
    }

    /// Whether a land can change the target with conflicts left in it (jj, under
    /// `--allow-conflicts`; git never lands a conflicted merge): a conflicted land may then
    /// need undoing.
    pub(crate) fn lands_conflicts(&self) -> bool {
        matches!(self, Vcs::Jj(_))
    }

    /// A land target's recorded state (`Vcs::land_target`) as the record keeps it: jj's is
    /// an operation (`operation_before`), git's a commit (`target_before`, or the merge
    /// commit it moved to): `(operation, commit)`.
    pub(crate) fn split_target_state(
        &self,
        state: Option<String>,
    ) -> (Option<String>, Option<String>) {
        match self {
            Vcs::Jj(_) => (state, None),
            Vcs::Git(_) => (None, state),
        }
    }

    /// Every workspace the backend knows, with its recorded path.
    pub(crate) fn list(&self) -> Result<Vec<Registered>> {
        match self {
            Vcs::Jj(jj) => jj.list(),
            Vcs::Git(git) => git.list(),
        }
    }

    /// Every registered workspace's name, without paths: cheaper than [`Vcs::list`].
    pub(crate) fn names(&self) -> Result<Vec<Registered>> {
        match self {
            Vcs::Jj(jj) => jj.names(),
            Vcs::Git(git) => git.list(),
        }
    }

    /// The commits a new workspace starts on: `rev` (exactly one revision) or the default.
    pub(crate) fn resolve_base(&self, rev: Option<&str>) -> Result<Vec<String>> {
        match self {
            Vcs::Jj(jj) => jj.resolve_base(rev),
            Vcs::Git(git) => git.resolve_base(rev),
        }
    }

    /// Creates workspace `id` at `path` on top of `base`; `explicit` says the base was asked
    /// for rather than defaulted.
    pub(crate) fn create(
        &self,
        id: &WorkspaceId,
        path: &Path,
        base: &[String],
        explicit: bool,
    ) -> Result<Created> {
        match self {
            Vcs::Jj(jj) => jj
                .workspace_add(id, path, base)
                .map(|()| Created::default()),
            Vcs::Git(git) => git.worktree_add(id, path, base, explicit),
        }
    }

    /// What [`Vcs::create`] of `id` on `base` will make, known before it runs so a journal
    /// can name it first (git: the branch, whether it is new, the commit it starts at).
    pub(crate) fn plan_create(&self, id: &WorkspaceId, base: &[String]) -> Result<Created> {
        match self {
            Vcs::Jj(_) => Ok(Created::default()),
            Vcs::Git(git) => git.plan_worktree(id, base),
        }
    }

    /// Deletes the branch a creation made (`created.new_branch`), only while it still points
    /// at the commit it started at: a rollback never takes anyone's commits with it.
    pub(crate) fn delete_created_branch(&self, created: &Created) -> Result<()> {
        match (self, &created.branch, created.new_branch) {
            (Vcs::Git(git), Some(branch), true) => git.delete_branch_at(branch, &created.start),
            _ => Ok(()),
        }
    }

    /// Unregisters workspace `id` at `path`; call it once the directory is gone.
    pub(crate) fn forget(&self, id: &WorkspaceId, path: &Path) -> Result<()> {
        match self {
            Vcs::Jj(jj) => {
                jj.workspace_forget(id)?;
                jj.unregister_worktree(path)
            }
            Vcs::Git(git) => git.worktree_forget(path),
        }
    }

    /// Unregisters workspace `id` and runs `remove` (which deletes its directory): at the same
    /// time for jj, whose forget never touches the directory; one after the other for git,
    /// which expects the directory gone.
    pub(crate) fn forget_removing<E: From<VcsError>>(
        &self,
        id: &WorkspaceId,
        path: &Path,
        remove: impl FnOnce() -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        match self {
            Vcs::Jj(jj) => {
                let forgetting = jj.start_forget(id)?;
                let removed = remove();
                let forgot = forgetting.wait().map_err(|e| E::from(e.into()));
                removed.and(forgot.map(drop))?;
                Ok(jj.unregister_worktree(path)?)
            }
            Vcs::Git(git) => {
                remove()?;
                Ok(git.worktree_forget(path)?)
            }
        }
    }

    /// git: fetches every commit a gitlink of the worktree of `id` at `ws` names (in its
    /// index, its `HEAD`, the commits `kept` holds since `base`) that the user's repository
    /// does not keep yet, from the submodule or nested repository that holds it, so removing
    /// the worktree loses none; says where each went. jj records no gitlinks: none.
    pub(crate) fn keep_gitlinks(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        kept: &Kept,
        base: &[String],
    ) -> Result<Vec<KeptLink>> {
        match (self, kept) {
            (Vcs::Git(git), Kept::Branch { commit, head, .. }) => {
                let mut tips = vec![commit.as_str()];
                tips.extend(head.as_ref().map(|h| h.commit.as_str()));
                git.keep_gitlinks(id, ws, &tips, base)
            }
            (Vcs::Git(git), Kept::Nothing) => git.keep_gitlinks(id, ws, &[], base),
            _ => Ok(vec![]),
        }
    }

    /// Deletes a branch this tool created for a workspace (git only).
    pub(crate) fn delete_branch(&self, branch: &str, force: bool) -> Result<()> {
        match self {
            Vcs::Jj(_) => Ok(()),
            Vcs::Git(git) => git.delete_branch(branch, force),
        }
    }

    /// Records the latest edits of workspace `id` (at `path`, when it still exists) and says
    /// what keeps them once the workspace is gone.
    pub(crate) fn keep_edits(&self, id: &WorkspaceId, path: Option<&Path>) -> Result<Kept> {
        match self {
            Vcs::Jj(jj) => jj.keep_edits(id, path),
            Vcs::Git(git) => git.keep_edits(id, path),
        }
    }

    /// [`Vcs::keep_edits`], and for a jj workspace whose directory is left the
    /// [`Vcs::work_commits_and_tracked`] that follows it, from the same jj process (`None`:
    /// ask them apart). Both ask `room`, before they write anything, whether the file
    /// systems have room for what recording the edits writes (refused:
    /// [`VcsError::NoRoom`], nothing changed): a snapshot that fails half way on a full disk
    /// leaves a jj working copy stale.
    #[allow(clippy::type_complexity)]
    pub(crate) fn keep_edits_listing(
        &self,
        id: &WorkspaceId,
        path: Option<&Path>,
        base: &[String],
        room: &dyn Fn(u64) -> std::result::Result<(), crate::store::disk::NoRoom>,
    ) -> Result<(Kept, Option<(Vec<Commit>, Vec<PathBuf>)>)> {
        match (self, path) {
            (Vcs::Jj(jj), Some(ws)) => jj.keep_edits_listing(id, ws, base, room),
            (Vcs::Git(git), _) => Ok((git.keep_edits_within(id, path, room)?, None)),
            _ => Ok((self.keep_edits(id, path)?, None)),
        }
    }

    /// At most what recording the edits of the workspace at `ws` writes, counted from the
    /// files: those changed since the backend last recorded it (jj: its `tree_state`; git:
    /// its index), the ones it ignores aside (build output is never recorded; when the
    /// backend cannot say which, every file counts).
    pub(crate) fn bytes_to_record(&self, ws: &Path) -> u64 {
        match self {
            Vcs::Jj(jj) => jj.bytes_to_record(ws),
            Vcs::Git(git) => git.bytes_to_record(ws),
        }
    }

    /// The files the commits keep of workspace `id` at `ws`, relative to `ws`, once
    /// [`Vcs::keep_edits`] recorded its edits.
    pub(crate) fn tracked(&self, id: &WorkspaceId, ws: &Path) -> Result<Vec<PathBuf>> {
        match self {
            Vcs::Jj(jj) => jj.tracked(id),
            Vcs::Git(git) => git.tracked(ws),
        }
    }

    /// [`Vcs::work_commits`] and (when `ws` still exists) [`Vcs::tracked`]: for jj side by
    /// side, as neither waits on the other.
    pub(crate) fn work_commits_and_tracked(
        &self,
        id: &WorkspaceId,
        ws: Option<&Path>,
        base: &[String],
        kept: &Kept,
    ) -> (Result<Vec<Commit>>, Result<Vec<PathBuf>>) {
        match (self, kept, ws) {
            (Vcs::Jj(jj), Kept::Change { .. } | Kept::Nothing, Some(_)) => {
                jj.work_commits_and_tracked(id, base)
            }
            _ => (
                self.work_commits(id, base, kept),
                ws.map_or(Ok(vec![]), |ws| self.tracked(id, ws)),
            ),
        }
    }

    /// The commits of workspace `id` that hold work besides what `kept` names, given the
    /// commits it started on; call before it is forgotten.
    pub(crate) fn work_commits(
        &self,
        id: &WorkspaceId,
        base: &[String],
        kept: &Kept,
    ) -> Result<Vec<Commit>> {
        match (self, kept) {
            (Vcs::Jj(jj), Kept::Change { .. } | Kept::Nothing) => jj.work_commits(id, base),
            (Vcs::Git(git), Kept::Branch { commit, head, .. }) if !base.is_empty() => {
                let mut tips = vec![commit.as_str()];
                tips.extend(head.as_ref().map(|h| h.commit.as_str()));
                tips.retain(|t| !t.is_empty());
                // The tips are named already; list the commits below them.
                let mut commits = git.work_commits(&tips, base)?;
                commits.retain(|c| !tips.contains(&c.id.as_str()));
                Ok(commits)
            }
            _ => Ok(vec![]),
        }
    }

    /// Brings a working copy that another workspace made stale up to date, keeping its edits.
    /// Returns whether anything had to be done.
    /// `scratch` is where its files are kept while that happens.
    pub(crate) fn refresh(&self, path: &Path, scratch: &Path) -> Result<bool> {
        match self {
            Vcs::Jj(jj) => jj.update_stale(path, scratch),
            Vcs::Git(_) => Ok(false),
        }
    }

    /// jj: brings the working copy at `dir` (a land's target, outside the root) up to date
    /// with jj's own `workspace update-stale`, which snapshots it first, as a land does
    /// right after it moved the target.
    pub(crate) fn follow_landed_target(&self, dir: &Path) -> Result<()> {
        match self {
            Vcs::Jj(jj) => jj.update_target_working_copy(dir),
            Vcs::Git(_) => Ok(()),
        }
    }

    /// Finishes a stale-working-copy repair that a killed run left for the workspace at
    /// `path`; returns the directory whose files were put back, if any.
    pub(crate) fn resume_recovery(&self, path: &Path) -> Result<Option<PathBuf>> {
        match self {
            Vcs::Jj(jj) => {
                let scratch = jj::recovery_dir(path);
                Ok(jj.resume_recovery(path, &scratch)?.then_some(scratch))
            }
            Vcs::Git(_) => Ok(None),
        }
    }

    /// Whether the working copy at `path` may be stale, judged from files alone; `checked` is
    /// the stamp [`Vcs::freshness_stamp`] gave when it was last found fresh.
    pub(crate) fn may_be_stale(&self, path: &Path, checked: Option<&str>) -> bool {
        match self {
            Vcs::Jj(jj) => jj.may_be_stale(path, checked),
            Vcs::Git(_) => false,
        }
    }

    /// The branch workspace `id` would be on with the current settings (git).
    pub(crate) fn branch_of(&self, id: &WorkspaceId) -> Option<String> {
        match self {
            Vcs::Jj(_) => None,
            Vcs::Git(git) => Some(git.branch(id)),
        }
    }

    /// A stamp of the repository's state to remember after a freshness check.
    pub(crate) fn freshness_stamp(&self) -> Option<String> {
        match self {
            Vcs::Jj(jj) => jj.op_heads_key(),
            Vcs::Git(_) => None,
        }
    }

    /// A stamp of what the backend knows about workspaces, read from files alone (jj: its
    /// operation heads; git: the times of its worktree records and of the namespace
    /// directory): while it is the same, so are [`Vcs::list`] and [`Vcs::names`].
    pub(crate) fn registrations_stamp(&self) -> Option<String> {
        match self {
            Vcs::Jj(jj) => jj.op_heads_key(),
            Vcs::Git(git) => git.worktrees_stamp(),
        }
    }

    /// The content of `file` at `commit`, if it exists there.
    pub(crate) fn file_at(&self, commit: &str, file: &str) -> Result<Option<Vec<u8>>> {
        match self {
            Vcs::Jj(jj) => jj.file_at(commit, file),
            Vcs::Git(git) => git.file_at(commit, file),
        }
    }

    /// What workspace `id` at `ws` changed since `base` (its recorded base commits), its
    /// latest edits included; `scratch` is a path the backend may use for a temporary file.
    /// Without `snapshot`, jj reads its working-copy commit as last snapshotted and touches
    /// nothing in the workspace (git always reads the files, taking no optional lock).
    /// Without `tree`, git may leave [`diff::Changes::latest`] empty (it writes no tree).
    pub(crate) fn changes(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        since: diff::Since,
        scratch: &Path,
        snapshot: bool,
        tree: bool,
    ) -> Result<diff::Changes> {
        match self {
            Vcs::Jj(jj) => jj.changes(id, ws, since, snapshot),
            Vcs::Git(git) => match since.base.first() {
                Some(base) => git.changes(ws, base, scratch, tree),
                None => Err(VcsError::NoBase { id: id.clone() }),
            },
        }
    }

    /// [`Vcs::changes`] without a snapshot, when the backend kept its answer and gives it
    /// without starting a process (jj, while a table pins the view); `None` otherwise.
    pub(crate) fn kept_changes(
        &self,
        id: &WorkspaceId,
        since: diff::Since,
    ) -> Option<diff::Changes> {
        match self {
            Vcs::Jj(jj) => jj.kept_changes(id, since),
            Vcs::Git(_) => None,
        }
    }

    /// Makes [`Vcs::changes`] read every workspace as of one moment until the guard is
    /// dropped (jj: one read of its view for all of them); `many` when it reads a table
    /// of workspaces (jj then reads their kept answers from one file).
    pub(crate) fn pin_view(&self, many: bool) -> Option<jj::ViewPin<'_>> {
        match self {
            Vcs::Jj(jj) => Some(jj.pin_view(many)),
            Vcs::Git(_) => None,
        }
    }

    /// The git-format patch between two commits or trees of [`Vcs::changes`].
    pub(crate) fn patch(&self, from: &str, to: &str) -> Result<Vec<u8>> {
        match self {
            Vcs::Jj(jj) => jj.patch(from, to),
            Vcs::Git(git) => git.patch(from, to),
        }
    }

    /// The exclude file shared by every workspace of the repository.
    pub(crate) fn exclude_file(&self) -> Option<PathBuf> {
        match self {
            Vcs::Jj(jj) => jj.exclude_file(),
            Vcs::Git(git) => git.exclude_file(),
        }
    }

    /// Brings the commits of a workspace (its unrecorded edits recorded first) onto a target;
    /// on a dry run, reports what would land and changes no commit, ref or working copy.
    pub(crate) fn land(&self, plan: &land::Plan) -> land::Result<land::Landing> {
        match self {
            Vcs::Jj(jj) => jj.land(plan).map(|l| l.map_by(land::By::Jj)),
            Vcs::Git(git) => git.land(plan).map(|l| l.map_by(land::By::Git)),
        }
    }

    /// Of the `lands` (workspace id, its last land), the workspaces whose work is in the
    /// land's target now, read from the repository alone (no working copy snapshotted): an
    /// undone land is not. One query per target, for any number of workspaces.
    pub(crate) fn lands_held(
        &self,
        lands: &[(&WorkspaceId, &crate::store::metadata::Land)],
    ) -> Result<Vec<WorkspaceId>> {
        match self {
            Vcs::Jj(jj) => jj.lands_held(lands),
            Vcs::Git(git) => git.lands_held(lands),
        }
    }

    /// What a kept `status` table stands on in the repository: jj's operation heads (an
    /// operation names its view). `None` for git, whose worktrees are listed by a git
    /// process each time, or when jj's files do not tell.
    pub(crate) fn table_heads(&self) -> Option<String> {
        match self {
            Vcs::Jj(jj) => jj.op_heads_key(),
            Vcs::Git(_) => None,
        }
    }

    /// jj's working copies (name and commit, sorted by name) at the operation heads
    /// `heads`, when those are still the heads and jj's files tell.
    pub(crate) fn table_view(&self, heads: &str) -> Option<std::sync::Arc<Vec<(String, String)>>> {
        match self {
            Vcs::Jj(jj) => jj.working_copies_at(heads),
            Vcs::Git(_) => None,
        }
    }

    /// A stamp of what [`Vcs::lands_held`] reads, from files alone (jj: the operation
    /// heads; git: the times of the branch files): while it is the same, so is its answer.
    pub(crate) fn lands_stamp(&self) -> Option<String> {
        match self {
            Vcs::Jj(jj) => jj.op_heads_key(),
            Vcs::Git(git) => git.refs_stamp(),
        }
    }

    /// The target a land to `target` will be recorded under ([`crate::store::metadata::Land::target`]),
    /// and the state it is in before the land (jj: the operation heads; git: the branch's
    /// commit), for the record's land intent.
    pub(crate) fn land_target(
        &self,
        target: &land::Target,
    ) -> Result<(LandTarget, Option<String>)> {
        match (self, target) {
            (Vcs::Jj(jj), land::Target::Main) => Ok((jj::Jj::main_target(), jj.op_heads_key())),
            (Vcs::Jj(jj), land::Target::Workspace { id, .. }) => {
                Ok((LandTarget::WorkingCopy(id.to_string()), jj.op_heads_key()))
            }
            (Vcs::Jj(jj), land::Target::Rev(rev)) => {
                let key = jj.op_heads_key();
                let commit = jj.resolve_base(Some(rev))?;
                Ok((LandTarget::Revision(commit.join(",")), key))
            }
            (Vcs::Git(git), target) => {
                let branch = match target {
                    land::Target::Main => git.main_branch()?.unwrap_or_default(),
                    land::Target::Workspace { id, .. } => git.branch(id),
                    land::Target::Rev(rev) => rev.clone(),
                };
                let tip = git.tip(&branch)?;
                Ok((LandTarget::Revision(branch), tip))
            }
        }
    }

    /// The state of a land's target now, comparable with [`Vcs::land_target`]'s.
    pub(crate) fn land_target_state(&self, target: &LandTarget) -> Result<Option<String>> {
        match self {
            Vcs::Jj(jj) => Ok(jj.op_heads_key()),
            Vcs::Git(git) => git.tip(&target.to_string()),
        }
    }

    /// What a land of workspace `id` (based on `base`) onto `target` that was killed did:
    /// `None` when its work is not in the target; else the commits it landed (empty where
    /// they cannot be told) and whether any is conflicted. `before` is the state at the land's
    /// start: jj's operation, git's target commit.
    pub(crate) fn landed_since(
        &self,
        id: &WorkspaceId,
        target: &LandTarget,
        base: &[String],
        before: Option<&str>,
    ) -> Result<Option<(Vec<String>, bool)>> {
        match self {
            Vcs::Jj(jj) => jj.landed_since(id, target, base, before),
            Vcs::Git(git) => {
                let probe = crate::store::metadata::Land::probe(target, true);
                if git.lands_held(&[(id, &probe)])?.is_empty() {
                    return Ok(None);
                }
                let commits = match before {
                    Some(before) => git.commits_since(id, before).unwrap_or_default(),
                    None => vec![],
                };
                Ok(Some((commits, false)))
            }
        }
    }

    /// Whether the work of workspace `id` at `ws` is all in the target its last land went to.
    pub(crate) fn is_landed(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        land: &crate::store::metadata::Land,
    ) -> Result<bool> {
        match self {
            Vcs::Jj(jj) => jj.is_landed(id, ws, land),
            Vcs::Git(git) => git.is_landed(id, ws, &land.target.to_string()),
        }
    }

    /// The files of workspace `id` at `ws` no commit of it holds though they are not
    /// ignored, so no land brings them (jj: too big to snapshot, outside
    /// `snapshot.auto-track`, a nested repository); call it after the workspace was
    /// snapshotted. git: none (its land records every file it does not ignore).
    pub(crate) fn left_out(&self, id: &WorkspaceId, ws: &Path) -> Result<Vec<PathBuf>> {
        match self {
            Vcs::Jj(jj) => jj.left_out(id, ws),
            Vcs::Git(_) => Ok(vec![]),
        }
    }
}

/// The bytes of the files under `ws` changed since the latest modification of any of
/// `recorded` (where the backend last recorded the workspace), `ignored` (paths relative to
/// `ws`, a directory with or without its trailing `/`) left out.
fn changed_bytes(ws: &Path, recorded: &[PathBuf], ignored: Vec<PathBuf>) -> u64 {
    let since = recorded
        .iter()
        .filter_map(|p| std::fs::symlink_metadata(p).and_then(|m| m.modified()).ok())
        .max()
        .unwrap_or(std::time::UNIX_EPOCH);
    let ignored: std::collections::HashSet<PathBuf> = ignored
        .into_iter()
        .map(|p| PathBuf::from(p.to_string_lossy().trim_end_matches('/')))
        .collect();
    crate::store::disk::changed_since(ws, since, &|rel| ignored.contains(rel))
}
