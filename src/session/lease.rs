//! The workspace's lease for a run: taken at once, queued behind a live run (`--wait`), taken
//! over from a dead supervisor once its guard ended what it left, or busy.

use std::path::Path;
use std::time::Duration;

use crate::error::{CliError, Result};
use crate::exec::liveness;
use crate::session::error::SessionError;
use crate::store::layout::WorkspaceId;
use crate::store::lock::{self, Lock};
use crate::store::metadata::{self, Loaded, Record, Status};
use crate::workspace;
use crate::workspace::context::Context;

/// Takes the lease of workspace `id` at `path`. `None` means this is a nested run of the
/// lease holder.
pub(super) fn take(
    ctx: &Context,
    id: &WorkspaceId,
    path: &Path,
    wait: bool,
) -> Result<Option<Lock>> {
    let lease_path = ctx.layout.lease(id);
    if let Some(lease) = lock::try_exclusive(&lease_path)? {
        return Ok(Some(lease));
    }
    let record = match metadata::load(path) {
        Loaded::Ok(record) => Some(*record),
        _ => None,
    };
    if workspace::is_nested(id, path, record.as_ref()) {
        return Ok(None);
    }
    if wait {
        return Ok(Some(lock::exclusive(&lease_path)?));
    }
    // A run whose supervisor died holds the lease until its guard has ended every process it
    // left behind (a few seconds at most): wait for that rather than report it busy.
    let crashed = record
        .as_ref()
        .is_some_and(|r| r.status == Status::Running && !supervisor_alive(r));
    if crashed {
        if let Some(lease) = lock::wait_exclusive(&lease_path, Duration::from_secs(15))? {
            return Ok(Some(lease));
        }
    }
    Err(busy(id, record.as_ref()))
}

/// Whether the supervisor a record names is still alive (the same process, not a reused pid).
fn supervisor_alive(record: &Record) -> bool {
    record
        .pid
        .is_some_and(|p| liveness::is_alive(p, record.pid_start))
}

/// Who holds the workspace: a live run, the processes a dead one left (its guard still ending
/// them), or another agent-workspace process creating or cleaning it.
fn busy(id: &WorkspaceId, record: Option<&Record>) -> CliError {
    let holder = match record {
        Some(r) if r.status == Status::Running && supervisor_alive(r) => format!(
            "pid {}, workflow {}, since {}",
            r.pid.map_or("?".into(), |p| p.to_string()),
            r.workflow.as_deref().unwrap_or("-"),
            r.started_at.as_ref().map_or("?".into(), |t| t.to_string())
        ),
        Some(r) if r.status == Status::Running => {
            "the processes of its last run are still ending".into()
        }
        _ => "another agent-workspace process is creating or cleaning it".into(),
    };
    SessionError::Busy {
        id: id.clone(),
        holder,
    }
    .into()
}
