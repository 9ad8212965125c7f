//! `run`: run a command in a workspace, creating or reattaching it, and record the outcome.

use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

use clap::Args;

use crate::error::{CliError, Result};
use crate::exec::liveness;
use crate::exec::process::{self, Ending};
use crate::exec::signals;
use crate::store::layout::validate_id;
use crate::store::lock::{self, Lock};
use crate::store::metadata::{self, Loaded, Record, Status};
use crate::ui::progress_line::ProgressLine;
use crate::ui::report;
use crate::workspace::context::Context;
use crate::workspace::direnv::{self, Loader};
use crate::workspace::inventory;
use crate::workspace::{self, remove, Request};

/// Run a command in a workspace, creating it if needed.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Workspace id: 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit
    pub id: String,
    /// Workflow name recorded with the run
    #[arg(long, value_name = "NAME")]
    pub workflow: Option<String>,
    /// Start a new workspace on a new commit on top of this revision
    #[arg(long, value_name = "REV")]
    pub base_change: Option<String>,
    /// Start a new workspace from this workspace's exact current state, unrecorded edits
    /// included, leaving that workspace as it was
    #[arg(long, value_name = "PARENT_ID", conflicts_with = "base_change")]
    pub parent: Option<String>,
    /// After the run, record the workspace's state as a checkpoint commit
    #[arg(long)]
    pub checkpoint: bool,
    /// Remove the workspace after a successful run (keep it after a failure)
    #[arg(long)]
    pub cleanup: bool,
    /// Run the command directly, without loading the workspace's .envrc
    #[arg(long)]
    pub no_direnv: bool,
    /// Allow the workspace's .envrc even if it differs from its base revision's
    #[arg(long)]
    pub trust_envrc: bool,
    /// Run the setup command of the repository's configuration file even if that file
    /// differs from the one at the workspace's base revision
    #[arg(long)]
    pub trust_config: bool,
    /// Wait for a live run in this workspace to finish instead of failing
    #[arg(long)]
    pub wait: bool,
    #[command(flatten)]
    pub sandbox: crate::cli::global::SandboxArgs,
    /// The command and its arguments
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

pub(crate) fn cmd_run(ctx_args: &crate::cli::global::GlobalArgs, args: &RunArgs) -> Result<i32> {
    validate_id(&args.id)?;
    if let Some(parent) = &args.parent {
        validate_id(parent)?;
    }
    signals::install();
    let mut ctx = Context::open(ctx_args)?;
    let progress = ProgressLine::on_stderr(&format!("workspace {}", args.id));
    ctx.progress = progress.progress();
    ctx.vcs.check_id(&args.id)?;
    let path = ctx.layout.workspace(&args.id);
    if crate::exec::sandbox::inside(&args.id, &path) {
        // Already confined: a nested run of the sandboxed run, in the same sandbox.
        return run_nested(args, &path);
    }
    if crate::workspace::remove::interrupted(&ctx, &args.id) {
        // A clean of this id a kill interrupted: finish it, then run on a new workspace.
        for line in crate::ui::report::settled(&crate::workspace::remove::settle_interrupted(&ctx)?)
        {
            eprintln!("{line}");
        }
    }
    let sandboxing = args.sandbox.prepare(&ctx.config)?;
    let Some((mut record, lease, loader)) = enter(&ctx, args, &path, sandboxing.as_ref())? else {
        return run_nested(args, &path);
    };
    drop(progress);
    record.sandbox = sandboxing.as_ref().map(|s| s.options.clone());
    let code = supervise(&ctx, &mut record, loader, args, &lease, sandboxing)?;
    if args.cleanup && record.status == Status::Done {
        remove_after_run(&ctx, &args.id, lease)?;
    }
    Ok(code)
}

/// Takes the workspace's lease (none: a nested run of the run holding it), creates or
/// reattaches it, and readies its record, environment, tools and setup for the command.
fn enter(
    ctx: &Context,
    args: &RunArgs,
    path: &Path,
    sandboxing: Option<&crate::workspace::launch::Sandboxing>,
) -> Result<Option<(Record, Lock, Loader)>> {
    ctx.layout.ensure(&ctx.repo)?;
    workspace::check_parent(&args.id, path, args.parent.as_deref())?;
    let known_before = ctx.layout.lease(&args.id).exists();
    let Some(lease) = take_lease(ctx, args, path)? else {
        return Ok(None);
    };
    let (opened, lease) = open(ctx, args, known_before, lease)?;
    if opened.created && ctx.config.pool_size > 0 {
        // Never delays the run: a failure to start it only costs the next run a checkout.
        let _ = workspace::pool::refill_in_background(ctx);
    }
    let mut record = opened.record;
    workspace::capacity::ensure_ports(ctx, &mut record)?;
    // The record's workflow is that of its latest run.
    record.workflow = args.workflow.clone();
    // A new workspace holds its base revision's files; a child holds its parent's, whose
    // trust its record inherited.
    let trust = args.trust_envrc || (opened.created && args.parent.is_none());
    let loader =
        direnv::prepare(&mut record, &ctx.vcs, args.no_direnv, trust).inspect_err(|_| {
            let _ = metadata::save(&record);
        })?;
    let setup = workspace::setup::Env {
        loader: &loader,
        sandboxing,
        lease: lease.fd(),
        trust: args.trust_config,
    };
    prepare(ctx, &mut record, opened.created, &setup)?;
    Ok(Some((record, lease, loader)))
}

/// Brings the tools bundle up to date and runs the setup when it is due.
fn prepare(
    ctx: &Context,
    record: &mut Record,
    created: bool,
    setup: &workspace::setup::Env,
) -> Result<()> {
    let mut notes = vec![];
    let synced = workspace::tools::sync(ctx, record, false, setup.trust, &mut notes);
    ctx.progress.idle();
    report::print_notes(&notes);
    synced?;
    if workspace::setup::due(ctx, record, created) {
        workspace::setup::run(ctx, record, setup)?;
    }
    Ok(())
}

/// Opens (or creates) the workspace whose lease this run holds, printing what is worth
/// telling. A refused creation leaves no lease file: one without a directory would claim a
/// workspace that was deleted by hand.
fn open(
    ctx: &Context,
    args: &RunArgs,
    known_before: bool,
    lease: Lock,
) -> Result<(workspace::Opened, Lock)> {
    let mut notes = vec![];
    let opened = workspace::fork(ctx, &args.id, args.parent.as_deref()).and_then(|fork| {
        let req = Request {
            id: &args.id,
            base_change: fork
                .as_ref()
                .map(|f| f.base.as_str())
                .or(args.base_change.as_deref()),
            workflow: args.workflow.as_deref(),
            parent: args.parent.as_deref(),
            create: true,
            known_before,
        };
        workspace::open(ctx, &req, &mut notes)
    });
    ctx.progress.idle();
    report::print_notes(&notes);
    match opened {
        Ok(opened) => Ok((opened, lease)),
        Err(err) => {
            let path = ctx.layout.workspace(&args.id);
            if !known_before && std::fs::symlink_metadata(&path).is_err() {
                lease.remove();
            }
            Err(err)
        }
    }
}

/// `--cleanup`: removes the workspace, whose lease this run holds, after its success.
fn remove_after_run(ctx: &Context, id: &str, lease: Lock) -> Result<()> {
    let entry = inventory::local(ctx, id)
        .ok_or_else(|| workspace::unknown(id, &ctx.layout.workspace(id)))?;
    let removal = remove::remove(ctx, &entry, &remove::Options::default(), Some(lease))?;
    eprintln!("{}", report::describe(id, &entry.path, &removal));
    Ok(())
}

/// Takes the workspace's lease. `None` means this is a nested run of the lease holder.
fn take_lease(ctx: &Context, args: &RunArgs, path: &Path) -> Result<Option<Lock>> {
    let lease_path = ctx.layout.lease(&args.id);
    if let Some(lease) = lock::try_exclusive(&lease_path)? {
        return Ok(Some(lease));
    }
    let record = match metadata::load(path) {
        Loaded::Ok(record) => Some(*record),
        _ => None,
    };
    if workspace::is_nested(&args.id, path, record.as_ref()) {
        return Ok(None);
    }
    if args.wait {
        return Ok(Some(lock::exclusive(&lease_path)?));
    }
    // A run whose supervisor died holds the lease until its guard has ended every process it
    // left behind (a few seconds at most): wait for that rather than report it busy.
    let crashed = record
        .as_ref()
        .is_some_and(|r| r.status == Status::Running && !supervisor_alive(r));
    if crashed {
        if let Some(lease) = lock::wait_exclusive(&lease_path, Duration::from_secs(15))? {
            return Ok(Some(lease));
        }
    }
    Err(busy(&args.id, record.as_ref()))
}

/// Whether the supervisor a record names is still alive (the same process, not a reused pid).
fn supervisor_alive(record: &Record) -> bool {
    record
        .pid
        .is_some_and(|p| liveness::is_alive(p, record.pid_start))
}

/// Who holds the workspace: a live run, the processes a dead one left (its guard still ending
/// them), or another agent-workspace process creating or cleaning it.
fn busy(id: &str, record: Option<&Record>) -> CliError {
    let holder = match record {
        Some(r) if r.status == Status::Running && supervisor_alive(r) => format!(
            "pid {}, workflow {}, since {}",
            r.pid.map_or("?".into(), |p| p.to_string()),
            r.workflow.as_deref().unwrap_or("-"),
            r.started_at.as_deref().unwrap_or("?")
        ),
        Some(r) if r.status == Status::Running => {
            "the processes of its last run are still ending".into()
        }
        _ => "another agent-workspace process is creating or cleaning it".into(),
    };
    CliError::failure(format!("workspace {id:?} is busy: {holder}"))
        .hint("pass --wait to queue behind it, or use another id")
}

/// A nested run shares the working copy and environment of the run it is nested in.
fn run_nested(args: &RunArgs, path: &Path) -> Result<i32> {
    let (code, err) = process::exec(&args.command, Some(path));
    Err(CliError::not_started(
        code,
        format!(
            "could not run {} in the nested run",
            process::quote(&args.command[0].to_string_lossy())
        ),
    )
    .cause(err.to_string())
    .hint("check the command's name and that it is executable"))
}

/// Records the run as running, runs it, and records how it ended.
fn supervise(
    ctx: &Context,
    record: &mut Record,
    loader: Loader,
    args: &RunArgs,
    lease: &Lock,
    sandboxing: Option<crate::workspace::launch::Sandboxing>,
) -> Result<i32> {
    let command = &args.command;
    let launch = crate::workspace::launch::Launch::new(
        ctx,
        record,
        loader,
        command,
        Some(lease.fd()),
        sandboxing.as_ref(),
    )?;
    let started = Instant::now();
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
    let (status, code, signal) = match outcome {
        Ok(ending) => judge(*ending),
        Err(_) => (Status::Error, 125, None),
    };
    record.finish_run(status, code, signal, started.elapsed());
    if args.checkpoint && matches!(outcome, Ok(e) if !matches!(e, Ending::NotStarted(_))) {
        checkpoint_run(ctx, record, code);
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
        eprintln!(
            "Warning: {} was changed during the run; rewrote it from agent-workspace's state",
            metadata::path(&record.workspace_path).display()
        );
    }
    // The command ran: its exit code is the answer even if the record cannot be written
    // (a full disk, a command that deleted its workspace), which is said on stderr.
    if let (Ok(_), Err(err)) = (outcome, metadata::save(record)) {
        let err = CliError::from(err);
        eprintln!(
            "Warning: the run ended (exit code {code}) but its outcome could not be recorded: {}\nHint: {}",
            err.message,
            err.hint.as_deref().unwrap_or("check the workspace and its state directory")
        );
    }
    ran.outcome.map(|_| code)
}

/// `--checkpoint`: records the run's work in a checkpoint and keeps it in the run's history
/// entry. The command ran, so its exit code stands: a failure is a warning.
fn checkpoint_run(ctx: &Context, record: &mut Record, code: i32) {
    let message = workspace::run_message(record, code);
    match workspace::checkpoint(ctx, record, Some(&message)) {
        Ok(done) => {
            if let Some(run) = record.runs.last_mut() {
                run.checkpoint = done.commit();
            }
            // Ignored files are left out on purpose; said by `checkpoint`, not after every run.
            for u in done.recorded.unrecorded.iter().filter(|u| !u.ignored) {
                eprintln!(
                    "Warning: not in the checkpoint: {} ({})",
                    u.path.display(),
                    u.why
                );
            }
        }
        Err(err) => eprintln!(
            "Warning: the run ended (exit code {code}) but its checkpoint failed: {}\nHint: {}",
            err.message,
            err.hint
                .as_deref()
                .unwrap_or("run `agent-workspace checkpoint` on the workspace")
        ),
    }
}

/// The recorded status, exit code and signal for how the command ended. The exit code is
/// always the command's; a command that handled or ignored a stop signal and still exited 0
/// is `done` (the signal it got is recorded), so status and exit code never disagree.
fn judge(ending: Ending) -> (Status, i32, Option<i32>) {
    let code = ending.code();
    match (ending, signals::received()) {
        (Ending::Exited(0), received) => (Status::Done, 0, received),
        (_, Some(sig)) => (Status::Interrupted, code, Some(sig)),
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
