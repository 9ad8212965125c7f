//! A sandboxed jj workspace's own store: made ready before a sandboxed run (reused while
//! nothing changed on either side), its work brought back after it, removed with the
//! workspace.
//!
//! The store lives in `<namespace>/.private/<id>/`: `wc/.jj` is what the sandbox mounts as
//! the workspace's `.jj`; `synced` (never mounted) says which working-copy commit of the
//! user's store it was made from or last brought back to, and at which of its own operations;
//! `out/` receives an export's bundle. Nothing in `wc/` is ever read by jj or git outside a
//! sandbox once an agent could have written it: work comes back as a bundle made inside one.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{CliError, Result};
use crate::exec::process::Call;
use crate::exec::sandbox::{self, PrivateStore};
use crate::store::layout::WorkspaceId;
use crate::vcs::jj::{Jj, WorkingCommit, EXPORT_REF};
use crate::workspace::context::Context;

/// What `synced` records.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Synced {
    /// The user's store's working-copy commit of the workspace the store matches.
    at: WorkingCommit,
    /// The store's own operation heads then.
    op: String,
    /// The user's store's operation heads then (read before the commit): while they are
    /// the same, so is the workspace's working-copy commit there.
    user_op: String,
    /// The shared objects the store borrows.
    base_objects: Option<PathBuf>,
}

impl Synced {
    fn text(&self) -> String {
        let base = self
            .base_objects
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        format!(
            "commit {}\nparents {}\nop {}\nuser-op {}\nbase {}\n",
            self.at.commit,
            self.at.parents.join(" "),
            self.op,
            self.user_op,
            base
        )
    }

    fn parse(text: &str) -> Option<Synced> {
        let mut fields = std::collections::HashMap::new();
        for line in text.lines() {
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            fields.insert(key, value);
        }
        let base = fields.get("base")?;
        Some(Synced {
            at: WorkingCommit {
                commit: fields.get("commit")?.to_string(),
                parents: fields
                    .get("parents")?
                    .split_whitespace()
                    .map(str::to_string)
                    .collect(),
            },
            op: fields.get("op")?.to_string(),
            user_op: fields.get("user-op")?.to_string(),
            base_objects: (!base.is_empty()).then(|| PathBuf::from(base)),
        })
    }
}

fn wc(dir: &Path) -> PathBuf {
    dir.join("wc")
}

fn read_synced(dir: &Path) -> Option<Synced> {
    let text = crate::store::fsutil::read_untrusted_string(&dir.join("synced"), 64 << 10).ok()?;
    Synced::parse(&text)
}

fn write_synced(dir: &Path, synced: &Synced) -> Result<()> {
    Ok(crate::store::fsutil::write_atomic(
        &dir.join("synced"),
        synced.text().as_bytes(),
    )?)
}

fn mounts(dir: &Path, synced: &Synced, out: Option<PathBuf>) -> PrivateStore {
    PrivateStore {
        dot_jj: wc(dir).join(".jj"),
        base_objects: synced.base_objects.clone(),
        out,
    }
}

fn io(action: &'static str, path: &Path, err: &std::io::Error) -> CliError {
    CliError::io(action, path, err)
}

/// Makes workspace `id`'s own store ready for a sandboxed run and says how to mount it;
/// none for a git repository (which shares its store, see docs/guarantees.md). Work the
/// store holds that was not brought back yet (a run killed before) is brought back first;
/// a store the user's side moved away from (a checkpoint, a land) is made again.
pub(crate) fn prepare(
    ctx: &Context,
    id: &WorkspaceId,
    ws: &Path,
    bwrap: &Path,
) -> Result<Option<PrivateStore>> {
    let Some(jj) = ctx.vcs.as_jj() else {
        return Ok(None);
    };
    let dir = ctx.layout.private_store(id);
    if let Some(mut synced) = read_synced(&dir).filter(|_| wc(&dir).is_dir()) {
        if Jj::private_op_heads(&wc(&dir)).as_deref() != Some(synced.op.as_str()) {
            bring_back(ctx, id, ws, bwrap).map_err(|err| {
                err.hint(format!(
                    "the command was not run; the agent's commits stay in its own store {} (its files are in the workspace): to start afresh from the workspace's files, delete {} (those commits are then lost)",
                    wc(&dir).display(),
                    dir.display()
                ))
            })?;
            synced = read_synced(&dir).unwrap_or(synced);
        }
        // Nothing happened in the user's store since: no jj needs asking.
        if jj.op_heads_key().as_deref() == Some(synced.user_op.as_str()) {
            return Ok(Some(mounts(&dir, &synced, None)));
        }
        let user_op = jj.op_heads_key().unwrap_or_default();
        let now = jj.working_commit(id, ws, false)?;
        if now.commit == synced.at.commit {
            synced.user_op = user_op;
            write_synced(&dir, &synced)?;
            return Ok(Some(mounts(&dir, &synced, None)));
        }
    }
    make(ctx, jj, id, ws, &dir).map(Some)
}

/// Makes the store afresh from the workspace's working-copy commit (snapshotted first).
fn make(ctx: &Context, jj: &Jj, id: &WorkspaceId, ws: &Path, dir: &Path) -> Result<PrivateStore> {
    if fs::symlink_metadata(dir).is_ok() {
        fs::remove_dir_all(dir).map_err(|e| io("remove", dir, &e))?;
    }
    fs::create_dir_all(dir).map_err(|e| io("create", dir, &e))?;
    // Read before the commit (an operation in between is then only asked about next time).
    let user_op = jj.op_heads_key().unwrap_or_default();
    let at = jj.working_commit(id, ws, true)?;
    let bases = ctx.layout.private_stores().join(".bases");
    let base_objects = match at.parents.first() {
        Some(parent) => Some(jj.base_objects(parent, &bases)?),
        None => None,
    };
    let made = jj.make_private(&wc(dir), ws, &at, base_objects.as_deref());
    if let Err(err) = made {
        let _ = fs::remove_dir_all(dir);
        return Err(CliError::from(err).hint(
            "the workspace's own store for sandboxed runs could not be made; the command was not run",
        ));
    }
    let synced = Synced {
        at,
        op: Jj::private_op_heads(&wc(dir)).unwrap_or_default(),
        user_op,
        base_objects,
    };
    write_synced(dir, &synced)?;
    Ok(mounts(dir, &synced, None))
}

/// Brings back what the agent did in workspace `id`'s own store, when it did anything:
/// inside the same confinement its `@` is exported as a git bundle, which is then fetched
/// into the user's store with the user's configuration and becomes the workspace's
/// working-copy commit (see `Jj::take_back`). Nothing to do for git or an untouched store.
pub(crate) fn bring_back(ctx: &Context, id: &WorkspaceId, ws: &Path, bwrap: &Path) -> Result<()> {
    let Some(jj) = ctx.vcs.as_jj() else {
        return Ok(());
    };
    let dir = ctx.layout.private_store(id);
    let Some(synced) = read_synced(&dir).filter(|_| wc(&dir).is_dir()) else {
        return Ok(());
    };
    if Jj::private_op_heads(&wc(&dir)).as_deref() == Some(synced.op.as_str()) {
        return Ok(());
    }
    let kept = || {
        format!(
            "the agent's commits stay in its own store {} (its files are in the workspace); the next sandboxed run tries again",
            wc(&dir).display()
        )
    };
    let out = dir.join("out");
    if fs::symlink_metadata(&out).is_ok() {
        fs::remove_dir_all(&out).map_err(|e| io("remove", &out, &e))?;
    }
    fs::create_dir(&out).map_err(|e| io("create", &out, &e))?;
    export(ctx, ws, &dir, &synced, &out, bwrap).map_err(|err| {
        CliError::failure(format!(
            "could not export the work of workspace {id:?} from its sandbox"
        ))
        .cause(err.message.clone())
        .hint(kept())
    })?;
    let bundle = out.join("export.bundle");
    // Written inside the sandbox, whose processes have all ended: only a regular file is
    // handed to git.
    match fs::symlink_metadata(&bundle) {
        Ok(meta) if meta.file_type().is_file() => {}
        _ => {
            return Err(CliError::failure(format!(
                "the export of workspace {id:?} left no bundle (or not a regular file) at {}",
                bundle.display()
            ))
            .hint(kept()))
        }
    }
    let op = Jj::private_op_heads(&wc(&dir)).unwrap_or_default();
    jj.take_back(id, ws, &bundle).map_err(|err| {
        CliError::from(err)
            .cause(format!("bringing back the work of workspace {id:?}"))
            .hint(kept())
    })?;
    let _ = fs::remove_dir_all(&out);
    let user_op = jj.op_heads_key().unwrap_or_default();
    let at = jj.working_commit(id, ws, false)?;
    write_synced(
        &dir,
        &Synced {
            at,
            op,
            user_op,
            base_objects: synced.base_objects,
        },
    )
}

/// Runs the export in the sandbox: the agent's `@` given a bookmark, exported to its git
/// store and bundled from there (everything above the commits the user's store has).
fn export(
    ctx: &Context,
    ws: &Path,
    dir: &Path,
    synced: &Synced,
    out: &Path,
    bwrap: &Path,
) -> Result<()> {
    let canonical = fs::canonicalize(ws).map_err(|e| io("resolve", ws, &e))?;
    let namespace_dir = canonical.parent().unwrap_or(&canonical).to_path_buf();
    let me = std::env::current_exe().map_err(|e| {
        CliError::failure("cannot locate the agent-workspace binary").cause(e.to_string())
    })?;
    let scope = sandbox::Scope {
        repo: &ctx.repo,
        workspace: &canonical,
        namespace_dir: &namespace_dir,
        readable: sandbox::readable(&me),
        private: Some(mounts(dir, synced, Some(out.to_path_buf()))),
    };
    let options = sandbox::Options {
        network: false,
        writable: vec![],
        sockets: vec![],
    };
    let seccomp = std::os::fd::OwnedFd::from(sandbox::seccomp()?);
    let fd = std::os::fd::AsRawFd::as_raw_fd(&seccomp);
    let args = sandbox::args(&options, &scope, fd)?;
    let bookmark = EXPORT_REF.trim_start_matches("refs/heads/");
    let script = format!(
        "set -e\n\
         jj --no-pager --color=never --quiet bookmark set {bookmark} -r @ --allow-backwards\n\
         jj --no-pager --color=never --quiet --ignore-working-copy git export\n\
         out=\"$1\"; shift\n\
         git --git-dir=.jj/repo/store/git bundle create -q \"$out/export.bundle\" {EXPORT_REF} \"$@\"\n"
    );
    let excluded = synced.at.parents.iter().map(|p| format!("^{p}"));
    Call::new(bwrap)
        .args(args)
        .args(["sh", "-c", &script, "sh"])
        .arg(out)
        .args(excluded)
        .dir(&canonical)
        .pass(seccomp)
        .stdout()
        .map_err(|e| CliError::failure(e.to_string()).cause(e.stderr().trim().to_string()))?;
    Ok(())
}

/// Before workspace `id` at `ws` is removed: brings back what its own store holds that was
/// not brought back yet (a sandboxed run killed before it could), in a sandbox as always.
/// Whether the store may then go.
pub(crate) fn settle(ctx: &Context, id: &WorkspaceId, ws: &Path) -> bool {
    let dir = ctx.layout.private_store(id);
    if fs::symlink_metadata(&dir).is_err() || untouched(&dir) {
        return true;
    }
    let Ok(bwrap) = sandbox::find() else {
        return false;
    };
    bring_back(ctx, id, ws, &bwrap).is_ok()
}

/// Whether the store at `dir` did nothing since it was made or last brought back.
fn untouched(dir: &Path) -> bool {
    read_synced(dir)
        .is_some_and(|synced| Jj::private_op_heads(&wc(dir)).as_deref() == Some(synced.op.as_str()))
}

/// Removes workspace `id`'s own store with the workspace, unless it holds work that was not
/// brought back (`settled`: what [`settle`] said, when it was asked): then it is kept, and
/// its path returned.
pub(crate) fn remove(ctx: &Context, id: &WorkspaceId, settled: Option<bool>) -> Option<PathBuf> {
    let dir = ctx.layout.private_store(id);
    fs::symlink_metadata(&dir).ok()?;
    if settled.unwrap_or_else(|| untouched(&dir)) || !wc(&dir).is_dir() {
        let _ = fs::remove_dir_all(&dir);
        prune_bases(&ctx.layout.private_stores());
        return None;
    }
    Some(wc(&dir))
}

/// Removes the base packs no store borrows any more. A pack made in the last hour is left
/// alone: a store being made may not have recorded it yet.
fn prune_bases(stores: &Path) {
    let Ok(entries) = fs::read_dir(stores) else {
        return;
    };
    let used: Vec<PathBuf> = entries
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            (!name.starts_with('.')).then(|| read_synced(&stores.join(name)))?
        })
        .filter_map(|synced| synced.base_objects)
        .collect();
    let bases = stores.join(".bases");
    let Ok(entries) = fs::read_dir(&bases) else {
        return;
    };
    let hour = std::time::Duration::from_secs(3600);
    for entry in entries.flatten() {
        let path = entry.path();
        let recent = entry
            .metadata()
            .and_then(|m| m.modified())
            .map(|t| t.elapsed().unwrap_or_default() < hour)
            .unwrap_or(true);
        if !recent && !used.iter().any(|objects| objects.starts_with(&path)) {
            let _ = fs::remove_dir_all(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_base_packs_no_store_borrows_and_older_than_an_hour_go() {
        let tmp = tempfile::tempdir().unwrap();
        let stores = tmp.path();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
        for base in ["used", "unused", "fresh"] {
            let dir = stores.join(".bases").join(base);
            fs::create_dir_all(dir.join("objects")).unwrap();
            if base != "fresh" {
                let handle = fs::File::open(&dir).unwrap();
                handle.set_modified(old).unwrap();
            }
        }
        fs::create_dir_all(stores.join("w")).unwrap();
        let synced = Synced {
            at: WorkingCommit {
                commit: "c".into(),
                parents: vec![],
            },
            op: "o".into(),
            user_op: "u".into(),
            base_objects: Some(stores.join(".bases/used/objects")),
        };
        write_synced(&stores.join("w"), &synced).unwrap();
        prune_bases(stores);
        assert!(stores.join(".bases/used").is_dir());
        assert!(stores.join(".bases/fresh").is_dir());
        assert!(!stores.join(".bases/unused").exists());
    }

    #[test]
    fn synced_reads_back_what_it_wrote() {
        let synced = Synced {
            at: WorkingCommit {
                commit: "abc".into(),
                parents: vec!["p1".into(), "p2".into()],
            },
            op: "o1,o2".into(),
            user_op: "u1".into(),
            base_objects: Some("/x/objects".into()),
        };
        assert_eq!(Synced::parse(&synced.text()), Some(synced.clone()));
        let rootless = Synced {
            at: WorkingCommit {
                commit: "abc".into(),
                parents: vec![],
            },
            base_objects: None,
            ..synced
        };
        assert_eq!(Synced::parse(&rootless.text()), Some(rootless));
    }
}
