//! Creating a workspace under the repository lock, with nothing left behind on failure.

use std::fs;
use std::path::Path;

use super::{foreign, remove_workspace_dir, same_dir, Note, Opened, Request};
use crate::error::Result;
use crate::exec::signals;
use crate::store::layout::WorkspaceId;
use crate::store::lock;
use crate::store::metadata::{self, Parent, Record, Status};
use crate::vcs::{Created, Kept, Registered};
use crate::workspace::context::Context;
use crate::workspace::error::WorkspaceError;

pub(super) fn create(
    ctx: &Context,
    req: &Request,
    path: &Path,
    notes: &mut Vec<Note>,
) -> Result<Opened> {
    let _repo_lock = lock::exclusive(&ctx.layout.repo_lock())?;
    super::pool::recover(ctx)?;
    recover(ctx)?;
    create_locked(ctx, req, path, req.known_before, notes)
}

/// Creates the workspace under the repository lock. `ask_first` lists the backend's
/// workspaces before adding; otherwise that is done only if the add fails.
fn create_locked(
    ctx: &Context,
    req: &Request,
    path: &Path,
    ask_first: bool,
    notes: &mut Vec<Note>,
) -> Result<Opened> {
    let namespace_dir = path.parent().unwrap_or(path);
    super::capacity::check(
        namespace_dir,
        &ctx.layout.root,
        ctx.config.max_workspaces,
        ctx.config.min_free_disk,
    )?;
    let ports = super::capacity::ports(
        &namespace_dir.join(crate::store::state::DIR_NAME),
        req.id,
        ctx.config.ports,
    )?;
    ensure_excluded(ctx)?;
    // With jj and the default base, a prepared workspace's rename in jj (a snapshot of every
    // file) runs while jj is asked for the base.
    let begun = match (req.parent, req.base_change, ask_first) {
        (None, None, false) => super::pool::begin(ctx, req.id, path)?,
        _ => None,
    };
    let (base, base_change) = match resolve_base(ctx, req, path, ask_first, notes) {
        Ok(resolved) => resolved,
        Err(err) => {
            if let Some(begun) = begun {
                super::pool::abandon(ctx, begun, req.id);
            }
            return Err(err);
        }
    };
    let mut record = new_record(ctx, req, path, base.clone());
    record.base_change = base_change;
    record.ports = ports;
    ctx.progress.report(crate::progress::Phase::CheckingOut);
    // A prepared workspace of the pool, when there is one (never for a child, whose start
    // is its parent's state).
    let taken = match (begun, req.parent) {
        (Some(begun), _) => super::pool::complete(ctx, begun, req.id, path, &base)?,
        (None, None) => super::pool::take(ctx, req.id, path, &base, req.base_change.is_some())?,
        (None, Some(_)) => None,
    };
    let created = match &taken {
        Some(taken) => {
            record.tools = taken.prepared.tools.clone();
            record.setup = taken.prepared.setup.clone();
            record.copied = taken.prepared.copied.clone();
            taken.created.clone()
        }
        None => {
            match journal::begin(ctx, req.id, &ctx.vcs.plan_create(req.id, &base)?).and_then(|()| {
                ctx.vcs
                    .create(req.id, path, &base, req.base_change.is_some())
                    .map_err(Into::into)
            }) {
                Ok(created) => {
                    journal::created(ctx, req.id, &created)?;
                    created
                }
                // The name may be taken (by a workspace whose directory went away, or one made
                // elsewhere): ask the backend and go the way that knows about it.
                Err(_) if !ask_first && ctx.vcs.list()?.iter().any(|w| *req.id == w.name) => {
                    // Nothing of this attempt was made: its journal goes; the next one writes its own.
                    journal::finish(ctx, req.id);
                    if fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
                        remove_workspace_dir(&ctx.layout.dir, path)?;
                    }
                    return create_locked(ctx, req, path, true, notes);
                }
                Err(err) => {
                    // A failed add can leave a registered name and a half-made directory.
                    roll_back(ctx, req.id, path, &Created::default());
                    return Err(err);
                }
            }
        }
    };
    record.branch = created.branch.clone();
    record.base_envrc_sha256 = Some(
        crate::workspace::direnv::envrc_digest(path)
            .ok()
            .flatten()
            .unwrap_or_else(|| "none".into()),
    );
    if taken.is_none() {
        copy_included(ctx, req.id, path, &created, &mut record, notes)?;
    }
    // The new working copy is the base revision's content plus the main workspace's copied
    // files (the user's own, chosen by copy.include): what its .envrc loads is trusted. The
    // .envrc itself is the base revision's (digested above, before the copy).
    record.envrc_loads_base = Some(crate::workspace::envrc_loads::current(path));
    if let Some(parent) = req.parent {
        // A child's content is its parent's, unrecorded edits included: it trusts only what
        // its parent was trusted with.
        super::children::inherit_trust(ctx, parent, &mut record);
    }
    let finished = match signals::received() {
        Some(signal) => Err(WorkspaceError::CreateInterrupted {
            signal,
            path: path.to_path_buf(),
        }
        .into()),
        None => metadata::save(&record).map_err(Into::into),
    };
    if let Err(err) = finished {
        roll_back(ctx, req.id, path, &created);
        if let Some(taken) = &taken {
            super::pool::finish(ctx, &taken.token);
        }
        return Err(err);
    }
    if let Some(taken) = &taken {
        super::pool::finish(ctx, &taken.token);
    }
    journal::finish(ctx, req.id);
    Ok(Opened {
        record,
        created: true,
    })
}

/// The commits the new workspace starts on, and the change it was asked to start on. With
/// `ask_first`, a registration of the id whose directory was deleted by hand is forgotten
/// first, its edits kept as the new base.
fn resolve_base(
    ctx: &Context,
    req: &Request,
    path: &Path,
    ask_first: bool,
    notes: &mut Vec<Note>,
) -> Result<(Vec<String>, Option<String>)> {
    let mut base_change = req.base_change.map(str::to_string);
    let known = match ask_first {
        true => ctx.vcs.list()?.into_iter().find(|w| *req.id == w.name),
        false => None,
    };
    let base = match known {
        Some(Registered { path: Some(at), .. }) if !same_dir(&at, path) => {
            return Err(foreign(req.id, &at))
        }
        // Registered but its directory was deleted by hand: keep its edits as the new base.
        Some(_) => {
            let kept = ctx.vcs.keep_edits(req.id, None)?;
            ctx.vcs.forget(req.id, path)?;
            match kept {
                Kept::Change {
                    change_id,
                    commit_id,
                } => {
                    notes.push(Note::RecreatedOnChange {
                        id: req.id.to_string(),
                        change_id: change_id.clone(),
                    });
                    base_change.get_or_insert(change_id);
                    vec![commit_id]
                }
                Kept::Branch { branch, .. } => {
                    notes.push(Note::RecreatedOnBranch {
                        id: req.id.to_string(),
                        branch,
                    });
                    ctx.vcs.resolve_base(req.base_change)?
                }
                Kept::Nothing | Kept::Unregistered => ctx.vcs.resolve_base(req.base_change)?,
            }
        }
        // jj's default too (the parents of the main workspace's working copy) is resolved
        // to commit ids and passed on, so the record says exactly what the workspace started
        // on (what `diff` compares with).
        None => ctx.vcs.resolve_base(req.base_change)?,
    };
    Ok((base, base_change))
}

/// Copies `copy.include`'s files into the new workspace, recording what was copied; on a
/// failure the workspace is rolled back.
fn copy_included(
    ctx: &Context,
    id: &WorkspaceId,
    path: &Path,
    created: &Created,
    record: &mut Record,
    notes: &mut Vec<Note>,
) -> Result<()> {
    match super::copy::copy_included(ctx, path) {
        Ok(Some((copied, elapsed))) => {
            record.copied = Some(copied.clone());
            notes.push(Note::Copied {
                id: id.to_string(),
                copied,
                elapsed,
            });
            Ok(())
        }
        Ok(None) => Ok(()),
        Err(err) => {
            roll_back(ctx, id, path, created);
            Err(err)
        }
    }
}

/// Undoes a creation: remove the directory we made, unregister it, and delete the branch
/// this call created.
fn roll_back(ctx: &Context, id: &WorkspaceId, path: &Path, created: &Created) {
    if fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        let _ = remove_workspace_dir(&ctx.layout.dir, path);
    }
    let _ = ctx.vcs.forget(id, path);
    let _ = crate::store::state::remove(path);
    let _ = ctx.vcs.delete_created_branch(created);
    journal::finish(ctx, id);
}

/// Rolls back the creations a kill interrupted before the workspace's state was saved (their
/// journal is left, the state is not): nothing ran in them yet, so nothing of anyone's is in
/// them. The caller holds the repository lock, which every creation holds.
fn recover(ctx: &Context) -> Result<()> {
    for id in journal::ids(ctx) {
        let path = ctx.layout.workspace(&id);
        match crate::store::state::read(&path) {
            crate::store::state::Found::Missing => {
                let created = journal::read(ctx, &id);
                roll_back(ctx, &id, &path, &created);
            }
            // Created whole; only the journal's removal was interrupted.
            _ => journal::finish(ctx, &id),
        }
    }
    Ok(())
}

/// Settles the creations a kill interrupted, when a journal is left and no creation is under
/// way (the repository lock is free; otherwise the creation holding it settles them): what
/// a command runs before it reads the workspaces, so a half-made workspace never shows as
/// `missing-metadata`.
pub(super) fn settle(ctx: &Context) -> Result<()> {
    if journal::ids(ctx).is_empty() {
        return Ok(());
    }
    match lock::try_exclusive(&ctx.layout.repo_lock())? {
        Some(_repo) => recover(ctx),
        None => Ok(()),
    }
}

/// Whether a creation of `id` a kill interrupted is left to settle.
pub(super) fn interrupted(ctx: &Context, id: &WorkspaceId) -> bool {
    fs::symlink_metadata(journal::path(ctx, id)).is_ok()
}

/// A creation's journal, `<namespace>/.state/<id>.creating`: written before the backend
/// registers the workspace, rewritten with the branch the backend made, removed once the
/// workspace's state is saved (or the creation rolled back).
pub(super) mod journal {
    use std::path::PathBuf;

    use crate::store::layout::WorkspaceId;

    use serde::{Deserialize, Serialize};

    use crate::error::Result;
    use crate::vcs::Created;
    use crate::workspace::context::Context;

    pub(in crate::workspace) const SUFFIX: &str = ".creating";

    /// What the creation makes (git: its branch, whether it is new, the commit a new one
    /// starts at), written before the backend runs so a kill never leaves it unknown.
    #[derive(Serialize, Deserialize, Default)]
    #[cfg_attr(test, derive(schemars::JsonSchema))]
    struct Journal {
        branch: Option<String>,
        new_branch: bool,
        #[serde(default)]
        start: Option<String>,
    }

    pub(super) fn path(ctx: &Context, id: &WorkspaceId) -> PathBuf {
        ctx.layout
            .dir
            .join(crate::store::state::DIR_NAME)
            .join(format!("{id}{SUFFIX}"))
    }

    fn write(ctx: &Context, id: &WorkspaceId, journal: &Journal) -> Result<()> {
        // Invariant: a struct of an optional string and a bool always serializes.
        let text = serde_json::to_vec(journal).expect("a journal serializes");
        crate::store::fsutil::create_dir_nofollow(
            &ctx.layout.dir.join(crate::store::state::DIR_NAME),
        )?;
        crate::store::fsutil::write_atomic(&path(ctx, id), &text)?;
        Ok(())
    }

    /// Journals what the creation will make (`planned`), before the backend runs.
    pub(super) fn begin(ctx: &Context, id: &WorkspaceId, planned: &Created) -> Result<()> {
        created(ctx, id, planned)
    }

    /// Journals what the backend made.
    pub(super) fn created(ctx: &Context, id: &WorkspaceId, created: &Created) -> Result<()> {
        write(
            ctx,
            id,
            &Journal {
                branch: created.branch.clone(),
                new_branch: created.new_branch,
                start: created.start.clone(),
            },
        )
    }

    /// What the backend made, or was about to make, as the journal says (an unreadable
    /// journal: nothing known, so no branch is deleted).
    pub(super) fn read(ctx: &Context, id: &WorkspaceId) -> Created {
        let journal: Journal = crate::store::fsutil::open_existing_nofollow(&path(ctx, id))
            .ok()
            .and_then(|f| serde_json::from_reader(std::io::BufReader::new(f)).ok())
            .unwrap_or_default();
        Created {
            branch: journal.branch,
            new_branch: journal.new_branch,
            start: journal.start,
        }
    }

    pub(super) fn finish(ctx: &Context, id: &WorkspaceId) {
        let _ = crate::store::fsutil::remove_file(&path(ctx, id));
    }

    pub(super) fn ids(ctx: &Context) -> Vec<WorkspaceId> {
        let state = ctx.layout.dir.join(crate::store::state::DIR_NAME);
        let mut ids = crate::store::fsutil::names_where(&state, |name| {
            WorkspaceId::parse(name.strip_suffix(SUFFIX)?).ok()
        });
        ids.sort();
        ids
    }
}

pub(super) fn new_record(
    ctx: &Context,
    req: &Request,
    path: &Path,
    base_commits: Vec<String>,
) -> Record {
    let now = metadata::now();
    Record {
        schema_version: metadata::SCHEMA_VERSION,
        workspace_id: req.id.clone(),
        workflow: req.workflow.map(str::to_string),
        status: Status::Idle,
        command: vec![],
        repo_root: ctx.repo.root.clone(),
        workspace_path: path.to_path_buf(),
        namespace: ctx.layout.namespace.clone(),
        backend: ctx.repo.backend,
        base_change: req.base_change.map(str::to_string),
        base_commits,
        branch: None,
        direnv_allowed: false,
        envrc_sha256: None,
        base_envrc_sha256: None,
        created_at: now.clone(),
        updated_at: now,
        started_at: None,
        finished_at: None,
        exit_code: None,
        signal: None,
        limit_hit: None,
        refused_hosts: vec![],
        pid: None,
        pid_start: None,
        runs: vec![],
        envrc_loads_base: None,
        envrc_loads_allowed: Default::default(),
        checked_op_heads: None,
        parent: req.parent.cloned().map(Parent::Id),
        checkpoints: 0,
        land: None,
        land_intent: None,
        land_check: Default::default(),
        extra: Default::default(),
        sandbox: None,
        confined: false,
        ports: vec![],
        tools: None,
        setup: None,
        not_started: None,
        copied: None,
        origin: Default::default(),
    }
}

/// The lines every workspace needs in the repository's exclude file (added on creation).
pub(crate) const EXCLUDES: [&str; 3] = [
    "/.agent-workflow.json",
    "/.agent-workflow.json.*",
    "/.direnv/",
];

/// Keeps the record, direnv's cache and the tools bundle out of every workspace's history,
/// through the repository's shared exclude file. Written before the first record exists.
pub(super) fn ensure_excluded(ctx: &Context) -> Result<()> {
    let Some(file) = ctx.vcs.exclude_file() else {
        return Ok(());
    };
    let current = fs::read_to_string(&file).unwrap_or_default();
    let tools = format!("/{}/", ctx.config.tools_dir);
    let missing: Vec<&str> = EXCLUDES
        .iter()
        .copied()
        .chain([tools.as_str()])
        .filter(|line| !current.lines().any(|l| l.trim() == *line))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut text = current;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(
        "# agent-workspace: metadata, direnv cache and tools bundle of agent workspaces\n",
    );
    for line in missing {
        text.push_str(line);
        text.push('\n');
    }
    if let Some(dir) = file.parent() {
        fs::create_dir_all(dir).map_err(|e| WorkspaceError::io("create", dir, e))?;
    }
    fs::write(&file, text).map_err(|e| WorkspaceError::io("write", &file, e).into())
}
