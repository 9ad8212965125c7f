//! Removing a workspace: taking its lease (stopping a live run with --force), recording its
//! edits, keeping aside what no commit keeps, forgetting it and deleting its directory.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::remove_workspace_dir;
use crate::error::{CliError, Result};
use crate::exec::liveness;
use crate::store::aside::{self, Aside, Policy};
use crate::store::layout::WorkspaceId;
use crate::store::lock::{self, Lock};
use crate::store::metadata::Record;
use crate::vcs::{Commit, Kept, KeptLink};
use crate::workspace::context::Context;
use crate::workspace::error::{CleanError, WorkspaceError};
use crate::workspace::inventory::{Entry, Problem};
use serde::{Deserialize, Serialize};

pub(crate) use crate::store::aside::KEPT_DIR;

/// How to remove: what the user allowed.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options {
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
pub(crate) struct Removal {
    pub kept: Kept,
    /// What became of the files no commit keeps.
    pub aside: Aside,
    /// Further commits that hold the workspace's work.
    pub commits: Vec<Commit>,
    /// git: the commits its gitlinks name that were fetched into the user's repository (or
    /// found in none) before its git area went.
    pub gitlinks: Vec<KeptLink>,
    /// `Some(Ok)` deleted, `Some(Err(why))` kept, `None` not asked.
    pub branch_deleted: Option<std::result::Result<(), crate::vcs::VcsError>>,
    /// Where an earlier, interrupted removal of the workspace kept files aside.
    pub earlier_aside: Option<PathBuf>,
    /// The workspace's own store (sandboxed runs), kept aside because it holds work that
    /// did not come back.
    pub own_store_kept: Option<super::own_store::KeptStore>,
    /// What a sandboxed run left that jj or git would follow, moved aside before either ran
    /// there (where each now is).
    pub moved_aside: Vec<crate::store::nested_aside::MovedAside>,
    /// Directories nested deeper than a path can name, kept aside whole before anything was
    /// recorded: where each was (relative to the workspace) and where it is now.
    pub too_deep: Vec<(PathBuf, PathBuf)>,
    /// What became of its run logs; `None` when it had none.
    pub run_logs: Option<RunLogs>,
}

/// A workspace's run logs (`<namespace>/.logs/<id>/`: the whole output of each run the MCP
/// server started), which go with the workspace.
#[derive(Debug)]
pub(crate) struct RunLogs {
    pub dir: PathBuf,
    /// How many logs were removed (or would be, in a dry run).
    pub files: u64,
    /// Why some stay (the directory is then left), if they do.
    pub left: Option<String>,
}

/// The run logs of workspace `id`, counted (`None` when it has none).
pub(crate) fn run_logs(ctx: &Context, id: &str) -> Option<RunLogs> {
    let dir = ctx.layout.run_logs(id);
    let files = std::fs::read_dir(&dir).ok()?.flatten().count() as u64;
    Some(RunLogs {
        dir,
        files,
        left: None,
    })
}

/// Removes the run logs of workspace `id` written before `before` (a log a new run of the
/// same id opened since stays, with its directory); a log that cannot go is said, not fatal.
fn remove_run_logs(ctx: &Context, id: &str, before: std::time::SystemTime) -> Option<RunLogs> {
    let dir = ctx.layout.run_logs(id);
    // Never followed: a symlink in its place is left alone (and said).
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    let mut logs = RunLogs {
        dir: dir.clone(),
        files: 0,
        left: None,
    };
    if !meta.is_dir() {
        logs.left = Some("it is not a directory".into());
        return Some(logs);
    }
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) => {
            logs.left = Some(e.to_string());
            return Some(logs);
        }
    };
    for entry in entries.flatten() {
        let newer = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t >= before);
        if newer {
            logs.left = Some("a run started since writes a log there".into());
            continue;
        }
        match crate::store::fsutil::remove_file(&entry.path()) {
            Ok(()) => logs.files += 1,
            Err(e) => logs.left = Some(e.to_string()),
        }
    }
    if logs.left.is_none() {
        if let Err(e) = std::fs::remove_dir(&dir) {
            logs.left = Some(e.to_string());
        }
    }
    Some(logs)
}

/// Removes one workspace, and its run logs once it is gone. `lease` is the lease when the
/// caller already holds it.
pub(crate) fn remove(
    ctx: &Context,
    entry: &Entry,
    args: &Options,
    lease: Option<Lock>,
) -> Result<Removal> {
    let began = std::time::SystemTime::now();
    let mut removal = remove_workspace(ctx, entry, args, lease)?;
    removal.run_logs = remove_run_logs(ctx, &entry.id, began);
    // A cache entry (a new workspace of the same id could never match it: other inodes).
    crate::store::kept_env::forget(&ctx.layout.kept_env(entry.id.as_str()));
    Ok(removal)
}

fn remove_workspace(
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
    crate::store::state::check(&entry.path)?;
    let has_dir = std::fs::symlink_metadata(&entry.path).is_ok();
    // The name the backend knows it by (another one after `jj workspace rename`).
    let name = match &entry.problem {
        Some(Problem::Renamed(name)) => &backend_name(entry, name)?,
        _ => &entry.id,
    };
    // The backend asks for room before it records anything (below); a workspace it no
    // longer knows, whose files are kept aside, is asked here.
    if has_dir && matches!(entry.problem, Some(Problem::Unregistered)) {
        room_for(ctx, ctx.vcs.bytes_to_record(&entry.path)).map_err(|e| no_room(entry, e))?;
    }
    // What a killed sandboxed run left in the workspace's own store, brought back while the
    // workspace is still there to receive it.
    let confined = entry.record.as_ref().is_some_and(|r| r.confined);
    let (own_store, moved_aside) = super::own_store::settle(ctx, &entry.id, &entry.path, confined);
    let too_deep = match has_dir {
        true => keep_too_deep(ctx, entry, args.force)?,
        false => vec![],
    };
    let base = entry.record.as_ref().map(|r| r.base_commits.as_slice());
    let (kept, listed) = match entry.problem {
        Some(Problem::Unregistered) => (Kept::Unregistered, None),
        _ => ctx
            .vcs
            .keep_edits_listing(
                name,
                has_dir.then_some(entry.path.as_path()),
                base.unwrap_or_default(),
                &|bytes| room_for(ctx, bytes),
            )
            .map_err(|e| match e {
                crate::vcs::VcsError::NoRoom(e) => no_room(entry, e),
                e => CleanError::Vcs(e).into(),
            })?,
    };
    let journal = Journal::read(ctx, &entry.id);
    if kept == Kept::Unregistered {
        if let Some(journal) = journal {
            // Forgotten by a removal a kill interrupted: finish it.
            return journal.finish(ctx, entry, name, has_dir, lease);
        }
        if !args.force {
            return Err(super::unregistered(&entry.id, &entry.path));
        }
        // No commit keeps any of its files: every one is kept aside (or discarded as asked).
        let dest = aside::fresh_dest(&ctx.layout.dir.join(KEPT_DIR), &entry.id);
        let aside = match has_dir {
            true => set_aside(ctx, entry, &HashSet::new(), &dest, args)?,
            false => Aside::default(),
        };
        remove_workspace_dir(&ctx.layout.dir, &entry.path)?;
        lease.remove();
        crate::store::state::remove(&entry.path)?;
        return Ok(Removal {
            kept,
            aside,
            commits: vec![],
            gitlinks: vec![],
            branch_deleted: None,
            earlier_aside: None,
            own_store_kept: super::own_store::remove(ctx, &entry.id, Some(own_store)),
            moved_aside: moved_aside.clone(),
            too_deep,
            run_logs: None,
        });
    }
    let (commits, tracked) = match listed {
        Some((commits, tracked)) => (Ok(commits), Ok(tracked)),
        None => ctx.vcs.work_commits_and_tracked(
            name,
            has_dir.then_some(entry.path.as_path()),
            base.unwrap_or_default(),
            &kept,
        ),
    };
    // Naming them is a report only: the repository keeps them whether or not this works.
    let commits = commits.unwrap_or_default();
    let tracked = tracked?;
    // The commits its submodules and nested repositories hold, in the user's repository
    // before the worktree's git area (where they may be the only copy) is removed.
    let gitlinks = match has_dir {
        true => ctx
            .vcs
            .keep_gitlinks(&entry.id, &entry.path, &kept, base.unwrap_or_default())?,
        false => vec![],
    };
    // The journal, before anything is moved or forgotten: a kill from here on is finished
    // by the next command (see `settle_interrupted`), never left for `--force`.
    let dest = aside::fresh_dest(&ctx.layout.dir.join(KEPT_DIR), &entry.id);
    let earlier_aside = journal
        .map(|j| j.dest)
        .filter(|d| std::fs::symlink_metadata(d).is_ok());
    Journal {
        dest: dest.clone(),
        kept: KeptRecord::from(&kept),
        discard_untracked: args.discard_untracked,
        keep_disposable: args.keep_disposable,
    }
    .write(ctx, &entry.id)?;
    let aside = match has_dir {
        true => set_aside(ctx, entry, &tracked.into_iter().collect(), &dest, args)?,
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
    crate::store::state::remove(&entry.path)?;
    Journal::remove(ctx, &entry.id);
    let branch_deleted = match (&kept, args.delete_branch) {
        (Kept::Branch { branch, .. }, true) => Some(ctx.vcs.delete_branch(branch, args.force)),
        _ => None,
    };
    Ok(Removal {
        kept,
        aside,
        commits,
        gitlinks,
        branch_deleted,
        earlier_aside,
        own_store_kept: super::own_store::remove(ctx, &entry.id, Some(own_store)),
        moved_aside,
        too_deep,
        run_logs: None,
    })
}

/// The directories of `entry` nested deeper than a path can name, which neither jj nor git
/// can read: refused unless `force`, then each moved whole into a new directory of the
/// namespace's `.kept/` (as `deep-1`, `deep-2`, ...); returns where each was and is now. A
/// walk that fails leaves the question to the backend, as before.
fn keep_too_deep(ctx: &Context, entry: &Entry, force: bool) -> Result<Vec<(PathBuf, PathBuf)>> {
    let cuts = crate::store::deep::too_deep(&entry.path).unwrap_or_default();
    let Some(first) = cuts.first() else {
        return Ok(vec![]);
    };
    if !force {
        return Err(CleanError::TooDeep {
            id: entry.id.clone(),
            first: crate::store::deep::words(first),
        }
        .into());
    }
    let dest = aside::fresh_dest(&ctx.layout.dir.join(KEPT_DIR), &entry.id);
    let not_kept = |source| CleanError::TooDeepNotKept {
        id: entry.id.clone(),
        source,
    };
    std::fs::create_dir_all(&dest).map_err(not_kept)?;
    let mut moved = vec![];
    for (n, cut) in cuts.iter().enumerate() {
        let to = dest.join(format!("deep-{}", n + 1));
        std::fs::rename(entry.path.join(cut), &to).map_err(not_kept)?;
        moved.push((cut.clone(), to));
    }
    Ok(moved)
}

/// A removal that a kill interrupted and the next command finished.
pub(crate) struct Finished {
    pub id: WorkspaceId,
    pub path: PathBuf,
    /// What it kept, or why it could not be finished now.
    pub removal: Result<Removal>,
}

/// Finishes or rolls back what interrupted commands left, before a command reads the
/// workspaces: a take from the pool (rolled back, it holds no one's work) and a removal
/// (finished, keeping aside every file changed since it began). Skips what another process
/// holds (a take under way holds the repository lock, a removal the workspace's lease).
pub(crate) fn settle_interrupted(ctx: &Context) -> Result<Vec<Finished>> {
    super::pool::settle(ctx)?;
    super::create::settle(ctx)?;
    let mut finished = vec![];
    for id in Journal::ids(ctx) {
        let Some(lease) = lock::try_exclusive(&ctx.layout.lease(&id))? else {
            continue;
        };
        let path = ctx.layout.workspace(&id);
        let removal = match crate::workspace::inventory::one(ctx, &id) {
            (_, Some(err)) => Err(err),
            (Some(entry), None) => {
                let journal = Journal::read(ctx, &id);
                let args = Options {
                    discard_untracked: journal.as_ref().is_some_and(|j| j.discard_untracked),
                    keep_disposable: journal.as_ref().is_none_or(|j| j.keep_disposable),
                    ..Options::default()
                };
                remove(ctx, &entry, &args, Some(lease))
            }
            // Nothing of it is left but the journal (and the state the journal outlived).
            (None, None) => {
                let journal = Journal::read(ctx, &id);
                lease.remove();
                let _ = crate::store::state::remove(&path);
                Journal::remove(ctx, &id);
                Ok(Removal {
                    kept: journal.as_ref().map_or(Kept::Nothing, |j| j.kept.to_kept()),
                    aside: Aside::default(),
                    commits: vec![],
                    gitlinks: vec![],
                    branch_deleted: None,
                    earlier_aside: journal
                        .map(|j| j.dest)
                        .filter(|d| std::fs::symlink_metadata(d).is_ok()),
                    own_store_kept: super::own_store::remove(ctx, &id, None),
                    moved_aside: vec![],
                    too_deep: vec![],
                    run_logs: remove_run_logs(ctx, &id, std::time::SystemTime::now()),
                })
            }
        };
        finished.push(Finished { id, path, removal });
    }
    Ok(finished)
}

/// Whether a removal of `id` was interrupted (its journal is left).
pub(crate) fn interrupted(ctx: &Context, id: &WorkspaceId) -> bool {
    std::fs::symlink_metadata(Journal::path(ctx, id)).is_ok()
}

/// The journal of a removal, `<namespace>/.state/<id>.removing`: written once the edits are
/// recorded, before any file is moved aside or the workspace forgotten; removed last.
#[derive(Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
struct Journal {
    /// Where the removal keeps aside the files no commit holds.
    dest: PathBuf,
    kept: KeptRecord,
    discard_untracked: bool,
    keep_disposable: bool,
}

/// What keeps the workspace's edits, as the journal records it.
#[derive(Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
struct KeptRecord {
    change_id: Option<String>,
    commit_id: Option<String>,
    branch: Option<String>,
    committed: bool,
}

impl From<&Kept> for KeptRecord {
    fn from(kept: &Kept) -> Self {
        let mut record = KeptRecord {
            change_id: None,
            commit_id: None,
            branch: None,
            committed: false,
        };
        match kept {
            Kept::Change {
                change_id,
                commit_id,
            } => {
                record.change_id = Some(change_id.clone());
                record.commit_id = Some(commit_id.clone());
            }
            Kept::Branch {
                branch,
                commit,
                committed,
                ..
            } => {
                record.branch = Some(branch.clone());
                record.commit_id = Some(commit.clone());
                record.committed = *committed;
            }
            Kept::Nothing | Kept::Unregistered => {}
        }
        record
    }
}

impl KeptRecord {
    fn to_kept(&self) -> Kept {
        match (&self.change_id, &self.branch, &self.commit_id) {
            (Some(change_id), _, Some(commit_id)) => Kept::Change {
                change_id: change_id.clone(),
                commit_id: commit_id.clone(),
            },
            (None, Some(branch), commit) => Kept::Branch {
                branch: branch.clone(),
                commit: commit.clone().unwrap_or_default(),
                committed: self.committed,
                head: None,
            },
            _ => Kept::Nothing,
        }
    }
}

pub(super) const JOURNAL_SUFFIX: &str = ".removing";

impl Journal {
    fn path(ctx: &Context, id: &WorkspaceId) -> PathBuf {
        ctx.layout
            .dir
            .join(crate::store::state::DIR_NAME)
            .join(format!("{id}{JOURNAL_SUFFIX}"))
    }

    /// The ids whose removal journal is left.
    fn ids(ctx: &Context) -> Vec<WorkspaceId> {
        let state = ctx.layout.dir.join(crate::store::state::DIR_NAME);
        let mut ids = crate::store::fsutil::names_where(&state, |name| {
            WorkspaceId::parse(name.strip_suffix(JOURNAL_SUFFIX)?).ok()
        });
        ids.sort();
        ids
    }

    fn read(ctx: &Context, id: &WorkspaceId) -> Option<Journal> {
        let file = crate::store::fsutil::open_existing_nofollow(&Journal::path(ctx, id)).ok()?;
        serde_json::from_reader(std::io::BufReader::new(file)).ok()
    }

    fn write(&self, ctx: &Context, id: &WorkspaceId) -> Result<()> {
        let text = serde_json::to_vec(self).map_err(|source| CleanError::Journal {
            id: id.clone(),
            source,
        })?;
        crate::store::fsutil::create_dir_nofollow(
            &ctx.layout.dir.join(crate::store::state::DIR_NAME),
        )?;
        crate::store::fsutil::write_atomic(&Journal::path(ctx, id), &text)?;
        Ok(())
    }

    fn remove(ctx: &Context, id: &WorkspaceId) {
        let _ = crate::store::fsutil::remove_file(&Journal::path(ctx, id));
    }

    /// Finishes a removal a kill interrupted after the backend began forgetting the workspace:
    /// its edits were recorded and the files no commit held kept aside before that, so what
    /// is left on disk is what the recorded commit holds, unless changed since the journal was
    /// written: every file changed since (by its ctime, which no one can set back) is kept
    /// aside too, never deleted.
    fn finish(
        self,
        ctx: &Context,
        entry: &Entry,
        name: &WorkspaceId,
        has_dir: bool,
        lease: Lock,
    ) -> Result<Removal> {
        use std::os::unix::fs::MetadataExt;
        let ctime = |m: &std::fs::Metadata| (m.ctime(), m.ctime_nsec());
        let since = std::fs::symlink_metadata(Journal::path(ctx, &entry.id))
            .map(|m| ctime(&m))
            .map_err(|e| WorkspaceError::io("read", &Journal::path(ctx, &entry.id), e))?;
        let aside = match has_dir {
            true => {
                let dest = aside::fresh_dest(&ctx.layout.dir.join(KEPT_DIR), &entry.id);
                let held = |rel: &Path| {
                    std::fs::symlink_metadata(entry.path.join(rel)).is_ok_and(|m| ctime(&m) < since)
                };
                aside::set_aside_unheld(&entry.path, &held, &dest, &Policy::keep_all()).map_err(
                    |source| CleanError::NotFinished {
                        id: entry.id.clone(),
                        dest: dest.clone(),
                        source,
                    },
                )?
            }
            false => Aside::default(),
        };
        ctx.vcs
            .forget_removing(name, &entry.path, || match has_dir {
                true => remove_workspace_dir(&ctx.layout.dir, &entry.path),
                false => Ok(()),
            })?;
        lease.remove();
        crate::store::state::remove(&entry.path)?;
        Journal::remove(ctx, &entry.id);
        Ok(Removal {
            kept: self.kept.to_kept(),
            aside,
            commits: vec![],
            gitlinks: vec![],
            branch_deleted: None,
            earlier_aside: Some(self.dest).filter(|d| std::fs::symlink_metadata(d).is_ok()),
            own_store_kept: super::own_store::remove(ctx, &entry.id, None),
            moved_aside: vec![],
            too_deep: vec![],
            run_logs: None,
        })
    }
}

/// The name `name` the backend knows workspace `entry` by after a rename, checked as every
/// id the backend is handed is: jj takes any name, which a removal cannot hand on unless it
/// is one an id could be.
fn backend_name(entry: &Entry, name: &str) -> Result<WorkspaceId> {
    WorkspaceId::parse(name).map_err(|_| {
        CleanError::BackendName {
            id: entry.id.clone(),
            name: name.to_string(),
            path: entry.path.clone(),
        }
        .into()
    })
}

/// Whether the repository's and the namespace's file systems (the journal, the state) have
/// room to record `bytes`, plus [`crate::store::disk::MARGIN`].
fn room_for(ctx: &Context, bytes: u64) -> std::result::Result<(), crate::store::disk::NoRoom> {
    for dir in [&ctx.repo.root, &ctx.layout.dir] {
        crate::store::disk::check_room(dir, bytes)?;
    }
    Ok(())
}

fn no_room(entry: &Entry, source: crate::store::disk::NoRoom) -> CliError {
    CleanError::NoRoom {
        id: entry.id.clone(),
        source,
    }
    .into()
}

/// Keeps aside (or discards, as the policy says) the files of `entry` that no commit keeps.
/// `name` is the one the backend knows the workspace by.
/// `tracked` holds the files a commit keeps; everything else is kept aside or discarded.
fn set_aside(
    ctx: &Context,
    entry: &Entry,
    tracked: &HashSet<PathBuf>,
    dest: &Path,
    args: &Options,
) -> Result<Aside> {
    let policy = policy(ctx, args);
    // The tools bundle as the tool copied it is the repository's files, not the agent's.
    let mut tracked = tracked.clone();
    tracked.extend(bundle(entry));
    aside::set_aside(&entry.path, &tracked, dest, &policy).map_err(|source| {
        CleanError::NotKeptAside {
            id: entry.id.clone(),
            dest: dest.to_path_buf(),
            source,
        }
        .into()
    })
}

/// The tools bundle's entries in `entry`'s workspace, unchanged since the tool copied them.
fn bundle(entry: &Entry) -> Vec<PathBuf> {
    entry
        .record
        .as_ref()
        .and_then(|r| r.tools.as_ref())
        .map(|tools| crate::store::tools::untouched(&entry.path, tools))
        .unwrap_or_default()
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
pub(crate) fn preview(ctx: &Context, entry: &Entry, args: &Options) -> Result<Aside> {
    if std::fs::symlink_metadata(&entry.path).is_err() {
        return Ok(Aside::default());
    }
    let ignored = ctx.vcs.ignored_files(&entry.path, false);
    let ignored: HashSet<PathBuf> = ignored.map_err(CleanError::Vcs)?.into_iter().collect();
    let bundle: HashSet<PathBuf> = bundle(entry).into_iter().collect();
    let held = |rel: &std::path::Path| !ignored.contains(rel) || bundle.contains(rel);
    aside::survey(&entry.path, &held, &policy(ctx, args)).map_err(|source| {
        CleanError::NotSurveyed {
            id: entry.id.clone(),
            source,
        }
        .into()
    })
}

fn take_lease(ctx: &Context, entry: &Entry, force: bool) -> Result<Lock> {
    let path = ctx.layout.lease(&entry.id);
    if let Some(lease) = lock::try_exclusive(&path)? {
        return Ok(lease);
    }
    let busy = |forced| -> CliError {
        CleanError::InUse {
            id: entry.id.clone(),
            forced,
        }
        .into()
    };
    if !force {
        return Err(busy(false));
    }
    let holder = entry.record.as_deref().and_then(live_holder);
    use rustix::process::Signal;
    for (signal, wait) in [(Signal::TERM, 10), (Signal::KILL, 5)] {
        // pid was checked to be the recorded supervisor (same start time), so it is not a
        // reused pid.
        if let Some(pid) = holder.and_then(|pid| rustix::process::Pid::from_raw(pid as i32)) {
            let _ = rustix::process::kill_process(pid, signal);
        }
        let deadline = Instant::now() + Duration::from_secs(wait);
        while Instant::now() < deadline {
            if let Some(lease) = lock::try_exclusive(&path)? {
                return Ok(lease);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    Err(busy(true))
}

fn live_holder(record: &Record) -> Option<u32> {
    record
        .pid
        .filter(|pid| liveness::is_alive(*pid, record.pid_start))
}
