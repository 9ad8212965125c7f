//! `copy.include`: copying the main workspace's matching ignored or untracked files into a
//! workspace just created, before its first command.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::{CliError, Result};
use crate::store::include;
use crate::store::reflink::{self, Copied};
use crate::workspace::context::Context;
use crate::workspace::error::WorkspaceError;

/// Copies what `copy.include` matches in the main workspace into the new workspace at `path`.
/// `None` when nothing is configured. On an error the caller removes the workspace.
pub(super) fn copy_included(ctx: &Context, path: &Path) -> Result<Option<(Copied, Duration)>> {
    let patterns = &ctx.config.copy_include;
    if patterns.is_empty() {
        return Ok(None);
    }
    ctx.progress.report(crate::progress::Phase::Copying);
    let started = Instant::now();
    let main = &ctx.repo.root;
    let failed = |why: String| -> CliError {
        WorkspaceError::CopyFailed {
            path: path.to_path_buf(),
            why,
        }
        .into()
    };
    let found = include::matches(main, patterns)
        .map_err(|e| failed(format!("could not list {}: {e}", main.display())))?;
    let mut copied = Copied::default();
    for rel in &found {
        reflink::copy_into(main, path, rel, &mut copied).map_err(|e| failed(e.to_string()))?;
    }
    Ok(Some((copied, started.elapsed())))
}
