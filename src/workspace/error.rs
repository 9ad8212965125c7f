//! What can go wrong in a workspace's lifecycle, as types: each variant carries what its
//! message needs, and the command layer words it (`cli/errors/workspace.rs`), hint and exit
//! code included.

use std::path::PathBuf;

use crate::error::CliError;
use crate::store::aside::AsideError;
use crate::store::layout::WorkspaceId;
use crate::store::metadata::Parent;
use crate::workspace::verdict::Mismatch;

/// Opening, holding and preparing a workspace: the refusals and failures of `run`, `shell`,
/// `create` and the commands that act on an existing workspace.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WorkspaceError {
    #[error("no workspace {id:?} (looked for {})", path.display())]
    Unknown { id: WorkspaceId, path: PathBuf },
    #[error("{} is a symlink or file, not a workspace directory; refusing to touch it", path.display())]
    NotAWorkspace { path: PathBuf },
    #[error("{} is outside {}; refusing to delete it", path.display(), namespace_dir.display())]
    OutsideNamespace {
        path: PathBuf,
        namespace_dir: PathBuf,
    },
    #[error("a workspace named {id:?} already exists at {}, not created by agent-workspace", at.display())]
    Foreign { id: WorkspaceId, at: PathBuf },
    /// A command that acts on an existing workspace (`doing` it) found a problem.
    #[error("cannot {doing} workspace {id:?}: {problem}")]
    Unusable {
        id: WorkspaceId,
        doing: String,
        problem: &'static str,
    },
    /// The backend no longer knows the workspace whose directory is at `path`.
    #[error("the backend no longer knows workspace {id:?}")]
    Unregistered { id: String, path: PathBuf },
    /// The record disagrees with this command's backend or branch prefix.
    #[error("{}", mismatch.message(id))]
    Mismatch { id: WorkspaceId, mismatch: Mismatch },
    #[error("cannot act on workspace {id:?} from inside its sandboxed run: agent-workspace's own state is read-only there")]
    InsideSandbox { id: WorkspaceId },
    /// Another process holds the workspace's lease (`holder` says which).
    #[error("workspace {id:?} is busy: {holder}")]
    Busy { id: WorkspaceId, holder: String },
    #[error(
        "workspace {id:?} already exists{}; --parent only applies when it is created",
        had.as_ref().map_or(String::new(), |p| format!(" as a child of {:?}", p.as_written()))
    )]
    ParentOfExisting {
        id: WorkspaceId,
        /// The parent its record names (shown as written there).
        had: Option<Parent>,
    },
    #[error("workspace {child:?} cannot be its own parent")]
    OwnParent { child: WorkspaceId },
    #[error("no workspace {parent:?} to start {child:?} from (looked for {})", path.display())]
    NoParent {
        parent: WorkspaceId,
        child: WorkspaceId,
        path: PathBuf,
    },
    #[error("workspace {parent:?} cannot be a parent: {problem}")]
    BadParent {
        parent: WorkspaceId,
        problem: &'static str,
    },
    #[error("workspace {child:?} would be nested {depth} deep under {parent:?}, more than the limit of {max}")]
    TooDeep {
        child: WorkspaceId,
        depth: u32,
        parent: WorkspaceId,
        max: u32,
    },
    /// The workspace holds directories nested past what a path names, which jj and git
    /// cannot read: what failed on it is said as this.
    #[error("workspace {id:?} holds a directory nested deeper than a path can name ({first}), which jj and git cannot read")]
    NestedTooDeep { id: WorkspaceId, first: String },
    #[error("{} is {text:?}, not a whole number", crate::vars::MAX_DEPTH)]
    BadMaxDepth { text: String },
    #[error("workspace {id:?} has a record of schema {version}, from a newer agent-workspace")]
    NewerRecord { id: WorkspaceId, version: u64 },
    #[error("workspace {id:?} cannot be compared with its base: {why}")]
    NotComparable { id: WorkspaceId, why: String },
    #[error("{} was written by a newer agent-workspace (schema {version}); not overwriting it", file.display())]
    NewerRecordKept { file: PathBuf, version: u64 },
    #[error(
        "workspace {id:?} already exists on base {}; --base-change {asked} differs",
        recorded.as_deref().unwrap_or("(the default)")
    )]
    BaseDiffers {
        id: WorkspaceId,
        recorded: Option<String>,
        asked: String,
    },
    #[error("AGENT_WORKSPACE_BACKEND={name:?} is not a backend")]
    BadBackendVar { name: String },
    #[error("AGENT_WORKSPACE_JJ_COLOCATE={text:?} is not a jj.colocate value")]
    BadColocateVar { text: String },
    #[error("interrupted by signal {signal} while creating {}; removed it again", path.display())]
    CreateInterrupted { signal: i32, path: PathBuf },
    #[error("could not copy copy.include's files into {}: {why}; removed the new workspace again", path.display())]
    CopyFailed { path: PathBuf, why: String },
    #[error("tools.paths comes from {}, which differs from that file at workspace {id:?}'s base revision; not copying the tools bundle", file.display())]
    ToolsUntrusted { file: PathBuf, id: WorkspaceId },
    /// The tools bundle would copy the checkout, its `.git` or its `.jj` (through a symlink).
    #[error("{source}")]
    ToolsLink { source: std::io::Error },
    #[error("could not read the tools bundle's sources in {}", root.display())]
    ToolsRead {
        root: PathBuf,
        source: std::io::Error,
    },
    #[error("setup.command comes from {}, which differs from that file at workspace {id:?}'s base revision; not running it", file.display())]
    SetupUntrusted { file: PathBuf, id: WorkspaceId },
    #[error("interrupted by signal {signal} during the setup; the command was not run")]
    SetupInterrupted { signal: i32, log: PathBuf },
    #[error("the setup command failed (exit code {code}); the command was not run. Its output is in {}", log.display())]
    SetupFailed {
        code: i32,
        log: PathBuf,
        id: WorkspaceId,
    },
    /// This binary's own path could not be read (a run starts its guard through it).
    #[error("cannot locate the agent-workspace binary")]
    NoBinary { source: std::io::Error },
    #[error("could not start the command")]
    NotStarted { source: std::io::Error },
    /// The proxy of a run allowed host by host could not start (no socket for it).
    #[error("cannot start the sandbox's proxy (sandbox.allowed_hosts)")]
    NoProxy { source: std::io::Error },
    /// What ran before the command (bubblewrap, direnv, the guard) ended first; `how` is
    /// its exit status or signal.
    #[error("{}", match stage {
        Stage::Sandbox => format!("the sandbox (bubblewrap) or what runs in it failed before the command started ({how})"),
        Stage::Direnv { workspace } => format!("`direnv exec {workspace}` failed before the command started ({how})"),
        Stage::Guard => format!("agent-workspace's guard process failed before the command started ({how})"),
    })]
    ChainFailed { stage: Stage, how: String },
    /// A file or directory the lifecycle works with could not be read or written.
    #[error("could not {action} {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Lock(#[from] crate::store::lock::LockError),
}

/// What ran before a command and ended before starting it.
#[derive(Debug)]
pub(crate) enum Stage {
    Sandbox,
    Direnv { workspace: String },
    Guard,
}

impl WorkspaceError {
    /// An I/O error about `path`.
    pub(crate) fn io(action: &'static str, path: &std::path::Path, source: std::io::Error) -> Self {
        WorkspaceError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Removing a workspace (`clean`, `run --cleanup`, finishing an interrupted removal).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CleanError {
    #[error("could not write the journal of removing {id:?}: {source}")]
    Journal {
        id: WorkspaceId,
        source: serde_json::Error,
    },
    /// The files changed since an interrupted removal began could not all be kept aside.
    #[error("did not finish removing workspace {id:?}: {source}")]
    NotFinished {
        id: WorkspaceId,
        dest: PathBuf,
        source: AsideError,
    },
    #[error("the backend knows workspace {id:?} as {name:?}, which is no workspace id")]
    BackendName {
        id: WorkspaceId,
        name: String,
        path: PathBuf,
    },
    /// The workspace holds directories nested past what a path names: jj and git cannot
    /// read them, so nothing would record them (`clean --force` keeps them aside whole).
    #[error("workspace {id:?} holds a directory nested deeper than a path can name ({first}), which jj and git cannot read")]
    TooDeep { id: WorkspaceId, first: String },
    #[error("could not keep aside what workspace {id:?} holds nested deeper than a path can name: {source}")]
    TooDeepNotKept {
        id: WorkspaceId,
        source: std::io::Error,
    },
    #[error("did not remove workspace {id:?}: {source}")]
    NoRoom {
        id: WorkspaceId,
        source: crate::store::disk::NoRoom,
    },
    #[error("did not remove workspace {id:?}: {source}")]
    NotKeptAside {
        id: WorkspaceId,
        dest: PathBuf,
        source: AsideError,
    },
    #[error("could not look into workspace {id:?}: {source}")]
    NotSurveyed { id: WorkspaceId, source: AsideError },
    /// Another process holds the workspace's lease; `forced` when `--force` did not stop it.
    #[error("workspace {id:?} is in use by another agent-workspace process")]
    InUse { id: WorkspaceId, forced: bool },
    #[error(transparent)]
    Vcs(#[from] crate::vcs::VcsError),
}

/// Why a land was refused before the backend was asked anything.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LandRefusal {
    /// Another land holds the repository's land lock, and `--no-wait` was given.
    #[error("another land of this repository is under way")]
    Underway,
    /// Another land held the land lock for all of `minutes`.
    #[error("another land of this repository is under way")]
    Stuck { minutes: u64, lock: PathBuf },
    #[error("workspace {id:?} has no directory ({} is gone)", path.display())]
    NoDirectory { id: WorkspaceId, path: PathBuf },
    #[error("the backend knows workspace {id:?} as {name:?}")]
    Renamed { id: WorkspaceId, name: String },
    #[error("workspace {id:?} has no readable record at {}", path.display())]
    NoRecord { id: WorkspaceId, path: PathBuf },
    /// The workspace whose files or branch the land changes (`what`) is held.
    #[error("cannot land on {what}: {source}")]
    TargetHeld {
        what: String,
        source: Box<WorkspaceError>,
    },
    #[error("the parent workspace {parent:?} is gone ({} does not exist)", path.display())]
    ParentGone { parent: WorkspaceId, path: PathBuf },
}

/// Filling, taking from and draining the pool of prepared workspaces.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PoolError {
    #[error("interrupted by signal {signal} while filling the pool")]
    Interrupted { signal: i32 },
    #[error("invalid prepared workspace token {token:?}")]
    BadToken { token: String },
    #[error("cannot write the pool's ready file: {source}")]
    ReadyFile { source: serde_json::Error },
    #[error("a helper process a killed take of workspace {id:?} started on {} is still running", entry.display())]
    HelperRunning { id: WorkspaceId, entry: PathBuf },
    /// Preparing a workspace failed; its setup's output is kept in `log`, when there is one.
    /// The error is already worded: it comes from any step of a workspace's creation.
    #[error("{}", err.message)]
    NotPrepared {
        err: Box<CliError>,
        log: Option<PathBuf>,
    },
    /// The setup of a prepared workspace was refused (untrusted) or failed: the error of
    /// the setup, whose hint speaks of a run, told for `pool fill`.
    #[error("{}", err.message)]
    Setup { err: Box<CliError>, refused: bool },
}

/// A sandboxed workspace's own store: made, exported, taken back or kept.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OwnStoreError {
    #[error("could not move aside the own store of workspace {id:?}, which holds work that did not come back")]
    NotMovedAside { id: WorkspaceId, dir: PathBuf },
    /// The store could not be made from the workspace.
    #[error("{source}")]
    NotMade {
        source: crate::vcs::VcsError,
        words: StoreWords,
    },
    /// Work the store held could not be brought back before a run; the error is already
    /// worded (any step of bringing it back).
    #[error("{}", err.message)]
    NotBroughtBack {
        err: Box<CliError>,
        words: StoreWords,
        dir: PathBuf,
    },
    /// Exporting the store's work in the sandbox failed (`source`, already worded: the
    /// sandbox or the backend's export).
    #[error("could not export the work of workspace {id:?} from its sandbox")]
    NotExported {
        id: WorkspaceId,
        err: Box<CliError>,
        words: StoreWords,
    },
    /// Exporting the store's work did not end in time: the store was moved aside to `kept`.
    #[error("the work of workspace {id:?} was not brought back from its sandbox: the export did not end within {} s", after.as_secs())]
    TimedOut {
        id: WorkspaceId,
        after: std::time::Duration,
        kept: PathBuf,
    },
    #[error("the export of workspace {id:?} left no bundle (or {}) at {}",
        match limit {
            Some(limit) => format!("not a regular file of at most {} GiB", limit >> 30),
            None => "not a regular file".to_string(),
        },
        bundle.display())]
    NoBundle {
        id: WorkspaceId,
        limit: Option<u64>,
        bundle: PathBuf,
        words: StoreWords,
    },
    #[error("{source}")]
    NotTakenBack {
        id: WorkspaceId,
        source: crate::vcs::VcsError,
        words: StoreWords,
    },
    #[error("its own store holds {}, which is no regular file or directory (jj and git never make one there), so it is not read", odd.display())]
    OddEntry { odd: PathBuf },
    #[error("cannot locate the agent-workspace binary")]
    NoBinary { source: std::io::Error },
}

/// How the backend's store is named, and where it is, for what an own store's error says.
#[derive(Debug)]
pub(crate) struct StoreWords {
    /// "own store", "own git directory".
    pub store: &'static str,
    /// "workspace", "worktree".
    pub files_in: &'static str,
    /// The store itself.
    pub path: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_workspace_s_parent_is_quoted_as_its_record_holds_it() {
        for written in ["p-1", "../x", "a b"] {
            let had: Parent = serde_json::from_value(serde_json::json!(written)).unwrap();
            let err = WorkspaceError::ParentOfExisting {
                id: WorkspaceId::parse("w").unwrap(),
                had: Some(had),
            };
            assert_eq!(
                err.to_string(),
                format!(
                    "workspace \"w\" already exists as a child of {written:?}; --parent only applies when it is created"
                )
            );
        }
    }
}
