//! Taking a prepared workspace for a new one, under the repository lock: journal, rename on
//! disk, rename in the backend, checkout of only the files that differ.
//!
//! With jj and the default base, a take is begun before the base is known ([`begin`]): the
//! rename in jj (whose snapshot of every file is most of a take's time) then runs while the
//! caller asks jj for the base, and [`complete`] finishes it.

use std::fs;
use std::path::Path;

use super::{journal, ready_file, Entry, Ready, State};
use crate::error::Result;
use crate::exec::process::Started;
use crate::store::layout::WorkspaceId;
use crate::store::metadata::Record;
use crate::vcs::git::BranchPlan;
use crate::vcs::Created;
use crate::workspace::context::Context;
use crate::workspace::error::WorkspaceError;

/// A prepared workspace now at the new workspace's path.
pub(crate) struct Taken {
    pub token: String,
    pub created: Created,
    /// What its preparation gave the new workspace's record: the tools bundle, copied files
    /// and (when it is still on the base it was prepared on) the setup's outcome.
    pub prepared: Record,
}

/// A take begun: the journal is written, the entry is at the workspace's path and (jj) the
/// backend is renaming it.
pub(crate) struct Begun {
    entry: Entry,
    ready: Ready,
    /// jj's rename, running; none for git, which names worktrees by path.
    rename: Option<Started>,
}

/// Takes the oldest ready entry as workspace `id` at `path` on `base`; `None` when there is
/// none. The caller holds the repository lock and, once the new record is saved, calls
/// [`finish`]; on a failure after this returned, its roll-back removes the workspace.
pub(crate) fn take(
    ctx: &Context,
    id: &WorkspaceId,
    path: &Path,
    base: &[String],
    explicit: bool,
) -> Result<Option<Taken>> {
    let Some((entry, ready)) = oldest_ready(ctx) else {
        return Ok(None);
    };
    let plan = ctx.vcs.branch_plan(id, base, explicit)?;
    let new_branch = matches!(plan, Some(BranchPlan::New(_)));
    match start(ctx, entry, ready, id, path, new_branch)? {
        Some(begun) => hand_over(ctx, begun, id, path, base, plan.as_ref()),
        None => Ok(None),
    }
}

/// Begins a take of the oldest ready entry as jj workspace `id` at `path` on the default
/// base, not yet known: `None` when there is none (or with git, whose take needs the base
/// first). The caller holds the repository lock and then calls [`complete`] with the base,
/// or [`abandon`].
pub(crate) fn begin(ctx: &Context, id: &WorkspaceId, path: &Path) -> Result<Option<Begun>> {
    if !ctx.vcs.takes_before_base() {
        return Ok(None);
    }
    match oldest_ready(ctx) {
        Some((entry, ready)) => start(ctx, entry, ready, id, path, false),
        None => Ok(None),
    }
}

/// Completes a take [`begin`] started, now that the base is known.
pub(crate) fn complete(
    ctx: &Context,
    begun: Begun,
    id: &WorkspaceId,
    path: &Path,
    base: &[String],
) -> Result<Option<Taken>> {
    hand_over(ctx, begun, id, path, base, None)
}

/// Gives up a take [`begin`] started (the caller failed before completing it): the entry is
/// discarded as a crash's would be.
pub(crate) fn abandon(ctx: &Context, begun: Begun, id: &WorkspaceId) {
    if let Some(rename) = begun.rename {
        let _ = rename.wait();
    }
    let _ = super::discard::discard_taken(ctx, &begun.entry.token, id);
}

/// The first half of a take: the journal, the directory's rename, and the backend's rename
/// started. `None` (the entry discarded) when the directory could not be moved or the
/// rename not started.
fn start(
    ctx: &Context,
    entry: Entry,
    ready: Ready,
    id: &WorkspaceId,
    path: &Path,
    new_branch: bool,
) -> Result<Option<Begun>> {
    write_journal(ctx, &entry, id, new_branch)?;
    let started =
        move_dir(&entry, path).and_then(|()| Ok(ctx.vcs.start_rename_prepared(path, id)?));
    match started {
        Ok(rename) => Ok(Some(Begun {
            entry,
            ready,
            rename,
        })),
        Err(_) => {
            super::discard::discard_taken(ctx, &entry.token, id)?;
            Ok(None)
        }
    }
}

/// The second half: the backend's rename waited for, the move recorded (git), the base
/// asked for checked out; the workspace with what its preparation gave it, or, when this
/// failed, nothing (the entry is discarded and the workspace is created the usual way).
fn hand_over(
    ctx: &Context,
    begun: Begun,
    id: &WorkspaceId,
    path: &Path,
    base: &[String],
    plan: Option<&BranchPlan>,
) -> Result<Option<Taken>> {
    let Begun {
        entry,
        ready,
        rename,
    } = begun;
    let handed = (|| -> crate::vcs::error::Result<Created> {
        if let Some(rename) = rename {
            rename.wait()?;
        }
        ctx.vcs.moved(path)?;
        ctx.vcs.settle(path, base, &ready.base_commits, plan)
    })();
    let Ok(created) = handed else {
        // Nothing of it is anyone's yet: discard it and create the usual way.
        super::discard::discard_taken(ctx, &entry.token, id)?;
        return Ok(None);
    };
    let mut prepared = ready.record;
    move_setup_log(&entry, path, &mut prepared);
    if ready.base_commits != base {
        // Prepared on another base: its setup's output may not fit this one.
        prepared.setup = None;
    }
    Ok(Some(Taken {
        token: entry.token,
        created,
        prepared,
    }))
}

/// The oldest entry a run may take, with its ready file.
fn oldest_ready(ctx: &Context) -> Option<(Entry, Ready)> {
    if fs::symlink_metadata(ctx.layout.pool_dir()).is_err() {
        return None;
    }
    super::list(ctx, crate::store::lock::is_held(&ctx.layout.pool_lock()))
        .into_iter()
        .filter(|e| e.state == State::Ready)
        .find_map(|e| Some((e.clone(), e.ready?)))
}

/// The take's journal, written before the entry is touched.
fn write_journal(ctx: &Context, entry: &Entry, id: &WorkspaceId, new_branch: bool) -> Result<()> {
    let text = format!("{id}\n{}\n", if new_branch { "new-branch" } else { "" });
    crate::store::fsutil::write_atomic(&journal(&ctx.layout, &entry.token), text.as_bytes())?;
    Ok(())
}

/// The entry's directory renamed to the workspace's path (jj finds its repository through a
/// relative path, the same from both: they are at the same depth).
fn move_dir(entry: &Entry, path: &Path) -> Result<()> {
    let meta = fs::symlink_metadata(&entry.path)
        .map_err(|e| WorkspaceError::io("read", &entry.path, e))?;
    if meta.file_type().is_symlink() || !meta.is_dir() {
        return Err(super::super::not_a_workspace(&entry.path));
    }
    fs::rename(&entry.path, path).map_err(|e| WorkspaceError::io("rename", &entry.path, e).into())
}

/// The setup's log goes with the workspace: `<id>.setup.log` beside its state.
fn move_setup_log(entry: &Entry, path: &Path, prepared: &mut Record) {
    let Some(setup) = prepared.setup.as_mut() else {
        return;
    };
    let from = super::super::setup::log_path(&entry.path);
    let to = super::super::setup::log_path(path);
    if fs::rename(&from, &to).is_ok() {
        setup.log = Some(to);
    } else {
        setup.log = None;
    }
}

/// Ends a take whose workspace's state is saved: its ready file, journal and the entry's own
/// state go.
pub(crate) fn finish(ctx: &Context, token: &str) {
    let entry = ctx.layout.pool_entry(token);
    let _ = crate::store::state::remove(&entry);
    let _ = crate::store::fsutil::remove_file(&ready_file(&ctx.layout, token));
    let _ = crate::store::fsutil::remove_file(&journal(&ctx.layout, token));
}
