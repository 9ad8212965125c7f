//! The pool of prepared workspaces (`pool.size`, `pool fill|status|drain`): workspaces
//! registered and checked out ahead of time at `<namespace>/.pool-<token>`, each with its
//! tools bundle, copied files and setup in place, handed out to a run that creates a
//! workspace by a rename and a checkout of only the files that differ.
//!
//! Files, under `<namespace>/.pool/`: `<token>.json`, written last when an entry is complete
//! (an entry without it is being prepared, or was left half done and is discarded by the next
//! fill or drain); `<token>.taking`, a take's journal, written before the entry is touched and
//! removed once the workspace's state is saved: a take a crash interrupted is discarded by the
//! next creation, so a crash leaves a pool entry or a complete workspace, never a half.
//! Takes hold the repository lock; fills hold the pool lock (never the repository lock
//! while checking out), so a run never waits for a fill.

mod discard;
pub(crate) mod fill;
mod take;

pub(crate) use discard::{drain, recover, recover_taken, settle};
pub(crate) use take::{abandon, begin, complete, finish, take};

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::store::layout::{Layout, WorkspaceId, POOL_DIR, POOL_PREFIX};
use crate::store::metadata::Record;
use crate::store::timestamp::Timestamp;
use crate::workspace::context::Context;

/// A prepared workspace's ready file: what it was prepared as.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct Ready {
    pub schema_version: u32,
    /// The configuration it was prepared under ([`fingerprint`]); another one makes it stale.
    pub fingerprint: String,
    pub prepared_at: Timestamp,
    /// The commits it is checked out on.
    pub base_commits: Vec<String>,
    /// Its tools bundle, copied files and setup, as its record had them.
    pub record: Record,
}

/// What a pool entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub(crate) enum State {
    /// Complete, and prepared under the current configuration: a run may take it.
    Ready,
    /// Complete, but prepared under another configuration: the next fill replaces it.
    Stale,
    /// Being prepared by a fill that holds the pool lock.
    Preparing,
    /// Left half done by an interrupted fill: the next fill or drain removes it.
    Incomplete,
}

/// One prepared workspace.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub token: String,
    pub path: PathBuf,
    pub state: State,
    pub ready: Option<Ready>,
}

impl Entry {
    /// Its name in the backend (jj's workspace name); `None` only for a token no listed
    /// entry has (each is checked when read).
    pub(crate) fn name(&self) -> Option<WorkspaceId> {
        WorkspaceId::prepared(&self.token)
    }
}

pub(crate) fn ready_file(layout: &Layout, token: &str) -> PathBuf {
    layout.pool_dir().join(format!("{token}.json"))
}

// The journal of a take (`<namespace>/.pool/<token>.taking`): written before a prepared
// workspace is touched, naming the id it becomes; read so a half-taken one is never listed.

/// The journal of a take of prepared workspace `token`.
pub(crate) fn journal(layout: &Layout, token: &str) -> PathBuf {
    layout.pool_dir().join(format!("{token}.taking"))
}

/// The ids a take's journal names whose workspace has no state yet: a half-taken entry,
/// never listed as a workspace.
pub(crate) fn taking(namespace_dir: &Path) -> Vec<WorkspaceId> {
    let Ok(dir) = fs::read_dir(namespace_dir.join(POOL_DIR)) else {
        return vec![];
    };
    dir.filter_map(|e| {
        let name = e.ok()?.file_name().into_string().ok()?;
        name.strip_suffix(".taking")?;
        let text = fs::read_to_string(namespace_dir.join(POOL_DIR).join(&name)).ok()?;
        let id = WorkspaceId::parse(text.lines().next()?).ok()?;
        let state = crate::store::state::path(&namespace_dir.join(id.as_str()));
        fs::symlink_metadata(state).is_err().then_some(id)
    })
    .collect()
}

/// A token is what follows `.pool-`: lowercase letters and digits only.
fn valid_token(token: &str) -> bool {
    WorkspaceId::prepared(token).is_some()
}

/// A new token, unique in this namespace: the time in nanoseconds and the process id.
fn new_token() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{nanos:x}{:x}", std::process::id())
}

/// What the configuration gives every new workspace; an entry prepared under other values
/// is not what a creation now would make.
pub(crate) fn fingerprint(ctx: &Context) -> String {
    let c = &ctx.config;
    let text = format!(
        "{:?}|{:?}|{:?}|{}|{:?}|{:?}",
        ctx.repo.backend,
        c.setup.as_ref().map(|s| &s.argv),
        c.copy_include,
        c.tools_dir,
        c.tools_paths,
        c.tools_paths_set
    );
    crate::store::state::digest(text.as_bytes())
}

/// Every prepared workspace of the namespace, oldest first, except those a take's journal
/// names (they are being taken, or are the recovery's to discard), then the registrations a
/// kill left without a directory ([`leaked`]); and whether a fill was under way when they
/// were read, the one answer their states were told from (asking again could see a fill
/// that has ended since beside entries still shown preparing).
pub(crate) fn entries(ctx: &Context) -> (Vec<Entry>, bool) {
    // The backend is asked first: the slow part, kept out of the time between asking whether
    // a fill is under way and reading the entries (and the caller asking it again).
    let registered = ctx.vcs.list().unwrap_or_default();
    let filling = crate::store::lock::is_held(&ctx.layout.pool_lock());
    let mut found = list(ctx, filling);
    found.extend(leaked_of(ctx, registered, filling));
    (found, filling)
}

/// The backend's registrations of prepared workspaces (`.pool-<token>`) whose directory is
/// gone and that no take's journal names: what a fill or drain killed between deleting a
/// directory and forgetting it (or a directory deleted by hand) leaves. Incomplete (or
/// preparing, while a fill holds the pool lock); the next fill or drain forgets them. Asks
/// the backend, so a take never calls it.
pub(crate) fn leaked(ctx: &Context, filling: bool) -> Vec<Entry> {
    leaked_of(ctx, ctx.vcs.list().unwrap_or_default(), filling)
}

/// [`leaked`] among `registered`.
fn leaked_of(ctx: &Context, registered: Vec<crate::vcs::Registered>, filling: bool) -> Vec<Entry> {
    let mut found: Vec<Entry> = registered
        .into_iter()
        .filter_map(|reg| {
            let token = reg.name.strip_prefix(POOL_PREFIX)?.to_string();
            let path = ctx.layout.pool_entry(&token);
            let ours = reg.path.as_deref().is_none_or(|p| p == path);
            let gone = fs::symlink_metadata(&path).is_err();
            let taking = fs::symlink_metadata(journal(&ctx.layout, &token)).is_ok();
            (valid_token(&token) && ours && gone && !taking).then_some(Entry {
                path,
                token,
                state: match filling {
                    true => State::Preparing,
                    false => State::Incomplete,
                },
                ready: None,
            })
        })
        .collect();
    found.sort_by(|a, b| a.token.cmp(&b.token));
    found.dedup_by(|a, b| a.token == b.token);
    found
}

/// [`entries`], where `filling` says whether a fill is under way in another process.
fn list(ctx: &Context, filling: bool) -> Vec<Entry> {
    let layout = &ctx.layout;
    let Ok(dir) = fs::read_dir(&layout.dir) else {
        return vec![];
    };
    let current = fingerprint(ctx);
    let mut found: Vec<Entry> = dir
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            let token = name.strip_prefix(POOL_PREFIX)?.to_string();
            (valid_token(&token) && e.file_type().ok()?.is_dir()).then_some(token)
        })
        .filter(|token| fs::symlink_metadata(journal(layout, token)).is_err())
        .map(|token| {
            let ready = read_ready(layout, &token);
            let state = match &ready {
                Some(r) if r.fingerprint == current => State::Ready,
                Some(_) => State::Stale,
                None if filling => State::Preparing,
                None => State::Incomplete,
            };
            Entry {
                path: layout.pool_entry(&token),
                token,
                state,
                ready,
            }
        })
        .collect();
    found.sort_by(|a, b| {
        let at = |e: &Entry| e.ready.as_ref().and_then(|r| r.prepared_at.time());
        at(a).cmp(&at(b)).then(a.token.cmp(&b.token))
    });
    found
}

fn read_ready(layout: &Layout, token: &str) -> Option<Ready> {
    let file = crate::store::fsutil::open_existing_nofollow(&ready_file(layout, token)).ok()?;
    let ready: Ready = serde_json::from_reader(std::io::BufReader::new(file)).ok()?;
    (ready.schema_version == 1).then_some(ready)
}

/// Starts `pool refill` detached, to bring the pool back to `pool.size` without delaying
/// anyone: it holds no lease, takes the pool lock only if free, and writes what it says to
/// `<namespace>/.pool/refill.log`.
pub(crate) fn refill_in_background(ctx: &Context) -> crate::error::Result<()> {
    let exe = std::env::current_exe().map_err(|e| {
        crate::workspace::error::WorkspaceError::io(
            "find",
            std::path::Path::new("agent-workspace"),
            e,
        )
    })?;
    crate::store::fsutil::create_dir_nofollow(&ctx.layout.pool_dir())?;
    let log_path = ctx.layout.pool_dir().join("refill.log");
    let log = crate::store::fsutil::open_nofollow(&log_path)?;
    let _ = log.set_len(0);
    crate::exec::process::Call::new(exe)
        .arg("--root")
        .arg(&ctx.layout.root)
        .arg("--repo")
        .arg(&ctx.repo.root)
        .args(["--backend", ctx.repo.backend.as_str(), "pool", "refill"])
        .dir(&ctx.repo.root)
        .detach(log)?;
    Ok(())
}
