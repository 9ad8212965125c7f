//! What exists in a namespace: workspace directories, their records, and what the backend
//! has registered, reconciled into one list with each workspace's effective state.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::CliError;
use crate::exec::liveness;
use crate::store::layout::WorkspaceId;
use crate::store::metadata::{self, Loaded, Record, Status};
use crate::store::summary::Records;
use crate::store::timestamp::Timestamp;
use crate::vcs::Registered;
use crate::workspace::context::Context;
use crate::workspace::verdict::{self, Mismatch, Registration};

/// Something wrong with a workspace, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
    /// Recorded as running, but its supervising process is gone.
    Crashed,
    /// The backend knows it but the directory is gone.
    MissingDirectory,
    /// The directory exists but the backend no longer knows it.
    Unregistered,
    CorruptMetadata(String),
    MissingMetadata,
    NewerSchema(u64),
    /// The workspace path is a symlink or a file.
    NotADirectory,
    /// The record view in the workspace differs from agent-workspace's state.
    TamperedRecord,
    /// Its state disagrees with this command's backend or branch prefix.
    Mismatch(Mismatch),
    /// The backend knows it under another name (`jj workspace rename`).
    Renamed(String),
}

impl Problem {
    pub(crate) fn code(&self) -> &'static str {
        match self {
            Problem::Crashed => "crashed",
            Problem::MissingDirectory => "missing-directory",
            Problem::Unregistered => "unregistered",
            Problem::CorruptMetadata(_) => "corrupt-metadata",
            Problem::MissingMetadata => "missing-metadata",
            Problem::NewerSchema(_) => "newer-schema",
            Problem::NotADirectory => "not-a-directory",
            Problem::TamperedRecord => "tampered-record",
            Problem::Mismatch(Mismatch::Backend { .. }) => "backend-mismatch",
            Problem::Mismatch(Mismatch::Branch { .. }) => "branch-mismatch",
            Problem::Renamed(_) => "renamed",
        }
    }
}

/// One workspace of the namespace as found on disk and in the backend.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub id: WorkspaceId,
    pub path: PathBuf,
    pub record: Option<Box<Record>>,
    /// The raw JSON of a record from a newer schema, shown as is. A `Value`, not a report
    /// type: it is foreign data (written by a newer build) that this one can only pass on.
    pub raw: Option<Value>,
    pub problem: Option<Problem>,
    /// A missing directory's record as agent-workspace's state still keeps it (shown, never
    /// acted on).
    pub kept: Option<Box<Record>>,
}

impl Entry {
    /// The status to show: the recorded one, `crashed` for a dead run, or the problem.
    pub(crate) fn status(&self) -> &str {
        match (&self.problem, &self.record) {
            (Some(Problem::Crashed), _) => "crashed",
            (None, Some(record)) => record.shown_status(),
            (Some(problem), Some(record))
                if !matches!(problem, Problem::Unregistered | Problem::Mismatch(_)) =>
            {
                record.shown_status()
            }
            (Some(problem), _) => problem.code(),
            (None, None) => "unknown",
        }
    }

    /// Whether a live run holds this workspace.
    pub(crate) fn is_live(&self) -> bool {
        self.record
            .as_ref()
            .is_some_and(|r| r.status == Status::Running)
            && self
                .problem
                .as_ref()
                .is_none_or(|p| matches!(p, Problem::TamperedRecord | Problem::Renamed(_)))
    }

    /// Its record, or for a workspace whose directory is gone the record agent-workspace
    /// still keeps in its own state: what the tool still knows (its workflow, its times).
    pub(crate) fn known_record(&self) -> Option<&Record> {
        self.record.as_deref().or(self.kept.as_deref())
    }

    /// When it was last updated, as `status` shows it: its record's, else (a missing
    /// directory) the kept record's.
    pub(crate) fn shown_updated_at(&self) -> Option<Timestamp> {
        self.updated_at()
            .or_else(|| self.kept.as_deref().map(|r| r.updated_at.clone()))
    }

    /// When its record was last updated (a newer schema's record: its `updated_at` when
    /// that is a string).
    pub(crate) fn updated_at(&self) -> Option<Timestamp> {
        match (&self.record, &self.raw) {
            (Some(record), _) => Some(record.updated_at.clone()),
            (None, Some(raw)) => raw
                .get("updated_at")
                .and_then(Value::as_str)
                .map(Timestamp::parse),
            _ => None,
        }
    }
}

/// Whether the lease of the workspace at `path` (`<ns>/.locks/<id>.lock`, beside it) is held.
fn lease_held(path: &std::path::Path) -> bool {
    match (path.parent(), path.file_name()) {
        (Some(ns), Some(id)) => {
            let mut name = id.to_os_string();
            name.push(".lock");
            crate::store::lock::is_held(&ns.join(".locks").join(name))
        }
        _ => false,
    }
}

/// Whether the run of the workspace at `path` recorded as running under process `pid`
/// (started at `start`) is over: its supervisor is gone and nothing holds its lease.
pub(crate) fn run_ended(path: &Path, pid: Option<u32>, start: Option<u64>) -> bool {
    !pid.is_some_and(|pid| liveness::is_alive(pid, start)) && !lease_held(path)
}

/// Reads one workspace directory's record into an entry; `kind` is its type when already
/// known from a directory listing.
fn read(id: WorkspaceId, path: PathBuf, kind: Option<std::fs::FileType>) -> Entry {
    read_with(id, path, kind, &mut metadata::load)
}

/// [`read`], loading the record with `load`.
fn read_with(
    id: WorkspaceId,
    path: PathBuf,
    kind: Option<std::fs::FileType>,
    load: &mut dyn FnMut(&Path) -> Loaded,
) -> Entry {
    let mut entry = Entry {
        id,
        path,
        record: None,
        raw: None,
        problem: None,
        kept: None,
    };
    let kind = kind
        .map(Ok)
        .unwrap_or_else(|| std::fs::symlink_metadata(&entry.path).map(|m| m.file_type()));
    match kind {
        Ok(t) if t.is_symlink() || !t.is_dir() => {
            entry.problem = Some(Problem::NotADirectory);
            return entry;
        }
        Err(_) => {
            entry.problem = Some(Problem::MissingDirectory);
            entry.kept = kept(&entry.path);
            return entry;
        }
        Ok(_) => {}
    }
    match load(&entry.path) {
        Loaded::Ok(record) => {
            // A run whose supervisor died still holds the workspace while its guard ends the
            // processes it left (the guard shares the lease): crashed only once that is done.
            let dead = record.status == Status::Running
                && run_ended(&entry.path, record.pid, record.pid_start);
            if dead {
                entry.problem = Some(Problem::Crashed);
            } else if record.origin == metadata::Origin::Tampered {
                entry.problem = Some(Problem::TamperedRecord);
            }
            entry.record = Some(record);
        }
        Loaded::Missing => entry.problem = Some(Problem::MissingMetadata),
        Loaded::Corrupt(why) => entry.problem = Some(Problem::CorruptMetadata(why)),
        Loaded::Newer(version, raw) => {
            entry.problem = Some(Problem::NewerSchema(version));
            entry.raw = Some(raw);
        }
    }
    entry
}

/// The record agent-workspace's state keeps for the workspace at `path` (whose directory is
/// gone), when it is readable.
fn kept(path: &Path) -> Option<Box<Record>> {
    match metadata::load(path) {
        Loaded::Ok(record) => Some(record),
        _ => None,
    }
}

/// Every workspace of the namespace: directories plus what the backend registered there.
/// Makes one backend call (names only), and a second (with paths) only when a directory's
/// name is not registered, to find it under another name; when the backend fails,
/// registration is not checked.
pub(crate) fn all(ctx: &Context) -> (Vec<Entry>, Option<CliError>) {
    all_with(ctx, &mut ask_backend(ctx), None)
}

/// [`all`] for the `status` table: the records come through the namespace's kept records
/// ([`Records`]), so an unchanged workspace costs two `stat`s. Its records have no run
/// history or trust digests: for showing, never for acting on.
pub(crate) fn table(ctx: &Context) -> (Vec<Entry>, Option<CliError>) {
    let mut records = Records::open(&ctx.layout.dir, &ctx.layout.cache());
    let found = all_with(ctx, &mut ask_backend(ctx), Some(&mut records));
    records.keep();
    found
}

fn ask_backend(ctx: &Context) -> impl FnMut(bool) -> crate::vcs::Result<Vec<Registered>> + '_ {
    |with_paths| match with_paths {
        true => ctx.vcs.list(),
        false => ctx.vcs.names(),
    }
}

/// [`all`], asking `ask` for the backend's workspaces (with their paths when passed
/// `true`): a caller may answer from what it asked before (`status --watch`). With
/// `records`, the records are read through them (see [`table`]).
pub(crate) fn all_with(
    ctx: &Context,
    ask: &mut dyn FnMut(bool) -> crate::vcs::Result<Vec<Registered>>,
    mut records: Option<&mut Records>,
) -> (Vec<Entry>, Option<CliError>) {
    let entries: BTreeMap<WorkspaceId, Entry> = directories(&ctx.layout.dir)
        .into_iter()
        .map(|(id, path, kind)| {
            let entry = match records.as_deref_mut() {
                Some(records) => read_with(id.clone(), path, kind, &mut |p| records.load(p)),
                None => read(id.clone(), path, kind),
            };
            (id, entry)
        })
        .collect();
    // A lease file without a directory is a workspace deleted by hand (clean removes the
    // lease with the workspace): only then are the recorded paths needed, to tell it from a
    // workspace of the same name elsewhere. Names alone are far cheaper to list.
    let drifted = leases(ctx).iter().any(|id| !entries.contains_key(id));
    let registered = match ask(drifted) {
        Ok(list) => list,
        Err(err) => return (entries.into_values().collect(), Some(err.into())),
    };
    // A directory jj does not know by its name may be a workspace renamed in jj: only the
    // recorded paths can tell, so then the list with paths is read before reconciling.
    let names: std::collections::HashSet<&str> =
        registered.iter().map(|r| r.name.as_str()).collect();
    let unknown = entries.keys().any(|id| !names.contains(id.as_str()));
    drop(names);
    let registered = match (unknown && !drifted, registered) {
        (true, names) => match ask(true) {
            Ok(list) => list,
            Err(err) => return (reconcile(ctx, entries, names), Some(err.into())),
        },
        (false, registered) => registered,
    };
    (reconcile(ctx, entries, registered), None)
}

/// Matches directories with registrations, then checks each against this command's settings.
fn reconcile(
    ctx: &Context,
    mut entries: BTreeMap<WorkspaceId, Entry>,
    registered: Vec<Registered>,
) -> Vec<Entry> {
    let mut known = std::collections::BTreeSet::new();
    // A prepared workspace a crashed take left registered under its new id is the pool's.
    let taking = crate::workspace::pool::taking(&ctx.layout.dir);
    for reg in registered
        .into_iter()
        .filter(|r| !taking.iter().any(|t| *t == r.name))
    {
        // Where a workspace of this name would be (only compared: the name is not checked yet).
        let ours = || ctx.layout.dir.join(&reg.name);
        if let Some(at) = reg.path.as_deref().filter(|p| *p != ours()) {
            // Registered elsewhere; ours under another name if its root is one of our dirs.
            let id = at.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if at.parent() == Some(ctx.layout.dir.as_path()) {
                if let Some(entry) = entries.get_mut(id) {
                    if entry.problem != Some(Problem::NotADirectory) {
                        entry.problem = Some(Problem::Renamed(reg.name.clone()));
                    }
                    known.insert(entry.id.clone());
                }
            }
            continue;
        }
        let Ok(id) = WorkspaceId::parse(&reg.name) else {
            continue;
        };
        if ctx.vcs.check_id(&id).is_err() {
            continue;
        }
        known.insert(id.clone());
        // A registration without a directory is ours only if we ever ran it (its lease file
        // exists); otherwise it is some other workspace whose directory went away.
        if reg.path.is_none() && !entries.contains_key(&id) && !ctx.layout.lease(&id).exists() {
            continue;
        }
        if !entries.contains_key(&id) {
            let ours = ours();
            entries.insert(
                id.clone(),
                Entry {
                    id,
                    kept: kept(&ours),
                    path: ours,
                    record: None,
                    raw: None,
                    problem: Some(Problem::MissingDirectory),
                },
            );
        }
    }
    for entry in entries.values_mut() {
        if !known.contains(&entry.id)
            && entry
                .problem
                .as_ref()
                .is_none_or(|p| *p != Problem::NotADirectory)
        {
            entry.problem = Some(Problem::Unregistered);
        }
        check_settings(ctx, entry);
    }
    entries.into_values().collect()
}

/// Marks an entry whose state disagrees with this command's backend or branch prefix.
fn check_settings(ctx: &Context, entry: &mut Entry) {
    if entry.problem == Some(Problem::NotADirectory) {
        return;
    }
    if let Some(m) = entry
        .record
        .as_ref()
        .and_then(|r| verdict::mismatch(ctx.repo.backend, &ctx.vcs, &entry.id, r))
    {
        entry.problem = Some(Problem::Mismatch(m));
    }
}

/// Whether some lease file has no workspace among `entries` (a workspace deleted by hand):
/// listing the table then needed the backend's recorded paths.
pub(crate) fn drifted(ctx: &Context, entries: &[Entry]) -> bool {
    let ids: std::collections::HashSet<&str> = entries.iter().map(|e| e.id.as_str()).collect();
    leases(ctx).iter().any(|id| !ids.contains(id.as_str()))
}

/// The ids that have a lease file.
fn leases(ctx: &Context) -> Vec<WorkspaceId> {
    let Ok(entries) = std::fs::read_dir(ctx.layout.locks()) else {
        return vec![];
    };
    entries
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .into_string()
                .ok()?
                .strip_suffix(".lock")
                .and_then(|id| WorkspaceId::parse(id).ok())
        })
        .collect()
}

/// A workspace whose directory exists, read from its files alone (no backend call, so an
/// unregistered directory is not detected here).
pub(crate) fn local(ctx: &Context, id: &WorkspaceId) -> Option<Entry> {
    if half_taken(ctx, id) {
        return None;
    }
    let path = ctx.layout.workspace(id);
    std::fs::symlink_metadata(&path).ok()?;
    let mut entry = read(id.clone(), path, None);
    check_settings(ctx, &mut entry);
    Some(entry)
}

/// One workspace, or `None` when neither a directory nor a registration exists. Its
/// registration is checked by name and by recorded root.
pub(crate) fn one(ctx: &Context, id: &WorkspaceId) -> (Option<Entry>, Option<CliError>) {
    if half_taken(ctx, id) {
        return (None, None);
    }
    let path = ctx.layout.workspace(id);
    let (all, warning) = if std::fs::symlink_metadata(&path).is_ok() {
        // Cheaper than listing everything: read this directory, then check registration.
        let mut entry = read(id.clone(), path, None);
        if entry.problem == Some(Problem::NotADirectory) {
            return (Some(entry), None);
        }
        let warning = match ctx.vcs.list() {
            Ok(list) => {
                match verdict::registration(&list, id, &entry.path) {
                    Registration::AsIs => {}
                    Registration::Renamed(name) => entry.problem = Some(Problem::Renamed(name)),
                    Registration::Unknown => entry.problem = Some(Problem::Unregistered),
                }
                None
            }
            Err(err) => Some(err.into()),
        };
        check_settings(ctx, &mut entry);
        return (Some(entry), warning);
    } else {
        all(ctx)
    };
    (all.into_iter().find(|e| e.id == *id), warning)
}

/// Whether `id` is a prepared workspace a take is handing over (or a crash interrupted
/// while it did): the pool's, not a workspace, as in [`all`].
fn half_taken(ctx: &Context, id: &WorkspaceId) -> bool {
    crate::workspace::pool::taking(&ctx.layout.dir).contains(id)
}

/// The workspace directories present in the namespace, with the type the directory listing
/// gave (so listing a thousand workspaces costs no stat each).
pub(crate) fn directories(
    namespace_dir: &Path,
) -> Vec<(WorkspaceId, PathBuf, Option<fs::FileType>)> {
    let Ok(entries) = fs::read_dir(namespace_dir) else {
        return vec![];
    };
    // A prepared workspace a crashed take left under its new id is the pool's, not a workspace.
    let taking = crate::workspace::pool::taking(namespace_dir);
    let mut found: Vec<_> = entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name().into_string().ok()?;
            let id = WorkspaceId::parse(&name).ok()?;
            (!taking.contains(&id)).then_some(())?;
            Some((id, entry.path(), entry.file_type().ok()))
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}
