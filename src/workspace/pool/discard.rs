//! Removing prepared workspaces: one a take left half done (recovery), one a fill left
//! incomplete or prepared under another configuration, and all of them (`pool drain`).

use std::fs;
use std::path::PathBuf;

use super::{journal, ready_file, Entry, State};
use crate::error::Result;
use crate::store::layout::WorkspaceId;
use crate::store::lock;
use crate::workspace::context::Context;
use crate::workspace::error::PoolError;

/// Discards what a take of entry `token` as workspace `id` left, wherever it got to: the
/// directory (under either name), the registration (under either name), a branch the take
/// created, the entry's files. Only for an `id` whose state was never saved.
pub(super) fn discard_taken(ctx: &Context, token: &str, id: &WorkspaceId) -> Result<()> {
    let layout = &ctx.layout;
    let entry = layout.pool_entry(token);
    let ws = layout.workspace(id);
    let journal_file = journal(layout, token);
    let new_branch =
        fs::read_to_string(&journal_file).is_ok_and(|t| t.lines().nth(1) == Some("new-branch"));
    // A helper call the killed take started on the entry (jj's rename runs in the
    // background) may still be running: undone before it ends, it would register the id
    // again afterwards. Wait for it; one that hangs is left to the next command.
    if !crate::exec::liveness::wait_unnamed(&[&entry, &ws], std::time::Duration::from_secs(15)) {
        return Err(PoolError::HelperRunning {
            id: id.clone(),
            entry,
        }
        .into());
    }
    for dir in [&ws, &entry] {
        if fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
            super::super::remove_workspace_dir(&layout.dir, dir)?;
        }
    }
    // A token no entry could have names no registration to forget.
    let name = WorkspaceId::prepared(token);
    let names: Vec<&WorkspaceId> = std::iter::once(id).chain(name.as_ref()).collect();
    ctx.vcs
        .forget_prepared(&names, &[entry.as_path(), ws.as_path()])?;
    if new_branch {
        if let Some(branch) = ctx.vcs.branch_of(id) {
            let _ = ctx.vcs.delete_branch(&branch, true);
        }
    }
    let _ = crate::store::state::remove(&ws);
    super::finish(ctx, token);
    Ok(())
}

/// Settles every take a crash interrupted: finished when the workspace's state was saved,
/// else discarded. The caller holds the repository lock (so no take is under way).
pub(crate) fn recover(ctx: &Context) -> Result<()> {
    let dir = ctx.layout.pool_dir();
    let Ok(files) = fs::read_dir(&dir) else {
        return Ok(());
    };
    for file in files.filter_map(|e| e.ok()) {
        let name = file.file_name().into_string().unwrap_or_default();
        let Some(token) = name.strip_suffix(".taking") else {
            continue;
        };
        if !super::valid_token(token) {
            continue;
        }
        let text = fs::read_to_string(file.path()).unwrap_or_default();
        let id = WorkspaceId::parse(text.lines().next().unwrap_or_default()).ok();
        let saved = id.as_ref().is_some_and(|id| {
            fs::symlink_metadata(crate::store::state::path(&ctx.layout.workspace(id))).is_ok()
        });
        match (saved, id) {
            (true, _) => super::finish(ctx, token),
            (false, Some(id)) => discard_taken(ctx, token, &id)?,
            (false, None) => super::finish(ctx, token),
        }
    }
    Ok(())
}

/// Settles the takes a crash interrupted, when a journal is left and no take is under way
/// (the repository lock is free; otherwise the take holding it settles them): what a
/// command runs before it reads the workspaces, so a half-taken entry never shows as one.
pub(crate) fn settle(ctx: &Context) -> Result<()> {
    let Ok(files) = fs::read_dir(ctx.layout.pool_dir()) else {
        return Ok(());
    };
    let journal = files
        .filter_map(|e| e.ok())
        .any(|e| e.file_name().to_string_lossy().ends_with(".taking"));
    if !journal {
        return Ok(());
    }
    match lock::try_exclusive(&ctx.layout.repo_lock())? {
        Some(_repo) => recover(ctx),
        None => Ok(()),
    }
}

/// Settles a take of workspace `id` a crash interrupted, if there is one (taking the
/// repository lock); true when one was found.
pub(crate) fn recover_taken(ctx: &Context, id: &WorkspaceId) -> Result<bool> {
    if !super::taking(&ctx.layout.dir).iter().any(|t| t == id) {
        return Ok(false);
    }
    let _repo = lock::exclusive(&ctx.layout.repo_lock())?;
    recover(ctx)?;
    Ok(true)
}

/// Removes an entry that no take can have: incomplete, or made unready first by
/// [`unready`]. The caller holds the pool lock.
pub(super) fn discard_entry(ctx: &Context, entry: &Entry) -> Result<()> {
    if fs::symlink_metadata(&entry.path).is_ok_and(|m| m.is_dir()) {
        super::super::remove_workspace_dir(&ctx.layout.dir, &entry.path)?;
    }
    ctx.vcs
        .forget_prepared(entry.name().as_ref().as_slice(), &[entry.path.as_path()])?;
    super::finish(ctx, &entry.token);
    Ok(())
}

/// Makes a complete entry untakeable (its ready file removed under the repository lock, so
/// no take is choosing it meanwhile); false when a take got it first.
pub(super) fn unready(ctx: &Context, entry: &Entry) -> Result<bool> {
    let _repo = lock::exclusive(&ctx.layout.repo_lock())?;
    if fs::symlink_metadata(&entry.path).is_err() {
        return Ok(false);
    }
    crate::store::fsutil::remove_file(&ready_file(&ctx.layout, &entry.token))?;
    Ok(true)
}

/// `pool drain`: removes every prepared workspace, waiting for a fill under way.
pub(crate) fn drain(ctx: &Context) -> Result<Vec<PathBuf>> {
    let _pool = lock::exclusive(&ctx.layout.pool_lock())?;
    {
        let _repo = lock::exclusive(&ctx.layout.repo_lock())?;
        recover(ctx)?;
    }
    let mut removed = vec![];
    let mut found = super::list(ctx, false);
    found.extend(super::leaked(ctx, false));
    for entry in found {
        if matches!(entry.state, State::Ready | State::Stale) && !unready(ctx, &entry)? {
            continue;
        }
        discard_entry(ctx, &entry)?;
        removed.push(entry.path);
    }
    Ok(removed)
}
