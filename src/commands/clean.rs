//! `clean`: record a workspace's edits, forget it and remove its directory; one by one or in
//! bulk by status and age.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use clap::Args;
use serde_json::json;

use crate::aside::{self, Aside, Policy};
use crate::cli::GlobalArgs;
use crate::context::Context;
use crate::error::{CliError, Result};
use crate::inventory::{self, Entry, Problem};
use crate::layout::validate_id;
use crate::liveness;
use crate::lock::{self, Lock};
use crate::metadata::{self, Record};
use crate::output;
use crate::vcs::{Commit, Kept};
use crate::workspace;

mod render;

use render::{describe, removal_json};

/// The directory under the namespace that holds kept-aside files.
const KEPT_DIR: &str = ".kept";

/// Remove workspaces, keeping their edits in the repository.
#[derive(Debug, Args)]
pub struct CleanArgs {
    /// Workspaces to remove
    pub ids: Vec<String>,
    /// Select every workspace of this repository
    #[arg(long, conflicts_with = "ids")]
    pub all: bool,
    /// Select workspaces with this status (repeatable)
    #[arg(long, value_name = "STATUS", conflicts_with = "ids",
          value_parser = ["done", "error", "crashed", "interrupted", "idle"])]
    pub status: Vec<String>,
    /// Select workspaces not updated for this long (e.g. 7d, 12h, 30m)
    #[arg(long, value_name = "DURATION", conflicts_with = "ids", value_parser = humantime::parse_duration)]
    pub older_than: Option<Duration>,
    /// Show what would be removed, remove nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Print JSON (schema_version 1) instead of text
    #[arg(long)]
    pub json: bool,
    /// Stop a live run first; remove directories the backend no longer knows; with
    /// --delete-branch, delete unmerged branches too
    #[arg(long)]
    pub force: bool,
    /// git backend: also delete the workspace's branch when it is fully merged
    #[arg(long)]
    pub delete_branch: bool,
    /// Delete the files no commit keeps instead of keeping them aside in <namespace>/.kept/
    #[arg(long)]
    pub discard_untracked: bool,
    /// Only delete the kept-aside directories (<namespace>/.kept/<id>-<time>) of the named
    /// workspaces, or of every workspace with --all; remove no workspace
    #[arg(long, conflicts_with_all = ["status", "older_than", "force", "delete_branch", "discard_untracked"])]
    pub purge_kept: bool,
}

/// What happened to one selected workspace.
enum Outcome {
    Removed(Removal),
    WouldRemove,
    Skipped(String),
    Failed(CliError),
}

pub fn cmd_clean(global: &GlobalArgs, args: &CleanArgs) -> Result<i32> {
    for id in &args.ids {
        validate_id(id)?;
    }
    let bulk = args.all || !args.status.is_empty() || args.older_than.is_some();
    if args.ids.is_empty() && !bulk {
        return Err(CliError::usage(
            "name the workspaces to clean, or select them with --all, --status or --older-than",
        )
        .hint("e.g. `agent-workspace clean w1` or `agent-workspace clean --all --status done`"));
    }
    let ctx = Context::open(global)?;
    if args.purge_kept {
        return purge_kept(&ctx, args);
    }
    for id in &args.ids {
        ctx.vcs.check_id(id)?;
    }
    let selected: Vec<(String, Option<Entry>)> = if bulk {
        let (entries, warning) = inventory::all(&ctx);
        if let Some(err) = warning {
            return Err(err);
        }
        entries
            .into_iter()
            .filter(|e| matches(e, args))
            .map(|e| (e.id.clone(), Some(e)))
            .collect()
    } else {
        // A named workspace is read from its files and its registration checked (by name and
        // by recorded root): a directory whose registration is unknown is never removed as if
        // the backend had recorded its edits.
        args.ids
            .iter()
            .map(|id| match inventory::one(&ctx, id) {
                (_, Some(err)) => Err(err),
                (entry, None) => Ok((id.clone(), entry)),
            })
            .collect::<Result<_>>()?
    };
    let mut results = Vec::new();
    for (id, entry) in selected {
        let outcome = match entry {
            None => Outcome::Failed(workspace::unknown(&id, &ctx.layout.workspace(&id))),
            Some(Entry {
                problem: Some(Problem::Mismatch(m)),
                ..
            }) => Outcome::Failed(m.error(&id)),
            // Named: the same error the removal itself gives for an unregistered directory.
            Some(Entry {
                problem: Some(Problem::Unregistered),
                path,
                ..
            }) if !bulk && !args.force => Outcome::Failed(unregistered(&id, &path)),
            // Bulk: a workspace another process holds without a live run (one being created or
            // cleaned) is skipped like a live one; --force stops runs, never a creation.
            Some(entry)
                if bulk && !entry.is_live() && lock::is_held(&ctx.layout.lease(&id)) =>
            {
                Outcome::Skipped(
                    "another agent-workspace process holds it (creating, running or cleaning it); try again once it is done"
                        .into(),
                )
            }
            Some(entry) if args.dry_run => match refusal(&entry, args.force) {
                Some(reason) => Outcome::Skipped(reason),
                None => Outcome::WouldRemove,
            },
            Some(entry) => match refusal(&entry, args.force) {
                Some(reason) => Outcome::Skipped(reason),
                None => match clean_entry(&ctx, &entry, args, None) {
                    Ok(removal) => Outcome::Removed(removal),
                    Err(err) => Outcome::Failed(err),
                },
            },
        };
        let path = ctx.layout.workspace(&id);
        results.push((id, path, outcome));
    }
    report(&results, args)?;
    let failed = results.iter().any(|(_, _, o)| match o {
        Outcome::Failed(_) => true,
        Outcome::Skipped(_) => !bulk,
        _ => false,
    });
    Ok(i32::from(failed))
}

fn matches(entry: &Entry, args: &CleanArgs) -> bool {
    let status_ok = args.status.is_empty() || args.status.iter().any(|s| s == entry.status());
    let age_ok = args.older_than.is_none_or(|age| {
        let updated = entry.updated_at().and_then(metadata::parse_time);
        let updated = updated.or_else(|| {
            std::fs::metadata(&entry.path)
                .and_then(|m| m.modified())
                .ok()
        });
        updated.is_some_and(|t| SystemTime::now().duration_since(t).unwrap_or_default() >= age)
    });
    status_ok && age_ok
}

fn unregistered(id: &str, path: &Path) -> CliError {
    CliError::failure(format!(
        "the backend no longer knows workspace {id:?}, so its files may hold edits no commit has"
    ))
    .hint(format!(
        "inspect {}, then pass --force to delete it",
        path.display()
    ))
}

/// Why a workspace must not be removed as asked, if it must not.
fn refusal(entry: &Entry, force: bool) -> Option<String> {
    match &entry.problem {
        Some(Problem::NotADirectory) => {
            return Some(format!("{} is a symlink or file, not a workspace; not touching it", entry.path.display()))
        }
        Some(Problem::NewerSchema(v)) => {
            return Some(format!("its record is schema {v}, from a newer agent-workspace"))
        }
        Some(Problem::Unregistered) if !force => {
            return Some("the backend no longer knows it, so its files may hold edits no commit has; inspect them, then pass --force".into())
        }
        _ => {}
    }
    match &entry.record {
        Some(r) if entry.is_live() && !force => Some(format!(
            "a run is live (pid {}, since {}); pass --force to stop it first",
            r.pid.unwrap_or(0),
            r.started_at.as_deref().unwrap_or("?")
        )),
        _ => None,
    }
}

/// What a removal kept, and what became of the workspace's branch when asked to delete it.
pub struct Removal {
    kept: Kept,
    /// What became of the files no commit keeps.
    aside: Aside,
    /// Further commits that hold the workspace's work.
    commits: Vec<Commit>,
    /// `Some(Ok)` deleted, `Some(Err(why))` kept, `None` not asked.
    branch_deleted: Option<std::result::Result<(), String>>,
}

/// Removes one workspace. `lease` is the lease when the caller already holds it.
fn clean_entry(
    ctx: &Context,
    entry: &Entry,
    args: &CleanArgs,
    lease: Option<Lock>,
) -> Result<Removal> {
    let lease = match lease {
        Some(lease) => lease,
        None => take_lease(ctx, entry, args.force)?,
    };
    let _repo = lock::exclusive(&ctx.layout.repo_lock())?;
    crate::state::check(&entry.path)?;
    let has_dir = std::fs::symlink_metadata(&entry.path).is_ok();
    // The name the backend knows it by (another one after `jj workspace rename`).
    let name = match &entry.problem {
        Some(Problem::Renamed(name)) => name.as_str(),
        _ => entry.id.as_str(),
    };
    let kept = match entry.problem {
        Some(Problem::Unregistered) => Kept::Unregistered,
        _ => ctx
            .vcs
            .keep_edits(name, has_dir.then_some(entry.path.as_path()))?,
    };
    if kept == Kept::Unregistered {
        if !args.force {
            return Err(CliError::failure(format!(
                "the backend no longer knows workspace {:?}, so its files may hold edits no commit has",
                entry.id
            ))
            .hint(format!("inspect {}, then pass --force to delete it", entry.path.display())));
        }
        workspace::remove_workspace_dir(&ctx.layout.dir, &entry.path)?;
        lease.remove();
        crate::state::remove(&entry.path)?;
        return Ok(Removal {
            kept,
            aside: Aside::default(),
            commits: vec![],
            branch_deleted: None,
        });
    }
    let base = entry.record.as_ref().map(|r| r.base_commits.as_slice());
    // Naming them is a report only: the repository keeps them whether or not this works.
    let commits = ctx
        .vcs
        .work_commits(name, base.unwrap_or_default(), &kept)
        .unwrap_or_default();
    let aside = match has_dir {
        true => set_aside(ctx, entry, name, args)?,
        false => Aside::default(),
    };
    ctx.vcs
        .forget_removing(name, &entry.path, || match has_dir {
            true => workspace::remove_workspace_dir(&ctx.layout.dir, &entry.path),
            false => Ok(()),
        })?;
    // The workspace is gone, and with it the lease file: a lease file without a directory
    // now only means a workspace deleted by hand (see `inventory::all`).
    lease.remove();
    crate::state::remove(&entry.path)?;
    let branch_deleted = match (&kept, args.delete_branch) {
        (Kept::Branch { branch, .. }, true) => Some(
            ctx.vcs
                .delete_branch(branch, args.force)
                .map_err(|e| match &e.hint {
                    Some(hint) => format!("{}; {hint}", e.message),
                    None => e.message,
                }),
        ),
        _ => None,
    };
    Ok(Removal {
        kept,
        aside,
        commits,
        branch_deleted,
    })
}

/// Keeps aside (or discards, as the policy says) the files of `entry` that no commit keeps.
/// `name` is the one the backend knows the workspace by.
fn set_aside(ctx: &Context, entry: &Entry, name: &str, args: &CleanArgs) -> Result<Aside> {
    let tracked: HashSet<PathBuf> = ctx.vcs.tracked(name, &entry.path)?.into_iter().collect();
    let dest = aside::fresh_dest(&ctx.layout.dir.join(KEPT_DIR), &entry.id);
    let policy = Policy::from_env(args.discard_untracked);
    aside::set_aside(&entry.path, &tracked, &dest, &policy).map_err(|err| {
        CliError::failure(format!("did not remove workspace {:?}: {err}", entry.id)).hint(format!(
            "files already kept aside are in {}; free the problem, then clean again",
            dest.display()
        ))
    })
}

/// `clean --purge-kept`: deletes kept-aside directories.
fn purge_kept(ctx: &Context, args: &CleanArgs) -> Result<i32> {
    let root = ctx.layout.dir.join(KEPT_DIR);
    let io = |e: std::io::Error| {
        CliError::failure(format!("could not purge {}: {e}", root.display()))
            .hint("check the directory's permissions")
    };
    if std::fs::symlink_metadata(&root).is_ok_and(|m| !m.is_dir()) {
        return Err(
            CliError::failure(format!("{} is not a directory", root.display()))
                .hint("remove it by hand; agent-workspace does not follow symlinks"),
        );
    }
    let mut dirs = Vec::new();
    match args.all {
        true => dirs = aside::kept_dirs(&root, None).map_err(io)?,
        false => {
            for id in &args.ids {
                dirs.extend(aside::kept_dirs(&root, Some(id)).map_err(io)?);
            }
        }
    }
    let mut text = String::new();
    for dir in &dirs {
        if !args.dry_run {
            aside::purge(dir).map_err(io)?;
        }
        let verb = if args.dry_run {
            "Would purge"
        } else {
            "Purged"
        };
        text += &format!("{verb} {}\n", dir.display());
    }
    if args.json {
        let doc = json!({"schema_version": 1, "dry_run": args.dry_run, "purged": dirs});
        text = format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        );
    } else if dirs.is_empty() {
        eprintln!("No kept-aside directory matched");
    }
    output::print(&text)?;
    Ok(0)
}

fn take_lease(ctx: &Context, entry: &Entry, force: bool) -> Result<Lock> {
    let path = ctx.layout.lease(&entry.id);
    if let Some(lease) = lock::try_exclusive(&path)? {
        return Ok(lease);
    }
    let busy = || {
        CliError::failure(format!(
            "workspace {:?} is in use by another agent-workspace process",
            entry.id
        ))
    };
    if !force {
        return Err(busy().hint("pass --force to stop its run first"));
    }
    let holder = entry.record.as_ref().and_then(live_holder);
    for (signal, wait) in [(libc::SIGTERM, 10), (libc::SIGKILL, 5)] {
        if let Some(pid) = holder {
            // SAFETY: kill has no memory-safety preconditions; pid was checked to be the
            // recorded supervisor (same start time), so it is not a reused pid.
            unsafe { libc::kill(pid as libc::pid_t, signal) };
        }
        let deadline = Instant::now() + Duration::from_secs(wait);
        while Instant::now() < deadline {
            if let Some(lease) = lock::try_exclusive(&path)? {
                return Ok(lease);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    Err(busy().hint("its run did not stop; stop it by hand and try again"))
}

fn live_holder(record: &Record) -> Option<u32> {
    record
        .pid
        .filter(|pid| liveness::is_alive(*pid, record.pid_start))
}

/// `run --cleanup`: remove the workspace whose lease the caller holds, after a success.
pub fn remove_after_run(ctx: &Context, id: &str, lease: Lock) -> Result<()> {
    let entry = inventory::local(ctx, id)
        .ok_or_else(|| workspace::unknown(id, &ctx.layout.workspace(id)))?;
    let args = CleanArgs {
        ids: vec![id.to_string()],
        all: false,
        status: vec![],
        older_than: None,
        dry_run: false,
        json: false,
        force: false,
        delete_branch: false,
        discard_untracked: false,
        purge_kept: false,
    };
    let removal = clean_entry(ctx, &entry, &args, Some(lease))?;
    eprintln!("{}", describe(id, &entry.path, &removal));
    Ok(())
}

fn report(results: &[(String, std::path::PathBuf, Outcome)], args: &CleanArgs) -> Result<()> {
    if args.json {
        let (mut removed, mut skipped, mut failed) = (vec![], vec![], vec![]);
        for (id, path, outcome) in results {
            match outcome {
                Outcome::Removed(removal) => removed.push(removal_json(id, path, Some(removal))),
                Outcome::WouldRemove => removed.push(removal_json(id, path, None)),
                Outcome::Skipped(reason) => {
                    skipped.push(json!({"workspace_id": id, "reason": reason}))
                }
                Outcome::Failed(err) => {
                    failed.push(json!({"workspace_id": id, "error": err.to_json()}))
                }
            }
        }
        let doc = json!({"schema_version": 1, "dry_run": args.dry_run, "removed": removed, "skipped": skipped, "failed": failed});
        return output::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        ));
    }
    let mut text = String::new();
    for (id, path, outcome) in results {
        match outcome {
            Outcome::Removed(removal) => text += &format!("{}\n", describe(id, path, removal)),
            Outcome::WouldRemove => text += &format!("Would remove {id} ({})\n", path.display()),
            Outcome::Skipped(reason) => eprintln!("Skipped {id}: {reason}"),
            Outcome::Failed(err) => eprintln!("{err}"),
        }
    }
    if results.is_empty() {
        eprintln!("No workspace matched");
    }
    output::print(&text)
}
