//! What can go wrong in a backend call, as types callers can match on; the command layer
//! words them (`cli/errors/vcs.rs`).

use std::path::PathBuf;

use crate::exec::process::ProcessError;
use crate::store::layout::WorkspaceId;

pub(crate) type Result<T> = std::result::Result<T, VcsError>;

#[derive(Debug, thiserror::Error)]
pub enum VcsError {
    /// A jj or git call failed (or could not start).
    #[error(transparent)]
    Process(#[from] ProcessError),
    /// A call could not be confined (its sandbox's filter could not be made).
    #[error(transparent)]
    Sandbox(#[from] crate::exec::sandbox::SandboxError),
    /// A worktree in the middle of something its own git directory would not carry.
    #[error("worktree {} holds {what}, which a sandboxed run cannot carry into its own git directory", ws.display())]
    Busy {
        ws: PathBuf,
        what: String,
        how: String,
    },
    /// jj answered, but is older than the oldest version this tool supports.
    #[error("{path} is {version}; agent-workspace needs jj {}.{} or newer", min.0, min.1)]
    TooOld {
        path: PathBuf,
        version: String,
        min: (u32, u32),
    },
    /// `jj.colocate = true` with a jj that makes no colocated workspaces.
    #[error("jj.colocate = true asks for workspaces that are git worktrees, which {version} cannot make (jj 0.46 and later can)")]
    CannotColocate { version: String },
    /// The id names jj's main workspace.
    #[error("workspace id {id:?} is jj's main workspace, which agent-workspace never manages")]
    MainWorkspace { id: WorkspaceId },
    /// The id makes a branch name git refuses.
    #[error("workspace id {id:?} makes the git branch {branch:?}, which git refuses: {why}")]
    BadBranch {
        id: WorkspaceId,
        branch: String,
        why: String,
    },
    /// A revision the backend cannot resolve.
    #[error("cannot resolve revision {rev:?}")]
    UnknownRevision {
        rev: String,
        /// Named by jj (a change id, commit id or bookmark), not by git.
        jj: bool,
        source: Box<ProcessError>,
    },
    /// A revision that resolves to no commit, or to several where one is needed.
    #[error("revision {rev:?} names {}", if *.many { "more than one commit" } else { "no commit" })]
    NotOneCommit { rev: String, many: bool },
    /// The workspace's branch already exists elsewhere than the base asked for.
    #[error("branch {branch} already exists at {tip}, not at the --base-change asked for")]
    BranchElsewhere { branch: String, tip: String },
    /// The backend refused to create the workspace.
    #[error("could not create {what} {id:?} at {}", path.display())]
    CreateFailed {
        what: &'static str,
        id: WorkspaceId,
        path: PathBuf,
        source: Box<ProcessError>,
    },
    /// `git branch -d` refused a branch with commits no other branch has.
    #[error("branch {branch} is not fully merged")]
    NotMerged { branch: String },
    /// Deleting a branch failed for another reason.
    #[error("could not delete branch {branch}")]
    BranchDelete {
        branch: String,
        source: Box<ProcessError>,
    },
    /// A commit a gitlink of a worktree names could not be fetched into the user's
    /// repository before the worktree's git area was removed.
    #[error("could not keep commit {commit} that gitlink {path} names in {}; the workspace is kept", into.display())]
    GitlinkNotKept {
        path: String,
        commit: String,
        into: PathBuf,
        source: Box<ProcessError>,
    },
    /// Committing a worktree's uncommitted changes failed; `unstaged` says whether what was
    /// staged for it was unstaged again.
    #[error("could not commit the uncommitted changes of {}; the workspace is kept", ws.display())]
    CommitFailed {
        ws: PathBuf,
        source: Box<ProcessError>,
        unstage_failed: Option<Box<VcsError>>,
    },
    /// Committing a checkpoint failed; `unstage_failed` (git) says whether what was staged
    /// for it could not be unstaged again.
    #[error("could not commit the checkpoint of workspace {id:?}")]
    CheckpointFailed {
        id: WorkspaceId,
        ws: PathBuf,
        /// Committed by jj, which stages nothing.
        jj: bool,
        source: Box<ProcessError>,
        unstage_failed: Option<Box<VcsError>>,
    },
    /// A git workspace without any commit cannot be a parent.
    #[error("workspace {id:?} has no commit to start a child from")]
    NoCommit { id: WorkspaceId },
    /// The backend no longer knows the workspace at `path`. `id` is a name, not a
    /// [`WorkspaceId`]: a stale working copy is named by its directory, which for a land's
    /// target may be the repository's own.
    #[error("the backend no longer knows workspace {id:?}")]
    Unregistered { id: String, path: PathBuf },
    /// A partial copy an interrupted repair left could not be removed.
    #[error("could not remove the partial copy {}", path.display())]
    PartialCopy {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Carrying a stale working copy's files across its update failed; they are kept in
    /// `kept`, and the next run or clean resumes when `resumes`.
    #[error("could not {action} {}", path.display())]
    Carry {
        action: &'static str,
        path: PathBuf,
        source: Box<CarryFailure>,
        kept: PathBuf,
        resumes: bool,
    },
    /// A stale working copy's files were not copied aside: not enough free space for the
    /// copy, or the copy failed (its partial copy is removed). The workspace is untouched.
    #[error("did not carry the edits of the stale working copy {} across its update: {why}", path.display())]
    NotCarried { path: PathBuf, why: String },
    /// A stale working copy was updated, but some of its unrecorded edits conflict with the
    /// update: the workspace holds the updated version of each file and the edit is kept.
    /// `id` is its directory's name, as for [`VcsError::Unregistered`] (so are the next two).
    #[error(
        "workspace {id:?} was stale; updating it conflicts with its unrecorded edits to {}",
        list_paths(files)
    )]
    StaleConflict {
        id: String,
        ws: PathBuf,
        files: Vec<StaleEdit>,
    },
    /// A stale working copy was updated after an operation elsewhere undid what it had
    /// recorded (`jj undo`, `jj op restore`): the files as they were are kept aside.
    #[error(
        "workspace {id:?} was stale: an operation elsewhere undid what its working copy had recorded in {}",
        list_paths(files)
    )]
    StaleUndone {
        id: String,
        ws: PathBuf,
        files: Vec<StaleEdit>,
    },
    /// A stale working copy was updated, but jj no longer knew the commit it last recorded,
    /// so its edits could not be told apart: its files as they were are kept whole.
    #[error(
        "workspace {id:?} was stale and jj no longer knows what its working copy last recorded"
    )]
    StaleUnknownBase {
        id: String,
        ws: PathBuf,
        kept: PathBuf,
    },
    /// Recording a workspace's edits would not fit on a file system: refused before
    /// anything was written.
    #[error(transparent)]
    NoRoom(crate::store::disk::NoRoom),
    /// `diff`: the jj working copy was made stale by another workspace.
    #[error("the working copy of workspace {id:?} is stale")]
    Stale { id: WorkspaceId },
    /// `diff`: the record names no commit the workspace started on.
    #[error("workspace {id:?} has no recorded base commit to compare with")]
    NoBase { id: WorkspaceId },
    /// `diff`: the working copy no longer descends from the commits it started on.
    #[error("workspace {id:?}'s working copy does not descend from its base {base}")]
    NotDescendant { id: WorkspaceId, base: String },
    /// `diff` compares files with git, which a jj repository of another backend lacks.
    #[error("this jj repository is not backed by git")]
    NotGitBacked,
    /// `diff`: git does not take the directory for a worktree.
    #[error("{} is not a git worktree", path.display())]
    NotAWorktree {
        path: PathBuf,
        source: Box<ProcessError>,
    },
    /// `diff`: listing the workspace's commits failed.
    #[error("could not read the changes of workspace {id:?}")]
    Changes {
        id: WorkspaceId,
        source: Box<ProcessError>,
    },
    /// A file in the worktree git cannot record (a FIFO, a socket, a device).
    #[error("{} is a {kind}, which git cannot record", path.display())]
    Unaddable { path: PathBuf, kind: &'static str },
    /// git: the worktree's index has unmerged entries (a merge or `git stash pop` stopped
    /// half-way): committing would record the conflict markers as content.
    #[error("the worktree at {} {}unmerged files: {}; nothing was changed",
        ws.display(),
        operation.as_ref().map_or("has ".to_string(), |what| format!("is in the middle of {what}, with ")),
        files.join(", "))]
    Unmerged {
        ws: PathBuf,
        files: Vec<String>,
        /// The operation that left them (`a merge`, ...), if one is in progress.
        operation: Option<String>,
        /// How to conclude or abort that operation.
        how: String,
    },
    /// git: what would be committed (or landed) adds conflict-marker lines to these files.
    #[error("workspace {id:?} {} conflict markers in {}; nothing was changed",
        if *.landing { "would land" } else { "would commit" }, files.join(", "))]
    Markers {
        id: WorkspaceId,
        ws: PathBuf,
        files: Vec<String>,
        /// Found in what a land brings (committed or not), not only in uncommitted changes.
        landing: bool,
    },
    /// A file a backend call works with could not be read or written.
    #[error("could not {action} {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Fs(#[from] crate::store::fsutil::FsError),
}

/// An unrecorded edit of a stale working copy that does not merge with the update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleEdit {
    /// The file, relative to the workspace root.
    pub path: String,
    /// Where the workspace's version is kept; `None` when the workspace had deleted it.
    pub kept: Option<PathBuf>,
}

fn list_paths(files: &[StaleEdit]) -> String {
    files
        .iter()
        .map(|f| f.path.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What failed while carrying files across a stale working copy's update.
#[derive(Debug, thiserror::Error)]
pub enum CarryFailure {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Process(#[from] ProcessError),
}
