//! What can go wrong in a run's session before its command runs, as types the command layer
//! words (`cli/errors/session.rs`).

use crate::store::layout::WorkspaceId;

#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionError {
    /// Another run (or process) holds the workspace's lease; `holder` says which.
    #[error("workspace {id:?} is busy: {holder}")]
    Busy { id: WorkspaceId, holder: String },
    /// A nested run's command could not replace this process (`code`: 126 or 127).
    #[error("could not run {program} in the nested run")]
    NestedNotStarted {
        code: i32,
        program: String,
        source: std::io::Error,
    },
}
