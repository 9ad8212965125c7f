//! Acting on a workspace outside `run`: holding its lease so no run starts meanwhile, or
//! acting from inside its own live run (nested), and refusing anything else as busy.

use std::path::Path;

use crate::error::Result;
use crate::exec::liveness;
use crate::store::layout::WorkspaceId;
use crate::store::lock::{self, Lock};
use crate::store::metadata::{Record, Status};
use crate::vars;
use crate::workspace::context::Context;
use crate::workspace::error::WorkspaceError;

/// How a command holds a workspace it acts on.
pub(crate) enum Hold {
    /// Its lease, released when dropped.
    Lease { _lease: Lock },
    /// Called from inside the live run that holds the lease.
    Nested,
}

/// Takes the lease of workspace `id` (whose record is `record`), or finds the caller nested
/// in the run holding it; otherwise a busy error (exit 1).
pub(crate) fn hold(
    ctx: &Context,
    id: &WorkspaceId,
    record: Option<&Record>,
) -> std::result::Result<Hold, WorkspaceError> {
    if crate::exec::sandbox::inside(id, &ctx.layout.workspace(id)) {
        return Err(WorkspaceError::InsideSandbox { id: id.clone() });
    }
    if let Some(lease) = lock::try_exclusive(&ctx.layout.lease(id))? {
        return Ok(Hold::Lease { _lease: lease });
    }
    if is_nested(id, &ctx.layout.workspace(id), record) {
        return Ok(Hold::Nested);
    }
    let holder = match record {
        Some(r) if r.status == Status::Running => format!(
            "a run holds it (pid {}, workflow {})",
            r.pid.map_or("?".into(), |p| p.to_string()),
            r.workflow.as_deref().unwrap_or("-"),
        ),
        _ => "another agent-workspace process holds it".into(),
    };
    Err(WorkspaceError::Busy {
        id: id.clone(),
        holder,
    })
}

/// [`hold`] for a command that only looks (`diff`, `land --dry-run`): when a live run of
/// another process holds the workspace, no lease and `true` (look without writing anything:
/// no snapshot, no record); otherwise as [`hold`].
pub(crate) fn hold_or_watch(
    ctx: &Context,
    id: &WorkspaceId,
    record: &Record,
) -> Result<(Option<Hold>, bool)> {
    match hold(ctx, id, Some(record)) {
        Ok(hold) => Ok((Some(hold), false)),
        Err(_)
            if live_run(record) && !crate::exec::sandbox::inside(id, &ctx.layout.workspace(id)) =>
        {
            Ok((None, true))
        }
        Err(err) => Err(err.into()),
    }
}

/// Whether `record` is of a run whose supervisor is alive.
fn live_run(record: &Record) -> bool {
    record.status == Status::Running
        && record
            .pid
            .is_some_and(|pid| liveness::is_alive(pid, record.pid_start))
}

/// A command started from inside the live run of the same workspace (its environment names
/// this workspace and the recorded supervisor is one of our ancestors).
pub(crate) fn is_nested(id: &WorkspaceId, path: &Path, record: Option<&Record>) -> bool {
    let env_id = vars::raw(vars::ID);
    let env_path = vars::raw(vars::PATH);
    if env_id.as_deref() != Some(id.as_ref()) || env_path.as_deref() != Some(path.as_os_str()) {
        return false;
    }
    match record.and_then(|r| r.pid) {
        Some(pid) if cfg!(target_os = "linux") => liveness::is_ancestor(pid),
        _ => true,
    }
}
