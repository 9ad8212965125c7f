//! The `.agent-workflow.json` record kept in every workspace, and its atomic load and save.

mod history;
mod land;
pub(crate) mod legacy;
mod parent;
mod setup;

pub(crate) use history::{Checkpoint, Run};
pub(crate) use land::{
    Check as LandCheck, Conflict, Intent as LandIntent, Land, LandTarget, Outcome as LandOutcome,
    Resolved, Side,
};
pub(crate) use parent::Parent;
pub(crate) use setup::{Setup, SetupStatus};

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::repo::Backend;
use crate::store::fsutil::FsError;
use crate::store::layout::WorkspaceId;
use crate::store::state::{self, Found};
use crate::store::timestamp::Timestamp;

type Result<T> = std::result::Result<T, FsError>;

/// File name of the record inside a workspace.
pub(crate) const FILE_NAME: &str = ".agent-workflow.json";
/// The schema this build writes; newer records are read but never overwritten.
pub(crate) const SCHEMA_VERSION: u64 = 1;
/// What a record's times look like (RFC 3339, UTC, whole seconds), as its schema says.
#[cfg(test)]
pub(crate) const TIMESTAMP_PATTERN: &str =
    "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$";
/// How many past runs a record keeps.
pub(crate) const MAX_RUNS: usize = 50;

/// What a workspace's last (or current) run recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub(crate) enum Status {
    Idle,
    Running,
    Done,
    Error,
    Interrupted,
}

impl Status {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Idle => "idle",
            Status::Running => "running",
            Status::Done => "done",
            Status::Error => "error",
            Status::Interrupted => "interrupted",
        }
    }
}

/// The workspace record. Unknown fields are kept so an older build never drops them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct Record {
    pub schema_version: u64,
    #[cfg_attr(test, schemars(regex(pattern = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")))]
    #[cfg_attr(test, schemars(with = "String"))]
    pub workspace_id: WorkspaceId,
    pub workflow: Option<String>,
    pub status: Status,
    #[serde(default)]
    pub command: Vec<String>,
    pub repo_root: PathBuf,
    pub workspace_path: PathBuf,
    #[serde(default)]
    pub namespace: String,
    pub backend: Backend,
    pub base_change: Option<String>,
    #[serde(default)]
    pub base_commits: Vec<String>,
    #[serde(default)]
    pub branch: Option<String>,
    #[serde(default)]
    pub direnv_allowed: bool,
    #[serde(default)]
    pub envrc_sha256: Option<String>,
    /// The digest of the `.envrc` the workspace started with (its base revision's), or
    /// `none` when it had none; unknown for a record rebuilt after it was lost.
    #[serde(default)]
    pub base_envrc_sha256: Option<String>,
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    pub created_at: Timestamp,
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    pub updated_at: Timestamp,
    #[serde(default)]
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    pub started_at: Option<Timestamp>,
    #[serde(default)]
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    pub finished_at: Option<Timestamp>,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub signal: Option<i32>,
    /// The sandbox's limit the last run reached, when it did (read from its cgroup).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_hit: Option<LimitHit>,
    /// The hosts the sandbox's proxy refused during the last run (`sandbox.allowed_hosts`),
    /// each with when it was first refused and how many times.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused_hosts: Vec<RefusedHost>,
    #[serde(default)]
    pub pid: Option<u32>,
    /// The supervising process's start time, so a reused pid is not taken for it.
    #[serde(default)]
    pub pid_start: Option<u64>,
    #[serde(default)]
    pub runs: Vec<Run>,
    /// Digests of the files the base revision's `.envrc` loads (`absent` for a missing one),
    /// taken at creation; unknown for a record rebuilt or migrated.
    #[serde(default)]
    pub envrc_loads_base: Option<BTreeMap<String, String>>,
    /// Digests of the files the `.envrc` loaded when it was last allowed.
    #[serde(default)]
    pub envrc_loads_allowed: BTreeMap<String, String>,
    /// The repository state (jj: operation heads) when the working copy was last found fresh,
    /// so the warm path asks jj again only after the repository changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked_op_heads: Option<String>,
    /// The workspace's TCP ports (`AGENT_WORKSPACE_PORT`), chosen free at creation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<u16>,
    /// What `copy.include` copied into the workspace at creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copied: Option<crate::store::reflink::Copied>,
    /// How the current (or last) run was sandboxed; none when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxOptions>,
    /// Whether a run was ever sandboxed in this workspace: what an agent wrote there (its
    /// `.envrc`, hooks, nested repositories) is then never run unconfined unless the user
    /// says so (`--no-sandbox`). Never cleared by a later run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub confined: bool,
    /// The workspace this one was started from (`run --parent`), set at creation.
    // A record is a file an agent may edit: a name that is no id is kept as written
    // (`Parent::Unreadable`) and refused where it is used, never taken for no parent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(with = "Option<String>"))]
    pub parent: Option<Parent>,
    /// How many checkpoints made a commit in this workspace (numbers the next one).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub checkpoints: u64,
    /// What the last `land` did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub land: Option<Land>,
    /// A `land` under way (or killed): saved before it changes anything, cleared when it
    /// ends; the next command finishes a killed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub land_intent: Option<LandIntent>,
    /// The tools bundle copied into the workspace (`tools.paths`), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<crate::store::tools::Recorded>,
    /// What the setup command (`setup.command`) did in this workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<Setup>,
    /// The last run that never started its command (its `.envrc` refused or failing, its
    /// tools or setup failed), until a run starts one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_started: Option<history::NotStarted>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// How this record was read; never written.
    #[serde(skip)]
    pub origin: Origin,
    /// Whether this command checked the last land against the repository; never written.
    #[serde(skip)]
    pub land_check: LandCheck,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Where a loaded record came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Agent-workspace's own state, with a view matching it (or a new record).
    #[default]
    State,
    /// The state, but the view in the workspace was changed (or removed) by someone else.
    Tampered,
    /// Only an in-workspace record from an older version: nothing in it is trusted.
    Legacy,
}

/// What reading a workspace's record found.
#[derive(Debug)]
pub(crate) enum Loaded {
    Missing,
    Ok(Box<Record>),
    /// Unparseable; the text of the error.
    Corrupt(String),
    /// Written by a newer agent-workspace: shown as is, never overwritten.
    Newer(u64, Value),
}

/// The record's path inside `workspace`.
pub(crate) fn path(workspace: &Path) -> PathBuf {
    workspace.join(FILE_NAME)
}

/// Now, to the second.
pub(crate) fn now() -> Timestamp {
    Timestamp::now()
}

/// Reads the record of the workspace at `workspace` (its layout path) without ever failing on
/// its content: from agent-workspace's state when there is one (noting whether the view in
/// the workspace still matches it), else from a record an older version left in the
/// workspace, stripped of everything that decides where to run or what to trust.
pub(crate) fn load(workspace: &Path) -> Loaded {
    match read_state(workspace) {
        Found::Ok((seal, record)) => from_state(workspace, seal, record, false),
        Found::Corrupt(why) => Loaded::Corrupt(why),
        Found::Missing => match legacy_view(workspace) {
            Loaded::Ok(mut record) => {
                // `direnv_allowed` is kept as the record says (`status` shows it): it trusts
                // nothing without the digest of the `.envrc` allowed, cleared here.
                record.envrc_sha256 = None;
                record.base_envrc_sha256 = None;
                record.envrc_loads_base = None;
                record.envrc_loads_allowed.clear();
                record.origin = Origin::Legacy;
                Loaded::Ok(anchor(record, workspace))
            }
            other => other,
        },
    }
}

/// The status the state of `workspace` records, read alone (the rest of the record is skipped,
/// its seal not checked): what a run that just ended recorded, for a caller that needs no
/// more. `None` when there is no state to read it from (then [`load`] reads what there is).
pub(crate) fn recorded_status(workspace: &Path) -> Option<Status> {
    #[derive(Deserialize)]
    struct State {
        record: StatusOnly,
    }
    #[derive(Deserialize)]
    struct StatusOnly {
        status: Status,
    }
    match state::read_as::<State>(workspace) {
        Found::Ok(state) => Some(state.record.status),
        _ => None,
    }
}

/// The view in the workspace alone, or a record the shell script agent-workspace replaces
/// wrote (as the view, or at [`legacy::SCRIPT_RECORD`]).
fn legacy_view(workspace: &Path) -> Loaded {
    match load_view(workspace) {
        Loaded::Missing => legacy::load(workspace),
        Loaded::Corrupt(why) => match crate::store::fsutil::read_untrusted(
            &path(workspace),
            crate::store::fsutil::UNTRUSTED_LIMIT,
        ) {
            Ok(text) => {
                legacy::convert(&text, workspace, FILE_NAME).unwrap_or(Loaded::Corrupt(why))
            }
            Err(_) => Loaded::Corrupt(why),
        },
        other => other,
    }
}

/// The state of `workspace`: its seal, and its record as [`parse`] reads it. A record this
/// build reads as it is (the usual one) is read in the same pass as the seal; any other
/// (unparseable, newer, needing a look as loose JSON) is read again as `parse` reads it.
fn read_state(workspace: &Path) -> Found<(state::Seal, Loaded)> {
    match state::read_with::<Box<Record>>(workspace) {
        Found::Ok(sealed) if sealed.record.schema_version <= SCHEMA_VERSION => {
            return Found::Ok((sealed.seal, Loaded::Ok(sealed.record)));
        }
        Found::Missing => return Found::Missing,
        _ => {}
    }
    match state::read(workspace) {
        Found::Ok(sealed) => Found::Ok((sealed.seal, parse(sealed.record.get().as_bytes()))),
        Found::Missing => Found::Missing,
        Found::Corrupt(why) => Found::Corrupt(why),
    }
}

/// The record read from a state with `seal`, noting whether the view matches the seal. A
/// view written after the state was read (a save in between) is told from a changed one by
/// reading the state again.
fn from_state(workspace: &Path, seal: state::Seal, record: Loaded, again: bool) -> Loaded {
    match record {
        Loaded::Ok(mut record) => {
            let view = state::view_digest(&path(workspace));
            if !seal.seals(view.as_deref()) {
                if let (false, Found::Ok((newer, its_record))) = (again, read_state(workspace)) {
                    if newer.seals(view.as_deref()) {
                        return from_state(workspace, newer, its_record, true);
                    }
                }
                record.origin = Origin::Tampered;
            }
            Loaded::Ok(anchor(record, workspace))
        }
        other => other,
    }
}

/// What identifies the state of `workspace` as last saved (every save replaces the file: a
/// new inode and modification time), so telling whether another process saved the record
/// since costs one stat.
pub(crate) fn saved_stamp(workspace: &Path) -> Option<(u64, i64, i64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::symlink_metadata(state::path(workspace)).ok()?;
    Some((meta.ino(), meta.mtime(), meta.mtime_nsec()))
}

/// Whether the view in `workspace` differs from the one its state was last written with
/// (false when there is no state to compare with).
pub(crate) fn view_changed(workspace: &Path) -> bool {
    match state::view_seal(workspace) {
        Found::Ok(seal) => {
            let view = state::view_digest(&path(workspace));
            view.is_none() || view != seal
        }
        _ => false,
    }
}

/// Paths and name come from the layout, never from the file.
fn anchor(mut record: Box<Record>, workspace: &Path) -> Box<Record> {
    record.workspace_path = workspace.to_path_buf();
    if let Some(id) = workspace
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(WorkspaceId::read)
    {
        record.workspace_id = id;
    }
    record
}

/// Reads the view in the workspace alone.
fn load_view(workspace: &Path) -> Loaded {
    let file = path(workspace);
    // An agent may have put a FIFO, a device or a symlink there: refused, never waited on.
    match crate::store::fsutil::read_untrusted(&file, crate::store::fsutil::UNTRUSTED_LIMIT) {
        Ok(text) => parse(&text),
        Err(e) if crate::store::fsutil::is_missing(&e) => Loaded::Missing,
        Err(e) => Loaded::Corrupt(format!("cannot read: {e}")),
    }
}

/// Parses record text; see [`Loaded`]. A current record is parsed once, straight into a
/// [`Record`]; only one that does not fit is looked at as loose JSON.
pub(crate) fn parse(text: &[u8]) -> Loaded {
    if let Ok(record) = serde_json::from_slice::<Record>(text) {
        if record.schema_version <= SCHEMA_VERSION {
            return Loaded::Ok(Box::new(record));
        }
    }
    let value: Value = match serde_json::from_slice(text) {
        Ok(value) => value,
        Err(e) => return Loaded::Corrupt(e.to_string()),
    };
    match value.get("schema_version").and_then(Value::as_u64) {
        Some(v) if v > SCHEMA_VERSION => Loaded::Newer(v, value),
        Some(_) => match serde_json::from_value::<Record>(value) {
            Ok(record) => Loaded::Ok(Box::new(record)),
            Err(e) => Loaded::Corrupt(e.to_string()),
        },
        None => Loaded::Corrupt("no schema_version".into()),
    }
}

/// Writes the record: first agent-workspace's state, then the view in the workspace, each
/// atomically (a temp file, then a rename over it).
pub(crate) fn save(record: &Record) -> Result<()> {
    let target = path(&record.workspace_path);
    let mut text = serde_json::to_vec_pretty(record)
        .map_err(|e| FsError::io("encode", &target, std::io::Error::other(e)))?;
    text.push(b'\n');
    state::write(&record.workspace_path, &text, &state::digest(&text))?;
    crate::store::fsutil::write_atomic(&target, &text)?;
    Ok(())
}

/// Moves an unreadable record (the state and the view) aside so it is kept, returning where
/// they went. A symlinked state file is refused, and nothing is moved.
pub(crate) fn keep_aside(workspace: &Path) -> Result<Vec<PathBuf>> {
    let stamp = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut kept: Vec<PathBuf> = state::keep_aside(workspace, stamp)?.into_iter().collect();
    let from = path(workspace);
    let to = workspace.join(format!("{FILE_NAME}.corrupt.{stamp}"));
    match fs::rename(&from, &to) {
        Ok(()) => kept.push(to),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(FsError::io("move aside", &from, e)),
    }
    Ok(kept)
}

/// How a run is confined, as the user asked and as the record keeps it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SandboxOptions {
    /// Whether the network stays reachable (`--no-network` removes it).
    pub network: bool,
    /// Extra paths the command may write (`--allow-write`, `AGENT_WORKSPACE_SANDBOX_WRITE`).
    #[serde(default)]
    pub writable: Vec<PathBuf>,
    /// Host unix sockets the command may reach (`sandbox.sockets`); every other one under
    /// `/run`, `$XDG_RUNTIME_DIR`, `$SSH_AUTH_SOCK` and `$DOCKER_HOST` is hidden.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sockets: Vec<PathBuf>,
    /// Paths the command may read beyond what a sandbox reads by default
    /// (`sandbox.readable`, the user's file only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readable: Vec<PathBuf>,
    /// Environment variables passed in although their names say they carry credentials
    /// (`sandbox.pass_env`, the user's file only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_env: Vec<String>,
    /// What the run could take of the machine (`[sandbox.limits]` or the defaults), as
    /// applied; none in records made before limits existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<SandboxLimits>,
    /// The hosts the run could reach, through its proxy (`sandbox.allowed_hosts`); none:
    /// every host when `network` is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_hosts: Option<Vec<String>>,
}

/// What one sandboxed run could take of the machine, as applied: a limit left out was not
/// (no cgroup for it on the host).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SandboxLimits {
    /// Processes and threads at once (the cgroup's `pids.max`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids: Option<u64>,
    /// Bytes of memory, tmpfs files and kernel memory included, no swap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<u64>,
    /// CPU time, in CPUs (a quota per period); `nproc` inside says this rounded up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(with = "Option<f64>"))]
    pub cpus: Option<Cpus>,
    /// Bytes of each tmpfs the sandbox mounts (`/tmp`, `/dev/shm`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmp: Option<u64>,
    /// The cgroup the limits were applied through; none: no process, memory or CPU limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<CgroupKind>,
}

/// A number of CPUs, kept in thousandths (so records compare exactly), written as a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cpus(pub u32);

impl Cpus {
    /// Whole CPUs, rounded up: how many a run's processes may be placed on.
    pub fn ceil(self) -> usize {
        self.0.div_ceil(1000) as usize
    }
}

impl std::fmt::Display for Cpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", f64::from(self.0) / 1000.0)
    }
}

impl Serialize for Cpus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_f64(f64::from(self.0) / 1000.0)
    }
}

impl<'de> Deserialize<'de> for Cpus {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Cpus, D::Error> {
        let cpus = f64::deserialize(d)?;
        let milli = (cpus * 1000.0).round();
        match milli >= 1.0 && milli <= f64::from(u32::MAX) {
            true => Ok(Cpus(milli as u32)),
            false => Err(serde::de::Error::custom("not a number of CPUs above 0")),
        }
    }
}

/// How a run's cgroup was made: directly in the cgroup v2 hierarchy, or in the v1
/// hierarchies of each controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum CgroupKind {
    V2,
    V1,
}

/// A sandbox limit a run reached: its memory (the kernel killed a process for it), or its
/// processes (a fork was refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub(crate) enum LimitHit {
    Memory,
    Pids,
}

/// A host the sandbox's proxy refused a connection to: `host:port` as the run asked for
/// it, when first refused, and how many times.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct RefusedHost {
    pub host: String,
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    pub at: Timestamp,
    pub times: u64,
}

#[cfg(test)]
mod tests;
