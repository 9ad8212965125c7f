//! Children: a workspace started from another one's exact current state (`run --parent`),
//! the parent left as it was, and how deep they may nest.

use std::path::Path;

use super::hold::{hold, Hold};
use crate::error::Result;
use crate::store::layout::WorkspaceId;
use crate::store::metadata::{self, Loaded, Parent, Record};
use crate::vars;
use crate::workspace::context::Context;
use crate::workspace::error::WorkspaceError;
use crate::workspace::inventory::Problem;

/// How deep workspaces nest when `AGENT_WORKSPACE_MAX_DEPTH` is not set.
pub(super) const DEFAULT_MAX_DEPTH: u32 = 10;

/// Where a new child starts, and the hold on its parent, kept until the child exists.
pub(crate) struct Fork {
    /// The commit the child is created on.
    pub base: String,
    _parent: Hold,
}

/// `--parent` names the parent of a new workspace; an existing one (at `path`) must already
/// have that parent (a usage error otherwise).
pub(crate) fn check_parent(
    id: &WorkspaceId,
    path: &Path,
    parent: Option<&WorkspaceId>,
) -> Result<()> {
    let Some(parent) = parent else {
        return Ok(());
    };
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(());
    }
    let had = match metadata::load(path) {
        Loaded::Ok(record) => record.parent,
        _ => None,
    };
    if had.as_ref().and_then(|had| had.id().ok()) == Some(parent) {
        return Ok(());
    }
    Err(WorkspaceError::ParentOfExisting {
        id: id.clone(),
        had,
    }
    .into())
}

/// When `child` is to be created from workspace `parent` (`--parent` given, no directory
/// yet): checks the parent exists, is not held by another run and is not too deep, and gives
/// the commit holding its state.
pub(crate) fn fork(
    ctx: &Context,
    child: &WorkspaceId,
    parent: Option<&WorkspaceId>,
) -> Result<Option<Fork>> {
    match parent {
        Some(parent) if std::fs::symlink_metadata(ctx.layout.workspace(child)).is_err() => {
            fork_from(ctx, child, parent).map(Some)
        }
        _ => Ok(None),
    }
}

fn fork_from(ctx: &Context, child: &WorkspaceId, parent: &WorkspaceId) -> Result<Fork> {
    if child == parent {
        return Err(WorkspaceError::OwnParent {
            child: child.clone(),
        }
        .into());
    }
    let path = ctx.layout.workspace(parent);
    let unknown = || WorkspaceError::NoParent {
        parent: parent.clone(),
        child: child.clone(),
        path: path.clone(),
    };
    let entry = crate::workspace::inventory::local(ctx, parent).ok_or_else(unknown)?;
    match &entry.problem {
        None | Some(Problem::Crashed | Problem::TamperedRecord) => {}
        Some(problem) => {
            return Err(WorkspaceError::BadParent {
                parent: parent.clone(),
                problem: problem.code(),
            }
            .into())
        }
    }
    let record = entry.record.ok_or_else(unknown)?;
    check_depth(ctx, child, &record)?;
    let held = hold(ctx, parent, Some(&record))?;
    let scratch = ctx.layout.fork_index(child);
    let base = ctx.vcs.fork_point(parent, &path, child, &scratch)?;
    Ok(Fork {
        base,
        _parent: held,
    })
}

/// Refuses a child deeper than the limit: its depth is one more than its parent's, counted
/// through the ancestors whose records still exist.
fn check_depth(ctx: &Context, child: &WorkspaceId, parent: &Record) -> Result<()> {
    let max = max_depth()?;
    let mut depth = 1u32;
    let mut next = parent.parent.clone();
    while depth <= max {
        // A parent named by a record is followed only when it is a valid id.
        let Some(Parent::Id(id)) = next else {
            return Ok(());
        };
        depth += 1;
        next = match metadata::load(&ctx.layout.workspace(&id)) {
            Loaded::Ok(record) => record.parent,
            _ => None,
        };
    }
    Err(WorkspaceError::TooDeep {
        child: child.clone(),
        depth,
        parent: parent.workspace_id.clone(),
        max,
    }
    .into())
}

/// The depth limit: `AGENT_WORKSPACE_MAX_DEPTH`, else [`DEFAULT_MAX_DEPTH`].
fn max_depth() -> Result<u32> {
    match vars::non_empty(vars::MAX_DEPTH) {
        None => Ok(DEFAULT_MAX_DEPTH),
        Some(text) => text
            .trim()
            .parse()
            .map_err(|_| WorkspaceError::BadMaxDepth { text }.into()),
    }
}

/// Gives the new child of `record` the `.envrc` trust its parent `parent` had, instead of
/// trusting its files as a base revision's: its `.envrc` (and each file that loads) counts as
/// the base's only when it is the parent's base's, or what the parent allowed. A parent
/// whose base is unknown passes on no trust: the child's first run asks for `--trust-envrc`.
pub(super) fn inherit_trust(ctx: &Context, parent: &WorkspaceId, record: &mut Record) {
    let from = match metadata::load(&ctx.layout.workspace(parent)) {
        Loaded::Ok(from) => Some(*from),
        _ => None,
    };
    let current = record.base_envrc_sha256.clone();
    // A migrated record's `direnv_allowed` comes without a digest: it passes on nothing.
    let allowed =
        |r: &Record| r.direnv_allowed && r.envrc_sha256.is_some() && r.envrc_sha256 == current;
    record.base_envrc_sha256 = match &from {
        Some(r) if allowed(r) => current.clone(),
        Some(r) if r.base_envrc_sha256.is_some() => r.base_envrc_sha256.clone(),
        // "none" (no .envrc at the base) matches no .envrc's digest.
        _ => Some("none".into()),
    };
    let loads = record.envrc_loads_base.take().unwrap_or_default();
    let mut trusted = from
        .as_ref()
        .and_then(|r| r.envrc_loads_base.clone())
        .unwrap_or_default();
    if let Some(r) = from.as_ref().filter(|r| r.direnv_allowed) {
        for (file, digest) in &r.envrc_loads_allowed {
            if loads.get(file) == Some(digest) {
                trusted.insert(file.clone(), digest.clone());
            }
        }
    }
    record.envrc_loads_base = Some(trusted);
}
