//! What a land asks of a backend and what it reports: the commits and files it brings onto
//! a target, and the conflicts it left or resolved.

use std::path::{Path, PathBuf};

use super::{Commit, VcsError};
use crate::exec::process::ProcessError;
use crate::store::layout::WorkspaceId;
use crate::store::metadata::{Conflict, LandTarget, Resolved, Side};

/// Where a land brings a workspace's commits.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// Where the main workspace works: jj's main working copy, git's checked-out branch.
    Main,
    /// The working copy (jj) or branch (git) of another workspace of the namespace.
    Workspace { id: WorkspaceId, path: PathBuf },
    /// A revision named with `--onto`: one commit (jj) or a local branch (git).
    Rev(String),
}

/// One land: which workspace, from which base, onto what, and how.
pub(crate) struct Plan<'a> {
    pub id: &'a WorkspaceId,
    pub ws: &'a Path,
    /// The commits the workspace started on (its record's `base_commits`).
    pub base: &'a [String],
    pub target: Target,
    pub prefer: Option<Side>,
    /// jj: keep a conflicted land as jj conflicts in the target instead of leaving
    /// everything as it was.
    pub allow_conflicts: bool,
    pub dry_run: bool,
    /// A dry run of a workspace another process's live run holds: nothing in it may be
    /// written (jj reads its working-copy commit as last snapshotted).
    pub watching: bool,
}

/// What a land did (or, on a dry run, would do): what every backend reports, and in `by`
/// what only this one does ([`By`] once it leaves the backend, [`JjLanded`] or
/// [`GitLanded`] inside it).
#[derive(Debug, Clone)]
pub(crate) struct Landing<B = By> {
    /// The target as recorded.
    pub target: LandTarget,
    /// The commits brought onto the target, oldest first; empty: nothing to land.
    pub commits: Vec<Commit>,
    /// The files those commits change.
    pub files: Vec<String>,
    /// The moment the workspace's files were read, when [`Plan::watching`].
    pub files_as_of: Option<crate::vcs::diff::AsOf>,
    /// Files left conflicted (or, when the land was not applied, that would be), by commit.
    pub conflicts: Vec<Conflict>,
    /// Files `--prefer` resolved, with the side taken.
    pub resolved: Vec<Resolved>,
    /// Whether the target changed (jj: a land without conflicts, or one with conflicts
    /// under `--allow-conflicts`; git: only a clean or resolved merge moves the branch).
    pub applied: bool,
    /// Whether the workspace's unrecorded edits were recorded first (as a commit).
    pub recorded_edits: bool,
    /// The exact command that reverts this land and nothing else (refused once the target
    /// moved on); only for a land that changed the target.
    pub undo: Option<String>,
    /// Files of the workspace no commit of it holds though they are not ignored (jj: too
    /// big to snapshot, ...): the land did not bring them.
    pub not_landed: Vec<PathBuf>,
    /// What only this backend reports.
    pub by: B,
}

/// What a land reports that only one backend does.
#[derive(Debug, Clone)]
pub(crate) enum By {
    Jj(JjLanded),
    Git(GitLanded),
}

/// What a jj land reports besides what every land does.
#[derive(Debug, Clone, Default)]
pub(crate) struct JjLanded {
    /// The operation before the land.
    pub operation_before: Option<String>,
    /// The operations the land made, oldest first (empty when nothing was applied).
    pub operations: Vec<String>,
    /// Files of the conflicts that are conflict markers held as ordinary text (no conflict
    /// jj knows, so neither `--prefer` nor `jj resolve` settles them).
    pub marker_files: Vec<String>,
}

/// What a git land reports besides what every land does.
#[derive(Debug, Clone, Default)]
pub(crate) struct GitLanded {
    /// The commit the target branch pointed to when the land started.
    pub target_before: Option<String>,
    /// The commit the target branch now points to.
    pub merge_commit: Option<String>,
    /// The commit the workspace's detached HEAD was on, when the land landed it and put
    /// that HEAD back on the workspace's branch.
    pub reattached_head: Option<String>,
}

impl<B: Default> Landing<B> {
    /// A land onto `target` that has brought nothing yet.
    pub(crate) fn onto(target: LandTarget) -> Landing<B> {
        Landing {
            target,
            commits: vec![],
            files: vec![],
            files_as_of: None,
            conflicts: vec![],
            resolved: vec![],
            applied: false,
            recorded_edits: false,
            undo: None,
            not_landed: vec![],
            by: B::default(),
        }
    }
}

impl<B> Landing<B> {
    /// The same land with its backend's part turned into `f`'s.
    pub(crate) fn map_by<C>(self, f: impl FnOnce(B) -> C) -> Landing<C> {
        Landing {
            target: self.target,
            commits: self.commits,
            files: self.files,
            files_as_of: self.files_as_of,
            conflicts: self.conflicts,
            resolved: self.resolved,
            applied: self.applied,
            recorded_edits: self.recorded_edits,
            undo: self.undo,
            not_landed: self.not_landed,
            by: f(self.by),
        }
    }

    /// Lists `file` as conflicted in `commit`, unless it is listed already (a conflict the
    /// landed commits hold is the target's too: listed once).
    pub(crate) fn add_conflict(&mut self, commit: &str, file: String) {
        if !self.conflicts.iter().any(|c| c.file == file) {
            self.conflicts.push(Conflict {
                commit: commit.to_string(),
                file,
            });
        }
    }
}

impl Landing {
    /// What a jj land reported besides what every land does.
    pub(crate) fn jj(&self) -> Option<&JjLanded> {
        match &self.by {
            By::Jj(jj) => Some(jj),
            By::Git(_) => None,
        }
    }

    /// What a git land reported besides what every land does.
    pub(crate) fn git(&self) -> Option<&GitLanded> {
        match &self.by {
            By::Git(git) => Some(git),
            By::Jj(_) => None,
        }
    }
}

/// Where a conflicted land leaves its conflicts, as the command words them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConflictKind {
    /// jj: conflicts jj knows (and markers held as text); `applied` when they were landed
    /// into the target (`--allow-conflicts`), else nothing changed.
    Jj { applied: bool },
    /// git: a merge that conflicts; nothing changed (git never lands one).
    Git,
}

impl super::Vcs {
    /// Where the conflicts of a land that did (`applied`) or did not change the target are.
    pub(crate) fn conflict_kind(&self, applied: bool) -> ConflictKind {
        match self {
            super::Vcs::Jj(_) => ConflictKind::Jj { applied },
            super::Vcs::Git(_) => ConflictKind::Git,
        }
    }

    /// The workspace of the namespace whose working copy or branch a land onto `--onto rev`
    /// changes (git: the one with that branch checked out, or whose branch it is), so that
    /// the land takes its lease; jj's `--onto` builds on a commit and changes none.
    pub(crate) fn onto_workspace(&self, rev: &str) -> super::Result<Option<WorkspaceId>> {
        match self {
            super::Vcs::Jj(_) => Ok(None),
            super::Vcs::Git(git) => git.onto_workspace(rev),
        }
    }
}

/// Keeps the ids that are plain hexadecimal object ids: the base comes from a file the
/// workspace can write, so nothing else may reach a revset or a command line.
pub(crate) fn hex_ids(ids: &[String]) -> Vec<&str> {
    ids.iter()
        .map(String::as_str)
        .filter(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_hexdigit()))
        .collect()
}

/// The files of `files` that `dirty` also names.
pub(crate) fn overlap(files: &[String], dirty: &[String]) -> Vec<String> {
    let mut both: Vec<String> = files
        .iter()
        .filter(|f| dirty.contains(f))
        .cloned()
        .collect();
    both.dedup();
    both
}

pub(crate) type Result<T> = std::result::Result<T, LandError>;

/// What the argument of `--onto` was, for the hint of a target that cannot be landed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// jj: a revset that names no commit, or several.
    JjRevision,
    /// git: a revision that resolves, but is no local branch.
    GitCommit,
    /// git: neither a branch nor a revision.
    GitUnknown,
}

/// A change with several visible commits (jj), as [`LandError::Divergent`] names it.
#[derive(Debug, Clone, Default)]
pub struct Divergent {
    /// The change id, short.
    pub change: String,
    /// Its visible commits, short.
    pub commits: Vec<String>,
    /// Those of `commits` outside the workspace's history (its working copy's ancestors).
    pub outside: Vec<String>,
}

/// Why a land could not be made; nothing was landed.
#[derive(Debug, thiserror::Error)]
pub enum LandError {
    #[error(transparent)]
    Vcs(#[from] VcsError),
    #[error("cannot land onto {rev:?}: {why}")]
    UnknownTarget {
        rev: String,
        why: String,
        kind: TargetKind,
    },
    #[error("the main worktree is not on a branch (detached HEAD)")]
    DetachedMain,
    #[error("branch {branch} does not exist")]
    NoBranch { branch: String },
    /// The target working copy (jj) or worktree (git) has changes in files the land changes.
    #[error("the {} at {} has {} in files the land would change: {}; nothing was landed",
        if *.jj { "working copy" } else { "worktree" }, path.display(),
        if *.jj { "edits" } else { "uncommitted changes" }, files.join(", "))]
    Dirty {
        path: PathBuf,
        files: Vec<String>,
        jj: bool,
    },
    /// git: a child changed files its parent (the target) holds uncommitted edits in, edits
    /// the child started from: on the parent's branch they would look undone by the target.
    #[error("the parent workspace at {} has uncommitted edits in files this workspace changed since it started from them: {}; nothing was landed", path.display(), files.join(", "))]
    ParentEdits {
        path: PathBuf,
        parent: WorkspaceId,
        files: Vec<String>,
    },
    #[error("could not find what workspace {id:?} would land")]
    Preview {
        id: WorkspaceId,
        source: Box<ProcessError>,
    },
    #[error("could not land workspace {id:?}")]
    Rebase {
        id: WorkspaceId,
        source: Box<ProcessError>,
    },
    /// The target working copy has unresolved conflicts of its own.
    #[error("the {} at {} has unresolved conflicts in {}; nothing was landed",
        if *.jj { "working copy" } else { "worktree" }, path.display(), files.join(", "))]
    TargetConflicted {
        path: PathBuf,
        files: Vec<String>,
        jj: bool,
    },
    /// jj made the land's trial without naming its operation.
    #[error("jj did not name the operation landing workspace {id:?} made; nothing was landed")]
    NoOperation { id: WorkspaceId },
    /// The target moved while the land was planned (it is planned again).
    #[error("the target moved while the land was planned; nothing was landed")]
    TargetMoved,
    /// The target working copy kept changing while the land was made.
    #[error("the working copy at {} kept changing during the land; nothing was landed", path.display())]
    TargetChanging { path: PathBuf },
    /// Other workspaces are built on the commits that would land: moving them would change
    /// those workspaces without their lease.
    #[error("landing workspace {id:?} would move the commits of workspace{} {} built on its commits; nothing was landed",
        if others.len() == 1 { "" } else { "s" }, others.join(", "))]
    MovesOthers {
        id: WorkspaceId,
        others: Vec<String>,
    },
    /// jj: a change that would land has several visible commits; which one lands is the
    /// user's choice.
    #[error("workspace {id:?} has {}: {}; nothing was landed",
        if changes.len() == 1 { "a divergent change" } else { "divergent changes" },
        changes.iter().map(|d| format!("{} is in commits {}", d.change, d.commits.join(" and "))).collect::<Vec<_>>().join("; "))]
    Divergent {
        id: WorkspaceId,
        ws: PathBuf,
        changes: Vec<Divergent>,
    },
    /// git: the target worktree is in the middle of an operation (a merge, a rebase, ...)
    /// that a land would get tangled in.
    #[error("the {} at {} is in the middle of {what}; nothing was landed",
        worktree_word(*.main), path.display())]
    InProgress {
        path: PathBuf,
        main: bool,
        what: String,
        abort: String,
    },
    /// git: the target worktree's index has unmerged entries.
    #[error("the {} at {} has unmerged files: {}; nothing was landed",
        worktree_word(*.main), path.display(), files.join(", "))]
    Unmerged {
        path: PathBuf,
        main: bool,
        files: Vec<String>,
    },
    /// Files no commit holds are where the land would write (or where it needs a
    /// directory). git: files the target worktree ignores, which `git merge` would replace
    /// without a copy. jj: files (ignored, too big to snapshot, a directory's untracked
    /// content) the target working-copy commit does not track, which jj would leave as they
    /// are while recording a change that reverts the landed file.
    #[error("the {} at {} has files {} where the land would write: {}; nothing was landed",
        if *.jj { "working copy" } else { worktree_word(*.main) }, path.display(),
        if *.jj { "jj does not track" } else { "that git ignores there" }, files.join(", "))]
    Ignored {
        path: PathBuf,
        main: bool,
        files: Vec<String>,
        jj: bool,
    },
    /// git: the workspace's HEAD is not on its branch and holds work the branch does not.
    #[error("{}; nothing was landed", head_elsewhere(id, commit, branch, other.as_deref()))]
    HeadElsewhere {
        id: WorkspaceId,
        ws: PathBuf,
        /// The commit HEAD is on.
        commit: String,
        /// The workspace's branch.
        branch: String,
        /// The other branch HEAD is on; `None`: detached.
        other: Option<String>,
    },
    /// No room on the target working copy's file system for the files the land writes
    /// there; checked before anything moves.
    #[error("did not land: {source}; nothing was landed")]
    NoRoom { source: crate::store::disk::NoRoom },
    /// jj: the land was integrated, but writing the target working copy's files ran out of
    /// space. `restored`: its files the land changes were put back as they were before the
    /// land (else `half` names those left half written).
    #[error("workspace {id:?} landed in the repository, but the working copy at {} was not written (no space left on its file system): {}",
        path.display(), main_not_written(*.restored, half))]
    MainNotWritten {
        id: WorkspaceId,
        path: PathBuf,
        restored: bool,
        half: Vec<String>,
        /// The commit whose files the working copy holds (before the land).
        before: String,
    },
    /// git: the fast-forward of the target worktree ran out of space writing its files; the
    /// branch did not move. `half`: the files that could not be put back.
    #[error("the {} at {} ran out of space while the land wrote its files: {}",
        worktree_word(*.main), path.display(), put_back(half))]
    MainPutBack {
        path: PathBuf,
        main: bool,
        half: Vec<String>,
    },
}

fn main_not_written(restored: bool, half: &[String]) -> String {
    match restored {
        true => "its files the land changes are as they were before the land".into(),
        false => format!("these files are half written: {}", half.join(", ")),
    }
}

fn put_back(half: &[String]) -> String {
    match half.is_empty() {
        true => "the branch did not move and the files it had written were put back as they were; nothing was landed".into(),
        false => format!(
            "the branch did not move, but these files could not be put back and are half written: {}; nothing was landed",
            half.join(", ")
        ),
    }
}

/// Refuses a land whose files do not fit on the file system of the working copy `dir` it
/// writes them into: their size as the workspace `ws` holds them, plus the margin kept free.
pub(crate) fn room_for_land(dir: &Path, ws: &Path, files: &[String]) -> Result<()> {
    let bytes: u64 = files
        .iter()
        .filter_map(|f| std::fs::symlink_metadata(ws.join(f)).ok())
        .map(|m| m.len())
        .sum();
    crate::store::disk::check_room(dir, bytes).map_err(|source| LandError::NoRoom { source })
}

fn worktree_word(main: bool) -> &'static str {
    match main {
        true => "main worktree",
        false => "worktree",
    }
}

fn head_elsewhere(id: &WorkspaceId, commit: &str, branch: &str, other: Option<&str>) -> String {
    let short = &commit[..commit.len().min(12)];
    match other {
        None => format!(
            "workspace {id:?} has its HEAD detached at {short}, with work its branch {branch} does not hold"
        ),
        Some(other) => format!(
            "workspace {id:?} is on branch {other} (at {short}), not on its branch {branch}, with work {branch} does not hold"
        ),
    }
}

impl From<ProcessError> for LandError {
    fn from(err: ProcessError) -> Self {
        LandError::Vcs(VcsError::Process(err))
    }
}
