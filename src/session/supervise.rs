//! The supervised run: recorded as running while direnv loads, the command run under its
//! guard, the outcome judged and recorded, `--checkpoint`'s checkpoint made.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Instant;

use crate::error::{CliError, Result};
use crate::exec::liveness;
use crate::exec::process::Ending;
use crate::exec::signals;
use crate::store::layout::WorkspaceId;
use crate::store::lock::Lock;
use crate::store::metadata::{self, Loaded, Record, Status};
use crate::workspace;
use crate::workspace::context::Context;
use crate::workspace::direnv::Loader;
use crate::workspace::launch::{Launch, Sandboxing};

/// A workspace made ready for a command, holding its lease.
pub(crate) struct Entered {
    /// The workspace entered (its id as checked on the command line, not the record's copy).
    pub id: WorkspaceId,
    pub record: Record,
    /// Whether entering made the workspace (false: it existed and was reattached).
    pub created: bool,
    pub lease: Lock,
    pub loader: Loader,
}

/// How a supervised run ended: the command's exit code (the answer even when recording it
/// failed) and what went wrong around it, worth a warning.
pub(crate) struct Ended {
    pub code: i32,
    pub status: Status,
    pub warnings: Vec<Warning>,
}

/// What went wrong around a run whose command ran: its exit code stands, these are said.
pub(crate) enum Warning {
    /// The record view in the workspace was changed during the run and rewritten.
    ViewChanged { view: PathBuf },
    /// The outcome could not be recorded (a full disk, a command that deleted its workspace).
    NotRecorded { code: i32, err: CliError },
    /// A file `--checkpoint` could not record.
    NotInCheckpoint { path: PathBuf, why: String },
    /// The run reached one of its sandbox's limits (and failed).
    LimitHit {
        hit: crate::store::metadata::LimitHit,
        limits: crate::store::metadata::SandboxLimits,
    },
    /// `--checkpoint`'s checkpoint failed.
    CheckpointFailed { code: i32, err: CliError },
    /// What a sandboxed run did in its own store could not be brought back.
    NotBroughtBack { code: i32, err: CliError },
    /// A `.git` or `.jj` the sandboxed run made, moved aside (git or jj would have run what
    /// it configures): where each is now.
    MovedAside {
        paths: Vec<crate::store::nested_aside::MovedAside>,
    },
    /// Hosts the sandbox's proxy refused the run (not in `sandbox.allowed_hosts`).
    HostsRefused {
        hosts: Vec<crate::store::metadata::RefusedHost>,
    },
    /// The workspace's own store was made again from the user's side, and the old one,
    /// holding work that had not come back, kept aside.
    OwnStoreKept {
        store: workspace::own_store::KeptStore,
    },
}

/// Records the run as running, runs `command`, and records how it ended; with `checkpoint`
/// records the run's work in a checkpoint afterwards.
pub(crate) fn supervise(
    ctx: &Context,
    entered: &mut Entered,
    command: &[OsString],
    checkpoint: bool,
    sandboxing: Option<Sandboxing>,
) -> Result<Ended> {
    let record = &mut entered.record;
    let launch = Launch::new(
        ctx,
        record,
        entered.loader.clone(),
        command,
        Some(entered.lease.fd()),
        sandboxing.as_ref(),
    )?;
    let kept_store = launch.kept_store().cloned();
    let mut moved_aside = launch.moved_aside().to_vec();
    let started_at = Instant::now();
    let mut saved = None;
    // The run is recorded while direnv loads the environment; the command starts after.
    let ran = launch.run_after(|| {
        let pid = std::process::id();
        let argv = command.iter().map(|a| a.to_string_lossy().into_owned());
        record.start_run(argv.collect(), pid, liveness::start_time(pid));
        metadata::save(record)?;
        saved = metadata::saved_stamp(&record.workspace_path);
        Ok(())
    })?;
    // The guard may still be exiting: it is waited for when `ran` goes, after the record.
    let outcome = &ran.outcome;
    let out_of_memory = ran.limit_hit == Some(crate::store::metadata::LimitHit::Memory);
    let (status, code, signal) = match outcome {
        Ok(ending) => judge(*ending, out_of_memory),
        Err(_) => (Status::Error, 125, None),
    };
    record.limit_hit = ran.limit_hit;
    record.refused_hosts = ran.refused_hosts.clone();
    record.finish_run(status, code, signal, started_at.elapsed());
    let mut warnings = vec![];
    if !ran.refused_hosts.is_empty() {
        warnings.push(Warning::HostsRefused {
            hosts: ran.refused_hosts.clone(),
        });
    }
    let limits = sandboxing.as_ref().and_then(|s| s.options.limits.clone());
    if let (Some(hit), Some(limits)) = (ran.limit_hit, limits) {
        if code != 0 {
            warnings.push(Warning::LimitHit { hit, limits });
        }
    }
    if let Some(store) = kept_store {
        warnings.push(Warning::OwnStoreKept { store });
    }
    if let Some(sandboxing) = &sandboxing {
        // Every process of the run has ended: its own store is the export's alone.
        let ws = &record.workspace_path;
        let (paths, brought) =
            workspace::own_store::bring_back(ctx, &entered.id, ws, &sandboxing.bwrap);
        moved_aside.extend(paths);
        if let Err(err) = brought {
            warnings.push(Warning::NotBroughtBack { code, err });
        }
    }
    if !moved_aside.is_empty() {
        warnings.push(Warning::MovedAside { paths: moved_aside });
    }
    if checkpoint && matches!(outcome, Ok(e) if started(e)) {
        checkpoint_run(ctx, &entered.id, record, code, &mut warnings);
    }
    // A checkpoint made from inside the run (nested) counted itself in the record it saved.
    if metadata::saved_stamp(&record.workspace_path) != saved {
        if let Loaded::Ok(saved) = metadata::load(&record.workspace_path) {
            record.checkpoints = record.checkpoints.max(saved.checkpoints);
            // So did a land: keep what it recorded, and the journal of one killed meanwhile
            // (the next command finishes it).
            record.land = saved.land.clone().or(record.land.take());
            record.land_intent = saved.land_intent.clone();
        }
    }
    if metadata::view_changed(&record.workspace_path) {
        warnings.push(Warning::ViewChanged {
            view: metadata::path(&record.workspace_path),
        });
    }
    // The command ran: its exit code is the answer even if the record cannot be written
    // (a full disk, a command that deleted its workspace), which is said on stderr.
    if let (Ok(_), Err(err)) = (outcome, metadata::save(record)) {
        warnings.push(Warning::NotRecorded {
            code,
            err: err.into(),
        });
    }
    let status = record.status;
    ran.outcome.map(|_| Ended {
        code,
        status,
        warnings,
    })
}

/// `--checkpoint`: records the run's work in a checkpoint and keeps it in the run's history
/// entry. The command ran, so its exit code stands: a failure is a warning.
fn checkpoint_run(
    ctx: &Context,
    id: &WorkspaceId,
    record: &mut Record,
    code: i32,
    warnings: &mut Vec<Warning>,
) {
    let message = workspace::run_message(record, code);
    match workspace::checkpoint(ctx, id, record, Some(&message)) {
        Ok(done) => {
            if let Some(run) = record.runs.last_mut() {
                run.checkpoint = done.commit();
            }
            // Ignored files are left out on purpose; said by `checkpoint`, not after every run.
            for u in done.recorded.unrecorded.iter().filter(|u| !u.ignored) {
                warnings.push(Warning::NotInCheckpoint {
                    path: u.path.clone(),
                    why: u.why.clone(),
                });
            }
        }
        Err(err) => warnings.push(Warning::CheckpointFailed { code, err }),
    }
}

/// The recorded status, exit code and signal for how the command ended. The exit code is
/// always the command's; a command that handled or ignored a stop signal and still exited 0
/// is `done` (the signal it got is recorded), so status and exit code never disagree. A
/// command the kernel killed at its sandbox's memory limit (`out_of_memory`) failed: its
/// SIGKILL is no interruption.
fn judge(ending: Ending, out_of_memory: bool) -> (Status, i32, Option<i32>) {
    let code = ending.code();
    match (ending, signals::received()) {
        (Ending::Exited(0), received) => (Status::Done, 0, received),
        (_, Some(sig)) => (Status::Interrupted, code, Some(sig)),
        (Ending::Signaled(sig), None) if out_of_memory => (Status::Error, code, Some(sig)),
        (Ending::Signaled(sig), None) if is_stop_signal(sig) => {
            (Status::Interrupted, code, Some(sig))
        }
        (Ending::Signaled(sig), None) => (Status::Error, code, Some(sig)),
        (_, None) => (Status::Error, code, None),
    }
}

fn is_stop_signal(sig: i32) -> bool {
    [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGKILL,
        libc::SIGQUIT,
    ]
    .contains(&sig)
}

/// Whether an ending means the command ran (so `--checkpoint` records its work).
fn started(ending: &Ending) -> bool {
    !matches!(ending, Ending::NotStarted(_))
}
