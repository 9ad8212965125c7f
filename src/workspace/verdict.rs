//! Whether a workspace is ours and registered, decided by its own state and an exact parse of
//! the backend's list, never by the flags of the command looking at it.

use std::path::Path;

use crate::repo::Backend;
use crate::store::layout::WorkspaceId;
use crate::store::metadata::Record;
use crate::vcs::{Registered, Vcs};

/// How a workspace's state disagrees with this command's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mismatch {
    /// Made with `recorded`; this command uses `asked` (`--backend` or
    /// `AGENT_WORKSPACE_BACKEND`).
    Backend { recorded: String, asked: String },
    /// On branch `recorded`; the current `AGENT_WORKSPACE_BRANCH_PREFIX` gives `expected`.
    Branch { recorded: String, expected: String },
}

impl Mismatch {
    pub(crate) fn message(&self, id: &WorkspaceId) -> String {
        match self {
            Mismatch::Backend { recorded, asked } => format!(
                "workspace {id:?} was made with the {recorded} backend, but this command uses {asked} (from --backend or AGENT_WORKSPACE_BACKEND)"
            ),
            Mismatch::Branch { recorded, expected } => format!(
                "workspace {id:?} is on branch {recorded}, but AGENT_WORKSPACE_BRANCH_PREFIX gives {expected}"
            ),
        }
    }

    pub(crate) fn hint(&self) -> &'static str {
        match self {
            Mismatch::Backend { .. } => {
                "run it with the backend it was made with (drop --backend or AGENT_WORKSPACE_BACKEND)"
            }
            Mismatch::Branch { .. } => {
                "run it with the branch prefix it was made with (AGENT_WORKSPACE_BRANCH_PREFIX)"
            }
        }
    }
}

/// How the record `record` of workspace `id` disagrees with this command's backend and branch
/// (its `backend` and `vcs`), if it does.
pub(crate) fn mismatch(
    backend: Backend,
    vcs: &Vcs,
    id: &WorkspaceId,
    record: &Record,
) -> Option<Mismatch> {
    if record.backend != backend {
        return Some(Mismatch::Backend {
            recorded: record.backend.as_str().into(),
            asked: backend.as_str().into(),
        });
    }
    match (&record.branch, vcs.branch_of(id)) {
        (Some(recorded), Some(expected)) if *recorded != expected => Some(Mismatch::Branch {
            recorded: recorded.clone(),
            expected,
        }),
        _ => None,
    }
}

/// How the backend knows the workspace at `path` (id `id`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Registration {
    /// Under its id.
    AsIs,
    /// Under another name whose recorded root is this workspace (`jj workspace rename`).
    Renamed(String),
    Unknown,
}

/// Finds workspace `id` at `path` in `list`: by name, else by recorded root.
pub(crate) fn registration(list: &[Registered], id: &WorkspaceId, path: &Path) -> Registration {
    if list
        .iter()
        .any(|r| *id == r.name && r.path.as_deref().is_none_or(|p| p == path))
    {
        return Registration::AsIs;
    }
    match list.iter().find(|r| r.path.as_deref() == Some(path)) {
        Some(r) => Registration::Renamed(r.name.clone()),
        None => Registration::Unknown,
    }
}
