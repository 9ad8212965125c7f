//! Opening a workspace: reattaching to an existing one, creating a new one with nothing left
//! behind on failure, and repairing drift between the directory, its record and the backend.

use std::fs;
use std::path::{Path, PathBuf};

use crate::context::Context;
use crate::error::{CliError, Result};
use crate::lock;
use crate::metadata::{self, Loaded, Origin, Record, Status};
use crate::signals;
use crate::vcs::{Backend, Created, Kept, Registered};

/// The record field remembering the repository state at the last freshness check.
const FRESH_KEY: &str = "checked_op_heads";

/// An opened workspace and whether this call created it.
pub struct Opened {
    pub record: Record,
    pub created: bool,
}

/// What a run asks of the workspace it opens.
pub struct Request<'a> {
    pub id: &'a str,
    pub base_change: Option<&'a str>,
    pub workflow: Option<&'a str>,
    /// Create the workspace when it does not exist (`run`); otherwise it must exist (`shell`).
    pub create: bool,
    /// Whether this id had been run here before (its lease file existed): only then can the
    /// backend know it without a directory, so only then is the backend asked first.
    pub known_before: bool,
}

/// Opens workspace `req.id`, creating or repairing it as needed.
pub fn open(ctx: &Context, req: &Request) -> Result<Opened> {
    let path = ctx.layout.workspace(req.id);
    match fs::symlink_metadata(&path) {
        Ok(meta) if meta.file_type().is_symlink() || !meta.is_dir() => Err(not_a_workspace(&path)),
        Ok(_) => reattach(ctx, req, &path),
        Err(_) if req.create => create(ctx, req, &path),
        Err(_) => Err(unknown(req.id, &path)),
    }
}

pub fn unknown(id: &str, path: &Path) -> CliError {
    CliError::failure(format!(
        "no workspace {id:?} (looked for {})",
        path.display()
    ))
    .hint("list workspaces with `agent-workspace status`; create one with `agent-workspace run`")
}

pub fn not_a_workspace(path: &Path) -> CliError {
    CliError::failure(format!(
        "{} is a symlink or file, not a workspace directory; refusing to touch it",
        path.display()
    ))
    .hint("remove it by hand once you know where it points")
}

fn reattach(ctx: &Context, req: &Request, path: &Path) -> Result<Opened> {
    let record = match metadata::load(path) {
        Loaded::Ok(record) => *record,
        Loaded::Newer(version, _) => {
            return Err(CliError::failure(format!(
                "{} was written by a newer agent-workspace (schema {version}); not overwriting it",
                metadata::path(path).display()
            ))
            .hint("upgrade agent-workspace"))
        }
        Loaded::Corrupt(why) => {
            let kept = metadata::keep_aside(path)?;
            let kept: Vec<String> = kept.iter().map(|p| p.display().to_string()).collect();
            eprintln!(
                "Warning: the record of {} was unreadable ({why}); kept it as {} and started a new record",
                path.display(),
                kept.join(" and ")
            );
            adopt(ctx, req, path)?
        }
        Loaded::Missing => adopt(ctx, req, path)?,
    };
    if let (Some(asked), recorded) = (req.base_change, record.base_change.as_deref()) {
        if recorded != Some(asked) {
            return Err(CliError::failure(format!(
                "workspace {:?} already exists on base {}; --base-change {asked} differs",
                req.id,
                recorded.unwrap_or("(the default)")
            ))
            .hint("drop --base-change to reattach, or use a new id"));
        }
    }
    let mut record = record;
    if let Some(m) = crate::verdict::mismatch(ctx, &record) {
        return Err(m.error(req.id));
    }
    restore_view(&mut record)?;
    // A repair a killed run left half done is finished before anything runs here.
    if let Some(dir) = ctx.vcs.resume_recovery(path)? {
        eprintln!(
            "Note: finished the interrupted update of workspace {:?}'s stale working copy; its edits are back from {}",
            req.id,
            dir.display()
        );
    }
    let checked = record.extra.get(FRESH_KEY).and_then(|v| v.as_str());
    if ctx.vcs.may_be_stale(path, checked) {
        let scratch = crate::vcs::jj::recovery_dir(path);
        let refreshed = ctx.vcs.refresh(path, &scratch)?;
        if let Some(stamp) = ctx.vcs.freshness_stamp() {
            record.extra.insert(FRESH_KEY.into(), stamp.into());
        }
        if refreshed {
            eprintln!(
                "Note: workspace {:?} was stale; updated it (its edits are kept)",
                req.id
            );
        }
    }
    Ok(Opened {
        record,
        created: false,
    })
}

/// Rewrites the view of a record whose view was changed by someone else, or creates the state
/// of a record an older version left in the workspace.
fn restore_view(record: &mut Record) -> Result<()> {
    let view = metadata::path(&record.workspace_path);
    let note = match record.origin {
        Origin::State => return Ok(()),
        Origin::Tampered => format!(
            "Warning: {} was changed outside agent-workspace; rewrote it from {}",
            view.display(),
            crate::state::path(&record.workspace_path).display()
        ),
        Origin::Legacy => format!(
            "Note: moved the record of {} into {}; its .envrc trust is checked anew against the base revision",
            record.workspace_path.display(),
            crate::state::path(&record.workspace_path).display()
        ),
    };
    metadata::save(record)?;
    record.origin = Origin::State;
    eprintln!("{note}");
    Ok(())
}

/// A directory without a usable record: adopt it only when the backend knows it there.
fn adopt(ctx: &Context, req: &Request, path: &Path) -> Result<Record> {
    let known = ctx.vcs.list()?.into_iter().find(|w| w.name == req.id);
    match known {
        Some(Registered { path: Some(at), .. }) if !same_dir(&at, path) => Err(foreign(req.id, &at)),
        Some(_) if path.join(".jj").exists() || path.join(".git").exists() => {
            let record = new_record(ctx, req, path, vec![]);
            metadata::save(&record)?;
            Ok(record)
        }
        _ => Err(CliError::failure(format!(
            "{} exists but is not a workspace the backend knows",
            path.display()
        ))
        .hint(format!(
            "its files may hold unrecorded edits: inspect them, then `agent-workspace clean --force {}`",
            req.id
        ))),
    }
}

fn foreign(id: &str, at: &Path) -> CliError {
    CliError::failure(format!(
        "a workspace named {id:?} already exists at {}, not created by agent-workspace",
        at.display()
    ))
    .hint("pick another id, or forget that workspace first")
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || fs::canonicalize(a)
            .ok()
            .zip(fs::canonicalize(b).ok())
            .is_some_and(|(a, b)| a == b)
}

fn create(ctx: &Context, req: &Request, path: &Path) -> Result<Opened> {
    let _repo_lock = lock::exclusive(&ctx.layout.repo_lock())?;
    create_locked(ctx, req, path, req.known_before)
}

/// Creates the workspace under the repository lock. `ask_first` lists the backend's
/// workspaces before adding; otherwise that is done only if the add fails.
fn create_locked(ctx: &Context, req: &Request, path: &Path, ask_first: bool) -> Result<Opened> {
    let mut base_change = req.base_change.map(str::to_string);
    let known = match ask_first {
        true => ctx.vcs.list()?.into_iter().find(|w| w.name == req.id),
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
                    eprintln!(
                        "Note: the directory of workspace {:?} was deleted; re-created it on top of change {change_id}, which keeps its edits",
                        req.id
                    );
                    base_change.get_or_insert(change_id);
                    vec![commit_id]
                }
                Kept::Branch { branch, .. } => {
                    eprintln!(
                        "Note: the directory of workspace {:?} was deleted; re-created it on branch {branch}, which keeps its commits",
                        req.id
                    );
                    ctx.vcs.resolve_base(req.base_change)?
                }
                Kept::Nothing | Kept::Unregistered => ctx.vcs.resolve_base(req.base_change)?,
            }
        }
        // jj's own default (the parents of the main workspace's working copy) needs no lookup.
        None if req.base_change.is_none() && ctx.repo.backend == Backend::Jj => vec![],
        None => ctx.vcs.resolve_base(req.base_change)?,
    };
    ensure_excluded(ctx)?;
    let mut record = new_record(ctx, req, path, base.clone());
    record.base_change = base_change;
    let created = match ctx
        .vcs
        .create(req.id, path, &base, req.base_change.is_some())
    {
        Ok(created) => created,
        // The name may be taken (by a workspace whose directory went away, or one made
        // elsewhere): ask the backend and go the way that knows about it.
        Err(_) if !ask_first && ctx.vcs.list()?.iter().any(|w| w.name == req.id) => {
            if fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
                remove_workspace_dir(&ctx.layout.dir, path)?;
            }
            return create_locked(ctx, req, path, true);
        }
        Err(err) => {
            // A failed add can leave a registered name and a half-made directory.
            roll_back(ctx, req.id, path, &Created::default());
            return Err(err);
        }
    };
    record.branch = created.branch.clone();
    record.base_envrc_sha256 =
        Some(crate::direnv::envrc_digest(path).unwrap_or_else(|| "none".into()));
    // The new working copy is the base revision's content: what its .envrc loads is trusted.
    record.envrc_loads_base = Some(crate::envrc_loads::current(path));
    let finished = match signals::received() {
        Some(sig) => Err(CliError::interrupted(
            sig,
            format!(
                "interrupted by signal {sig} while creating {}; removed it again",
                path.display()
            ),
        )
        .hint("run the same command again to create the workspace")),
        None => metadata::save(&record),
    };
    if let Err(err) = finished {
        roll_back(ctx, req.id, path, &created);
        return Err(err);
    }
    Ok(Opened {
        record,
        created: true,
    })
}

/// Undoes a creation: remove the directory we made, unregister it, and delete the branch
/// this call created.
fn roll_back(ctx: &Context, id: &str, path: &Path, created: &Created) {
    if fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        let _ = remove_workspace_dir(&ctx.layout.dir, path);
    }
    let _ = ctx.vcs.forget(id, path);
    let _ = crate::state::remove(path);
    if let (Some(branch), true) = (&created.branch, created.new_branch) {
        let _ = ctx.vcs.delete_branch(branch, true);
    }
}

fn new_record(ctx: &Context, req: &Request, path: &Path, base_commits: Vec<String>) -> Record {
    let now = metadata::now();
    Record {
        schema_version: metadata::SCHEMA_VERSION,
        workspace_id: req.id.to_string(),
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
        pid: None,
        pid_start: None,
        runs: vec![],
        envrc_loads_base: None,
        envrc_loads_allowed: Default::default(),
        extra: Default::default(),
        origin: Default::default(),
    }
}

const EXCLUDES: [&str; 3] = [
    "/.agent-workflow.json",
    "/.agent-workflow.json.*",
    "/.direnv/",
];

/// Keeps the record and direnv's cache out of every workspace's history, through the
/// repository's shared exclude file. Written before the first record exists.
fn ensure_excluded(ctx: &Context) -> Result<()> {
    let Some(file) = ctx.vcs.exclude_file() else {
        return Ok(());
    };
    let current = fs::read_to_string(&file).unwrap_or_default();
    let missing: Vec<&str> = EXCLUDES
        .iter()
        .copied()
        .filter(|line| !current.lines().any(|l| l.trim() == *line))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut text = current;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# agent-workspace: metadata and direnv cache of agent workspaces\n");
    for line in missing {
        text.push_str(line);
        text.push('\n');
    }
    if let Some(dir) = file.parent() {
        fs::create_dir_all(dir).map_err(|e| CliError::io("create", dir, &e))?;
    }
    fs::write(&file, text).map_err(|e| CliError::io("write", &file, &e))
}

/// Deletes a workspace directory, but only a real directory directly inside the real
/// directory `namespace_dir`; never follows a symlink.
pub fn remove_workspace_dir(namespace_dir: &Path, path: &Path) -> Result<()> {
    let name = match (path.parent(), path.file_name().and_then(|n| n.to_str())) {
        (Some(parent), Some(name)) if parent == namespace_dir => name,
        _ => {
            return Err(CliError::failure(format!(
                "{} is outside {}; refusing to delete it",
                path.display(),
                namespace_dir.display()
            ))
            .hint("agent-workspace only deletes workspaces inside its own namespace directory"))
        }
    };
    match crate::fsutil::remove_dir_checked(namespace_dir, name) {
        Err(
            crate::fsutil::FsError::Symlink { path: p }
            | crate::fsutil::FsError::NotADirectory { path: p },
        ) if p == path => Err(not_a_workspace(path)),
        other => Ok(other?),
    }
}

/// The workspace directories present in the namespace, with the type the directory listing
/// gave (so listing a thousand workspaces costs no stat each).
pub fn directories(namespace_dir: &Path) -> Vec<(String, PathBuf, Option<fs::FileType>)> {
    let Ok(entries) = fs::read_dir(namespace_dir) else {
        return vec![];
    };
    let mut found: Vec<_> = entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name().into_string().ok()?;
            crate::layout::validate_id(&name).ok()?;
            Some((name, entry.path(), entry.file_type().ok()))
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}
