//! Filling the pool: preparing workspaces on the default base, each exactly as a creation
//! would make it (registered, checked out, `.envrc` allowed, tools bundle, copied files,
//! setup), under the pool lock only.

use std::os::fd::RawFd;
use std::path::PathBuf;

use super::{ready_file, Ready, State};
use crate::error::Result;
use crate::store::lock;
use crate::store::metadata::{self, SetupStatus};
use crate::workspace::context::Context;
use crate::workspace::error::PoolError;

/// What a fill did.
#[derive(Debug, Default)]
pub(crate) struct Filled {
    /// The prepared workspaces it made.
    pub prepared: Vec<PathBuf>,
    /// Entries it removed first: left incomplete, or prepared under another configuration.
    pub removed: Vec<PathBuf>,
    /// Ready entries now.
    pub ready: usize,
    /// Another fill held the pool lock and this one did not wait.
    pub busy: bool,
}

/// How a fill runs.
pub(crate) struct Options {
    /// Prepare until this many are ready.
    pub target: usize,
    /// Wait for another fill to finish (else leave it to that one).
    pub wait: bool,
    /// `--trust-config`: run the setup of a changed repository file.
    pub trust: bool,
}

/// Fills the pool up to `opts.target` ready workspaces. A failure discards the workspace it
/// was preparing and is returned; those prepared before it stay.
pub(crate) fn fill(
    ctx: &Context,
    opts: &Options,
    notes: &mut Vec<super::super::Note>,
) -> Result<Filled> {
    let pool_lock = match opts.wait {
        true => lock::exclusive(&ctx.layout.pool_lock())?,
        false => match lock::try_exclusive(&ctx.layout.pool_lock())? {
            Some(lock) => lock,
            None => {
                return Ok(Filled {
                    busy: true,
                    ..Filled::default()
                })
            }
        },
    };
    crate::store::fsutil::create_dir_nofollow(&ctx.layout.pool_dir())?;
    let mut filled = Filled::default();
    let mut found = super::list(ctx, false);
    found.extend(super::leaked(ctx, false));
    for entry in found {
        let removable = match entry.state {
            State::Incomplete => true,
            State::Stale => super::discard::unready(ctx, &entry)?,
            State::Ready | State::Preparing => false,
        };
        if removable {
            super::discard::discard_entry(ctx, &entry)?;
            filled.removed.push(entry.path);
        }
    }
    let ready = |ctx: &Context| {
        super::list(ctx, false)
            .iter()
            .filter(|e| e.state == State::Ready)
            .count()
    };
    while ready(ctx) < opts.target {
        if let Some(sig) = crate::exec::signals::received() {
            return Err(PoolError::Interrupted { signal: sig }.into());
        }
        super::super::capacity::check(
            &ctx.layout.dir,
            &ctx.layout.root,
            None,
            ctx.config.min_free_disk,
        )?;
        let token = super::new_token();
        match prepare(ctx, &token, opts.trust, pool_lock.fd(), notes) {
            Ok(path) => filled.prepared.push(path),
            Err(err) => {
                let entry = super::Entry {
                    path: ctx.layout.pool_entry(&token),
                    token,
                    state: State::Incomplete,
                    ready: None,
                };
                let log = keep_setup_log(ctx, &entry);
                let _ = super::discard::discard_entry(ctx, &entry);
                return Err(PoolError::NotPrepared {
                    err: Box::new(err),
                    log,
                }
                .into());
            }
        }
    }
    filled.ready = ready(ctx);
    Ok(filled)
}

/// Prepares one workspace at `<namespace>/.pool-<token>` and writes its ready file last.
fn prepare(
    ctx: &Context,
    token: &str,
    trust: bool,
    lock_fd: RawFd,
    notes: &mut Vec<super::super::Note>,
) -> Result<PathBuf> {
    let path = ctx.layout.pool_entry(token);
    // Tokens are made by `new_token`, so this refusal is only a guard.
    let name =
        crate::store::layout::WorkspaceId::prepared(token).ok_or_else(|| PoolError::BadToken {
            token: token.to_string(),
        })?;
    super::super::create::ensure_excluded(ctx)?;
    let base = ctx.vcs.resolve_base(None)?;
    ctx.progress.report(crate::progress::Phase::CheckingOut);
    ctx.vcs.prepare(&name, &path, &base)?;
    let req = super::super::Request {
        id: &name,
        base_change: None,
        workflow: None,
        parent: None,
        create: true,
        known_before: false,
    };
    let mut record = super::super::create::new_record(ctx, &req, &path, base.clone());
    if let Some((copied, _)) = super::super::copy::copy_included(ctx, &path)? {
        record.copied = Some(copied);
    }
    super::super::tools::sync(ctx, &mut record, false, trust, notes)?;
    if ctx.config.setup.is_some() {
        let loader = crate::workspace::direnv::prepare(&mut record, &ctx.vcs, false, true)?;
        let env = super::super::setup::Env {
            loader: &loader,
            sandboxing: None,
            lease: lock_fd,
            trust,
        };
        super::super::setup::run(ctx, &mut record, &env, notes).map_err(|err| {
            let refused = match record.setup.as_ref().map(|s| s.status) {
                Some(SetupStatus::Refused) => true,
                Some(SetupStatus::Failed) => false,
                _ => return err,
            };
            PoolError::Setup {
                err: Box::new(err),
                refused,
            }
            .into()
        })?;
        // Its record lives in the ready file: neither a view in the directory (which moves
        // with it) nor a state under its name.
        crate::store::fsutil::remove_file(&metadata::path(&path))?;
        crate::store::fsutil::remove_file(&crate::store::state::path(&path))?;
    }
    let ready = Ready {
        schema_version: 1,
        fingerprint: super::fingerprint(ctx),
        prepared_at: metadata::now(),
        base_commits: base,
        record,
    };
    let text =
        serde_json::to_vec_pretty(&ready).map_err(|source| PoolError::ReadyFile { source })?;
    crate::store::fsutil::write_atomic(&ready_file(&ctx.layout, token), &text)?;
    Ok(path)
}

/// A failed setup's log outlives the discarded workspace: `<namespace>/.pool/setup.log`.
fn keep_setup_log(ctx: &Context, entry: &super::Entry) -> Option<PathBuf> {
    let log = super::super::setup::log_path(&entry.path);
    let kept = failed_setup_log(ctx);
    std::fs::rename(log, &kept).ok().map(|()| kept)
}

/// Where the log of the last failed setup in a prepared workspace is kept.
pub(crate) fn failed_setup_log(ctx: &Context) -> PathBuf {
    ctx.layout.pool_dir().join("setup.log")
}
