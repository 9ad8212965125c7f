//! A session: one run (or a workspace made ready without one) from start to end. It takes
//! and queues the workspace's lease, opens or creates the workspace, readies its record,
//! environment, tools and setup, runs the command under supervision, merges what a nested
//! checkpoint or land recorded meanwhile, makes `--checkpoint`'s checkpoint and judges the
//! outcome. Returns what happened and what is worth telling; never prints.

pub(crate) mod error;
mod lease;
mod supervise;

use std::ffi::OsString;
use std::path::PathBuf;

use crate::error::Result;
use crate::exec::process;
use crate::store::layout::WorkspaceId;
use crate::store::lock::Lock;
use crate::store::metadata::{self, Record};
use crate::workspace::context::Context;
use crate::workspace::direnv;
use crate::workspace::launch::Sandboxing;
use crate::workspace::{self, Note, Request};

pub(crate) use supervise::{supervise, Entered, Warning};

/// What a session is asked to start: the workspace and how to make it ready.
pub(crate) struct Start<'a> {
    pub id: &'a WorkspaceId,
    pub workflow: Option<&'a str>,
    pub base_change: Option<&'a str>,
    pub parent: Option<&'a WorkspaceId>,
    pub no_direnv: bool,
    pub trust_envrc: bool,
    pub trust_config: bool,
    /// Queue behind a live run instead of failing.
    pub wait: bool,
    pub sandboxing: Option<&'a Sandboxing>,
}

/// Takes the workspace's lease, creates or reattaches it, and readies its record,
/// environment, tools and setup for a command. `None`: this is a nested run of the run
/// holding the lease, which shares that run's working copy. What is worth telling is given
/// to `tell` as it happens (before the setup's own output).
pub(crate) fn enter(
    ctx: &Context,
    start: &Start,
    tell: &mut dyn FnMut(&[Note]),
) -> Result<Option<Entered>> {
    let path = ctx.layout.workspace(start.id);
    ctx.layout.ensure(&ctx.repo)?;
    workspace::check_parent(start.id, &path, start.parent)?;
    let known_before = ctx.layout.lease(start.id).exists();
    let Some(lease) = lease::take(ctx, start.id, &path, start.wait)? else {
        return Ok(None);
    };
    let (opened, lease) = open(ctx, start, known_before, lease, tell)?;
    if opened.created && ctx.config.pool_size > 0 {
        // Never delays the run: a failure to start it only costs the next run a checkout.
        let _ = workspace::pool::refill_in_background(ctx);
    }
    let mut record = opened.record;
    workspace::capacity::ensure_ports(ctx, &mut record)?;
    // The record's workflow is the latest one a run named: a run naming none keeps it.
    if let Some(workflow) = start.workflow {
        record.workflow = Some(workflow.to_string());
    }
    // A new workspace holds its base revision's files; a child holds its parent's, whose
    // trust its record inherited.
    let trust = start.trust_envrc || (opened.created && start.parent.is_none());
    let loader = direnv::prepare(&mut record, &ctx.vcs, start.no_direnv, trust)
        .map_err(Into::into)
        .inspect_err(|err| refused(&mut record, err))?;
    let setup = workspace::setup::Env {
        loader: &loader,
        sandboxing: start.sandboxing,
        lease: lease.fd(),
        trust: start.trust_config,
    };
    prepare(ctx, &mut record, opened.created, &setup, tell)
        .inspect_err(|err| refused(&mut record, err))?;
    Ok(Some(Entered {
        id: start.id.clone(),
        record,
        created: opened.created,
        lease,
        loader,
    }))
}

/// Records in the workspace's record that its run never started its command, and why (what
/// `status` then shows); the error itself is the caller's to report.
fn refused(record: &mut Record, err: &crate::error::CliError) {
    record.record_not_started(err.message.clone());
    let _ = metadata::save(record);
}

/// Brings the tools bundle up to date and runs the setup when it is due.
fn prepare(
    ctx: &Context,
    record: &mut Record,
    created: bool,
    setup: &workspace::setup::Env,
    tell: &mut dyn FnMut(&[Note]),
) -> Result<()> {
    let mut notes = vec![];
    let synced = workspace::tools::sync(ctx, record, false, setup.trust, &mut notes);
    ctx.progress.idle();
    tell(&notes);
    synced?;
    if workspace::setup::due(ctx, record, created) {
        let mut notes = vec![];
        let ran = workspace::setup::run(ctx, record, setup, &mut notes);
        tell(&notes);
        ran?;
    }
    Ok(())
}

/// Opens (or creates) the workspace whose lease this session holds. A refused creation
/// leaves no lease file: one without a directory would claim a workspace that was deleted
/// by hand.
fn open(
    ctx: &Context,
    start: &Start,
    known_before: bool,
    lease: Lock,
    tell: &mut dyn FnMut(&[Note]),
) -> Result<(workspace::Opened, Lock)> {
    let mut notes = vec![];
    let opened = workspace::fork(ctx, start.id, start.parent).and_then(|fork| {
        let req = Request {
            id: start.id,
            base_change: fork.as_ref().map(|f| f.base.as_str()).or(start.base_change),
            workflow: start.workflow,
            parent: start.parent,
            create: true,
            known_before,
        };
        workspace::open(ctx, &req, &mut notes)
    });
    ctx.progress.idle();
    tell(&notes);
    match opened {
        Ok(opened) => Ok((opened, lease)),
        Err(err) => {
            let path = ctx.layout.workspace(start.id);
            if !known_before && std::fs::symlink_metadata(&path).is_err() {
                lease.remove();
            }
            Err(err)
        }
    }
}

/// A nested run shares the working copy and environment of the run it is nested in: the
/// command replaces this process. Returns only when it could not be started.
pub(crate) fn run_nested(command: &[OsString], path: &std::path::Path) -> crate::error::CliError {
    let (code, source) = process::exec(command, Some(path));
    error::SessionError::NestedNotStarted {
        code,
        program: process::quote(&command[0].to_string_lossy()),
        source,
    }
    .into()
}

/// `--cleanup`: removes the workspace, whose lease the session holds, after its success.
pub(crate) fn remove_after_run(
    ctx: &Context,
    id: &WorkspaceId,
    lease: Lock,
) -> Result<(PathBuf, workspace::remove::Removal)> {
    let entry = crate::workspace::inventory::local(ctx, id)
        .ok_or_else(|| workspace::unknown(id, &ctx.layout.workspace(id)))?;
    let removal = workspace::remove::remove(
        ctx,
        &entry,
        &workspace::remove::Options::default(),
        Some(lease),
    )?;
    Ok((entry.path, removal))
}
