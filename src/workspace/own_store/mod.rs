//! A sandboxed workspace's own store, one flow for both backends: made ready before a
//! sandboxed run (reused while nothing changed on either side), its work brought back after
//! it, removed with the workspace (kept aside when it holds work that did not come back).
//! What differs per backend is asked of `vcs` (`vcs/own_store.rs`).
//!
//! The store lives in `<namespace>/.private/<id>/`. jj: `wc/.jj` is what the sandbox mounts
//! as the workspace's `.jj`. git: `git/` is the worktree's own git directory, named by the
//! `.git` file `gitfile` the sandbox mounts over the worktree's own. `synced` (never
//! mounted) says which commit of the user's store it was made from or last brought back to,
//! and what its own state was then; `out/` receives an export's bundle. Nothing in `wc/` or
//! `git/` is ever read by jj or git outside a sandbox once an agent could have written it:
//! work comes back as a bundle made inside one, by jj and git run there one process at a
//! time.

mod confine;
mod kept;
mod synced;

use std::fs;
use std::path::Path;

pub(crate) use kept::KeptStore;

use crate::error::{CliError, Result};
use crate::exec::process::ProcessError;
use crate::exec::sandbox::{self, PrivateStore};
use crate::store::layout::WorkspaceId;
use crate::store::nested_aside::{KeptAside, MovedAside};
use crate::vcs::own_store::UserSide;
use crate::vcs::VcsError;
use crate::workspace::context::Context;
use crate::workspace::error::{OwnStoreError, StoreWords, WorkspaceError};
use synced::Synced;

/// The store in `dir` and its record, when both are there.
fn synced_store(ctx: &Context, dir: &Path) -> Option<Synced> {
    synced::read(dir).filter(|_| ctx.vcs.own_store(dir).is_dir())
}

/// How a sandbox mounts the store at `dir` (with `out`, an export's directory, writable).
fn mounts(ctx: &Context, dir: &Path, synced: &Synced, out: Option<&Path>) -> PrivateStore {
    ctx.vcs
        .own_store_mounts(dir, synced.base_objects.as_deref(), out)
}

fn io(action: &'static str, path: &Path, err: std::io::Error) -> WorkspaceError {
    WorkspaceError::io(action, path, err)
}

/// How the store at `dir` is named in what its errors say.
fn words(ctx: &Context, dir: &Path) -> StoreWords {
    let words = ctx.vcs.own_store_words();
    StoreWords {
        store: words.store,
        files_in: words.files_in,
        path: ctx.vcs.own_store(dir),
    }
}

/// A store made ready for a sandboxed run: how to mount it, the store it replaced when
/// that one held work the new one does not (kept aside, see [`remove`]), and what an
/// earlier sandboxed run left that jj or git would follow, moved aside (where each now is).
pub(crate) struct Prepared {
    pub store: PrivateStore,
    pub kept: Option<KeptStore>,
    pub moved: Vec<MovedAside>,
}

/// Makes workspace `id`'s own store ready for a sandboxed run and says how to mount it.
/// Work the store holds that was not brought back yet (a run killed before) is brought back
/// first; a store the user's side moved away from (a checkpoint, a land) is made again,
/// the old one kept aside when it held work outside what came back. A workspace whose
/// state a store would not carry (git: a merge in progress) is refused first.
pub(crate) fn prepare(
    ctx: &Context,
    id: &WorkspaceId,
    ws: &Path,
    bwrap: &Path,
) -> Result<Prepared> {
    let dir = ctx.layout.private_store(id);
    let mut kept_aside = kept_aside(ctx, id, ws);
    // An earlier sandboxed run (killed before its end moved them) may have left nested
    // repositories: aside before jj or git runs in the workspace.
    let mut aside = match fs::symlink_metadata(&dir) {
        Ok(_) => move_aside_nested(ctx, ws, &mut kept_aside),
        Err(_) => vec![],
    };
    let recorded = synced::read(&dir);
    ctx.vcs
        .own_store_ready(ws, recorded.as_ref().map(|s| s.user_op.as_str()))?;
    if let Some(mut synced) = recorded.filter(|_| ctx.vcs.own_store(&dir).is_dir()) {
        if ctx.vcs.own_store_state(&dir).as_deref() != Some(synced.op.as_str()) {
            let (moved, brought) = bring_back_into(ctx, id, ws, bwrap, &mut kept_aside);
            aside.extend(moved);
            brought.map_err(|err| OwnStoreError::NotBroughtBack {
                err: Box::new(err),
                words: words(ctx, &dir),
                dir: dir.clone(),
            })?;
            synced = synced::read(&dir).unwrap_or(synced);
        }
        match ctx
            .vcs
            .own_store_user_side(id, ws, &synced.at, &synced.user_op)?
        {
            UserSide::Same => {}
            UserSide::SameCommit(user_op) => {
                synced.user_op = user_op;
                synced::write(&dir, &synced)?;
            }
            UserSide::Moved => return make(ctx, id, ws, &dir, aside),
        }
        return Ok(Prepared {
            store: mounts(ctx, &dir, &synced, None),
            kept: None,
            moved: aside,
        });
    }
    make(ctx, id, ws, &dir, aside)
}

/// Makes the store afresh from the workspace's working-copy commit (jj snapshots it first;
/// git: its `HEAD` and index), the one there before kept aside when it holds work.
fn make(
    ctx: &Context,
    id: &WorkspaceId,
    ws: &Path,
    dir: &Path,
    moved: Vec<MovedAside>,
) -> Result<Prepared> {
    let kept = clear(ctx, id, dir)?;
    fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
    let bases = ctx.layout.private_stores().join(".bases");
    let source = ctx.vcs.own_store_source(id, ws, &bases)?;
    let made = match source.make(ws, dir, &bases) {
        Ok(made) => made,
        Err(source) => {
            let _ = fs::remove_dir_all(dir);
            return Err(OwnStoreError::NotMade {
                source,
                words: words(ctx, dir),
            }
            .into());
        }
    };
    let synced = Synced {
        at: made.at,
        op: ctx.vcs.own_store_state(dir).unwrap_or_default(),
        user_op: made.user_op,
        base_objects: made.base_objects,
    };
    synced::write_made(dir, &synced.op)?;
    synced::write(dir, &synced)?;
    Ok(Prepared {
        store: mounts(ctx, dir, &synced, None),
        kept,
        moved,
    })
}

/// Makes room for a new store at `dir`: an old one there goes, unless it holds work outside
/// what came back (its work was brought back before this is called), which is then kept
/// aside and returned.
fn clear(ctx: &Context, id: &WorkspaceId, dir: &Path) -> Result<Option<KeptStore>> {
    if fs::symlink_metadata(dir).is_err() {
        return Ok(None);
    }
    if ctx.vcs.own_store(dir).is_dir() {
        if let Some(holds) = kept::beyond(ctx, dir) {
            let store = kept::keep_aside(ctx, id, dir, holds);
            if !store.path.starts_with(dir) {
                return Ok(Some(store));
            }
            return Err(OwnStoreError::NotMovedAside {
                id: id.clone(),
                dir: dir.to_path_buf(),
            }
            .into());
        }
    }
    fs::remove_dir_all(dir).map_err(|e| io("remove", dir, e))?;
    Ok(None)
}

/// Brings back what the agent did in workspace `id`'s own store, when it did anything:
/// inside the same confinement its `@` (git: its `HEAD` and index) is exported as a git
/// bundle, which is then fetched into the user's store with the user's configuration and
/// becomes the workspace's working-copy commit (see `Jj::take_back`, `Git::take_back`).
/// Nothing to do for an untouched store. First, before jj or git runs in the workspace
/// again, what the agent left there that the user's jj or git would follow is moved aside
/// ([`move_aside_nested`]; after the work came back, git: a submodule's `.git` leading to a
/// directory the agent made): where each now is, whether or not the work came back.
pub(crate) fn bring_back(
    ctx: &Context,
    id: &WorkspaceId,
    ws: &Path,
    bwrap: &Path,
) -> (Vec<MovedAside>, Result<()>) {
    bring_back_into(ctx, id, ws, bwrap, &mut kept_aside(ctx, id, ws))
}

/// [`bring_back`], moving what it moves aside into `aside`.
fn bring_back_into(
    ctx: &Context,
    id: &WorkspaceId,
    ws: &Path,
    bwrap: &Path,
    aside: &mut KeptAside,
) -> (Vec<MovedAside>, Result<()>) {
    let mut moved = move_aside_nested(ctx, ws, aside);
    let dir = ctx.layout.private_store(id);
    let Some(synced) = synced_store(ctx, &dir) else {
        return (moved, Ok(()));
    };
    if ctx.vcs.own_store_state(&dir).as_deref() != Some(synced.op.as_str()) {
        if let Err(err) = take_back(ctx, id, ws, &dir, &synced, bwrap) {
            return (moved, Err(err));
        }
    }
    match ctx.vcs.own_store_after_bring_back(ws, &dir, aside) {
        Ok(paths) => moved.extend(paths),
        Err(err) => return (moved, Err(err.into())),
    }
    (moved, Ok(()))
}

/// Where what is moved aside from workspace `id` at `ws` goes: a fresh directory of the
/// namespace's kept-aside directory (`<namespace>/.kept/<id>-<stamp>/`), made when the first
/// one is moved, each at its path relative to the workspace. Out of the workspace, no
/// checkpoint records it and no `land` brings it; `gc`'s `retention.kept` covers it.
fn kept_aside(ctx: &Context, id: &WorkspaceId, ws: &Path) -> KeptAside {
    let kept_root = ctx.layout.dir.join(crate::store::aside::KEPT_DIR);
    KeptAside::new(ws, kept_root, id.as_str())
}

/// Moves aside what a sandboxed agent left in the workspace at `ws` that the user's jj or
/// git would follow to a store of its own (jj: a root `.git` jj did not make; both: every
/// nested `.git` and `.jj` the backend does not own), into `aside`; where each now is. Run
/// before any jj or git runs in a workspace after a sandboxed run.
fn move_aside_nested(ctx: &Context, ws: &Path, aside: &mut KeptAside) -> Vec<MovedAside> {
    let mut moved = ctx.vcs.own_store_before_bring_back(ws, aside);
    moved.extend(ctx.vcs.move_aside_nested(ws, aside));
    moved
}

/// Exports the store's work in the workspace's sandbox and takes it back into the user's
/// store, then records what the store is synced to.
fn take_back(
    ctx: &Context,
    id: &WorkspaceId,
    ws: &Path,
    dir: &Path,
    synced: &Synced,
    bwrap: &Path,
) -> Result<()> {
    let out = dir.join("out");
    if fs::symlink_metadata(&out).is_ok() {
        fs::remove_dir_all(&out).map_err(|e| io("remove", &out, e))?;
    }
    fs::create_dir(&out).map_err(|e| io("create", &out, e))?;
    let not_exported = |err: CliError| OwnStoreError::NotExported {
        id: id.clone(),
        err: Box::new(err),
        words: words(ctx, dir),
    };
    let jail = confine::confinement(ctx, ws, mounts(ctx, dir, synced, Some(&out)), bwrap)
        .map_err(not_exported)?;
    let exported = match ctx.vcs.own_store_export(&jail, &out, &synced.at) {
        Ok(exported) => exported,
        // What the agent left made jj or git wait (a hook, a FIFO its configuration includes):
        // the store goes aside, named, so that no later command waits on it again.
        Err(VcsError::Process(ProcessError::TimedOut { after, .. })) => {
            let _ = fs::remove_dir_all(&out);
            let holds = format!(
                "work its sandbox did not export within {} s",
                after.as_secs()
            );
            let kept = kept::keep_aside(ctx, id, dir, holds);
            return Err(OwnStoreError::TimedOut {
                id: id.clone(),
                after,
                kept: kept.path,
            }
            .into());
        }
        Err(err) => return Err(not_exported(err.into()).into()),
    };
    // Read after the export (which writes the store too): every process of the sandbox has
    // ended, nothing else changes it.
    let op = ctx.vcs.own_store_state(dir).unwrap_or_default();
    if let Some(bundle) = &exported {
        // Written inside the sandbox, whose processes have all ended: only a regular file
        // (of a bounded size, where the backend bounds it) is handed to jj or git.
        let limit = ctx.vcs.own_store_bundle_limit();
        match fs::symlink_metadata(bundle) {
            Ok(meta) if meta.file_type().is_file() && limit.is_none_or(|l| meta.len() <= l) => {}
            _ => {
                return Err(OwnStoreError::NoBundle {
                    id: id.clone(),
                    limit,
                    bundle: bundle.clone(),
                    words: words(ctx, dir),
                }
                .into());
            }
        }
    }
    let (at, user_op) = ctx
        .vcs
        .own_store_take_back(id, ws, &synced.at, exported.as_deref())
        .map_err(|source| OwnStoreError::NotTakenBack {
            id: id.clone(),
            source,
            words: words(ctx, dir),
        })?;
    let _ = fs::remove_dir_all(&out);
    synced::write(
        dir,
        &Synced {
            at,
            op,
            user_op,
            base_objects: synced.base_objects.clone(),
        },
    )
}

/// Before workspace `id` at `ws` is removed: when it ran sandboxed (`confined`, or its own
/// store is there), moves aside what an agent left that jj or git would follow, then brings
/// back what its own store holds that was not brought back yet (a sandboxed run killed
/// before it could), in a sandbox as always. Whether the store may then go, and what was
/// moved aside.
pub(crate) fn settle(
    ctx: &Context,
    id: &WorkspaceId,
    ws: &Path,
    confined: bool,
) -> (bool, Vec<MovedAside>) {
    let dir = ctx.layout.private_store(id);
    let has_store = fs::symlink_metadata(&dir).is_ok();
    let mut aside = kept_aside(ctx, id, ws);
    let moved = match has_store || confined {
        true => move_aside_nested(ctx, ws, &mut aside),
        false => vec![],
    };
    if !has_store || untouched(ctx, &dir) {
        return (true, moved);
    }
    let Ok(bwrap) = sandbox::find() else {
        return (false, moved);
    };
    let (more, brought) = bring_back_into(ctx, id, ws, &bwrap, &mut aside);
    let mut moved = moved;
    moved.extend(more);
    (brought.is_ok(), moved)
}

/// Whether the store at `dir` did nothing since it was made or last brought back.
fn untouched(ctx: &Context, dir: &Path) -> bool {
    synced::read(dir)
        .is_some_and(|synced| ctx.vcs.own_store_state(dir).as_deref() == Some(synced.op.as_str()))
}

/// Removes workspace `id`'s own store with the workspace, unless it holds work that did not
/// come back: commits that could not be brought back (`settled`: what [`settle`] said, when
/// it was asked), or anything outside what comes back (jj: `@` and its ancestors; git:
/// `HEAD` and the index), such as another branch, a stash, a tag or a head left behind. Then
/// it is moved aside, whole, under the namespace's kept-aside directory, and said where.
pub(crate) fn remove(ctx: &Context, id: &WorkspaceId, settled: Option<bool>) -> Option<KeptStore> {
    let dir = ctx.layout.private_store(id);
    fs::symlink_metadata(&dir).ok()?;
    let holds = match ctx.vcs.own_store(&dir).is_dir() {
        false => None,
        true if !settled.unwrap_or_else(|| untouched(ctx, &dir)) => {
            Some("commits that could not be brought back".to_string())
        }
        true => kept::beyond(ctx, &dir),
    };
    let Some(holds) = holds else {
        let _ = fs::remove_dir_all(&dir);
        kept::prune_bases(&ctx.layout.private_stores());
        return None;
    };
    Some(kept::keep_aside(ctx, id, &dir, holds))
}
