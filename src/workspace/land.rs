//! Landing a workspace: its commits (its unrecorded edits recorded first) brought onto a
//! target by the backend, and the outcome kept in its record. Refused while another process
//! holds the workspace, unless called from inside its own run.
//!
//! The record follows what happens to the land afterwards: a land is journaled in the record
//! (its intent) before the backend changes anything, so the next command of any kind
//! finishes one that was killed; and the commands that show or act on a land check first
//! that its work is still in its target ([`follow`]), so an undone land is neither shown
//! `landed` nor removed as landed.

use std::path::Path;

use crate::error::{CliError, Result};
use crate::store::layout::WorkspaceId;
use crate::store::metadata::{
    self, Land, LandCheck, LandIntent, LandOutcome, Parent, Record, Side,
};
use crate::vcs::land::{Landing, Plan, Target};
use crate::workspace::context::Context;
use crate::workspace::error::{LandRefusal, WorkspaceError};
use crate::workspace::inventory::{self, Entry, Problem};

/// What `land` was asked.
pub(crate) struct Request<'a> {
    pub id: &'a WorkspaceId,
    pub onto: Option<&'a str>,
    pub prefer: Option<Side>,
    pub allow_conflicts: bool,
    pub dry_run: bool,
    /// Refuse, rather than wait, while another land of the repository is under way.
    pub no_wait: bool,
}

/// How long a land waits for the one under way before it gives up.
const LAND_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

/// Lands workspace `req.id` and, unless a dry run or nothing landed, records the outcome.
pub(crate) fn land(ctx: &Context, req: &Request) -> Result<Landing> {
    let entry = usable(ctx, req.id)?;
    let mut record = *entry
        .record
        .clone()
        .ok_or_else(|| no_record(req.id, &entry.path))?;
    // A dry run only looks: while another process's run holds the workspace, it reads
    // without its lease, a snapshot or any write to its record.
    let (_hold, watching) = match req.dry_run {
        true => super::hold::hold_or_watch(ctx, req.id, &record)?,
        false => (Some(super::hold(ctx, req.id, Some(&record))?), false),
    };
    if !watching {
        // Read again under the lease: a run that ended meanwhile saved its own.
        if let metadata::Loaded::Ok(now) = metadata::load(&entry.path) {
            record = *now;
        }
        // A land killed before it could record what it did is finished first; should that
        // fail, this land journals itself afresh and records what it does.
        let _ = finish(ctx, req.id, &mut record);
    }
    // A parent the record names that is no id is refused (a record is a file anyone can
    // edit), even with `--onto`.
    let parent = record.parent.as_ref().map(Parent::id).transpose()?;
    let target = target(ctx, req.onto, parent)?;
    let _parent_hold = hold_parent(ctx, req.id, &target)?;
    // One land at a time meets the repository's targets, from its plan to its record: the
    // next plans on what this one left. A dry run only looks.
    let _turn = match req.dry_run {
        true => None,
        false => Some(take_turn(ctx, req.no_wait)?),
    };
    if !req.dry_run {
        journal(ctx, &mut record, &target)?;
    }
    let base = record.base_commits.clone();
    let plan = Plan {
        id: req.id,
        ws: &entry.path,
        base: &base,
        target,
        prefer: req.prefer,
        allow_conflicts: req.allow_conflicts,
        dry_run: req.dry_run,
        watching,
    };
    let mut landing = match ctx.vcs.land(&plan) {
        Ok(landing) => landing,
        Err(err) if watching => return Err(err.into()),
        Err(err) => {
            // A land that failed after moving the target is recorded as what it did.
            let _ = finish(ctx, req.id, &mut record);
            return Err(err.into());
        }
    };
    if !watching {
        // The land snapshotted the workspace: what jj left out of it is named, never
        // dropped unsaid (a report only: the files stay in the workspace).
        landing.not_landed = ctx.vcs.left_out(req.id, &entry.path).unwrap_or_default();
    }
    if !req.dry_run {
        if !landing.commits.is_empty() {
            record.land = Some(to_land(&landing, &record));
        }
        // Nothing to land keeps the land recorded before, as it is.
        record.land_intent = None;
        record.updated_at = metadata::now();
        metadata::save(&record)?;
    }
    Ok(landing)
}

/// The repository's land lock, waited for (at most [`LAND_WAIT`], saying so) unless
/// `no_wait`, which refuses while another land holds it.
fn take_turn(ctx: &Context, no_wait: bool) -> Result<crate::store::lock::Lock> {
    let path = ctx.layout.land_lock();
    if let Some(lock) = crate::store::lock::try_exclusive(&path)? {
        return Ok(lock);
    }
    if no_wait {
        return Err(LandRefusal::Underway.into());
    }
    ctx.progress.report(crate::progress::Phase::WaitingToLand);
    let lock = crate::store::lock::wait_exclusive(&path, LAND_WAIT);
    ctx.progress.idle();
    lock?.ok_or_else(|| {
        LandRefusal::Stuck {
            minutes: LAND_WAIT.as_secs() / 60,
            lock: path.clone(),
        }
        .into()
    })
}

/// Saves the land's intent in the record before the backend changes anything: its target
/// and that target's state now. A target that cannot be named is left for the land to
/// refuse.
fn journal(ctx: &Context, record: &mut Record, target: &Target) -> Result<()> {
    let Some((target, before)) = ctx
        .vcs
        .land_target(target)
        .ok()
        .filter(|(name, _)| !name.to_string().is_empty())
    else {
        return Ok(());
    };
    let (operation_before, target_before) = ctx.vcs.split_target_state(before);
    record.land_intent = Some(LandIntent {
        at: metadata::now(),
        target,
        operation_before,
        target_before,
        after_run_started_at: record.started_at.clone(),
        after_run_pid: record.pid,
    });
    record.updated_at = metadata::now();
    metadata::save(record)?;
    Ok(())
}

/// Finishes the land a killed `land` journaled in `record` (of workspace `id`, whose lease the
/// caller holds): records it as landed (or conflicted) when its work is in the target now,
/// else drops the intent; the land recorded before it is kept while it still holds. jj: the
/// working copy the land left stale is brought up to date, its edits kept.
fn finish(ctx: &Context, id: &WorkspaceId, record: &mut Record) -> Result<()> {
    let Some(intent) = record.land_intent.clone() else {
        return Ok(());
    };
    let before = intent
        .operation_before
        .as_ref()
        .or(intent.target_before.as_ref());
    let now = ctx.vcs.land_target_state(&intent.target).ok().flatten();
    let moved = before.is_none() || now.as_ref() != before;
    let landed = match moved {
        true => ctx.vcs.landed_since(
            id,
            &intent.target,
            &record.base_commits,
            before.map(String::as_str),
        )?,
        false => None,
    };
    let earlier_holds = record
        .land
        .as_ref()
        .filter(|land| record.land_is_newest(land))
        .is_some_and(|land| {
            ctx.vcs
                .lands_held(&[(id, land)])
                .is_ok_and(|held| !held.is_empty())
        });
    if let (Some((commits, conflicted)), false) = (landed, earlier_holds) {
        record.land = Some(Land {
            at: intent.at.clone(),
            target: intent.target.clone(),
            commits,
            changes: vec![],
            outcome: match conflicted {
                true => LandOutcome::Conflicted,
                false => LandOutcome::Landed,
            },
            resolved: vec![],
            conflicts: vec![],
            operation_before: intent.operation_before.clone(),
            merge_commit: ctx.vcs.split_target_state(now).1,
            after_run_started_at: intent.after_run_started_at.clone(),
            after_run_pid: intent.after_run_pid,
            recovered: true,
            unapplied: false,
        });
    }
    record.land_intent = None;
    record.updated_at = metadata::now();
    metadata::save(record)?;
    if moved {
        // The target working copy the killed land moved (jj: `<name>@`) follows it.
        if let Some(name) = intent.target.working_copy() {
            let dir = match name {
                crate::vcs::jj::MAIN_WORKSPACE => Some(ctx.repo.root.clone()),
                _ => WorkspaceId::parse(name)
                    .ok()
                    .map(|id| ctx.layout.workspace(&id)),
            };
            if let Some(dir) = dir.filter(|d| d.is_dir()) {
                let _ = ctx.vcs.follow_landed_target(&dir);
            }
        }
        let path = record.workspace_path.clone();
        // What the killed land would have done next; a repair that fails keeps the edits
        // aside and the next run finishes it.
        let _ = ctx.vcs.refresh(&path, &crate::vcs::jj::recovery_dir(&path));
    }
    Ok(())
}

/// Makes the records of `entries` follow what happened to their lands: finishes the lands
/// killed before they could record what they did (for the workspaces nobody holds), then
/// checks each land the status would show against its target ([`LandCheck`]), in one
/// query per target. The answer is kept under a stamp of the repository's state (jj: its
/// operation heads; git: its branch files' times), so while that stays the same it costs
/// no process.
pub(crate) fn follow(ctx: &Context, entries: &mut [Entry]) {
    for entry in entries.iter_mut() {
        finish_killed(ctx, entry);
    }
    check(ctx, entries);
}

fn finish_killed(ctx: &Context, entry: &mut Entry) {
    let pending = entry
        .record
        .as_ref()
        .is_some_and(|r| r.land_intent.is_some());
    if !pending || !matches!(entry.problem, None | Some(Problem::Crashed)) {
        return;
    }
    // A land under way holds the lease: only a land nobody runs is finished.
    let Ok(Some(_lease)) = crate::store::lock::try_exclusive(&ctx.layout.lease(&entry.id)) else {
        return;
    };
    let metadata::Loaded::Ok(mut record) = metadata::load(&entry.path) else {
        return;
    };
    if finish(ctx, &entry.id, &mut record).is_ok() {
        entry.record = Some(record);
    }
}

fn check(ctx: &Context, entries: &mut [Entry]) {
    let conflicts_land = ctx.vcs.lands_conflicts();
    let lands: Vec<(&WorkspaceId, &Land)> = entries
        .iter()
        .filter_map(|e| {
            let land = e.record.as_ref()?.shown_land()?;
            // A conflicted land that changed nothing (git's always) has nothing to undo.
            let unchanged = !conflicts_land && land.outcome == LandOutcome::Conflicted;
            let checked = !(land.unapplied || unchanged);
            checked.then_some((&e.id, land))
        })
        .collect();
    if lands.is_empty() {
        return;
    }
    let Some(held) = held_cached(ctx, &lands) else {
        return;
    };
    let checked: Vec<WorkspaceId> = lands.iter().map(|(id, _)| (*id).clone()).collect();
    for entry in entries.iter_mut() {
        if !checked.contains(&entry.id) {
            continue;
        }
        if let Some(record) = entry.record.as_mut() {
            record.land_check = match held.contains(&entry.id) {
                true => LandCheck::Verified,
                false => LandCheck::Undone,
            };
        }
    }
}

/// [`crate::vcs::Vcs::lands_held`], answered from the cache while the repository's state
/// ([`crate::vcs::Vcs::lands_stamp`]) and the lands asked about are the same.
fn held_cached(ctx: &Context, lands: &[(&WorkspaceId, &Land)]) -> Option<Vec<WorkspaceId>> {
    let asked: String = lands
        .iter()
        .map(|(id, land)| {
            let last = land.commits.last().map_or("", String::as_str);
            format!("{id}\t{}\t{last}\n", land.target)
        })
        .collect();
    let cache =
        crate::store::cache::Cache::new(ctx.layout.cache().join("lands-held"), "lands-held", 2);
    // Read the key before asking, so an answer is never filed under a newer key.
    let key = ctx
        .vcs
        .lands_stamp()
        .map(|stamp| format!("{stamp}\n{asked}"));
    if let Some(body) = key.as_deref().and_then(|key| cache.get_string(key)) {
        // A line that is no id (the file is ours, but any file can be written) matches no
        // workspace: left out.
        return Some(
            body.lines()
                .filter_map(|id| WorkspaceId::parse(id).ok())
                .collect(),
        );
    }
    let held = ctx.vcs.lands_held(lands).ok()?;
    if let Some(key) = key {
        let lines: Vec<&str> = held.iter().map(WorkspaceId::as_str).collect();
        let _ = cache.put(key.as_bytes(), lines.join("\n").as_bytes());
    }
    Some(held)
}

/// The workspace's entry, refused when it is not one `land` can act on. Read from its files
/// alone (the backend's own calls fail for a workspace it no longer knows); asked of the
/// backend only when there is no directory, to say why.
fn usable(ctx: &Context, id: &WorkspaceId) -> Result<Entry> {
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
        Some(Problem::Mismatch(m)) => Err(WorkspaceError::Mismatch {
            id: id.clone(),
            mismatch: m.clone(),
        }
        .into()),
        Some(Problem::MissingDirectory) => Err(LandRefusal::NoDirectory {
            id: id.clone(),
            path: entry.path.clone(),
        }
        .into()),
        Some(Problem::Renamed(name)) => Err(LandRefusal::Renamed {
            id: id.clone(),
            name: name.clone(),
        }
        .into()),
        _ => Ok(entry),
    }
}

fn no_record(id: &WorkspaceId, path: &Path) -> CliError {
    LandRefusal::NoRecord {
        id: id.clone(),
        path: path.to_path_buf(),
    }
    .into()
}

/// The lease of the workspace whose files or branch the land changes: the parent's, or
/// (git) the one whose branch `--onto` names. Its files are not changed under a live run (or
/// a creation or clean) of it, unless the land was asked from inside that very run.
fn hold_parent(
    ctx: &Context,
    id: &WorkspaceId,
    target: &Target,
) -> Result<Option<super::hold::Hold>> {
    let (other, path, what) = match target {
        Target::Workspace { id, path } => (id.clone(), path.clone(), "the parent".to_string()),
        Target::Rev(rev) => match ctx.vcs.onto_workspace(rev)? {
            Some(other) if other != *id => {
                let what = format!("workspace {other:?}'s branch {rev}");
                let path = ctx.layout.workspace(&other);
                (other, path, what)
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
        .map_err(|err| {
            LandRefusal::TargetHeld {
                what,
                source: Box::new(err),
            }
            .into()
        })
}

/// `--onto`, else the parent workspace's working copy or branch, else the main workspace's.
fn target(ctx: &Context, onto: Option<&str>, parent: Option<&WorkspaceId>) -> Result<Target> {
    match (onto, parent) {
        (Some(rev), _) => Ok(Target::Rev(rev.to_string())),
        (None, Some(parent)) => {
            let path = ctx.layout.workspace(parent);
            if !path.is_dir() {
                return Err(LandRefusal::ParentGone {
                    parent: parent.clone(),
                    path,
                }
                .into());
            }
            Ok(Target::Workspace {
                id: parent.clone(),
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
        changes: landing
            .commits
            .iter()
            .filter_map(|c| c.change_id.clone())
            .collect(),
        outcome: match landing.conflicts.is_empty() {
            true => LandOutcome::Landed,
            false => LandOutcome::Conflicted,
        },
        resolved: landing.resolved.clone(),
        conflicts: landing.conflicts.clone(),
        operation_before: landing.jj().and_then(|j| j.operation_before.clone()),
        merge_commit: landing.git().and_then(|g| g.merge_commit.clone()),
        after_run_started_at: record.started_at.clone(),
        after_run_pid: record.pid,
        recovered: false,
        unapplied: !landing.conflicts.is_empty() && !landing.applied,
    }
}

fn record_check(entry: &Entry) -> LandCheck {
    entry
        .record
        .as_ref()
        .map_or(LandCheck::Unchecked, |r| r.land_check)
}

/// Whether `entry` was landed and all its work is in the target of that land: no problem, no
/// live run, a clean last land not found undone, and the backend finds nothing unrecorded or
/// outside it (its working copy snapshotted first).
pub(crate) fn is_landed(ctx: &Context, entry: &Entry) -> bool {
    matches!(landed(ctx, entry), Landed::All)
}

/// How much of a workspace's work is in the target of its last land.
pub(crate) enum Landed {
    /// Not landed, or not all its commits are in the target (or it cannot be told).
    No,
    /// Every commit and every file of it.
    All,
    /// Every commit, but these files no commit holds (jj: too big to snapshot, ...) are
    /// in the workspace only.
    LeftOut(Vec<std::path::PathBuf>),
}

/// [`is_landed`], telling apart a workspace whose commits all landed but which holds files
/// no land brings.
pub(crate) fn landed(ctx: &Context, entry: &Entry) -> Landed {
    let land = match &entry.record {
        Some(record) if entry.problem.is_none() && !entry.is_live() => record.land.as_ref(),
        _ => None,
    };
    let commits_landed = land.is_some_and(|land| {
        land.outcome == LandOutcome::Landed
            && record_check(entry) != LandCheck::Undone
            && ctx
                .vcs
                .is_landed(&entry.id, &entry.path, land)
                .unwrap_or(false)
    });
    if !commits_landed {
        return Landed::No;
    }
    // `is_landed` snapshotted the workspace: what jj left out is known now.
    match ctx.vcs.left_out(&entry.id, &entry.path) {
        Ok(files) if files.is_empty() => Landed::All,
        Ok(files) => Landed::LeftOut(files),
        Err(_) => Landed::No,
    }
}
