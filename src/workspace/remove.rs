//! Removing a workspace: taking its lease (stopping a live run with --force), recording its
//! edits, keeping aside what no commit keeps, forgetting it and deleting its directory.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::remove_workspace_dir;
use crate::aside::{self, Aside, Policy};
use crate::context::Context;
use crate::error::{CliError, Result};
use crate::inventory::{Entry, Problem};
use crate::liveness;
use crate::lock::{self, Lock};
use crate::metadata::Record;
use crate::vcs::{Commit, Kept};

/// The directory under the namespace that holds kept-aside files.
pub const KEPT_DIR: &str = ".kept";

/// How to remove: what the user allowed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Stop a live run first; delete a directory the backend no longer knows; delete an
    /// unmerged branch when asked to delete branches.
    pub force: bool,
    /// git: delete the workspace's branch too.
    pub delete_branch: bool,
    /// Delete the files no commit keeps instead of keeping them aside.
    pub discard_untracked: bool,
    /// Keep aside disposable build output too (`gc`, which never discards a file).
    pub keep_disposable: bool,
}

/// What a removal kept, and what became of the workspace's branch when asked to delete it.
pub struct Removal {
    pub kept: Kept,
    /// What became of the files no commit keeps.
    pub aside: Aside,
    /// Further commits that hold the workspace's work.
    pub commits: Vec<Commit>,
    /// `Some(Ok)` deleted, `Some(Err(why))` kept, `None` not asked.
    pub branch_deleted: Option<std::result::Result<(), String>>,
}

/// Removes one workspace. `lease` is the lease when the caller already holds it.
pub fn remove(
    ctx: &Context,
    entry: &Entry,
    args: &Options,
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
            return Err(super::unregistered(&entry.id, &entry.path));
        }
        // No commit keeps any of its files: every one is kept aside (or discarded as asked).
        let aside = match has_dir {
            true => set_aside(ctx, entry, &HashSet::new(), args)?,
            false => Aside::default(),
        };
        remove_workspace_dir(&ctx.layout.dir, &entry.path)?;
        lease.remove();
        crate::state::remove(&entry.path)?;
        return Ok(Removal {
            kept,
            aside,
            commits: vec![],
            branch_deleted: None,
        });
    }
    let base = entry.record.as_ref().map(|r| r.base_commits.as_slice());
    let (commits, tracked) = ctx.vcs.work_commits_and_tracked(
        name,
        has_dir.then_some(entry.path.as_path()),
        base.unwrap_or_default(),
        &kept,
    );
    // Naming them is a report only: the repository keeps them whether or not this works.
    let commits = commits.unwrap_or_default();
    let aside = match has_dir {
        true => set_aside(ctx, entry, &tracked?.into_iter().collect(), args)?,
        false => Aside::default(),
    };
    ctx.vcs
        .forget_removing(name, &entry.path, || match has_dir {
            true => remove_workspace_dir(&ctx.layout.dir, &entry.path),
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
                .map_err(|e| match CliError::from(e) {
                    CliError {
                        message,
                        hint: Some(hint),
                        ..
                    } => format!("{message}; {hint}"),
                    e => e.message,
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

/// Finishes or rolls back what interrupted commands left, before a command reads the
/// workspaces: a take from the pool (rolled back). Returns what it did, in words.
pub fn settle_interrupted(ctx: &Context) -> Result<Vec<String>> {
    super::pool::settle(ctx)?;
    Ok(vec![])
}

/// Keeps aside (or discards, as the policy says) the files of `entry` that no commit keeps.
/// `name` is the one the backend knows the workspace by.
/// `tracked` holds the files a commit keeps; everything else is kept aside or discarded.
fn set_aside(
    ctx: &Context,
    entry: &Entry,
    tracked: &HashSet<PathBuf>,
    args: &Options,
) -> Result<Aside> {
    let dest = aside::fresh_dest(&ctx.layout.dir.join(KEPT_DIR), &entry.id);
    let policy = policy(ctx, args);
    aside::set_aside(&entry.path, tracked, &dest, &policy).map_err(|err| {
        CliError::failure(format!("did not remove workspace {:?}: {err}", entry.id)).hint(format!(
            "files already kept aside are in {}; free the problem, then clean again",
            dest.display()
        ))
    })
}

fn policy(ctx: &Context, args: &Options) -> Policy {
    match args.keep_disposable && !args.discard_untracked {
        true => Policy::keep_all(),
        false => Policy::new(args.discard_untracked, ctx.config.disposable.as_deref()),
    }
}

/// What removing `entry` would keep aside or discard, without recording or moving anything:
/// counted from the files the backend ignores (`.gitignore` at any depth, `info/exclude`)
/// and nested repositories. A new file larger than jj's `snapshot.max-new-file-size` is
/// not counted, though the removal keeps it aside too.
pub fn preview(ctx: &Context, entry: &Entry, args: &Options) -> Result<Aside> {
    if std::fs::symlink_metadata(&entry.path).is_err() {
        return Ok(Aside::default());
    }
    let ignored = match &ctx.vcs {
        crate::vcs::Vcs::Jj(jj) => jj.ignored_files(&entry.path),
        crate::vcs::Vcs::Git(git) => git.ignored_files(&entry.path),
    };
    let ignored: HashSet<PathBuf> = ignored.map_err(CliError::from)?.into_iter().collect();
    let held = |rel: &std::path::Path| !ignored.contains(rel);
    aside::survey(&entry.path, &held, &policy(ctx, args)).map_err(|err| {
        CliError::failure(format!(
            "could not look into workspace {:?}: {err}",
            entry.id
        ))
    })
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
    let holder = entry.record.as_deref().and_then(live_holder);
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
