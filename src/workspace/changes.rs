//! What a workspace changed since it was created: its commits and changed files against the
//! commits it started on, its latest edits included. Read-only: jj snapshots the working
//! copy when nobody else holds the workspace and otherwise reads its last snapshot; git goes
//! through a temporary index.

use std::path::{Path, PathBuf};

use crate::error::{CliError, Result};
use crate::store::layout::WorkspaceId;
use crate::store::metadata::{self, Loaded, Record};
use crate::vcs::diff::Changes;
use crate::workspace::context::Context;
use crate::workspace::error::WorkspaceError;

/// A workspace opened to read its changes: holding its lease, or the caller runs inside the
/// workspace's own live run, or (`watching`) another process's live run holds it and it is
/// only looked at.
pub(crate) struct Target {
    pub record: Record,
    pub path: PathBuf,
    /// A live run of another process holds it: read without a snapshot or a lease.
    pub watching: bool,
    _hold: Option<super::hold::Hold>,
}

/// Opens workspace `id` for reading its changes: it must exist with a readable record. While
/// a live run holds it, it is opened for looking only ([`Target::watching`]).
pub(crate) fn open(ctx: &Context, id: &WorkspaceId) -> Result<Target> {
    let path = ctx.layout.workspace(id);
    let record = existing_record(id, &path)?;
    let (hold, watching) = super::hold::hold_or_watch(ctx, id, &record)?;
    Ok(Target {
        record,
        path,
        watching,
        _hold: hold,
    })
}

/// The changes of workspace `id` at `path` whose record is `record`; with `snapshot`, jj
/// snapshots its files first (only for a workspace the caller holds); with `tree`, the
/// latest tree is named (git writes it: see [`crate::vcs::Vcs::changes`]).
pub(crate) fn read(
    ctx: &Context,
    id: &WorkspaceId,
    record: &Record,
    path: &Path,
    snapshot: bool,
    tree: bool,
) -> Result<Changes> {
    crate::store::fsutil::create_dir_nofollow(&ctx.layout.cache())?;
    read_prepared(ctx, id, record, path, snapshot, tree)
}

/// [`read`], the namespace's cache directory already made (once for many workspaces).
pub(crate) fn read_prepared(
    ctx: &Context,
    id: &WorkspaceId,
    record: &Record,
    path: &Path,
    snapshot: bool,
    tree: bool,
) -> Result<Changes> {
    let cache = ctx.layout.cache();
    // This process's id, asked once (a table reads a thousand workspaces).
    static PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    let scratch = cache.join(format!(
        "diff-{id}.{}.index",
        PID.get_or_init(std::process::id)
    ));
    Ok(ctx.vcs.changes(
        id,
        path,
        crate::vcs::diff::Since::of(record),
        &scratch,
        snapshot,
        tree,
    )?)
}

/// The record of the workspace directory at `path`, or why there is none to go by.
fn existing_record(id: &WorkspaceId, path: &Path) -> Result<Record> {
    match std::fs::symlink_metadata(path) {
        Err(_) => return Err(super::unknown(id, path)),
        Ok(meta) if meta.file_type().is_symlink() || !meta.is_dir() => {
            return Err(super::not_a_workspace(path))
        }
        Ok(_) => {}
    }
    match metadata::load(path) {
        Loaded::Ok(record) => Ok(*record),
        Loaded::Missing => Err(no_record(id, "it has no record")),
        Loaded::Corrupt(why) => Err(no_record(id, &format!("its record is unreadable ({why})"))),
        Loaded::Newer(version, _) => Err(WorkspaceError::NewerRecord {
            id: id.clone(),
            version,
        }
        .into()),
    }
}

fn no_record(id: &WorkspaceId, why: &str) -> CliError {
    WorkspaceError::NotComparable {
        id: id.clone(),
        why: why.to_string(),
    }
    .into()
}
