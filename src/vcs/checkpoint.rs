//! Recording a workspace's state as a commit of its own (a checkpoint), and the commit a
//! child workspace starts from: its parent's exact state, the parent left as it was.

use std::path::{Path, PathBuf};

use super::error::Result;
use super::Vcs;
use crate::store::layout::WorkspaceId;

/// What recording a workspace's state made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Recorded {
    /// The new commit's id; `None` when there was nothing to record.
    pub commit: Option<String>,
    /// Its change id (jj).
    pub change_id: Option<String>,
    /// The files the commit changed, relative to the workspace.
    pub files: Vec<PathBuf>,
    /// Files the backend would not record.
    pub unrecorded: Vec<Unrecorded>,
}

/// A file (or directory) of the workspace that a checkpoint does not hold, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unrecorded {
    pub path: PathBuf,
    pub why: String,
    /// Left out on purpose (ignored), rather than refused.
    pub ignored: bool,
}

impl Vcs {
    /// Commits the current state of workspace `id` at `ws` with `description`, leaving its
    /// working copy on top of that commit; records nothing when nothing changed.
    pub(crate) fn checkpoint(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        description: &str,
    ) -> Result<Recorded> {
        match self {
            Vcs::Jj(jj) => jj.checkpoint(id, ws, description),
            Vcs::Git(git) => git.checkpoint(id, ws, description),
        }
    }

    /// The commit a child of workspace `parent` (at `ws`) starts from: the parent's exact
    /// state, unrecorded edits included, without changing its working copy, branch or index.
    /// `scratch` is a file path this call may use and removes again.
    pub(crate) fn fork_point(
        &self,
        parent: &WorkspaceId,
        ws: &Path,
        child: &WorkspaceId,
        scratch: &Path,
    ) -> Result<String> {
        match self {
            Vcs::Jj(jj) => jj.fork_point(parent, child, ws),
            Vcs::Git(git) => git.fork_point(parent, ws, child, scratch),
        }
    }
}
