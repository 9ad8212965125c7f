//! Landing a workspace: its commits (its unrecorded edits recorded first) brought onto a
//! target by the backend, and the outcome kept in its record. Refused while another process
//! holds the workspace, unless called from inside its own run.

use std::path::Path;

use crate::context::Context;
use crate::error::{CliError, Result};
use crate::inventory::{self, Entry, Problem};
use crate::metadata::{self, Land, LandOutcome, Record, Side};
use crate::vcs::land::{Landing, Plan, Target};

/// What `land` was asked.
pub struct Request<'a> {
    pub id: &'a str,
    pub onto: Option<&'a str>,
    pub prefer: Option<Side>,
    pub allow_conflicts: bool,
    pub dry_run: bool,
}

/// Lands workspace `req.id` and, unless a dry run or nothing landed, records the outcome.
pub fn land(ctx: &Context, req: &Request) -> Result<Landing> {
    let entry = usable(ctx, req.id)?;
    let mut record = *entry
        .record
        .clone()
        .ok_or_else(|| no_record(req.id, &entry.path))?;
    let _hold = super::hold(ctx, req.id, Some(&record))?;
    // Read again under the lease: a run that ended meanwhile saved its own.
    if let metadata::Loaded::Ok(now) = metadata::load(&entry.path) {
        record = *now;
    }
    let target = target(ctx, req.onto, record.parent.as_deref())?;
    let _parent_hold = hold_parent(ctx, req.id, &target)?;
    let plan = Plan {
        id: req.id,
        ws: &entry.path,
        base: &record.base_commits,
        target,
        prefer: req.prefer,
        allow_conflicts: req.allow_conflicts,
        dry_run: req.dry_run,
    };
    let landing = ctx.vcs.land(&plan)?;
    if !req.dry_run && !landing.commits.is_empty() {
        record.land = Some(to_land(&landing, &record));
        record.updated_at = metadata::now();
        metadata::save(&record)?;
    }
    Ok(landing)
}

/// The workspace's entry, refused when it is not one `land` can act on. Read from its files
/// alone (the backend's own calls fail for a workspace it no longer knows); asked of the
/// backend only when there is no directory, to say why.
fn usable(ctx: &Context, id: &str) -> Result<Entry> {
    let entry = match inventory::local(ctx, id) {
        Some(entry) => entry,
        None => match inventory::one(ctx, id) {
            (_, Some(err)) => return Err(err),
            (entry, None) => entry.ok_or_else(|| super::unknown(id, &ctx.layout.workspace(id)))?,
        },
    };
    match &entry.problem {
        Some(Problem::NotADirectory) => Err(super::not_a_workspace(&entry.path)),
        Some(Problem::Unregistered) => Err(super::unregistered(id, &entry.path)),
        Some(Problem::Mismatch(m)) => Err(m.error(id)),
        Some(Problem::MissingDirectory) => Err(CliError::failure(format!(
            "workspace {id:?} has no directory ({} is gone)",
            entry.path.display()
        ))
        .hint(format!(
            "`agent-workspace run {id} -- true` re-creates it with its edits; land it then"
        ))),
        Some(Problem::Renamed(name)) => Err(CliError::failure(format!(
            "the backend knows workspace {id:?} as {name:?}"
        ))
        .hint(format!(
            "`agent-workspace clean {id}` forgets that name, keeping its edits"
        ))),
        _ => Ok(entry),
    }
}

fn no_record(id: &str, path: &Path) -> CliError {
    CliError::failure(format!(
        "workspace {id:?} has no readable record at {}",
        path.display()
    ))
    .hint(format!(
        "`agent-workspace status {id}` says why; the next `agent-workspace run {id}` repairs it"
    ))
}

/// The lease of the workspace whose files or branch the land changes: the parent's, or
/// (git) the one whose branch `--onto` names. Its files are not changed under a live run (or
/// a creation or clean) of it, unless the land was asked from inside that very run.
fn hold_parent(ctx: &Context, id: &str, target: &Target) -> Result<Option<super::hold::Hold>> {
    let (other, path, what) = match target {
        Target::Workspace { id, path } => (id.clone(), path.clone(), "the parent".to_string()),
        Target::Rev(rev) => match ctx.vcs.onto_workspace(rev)? {
            Some(other) if other != id && crate::layout::validate_id(&other).is_ok() => {
                let what = format!("workspace {other:?}'s branch {rev}");
                (other.clone(), ctx.layout.workspace(&other), what)
            }
            _ => return Ok(None),
        },
        Target::Main => return Ok(None),
    };
    let record = match metadata::load(&path) {
        metadata::Loaded::Ok(record) => Some(*record),
        _ => None,
    };
    super::hold(ctx, &other, record.as_ref())
        .map(Some)
        .map_err(|mut err| {
            err.message = format!("cannot land on {what}: {}", err.message);
            err
        })
}

/// `--onto`, else the parent workspace's working copy or branch, else the main workspace's.
fn target(ctx: &Context, onto: Option<&str>, parent: Option<&str>) -> Result<Target> {
    match (onto, parent) {
        (Some(rev), _) => Ok(Target::Rev(rev.to_string())),
        (None, Some(parent)) => {
            let path = ctx.layout.workspace(parent);
            if !path.is_dir() {
                return Err(CliError::failure(format!(
                    "the parent workspace {parent:?} is gone ({} does not exist)",
                    path.display()
                ))
                .hint("pass --onto REV to name where to land"));
            }
            Ok(Target::Workspace {
                id: parent.to_string(),
                path,
            })
        }
        (None, None) => Ok(Target::Main),
    }
}

fn to_land(landing: &Landing, record: &Record) -> Land {
    Land {
        at: metadata::now(),
        target: landing.target.clone(),
        commits: landing.commits.iter().map(|c| c.id.clone()).collect(),
        outcome: match landing.conflicts.is_empty() {
            true => LandOutcome::Landed,
            false => LandOutcome::Conflicted,
        },
        resolved: landing.resolved.clone(),
        conflicts: landing.conflicts.clone(),
        operation_before: landing.operation_before.clone(),
        merge_commit: landing.merge_commit.clone(),
        after_run_started_at: record.started_at.clone(),
        after_run_pid: record.pid,
    }
}

/// Whether `entry` was landed and all its work is in the target of that land: no problem, no
/// live run, a clean last land, and the backend finds nothing unrecorded or outside it.
pub fn is_landed(ctx: &Context, entry: &Entry) -> bool {
    let land = match &entry.record {
        Some(record) if entry.problem.is_none() && !entry.is_live() => record.land.as_ref(),
        _ => None,
    };
    land.is_some_and(|land| {
        land.outcome == LandOutcome::Landed
            && ctx
                .vcs
                .is_landed(&entry.id, &entry.path, land)
                .unwrap_or(false)
    })
}
