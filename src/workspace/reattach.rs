//! Reattaching to an existing workspace: its record, drift repair and a stale working copy.

use std::path::{Path, PathBuf};

use super::create::new_record;
use super::{foreign, same_dir, Note, Opened, Request};
use crate::error::Result;
use crate::store::layout::WorkspaceId;
use crate::store::metadata::{self, Loaded, Origin, Record};
use crate::vcs::Registered;
use crate::workspace::context::Context;
use crate::workspace::error::WorkspaceError;

pub(super) fn reattach(
    ctx: &Context,
    req: &Request,
    path: &Path,
    notes: &mut Vec<Note>,
) -> Result<Opened> {
    let loaded = metadata::load(path);
    let stateless = match &loaded {
        Loaded::Missing => true,
        Loaded::Ok(record) => record.origin == Origin::Legacy,
        _ => false,
    };
    // A take of a prepared workspace a crash interrupted: discarded, then created anew.
    if stateless && req.create && super::pool::recover_taken(ctx, req.id)? {
        return super::create::create(ctx, req, path, notes);
    }
    // A creation a kill interrupted before its state was saved: rolled back, then created
    // anew (create settles it under the repository lock).
    if stateless && req.create && super::create::interrupted(ctx, req.id) {
        return super::create::create(ctx, req, path, notes);
    }
    let record = match loaded {
        Loaded::Ok(record) => *record,
        Loaded::Newer(version, _) => {
            return Err(WorkspaceError::NewerRecordKept {
                file: metadata::path(path),
                version,
            }
            .into())
        }
        Loaded::Corrupt(why) => {
            let kept = metadata::keep_aside(path)?;
            notes.push(Note::CorruptRecordKept {
                workspace: path.to_path_buf(),
                kept,
                why,
            });
            adopt(ctx, req, path)?
        }
        Loaded::Missing => adopt(ctx, req, path)?,
    };
    if let (Some(asked), recorded) = (req.base_change, record.base_change.as_deref()) {
        if recorded != Some(asked) {
            return Err(WorkspaceError::BaseDiffers {
                id: req.id.clone(),
                recorded: recorded.map(str::to_string),
                asked: asked.to_string(),
            }
            .into());
        }
    }
    let mut record = record;
    if let Some(m) =
        crate::workspace::verdict::mismatch(ctx.repo.backend, &ctx.vcs, req.id, &record)
    {
        return Err(WorkspaceError::Mismatch {
            id: req.id.clone(),
            mismatch: m,
        }
        .into());
    }
    restore_view(&mut record, notes)?;
    // A repair a killed run left half done is finished before anything runs here.
    if let Some(copy) = ctx.vcs.resume_recovery(path)? {
        notes.push(Note::RepairFinished {
            id: req.id.to_string(),
            copy,
        });
    }
    let checked = record.checked_op_heads.as_deref();
    if ctx.vcs.may_be_stale(path, checked) {
        let scratch = crate::vcs::jj::recovery_dir(path);
        let refreshed = ctx.vcs.refresh(path, &scratch)?;
        if let Some(stamp) = ctx.vcs.freshness_stamp() {
            record.checked_op_heads = Some(stamp);
        }
        if refreshed {
            notes.push(Note::UpdatedStale {
                id: req.id.to_string(),
            });
        }
    }
    Ok(Opened {
        record,
        created: false,
    })
}

/// Rewrites the view of a record whose view was changed by someone else, or creates the state
/// of a record an older version left in the workspace.
fn restore_view(record: &mut Record, notes: &mut Vec<Note>) -> Result<()> {
    let state = crate::store::state::path(&record.workspace_path);
    let note = match record.origin {
        Origin::State => return Ok(()),
        Origin::Tampered => Note::ViewRewritten {
            view: metadata::path(&record.workspace_path),
            state,
        },
        Origin::Legacy => Note::RecordMoved {
            workspace: record.workspace_path.clone(),
            state,
        },
    };
    metadata::save(record)?;
    record.origin = Origin::State;
    notes.push(note);
    Ok(())
}

/// A directory without a usable record: adopt it only when the backend knows it there.
fn adopt(ctx: &Context, req: &Request, path: &Path) -> Result<Record> {
    let known = ctx.vcs.list()?.into_iter().find(|w| *req.id == w.name);
    match known {
        Some(Registered { path: Some(at), .. }) if !same_dir(&at, path) => {
            Err(foreign(req.id, &at))
        }
        Some(_) if path.join(".jj").exists() || path.join(".git").exists() => {
            let record = new_record(ctx, req, path, vec![]);
            metadata::save(&record)?;
            Ok(record)
        }
        _ => Err(super::unregistered(req.id, path)),
    }
}

/// A stale-working-copy repair an interrupted command left, finished by a command of any
/// kind (`status`, `gc`, `clean`): `Ok` names the copy whose files were put back.
pub(crate) struct Repaired {
    pub id: WorkspaceId,
    pub result: Result<PathBuf>,
}

/// Finishes every repair of a stale working copy that a killed command left in the
/// namespace (`.recovering-<id>` holding a whole copy): once the update ran, the user's
/// unrecorded edits are in that copy, not in the workspace, until the repair is finished.
/// A workspace whose lease another command holds is left to it; a partial copy (the
/// workspace not yet touched) is left for the next command in that workspace to drop.
pub(crate) fn finish_interrupted_repairs(ctx: &Context) -> Vec<Repaired> {
    let mut ids = crate::store::fsutil::names_where(&ctx.layout.dir, |name| {
        WorkspaceId::parse(name.strip_prefix(".recovering-")?).ok()
    });
    ids.sort();
    let mut repaired = vec![];
    for id in ids {
        let path = ctx.layout.workspace(&id);
        if !crate::store::recovery::is_complete(&crate::vcs::jj::recovery_dir(&path)) {
            continue;
        }
        let lease = match crate::store::lock::try_exclusive(&ctx.layout.lease(&id)) {
            Ok(Some(lease)) => lease,
            Ok(None) => continue,
            Err(e) => {
                repaired.push(Repaired {
                    id,
                    result: Err(e.into()),
                });
                continue;
            }
        };
        let result = match ctx.vcs.resume_recovery(&path) {
            Ok(Some(copy)) => Ok(copy),
            Ok(None) => continue,
            Err(e) => Err(e.into()),
        };
        drop(lease);
        repaired.push(Repaired { id, result });
    }
    repaired
}
