//! The setup command (`setup.command`): run once in a new workspace before its first
//! command, with the command's environment, its output kept in a log outside the workspace.
//! A command named by the repository's file runs only when that file is the one at the
//! workspace's base revision (or with `--trust-config`); the user's own file is trusted.

use std::ffi::OsString;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::error::Result;
use crate::exec::process::Ending;
use crate::store::metadata::{self, Record, Setup, SetupStatus};
use crate::workspace::context::Context;
use crate::workspace::direnv::Loader;
use crate::workspace::error::WorkspaceError;
use crate::workspace::launch::{Launch, Sandboxing};

/// How a setup runs: the run's environment loader, sandbox and lease.
pub(crate) struct Env<'a> {
    pub loader: &'a Loader,
    pub sandboxing: Option<&'a Sandboxing>,
    pub lease: RawFd,
    /// `--trust-config`: run a command of the repository's file even if it changed.
    pub trust: bool,
}

/// Whether the setup is to run now: configured, and the workspace new (unless its setup ran
/// while it was prepared in the pool) or its last setup not done (a failed or refused setup
/// is retried by the next run).
pub(crate) fn due(ctx: &Context, record: &Record, created: bool) -> bool {
    ctx.config.setup.is_some()
        && match &record.setup {
            None => created,
            Some(setup) => setup.status != SetupStatus::Done,
        }
}

/// The setup's log: `<namespace>/.state/<id>.setup.log`, beside the workspace's state.
pub(crate) fn log_path(workspace: &Path) -> PathBuf {
    let state = crate::store::state::path(workspace);
    state.with_extension("setup.log")
}

/// Runs the setup in `record`'s workspace, recording its outcome (and saving the record).
/// Its failure, or a refused command, is an error naming the log; the workspace is kept.
/// A store of its own a sandboxed setup replaced is said in `notes`.
pub(crate) fn run(
    ctx: &Context,
    record: &mut Record,
    env: &Env,
    notes: &mut Vec<crate::workspace::Note>,
) -> Result<()> {
    let Some(setup) = ctx.config.setup.clone() else {
        return Ok(());
    };
    let mut outcome = Setup {
        status: SetupStatus::Refused,
        command: setup.argv.clone(),
        config_file: setup.file.clone(),
        exit_code: None,
        signal: None,
        started_at: metadata::now(),
        finished_at: None,
        duration_ms: None,
        log: None,
    };
    let trusted = match &setup.repo_relative {
        None => true,
        Some(relative) => repo_file_trusted(ctx, record, &setup.file, relative)?,
    };
    if !env.trust && !trusted {
        record.setup = Some(outcome);
        metadata::save(record)?;
        return Err(WorkspaceError::SetupUntrusted {
            file: setup.file.clone(),
            id: record.workspace_id.clone(),
        }
        .into());
    }
    ctx.progress.report(crate::progress::Phase::SettingUp);
    let log = log_path(&record.workspace_path);
    let file = open_log(&log)?;
    outcome.log = Some(log.clone());
    let started = Instant::now();
    let argv: Vec<OsString> = setup.argv.iter().map(OsString::from).collect();
    let launch = Launch::new(
        ctx,
        record,
        env.loader.clone(),
        &argv,
        Some(env.lease),
        env.sandboxing,
    )?;
    if let Some(store) = launch.kept_store() {
        notes.push(crate::workspace::Note::OwnStoreKept {
            store: store.clone(),
        });
    }
    if !launch.moved_aside().is_empty() {
        notes.push(crate::workspace::Note::MovedAside {
            paths: launch.moved_aside().to_vec(),
        });
    }
    let ending = launch.output_to(file).run();
    outcome.finished_at = Some(metadata::now());
    outcome.duration_ms = Some(started.elapsed().as_millis() as u64);
    let (status, code, signal) = match &ending {
        Ok(Ending::Exited(0)) => (SetupStatus::Done, 0, None),
        Ok(Ending::Signaled(sig)) => (SetupStatus::Failed, 128 + sig, Some(*sig)),
        Ok(e) => (SetupStatus::Failed, e.code(), None),
        Err(_) => (SetupStatus::Failed, 125, None),
    };
    outcome.status = status;
    outcome.exit_code = Some(code);
    outcome.signal = signal;
    record.setup = Some(outcome);
    metadata::save(record)?;
    if let Some(signal) = crate::exec::signals::received() {
        return Err(WorkspaceError::SetupInterrupted { signal, log }.into());
    }
    match (status, ending) {
        (SetupStatus::Done, _) => Ok(()),
        (_, Err(err)) => Err(err),
        _ => Err(WorkspaceError::SetupFailed {
            code,
            log,
            id: record.workspace_id.clone(),
        }
        .into()),
    }
}

/// Whether what the repository's configuration file `file` (at `relative` in the main
/// workspace) says may be acted on automatically: the file is identical to the one at one
/// of the workspace's base commits.
pub(crate) fn repo_file_trusted(
    ctx: &Context,
    record: &Record,
    file: &Path,
    relative: &str,
) -> Result<bool> {
    let current =
        crate::store::fsutil::read_untrusted(file, crate::store::fsutil::UNTRUSTED_LIMIT)?;
    let commits = match record.base_commits.is_empty() {
        true => ctx.vcs.resolve_base(None)?,
        false => record.base_commits.clone(),
    };
    for commit in &commits {
        if ctx.vcs.file_at(commit, relative)?.as_deref() == Some(current.as_slice()) {
            return Ok(true);
        }
    }
    Ok(false)
}

fn open_log(log: &Path) -> Result<std::fs::File> {
    if let Some(dir) = log.parent() {
        crate::store::fsutil::create_dir_nofollow(dir)?;
    }
    let file = crate::store::fsutil::open_nofollow(log)?;
    file.set_len(0)
        .map_err(|e| WorkspaceError::io("truncate", log, e))?;
    Ok(file)
}
