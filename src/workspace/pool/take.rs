//! Taking a prepared workspace for a new one, under the repository lock: journal, rename in
//! the backend, rename on disk, checkout of only the files that differ.

use std::fs;
use std::path::Path;

use super::{journal, ready_file, Entry, State};
use crate::context::Context;
use crate::error::{CliError, Result};
use crate::metadata::Record;
use crate::vcs::git::BranchPlan;
use crate::vcs::Created;

/// A prepared workspace now at the new workspace's path.
pub struct Taken {
    pub token: String,
    pub created: Created,
    /// What its preparation gave the new workspace's record: the tools bundle, copied files
    /// and (when it is still on the base it was prepared on) the setup's outcome.
    pub prepared: Record,
}

/// Takes the oldest ready entry as workspace `id` at `path` on `base`; `None` when there is
/// none. The caller holds the repository lock and, once the new record is saved, calls
/// [`finish`]; on a failure after this returned, its roll-back removes the workspace.
pub fn take(
    ctx: &Context,
    id: &str,
    path: &Path,
    base: &[String],
    explicit: bool,
) -> Result<Option<Taken>> {
    if fs::symlink_metadata(ctx.layout.pool_dir()).is_err() {
        return Ok(None);
    }
    let Some((entry, ready)) = super::entries(ctx)
        .into_iter()
        .filter(|e| e.state == State::Ready)
        .find_map(|e| Some((e.clone(), e.ready?)))
    else {
        return Ok(None);
    };
    let plan = ctx.vcs.branch_plan(id, base, explicit)?;
    let new_branch = matches!(plan, Some(BranchPlan::New(_)));
    let journal = journal(&ctx.layout, &entry.token);
    crate::fsutil::write_atomic(
        &journal,
        format!("{id}\n{}\n", if new_branch { "new-branch" } else { "" }).as_bytes(),
    )?;
    match hand_over(
        ctx,
        &entry,
        id,
        path,
        base,
        &ready.base_commits,
        plan.as_ref(),
    ) {
        Ok(created) => {
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
        Err(_) => {
            // Nothing of it is anyone's yet: discard it and create the usual way.
            super::discard::discard_taken(ctx, &entry.token, id)?;
            Ok(None)
        }
    }
}

/// The backend's rename, the directory's rename, the checkout of the base asked for.
fn hand_over(
    ctx: &Context,
    entry: &Entry,
    id: &str,
    path: &Path,
    base: &[String],
    prepared_on: &[String],
    plan: Option<&BranchPlan>,
) -> Result<Created> {
    let meta =
        fs::symlink_metadata(&entry.path).map_err(|e| CliError::io("read", &entry.path, &e))?;
    if meta.file_type().is_symlink() || !meta.is_dir() {
        return Err(super::super::not_a_workspace(&entry.path));
    }
    ctx.vcs.rename_prepared(&entry.path, id)?;
    fs::rename(&entry.path, path).map_err(|e| CliError::io("rename", &entry.path, &e))?;
    ctx.vcs.moved(path)?;
    Ok(ctx.vcs.settle(path, base, prepared_on, plan)?)
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
pub fn finish(ctx: &Context, token: &str) {
    let entry = ctx.layout.pool_entry(token);
    let _ = crate::state::remove(&entry);
    let _ = crate::fsutil::remove_file(&ready_file(&ctx.layout, token));
    let _ = crate::fsutil::remove_file(&journal(&ctx.layout, token));
}
