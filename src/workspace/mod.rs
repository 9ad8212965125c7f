//! A workspace's lifecycle: opening one (creating it with nothing left behind on failure, or
//! reattaching and repairing drift between its directory, its state and the backend) and
//! removing one (keeping its edits). Used by `run`, `run --cleanup`, `shell` and `clean`.
//! Returns outcomes and [`Note`]s; never prints.

pub(crate) mod capacity;
pub(crate) mod changes;
mod checkpoint;
pub(crate) mod checkup;
mod children;
pub(crate) mod context;
mod copy;
mod create;
pub(crate) use create::EXCLUDES;
pub(crate) mod details;
pub(crate) mod direnv;
pub(crate) mod envrc_loads;
pub(crate) mod error;
pub(crate) mod gc;
pub(crate) mod hold;
pub(crate) mod inventory;
pub(crate) mod land;
pub(crate) mod launch;
pub(crate) mod own_store;
pub(crate) mod pool;
mod reattach;
pub(crate) use reattach::{finish_interrupted_repairs, Repaired};
pub(crate) mod remove;
pub(crate) mod session;
pub(crate) mod settled;
pub(crate) mod setup;
pub(crate) mod tools;
pub(crate) mod verdict;

pub(crate) use checkpoint::{checkpoint, run_message, Checkpointed};
pub(crate) use children::{check_parent, fork};
pub(crate) use hold::{hold, is_nested};

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{CliError, Result};
use crate::store::fsutil::FsError;
use crate::store::layout::WorkspaceId;
use crate::store::metadata::Record;
use crate::workspace::context::Context;
use crate::workspace::error::WorkspaceError;

/// An opened workspace and whether this call created it.
pub(crate) struct Opened {
    pub record: Record,
    pub created: bool,
}

/// What a run asks of the workspace it opens.
pub(crate) struct Request<'a> {
    pub id: &'a WorkspaceId,
    pub base_change: Option<&'a str>,
    pub workflow: Option<&'a str>,
    /// The workspace a new one is a child of (`run --parent`), recorded at creation.
    pub parent: Option<&'a WorkspaceId>,
    /// Create the workspace when it does not exist (`run`); otherwise it must exist (`shell`).
    pub create: bool,
    /// Whether this id had been run here before (its lease file existed): only then can the
    /// backend know it without a directory, so only then is the backend asked first.
    pub known_before: bool,
}

/// Something worth telling the user that happened while opening a workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Note {
    /// The record was unreadable; kept aside at these paths and started anew.
    CorruptRecordKept {
        workspace: PathBuf,
        kept: Vec<PathBuf>,
        why: String,
    },
    /// A stale-working-copy repair a killed run left half done was finished.
    RepairFinished { id: String, copy: PathBuf },
    /// The working copy was stale and was updated, its edits kept.
    UpdatedStale { id: String },
    /// The record view in the workspace had been changed and was rewritten from the state.
    ViewRewritten { view: PathBuf, state: PathBuf },
    /// A record an older version kept in the workspace was moved into the state.
    RecordMoved { workspace: PathBuf, state: PathBuf },
    /// The directory had been deleted; re-created on top of the change keeping its edits.
    RecreatedOnChange { id: String, change_id: String },
    /// The directory had been deleted; re-created on the branch keeping its commits.
    RecreatedOnBranch { id: String, branch: String },
    /// Symlinks in the tools bundle's sources that lead out of the repository: not copied.
    ToolsLinksSkipped { paths: Vec<PathBuf> },
    /// A sandboxed setup made the workspace's own store again; the old one, holding work
    /// that had not come back, was kept aside.
    OwnStoreKept { store: own_store::KeptStore },
    /// What an earlier sandboxed run left that jj or git would follow, moved aside before
    /// a sandboxed setup (where each now is).
    MovedAside {
        paths: Vec<crate::store::nested_aside::MovedAside>,
    },
    /// `copy.include`'s files were copied into the new workspace (shown on a terminal only).
    Copied {
        id: String,
        copied: crate::store::reflink::Copied,
        elapsed: std::time::Duration,
    },
}

/// Opens workspace `req.id`, creating or repairing it as needed.
/// What is worth telling the user is pushed to `notes`, also when opening fails.
pub(crate) fn open(ctx: &Context, req: &Request, notes: &mut Vec<Note>) -> Result<Opened> {
    let path = ctx.layout.workspace(req.id);
    match fs::symlink_metadata(&path) {
        Ok(meta) if meta.file_type().is_symlink() || !meta.is_dir() => Err(not_a_workspace(&path)),
        Ok(_) => reattach::reattach(ctx, req, &path, notes),
        Err(_) if req.create => create::create(ctx, req, &path, notes),
        Err(_) => Err(unknown(req.id, &path)),
    }
}

pub(crate) fn unknown(id: &WorkspaceId, path: &Path) -> CliError {
    WorkspaceError::Unknown {
        id: id.clone(),
        path: path.to_path_buf(),
    }
    .into()
}

pub(crate) fn not_a_workspace(path: &Path) -> CliError {
    WorkspaceError::NotAWorkspace {
        path: path.to_path_buf(),
    }
    .into()
}

/// The backend no longer knows workspace `id`, whose directory `path` still exists.
pub(crate) fn unregistered(id: &str, path: &Path) -> CliError {
    WorkspaceError::Unregistered {
        id: id.to_string(),
        path: path.to_path_buf(),
    }
    .into()
}

/// Deletes a workspace directory, but only a real directory directly inside the real
/// directory `namespace_dir`; never follows a symlink.
pub(crate) fn remove_workspace_dir(namespace_dir: &Path, path: &Path) -> Result<()> {
    let name = match (path.parent(), path.file_name().and_then(|n| n.to_str())) {
        (Some(parent), Some(name)) if parent == namespace_dir => name,
        _ => {
            return Err(WorkspaceError::OutsideNamespace {
                path: path.to_path_buf(),
                namespace_dir: namespace_dir.to_path_buf(),
            }
            .into())
        }
    };
    match crate::store::fsutil::remove_dir_checked(namespace_dir, name) {
        Err(FsError::Symlink { path: p } | FsError::NotADirectory { path: p }) if p == path => {
            Err(not_a_workspace(path))
        }
        other => Ok(other?),
    }
}

/// Whether `a` and `b` name the same directory.
fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || fs::canonicalize(a)
            .ok()
            .zip(fs::canonicalize(b).ok())
            .is_some_and(|(a, b)| a == b)
}

/// A workspace named `id` that is not ours.
fn foreign(id: &WorkspaceId, at: &Path) -> CliError {
    WorkspaceError::Foreign {
        id: id.clone(),
        at: at.to_path_buf(),
    }
    .into()
}

/// The record of existing workspace `id`, for a command that acts on it (`doing`: what it
/// does, as in "cannot <doing> workspace ..."), refusing one with a problem other than a
/// crashed run or a changed view.
pub(crate) fn usable(ctx: &Context, id: &WorkspaceId, doing: &str) -> Result<Record> {
    use crate::workspace::inventory::Problem;
    let path = ctx.layout.workspace(id);
    let entry = crate::workspace::inventory::local(ctx, id).ok_or_else(|| unknown(id, &path))?;
    match &entry.problem {
        None | Some(Problem::Crashed | Problem::TamperedRecord) => {}
        Some(problem) => {
            return Err(WorkspaceError::Unusable {
                id: id.clone(),
                doing: doing.to_string(),
                problem: problem.code(),
            }
            .into())
        }
    }
    match crate::store::metadata::load(&path) {
        crate::store::metadata::Loaded::Ok(record) => Ok(*record),
        _ => Err(unknown(id, &path)),
    }
}
