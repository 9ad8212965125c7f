//! A sandboxed workspace's own store: made ready before a sandboxed run (reused while
//! nothing changed on either side), its work brought back after it, removed with the
//! workspace.
//!
//! The store lives in `<namespace>/.private/<id>/`. jj: `wc/.jj` is what the sandbox mounts
//! as the workspace's `.jj`. git: `git/` is the worktree's own git directory, named by the
//! `.git` file `gitfile` the sandbox mounts over the worktree's own. `synced` (never
//! mounted) says which commit of the user's store it was made from or last brought back to,
//! and what its own state was then; `out/` receives an export's bundle. Nothing in `wc/` or
//! `git/` is ever read by jj or git outside a sandbox once an agent could have written it:
//! work comes back as a bundle made inside one.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{CliError, Result};
use crate::exec::process::Call;
use crate::exec::sandbox::{self, PrivateStore};
use crate::store::layout::WorkspaceId;
use crate::vcs::git::{Checkout, Git, BUNDLE_LIMIT, EXPORT_REFS};
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

impl From<crate::store::private_state::Synced> for Synced {
    fn from(kept: crate::store::private_state::Synced) -> Synced {
        Synced {
            at: WorkingCommit {
                commit: kept.commit,
                parents: kept.parents,
            },
            op: kept.op,
            user_op: kept.user_op,
            base_objects: kept.base_objects,
        }
    }
}

fn wc(dir: &Path) -> PathBuf {
    dir.join("wc")
}

/// The git backend's own git directory in the store at `dir`.
fn git_dir(dir: &Path) -> PathBuf {
    dir.join("git")
}

/// What the store at `dir` keeps (jj's `wc`, git's `git`), whichever is there.
fn kept_store(dir: &Path) -> Option<PathBuf> {
    [wc(dir), git_dir(dir)].into_iter().find(|p| p.is_dir())
}

/// The store's own state now (jj: its operation heads; git: its refs and index, as data).
fn own_state(dir: &Path) -> Option<String> {
    match wc(dir).is_dir() {
        true => Jj::private_op_heads(&wc(dir)),
        false => crate::vcs::git::private_key(&git_dir(dir)),
    }
}

fn read_synced(dir: &Path) -> Option<Synced> {
    crate::store::private_state::read_synced(dir).map(Synced::from)
}

fn write_synced(dir: &Path, synced: &Synced) -> Result<()> {
    let kept = crate::store::private_state::Synced {
        commit: synced.at.commit.clone(),
        parents: synced.at.parents.clone(),
        op: synced.op.clone(),
        user_op: synced.user_op.clone(),
        base_objects: synced.base_objects.clone(),
    };
    Ok(crate::store::private_state::write_synced(dir, &kept)?)
}

/// Makes room for a new store at `dir`: an old one there goes, unless it holds work outside
/// what came back (its work was brought back before this is called), which is then kept
/// aside into `kept`.
fn clear(ctx: &Context, id: &WorkspaceId, dir: &Path, kept: &mut Option<KeptStore>) -> Result<()> {
    if fs::symlink_metadata(dir).is_err() {
        return Ok(());
    }
    if kept_store(dir).is_some() {
        if let Some(holds) = beyond(ctx, dir) {
            let store = keep_aside(ctx, id, dir, holds);
            let moved = !store.path.starts_with(dir);
            *kept = Some(store);
            if moved {
                return Ok(());
            }
            return Err(CliError::failure(format!(
                "could not move aside the own store of workspace {id:?}, which holds work that did not come back"
            ))
            .hint(format!(
                "the command was not run; the store is {} (move it elsewhere, then run again)",
                dir.display()
            )));
        }
    }
    fs::remove_dir_all(dir).map_err(|e| io("remove", dir, &e))
}

/// Records the store's own state as it was made (`made`, never mounted): while it is the
/// same, the agent did nothing there at all.
fn write_made(dir: &Path, state: &str) -> Result<()> {
    Ok(crate::store::private_state::write_made(dir, state)?)
}

fn mounts(dir: &Path, synced: &Synced, out: Option<PathBuf>) -> PrivateStore {
    let mut store = match git_dir(dir).is_dir() {
        true => {
            PrivateStore::default()
                .at(git_dir(dir), true)
                .over(dir.join("gitfile"), ".git", false)
        }
        false => PrivateStore::default().over(wc(dir).join(".jj"), ".jj", true),
    };
    if let Some(objects) = &synced.base_objects {
        store = store.at(objects.clone(), false);
    }
    match out {
        Some(out) => store.at(out, true),
        None => store,
    }
}

fn io(action: &'static str, path: &Path, err: &std::io::Error) -> CliError {
    CliError::io(action, path, err)
}

/// A store made ready for a sandboxed run: how to mount it, and the store it replaced when
/// that one held work the new one does not (kept aside, see [`remove`]).
pub(crate) struct Prepared {
    pub store: Option<PrivateStore>,
    pub kept: Option<KeptStore>,
}

/// Makes workspace `id`'s own store ready for a sandboxed run and says how to mount it.
/// Work the store holds that was not brought back yet (a run killed before) is brought back
/// first; a store the user's side moved away from (a checkpoint, a land) is made again,
/// the old one kept aside when it held work outside what came back.
pub(crate) fn prepare(
    ctx: &Context,
    id: &WorkspaceId,
    ws: &Path,
    bwrap: &Path,
) -> Result<Prepared> {
    let mut kept = None;
    let store = prepare_store(ctx, id, ws, bwrap, &mut kept)?;
    Ok(Prepared { store, kept })
}

fn prepare_store(
    ctx: &Context,
    id: &WorkspaceId,
    ws: &Path,
    bwrap: &Path,
    kept: &mut Option<KeptStore>,
) -> Result<Option<PrivateStore>> {
    let Some(jj) = ctx.vcs.as_jj() else {
        return match ctx.vcs.as_git() {
            Some(git) => prepare_git(ctx, git, id, ws, bwrap, kept).map(Some),
            None => Ok(None),
        };
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
    make(ctx, jj, id, ws, &dir, kept).map(Some)
}

/// Makes the store afresh from the workspace's working-copy commit (snapshotted first).
fn make(
    ctx: &Context,
    jj: &Jj,
    id: &WorkspaceId,
    ws: &Path,
    dir: &Path,
    kept: &mut Option<KeptStore>,
) -> Result<PrivateStore> {
    clear(ctx, id, dir, kept)?;
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
    write_made(dir, &synced.op)?;
    write_synced(dir, &synced)?;
    Ok(mounts(dir, &synced, None))
}

/// Brings back what the agent did in workspace `id`'s own store, when it did anything:
/// inside the same confinement its `@` (git: its `HEAD` and index) is exported as a git
/// bundle, which is then fetched into the user's store with the user's configuration and
/// becomes the workspace's working-copy commit (see `Jj::take_back`, `Git::take_back`).
/// Nothing to do for an untouched store. Returns what was moved aside (git: a submodule's
/// `.git` in the worktree the user's git would have followed into a directory the agent
/// made).
pub(crate) fn bring_back(
    ctx: &Context,
    id: &WorkspaceId,
    ws: &Path,
    bwrap: &Path,
) -> Result<Vec<PathBuf>> {
    let Some(jj) = ctx.vcs.as_jj() else {
        return match ctx.vcs.as_git() {
            Some(git) => bring_back_git(ctx, git, id, ws, bwrap),
            None => Ok(vec![]),
        };
    };
    // Before jj or git runs in the workspace again.
    let moved: Vec<PathBuf> = move_aside_foreign_git(jj, ws).into_iter().collect();
    let dir = ctx.layout.private_store(id);
    let Some(synced) = read_synced(&dir).filter(|_| wc(&dir).is_dir()) else {
        return Ok(moved);
    };
    if Jj::private_op_heads(&wc(&dir)).as_deref() == Some(synced.op.as_str()) {
        return Ok(moved);
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
    )?;
    Ok(vec![])
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
    let bookmark = EXPORT_REF.trim_start_matches("refs/heads/");
    let script = format!(
        "set -e\n\
         jj --no-pager --color=never --quiet bookmark set {bookmark} -r @ --allow-backwards\n\
         jj --no-pager --color=never --quiet --ignore-working-copy git export\n\
         out=\"$1\"; shift\n\
         git --git-dir=.jj/repo/store/git bundle create -q \"$out/export.bundle\" {EXPORT_REF} \"$@\"\n"
    );
    let excluded: Vec<String> = synced.at.parents.iter().map(|p| format!("^{p}")).collect();
    let private = mounts(dir, synced, Some(out.to_path_buf()));
    confined(ctx, ws, private, bwrap, &script, out, &excluded)?;
    Ok(())
}

/// Runs `script` (`sh -c`, its arguments `out` and `rest`) in the workspace's sandbox with
/// its own store `private`, without network; its standard output.
fn confined(
    ctx: &Context,
    ws: &Path,
    private: PrivateStore,
    bwrap: &Path,
    script: &str,
    out: &Path,
    rest: &[String],
) -> Result<String> {
    // What the agent could write is looked at first: jj and git never make anything but
    // files and directories in a store, and opening anything else (a FIFO, a link to a
    // device) could block them, or never end, with the user waiting.
    for mount in private.mounts.iter().filter(|m| m.writable) {
        if let Some(odd) = odd_entry(&mount.source) {
            return Err(CliError::failure(format!(
                "its own store holds {}, which is no regular file or directory (jj and git never make one there), so it is not read",
                odd.display()
            )));
        }
    }
    let canonical = fs::canonicalize(ws).map_err(|e| io("resolve", ws, &e))?;
    let namespace_dir = canonical.parent().unwrap_or(&canonical).to_path_buf();
    let me = std::env::current_exe().map_err(|e| {
        CliError::failure("cannot locate the agent-workspace binary").cause(e.to_string())
    })?;
    let backend = ctx.vcs.sandbox_paths(&ctx.repo, &canonical, true)?;
    let scope = sandbox::Scope {
        repo: &ctx.repo,
        workspace: &canonical,
        namespace_dir: &namespace_dir,
        readable: sandbox::readable(&me),
        private: Some(private),
        backend,
    };
    let options = sandbox::Options {
        network: false,
        writable: vec![],
        sockets: vec![],
    };
    let seccomp = std::os::fd::OwnedFd::from(sandbox::seccomp()?);
    let fd = std::os::fd::AsRawFd::as_raw_fd(&seccomp);
    let args = sandbox::args(&options, &scope, fd)?;
    Call::new(bwrap)
        .args(args)
        .args(["sh", "-c", script, "sh"])
        .arg(out)
        .args(rest)
        .dir(&canonical)
        .pass(seccomp)
        .stdout()
        .map_err(|e| CliError::failure(e.to_string()).cause(e.stderr().trim().to_string()))
}

/// The first entry under `root` that is neither a regular file nor a directory (a FIFO, a
/// socket, a device, a symbolic link), never following a link; `None` when there is none.
fn odd_entry(root: &Path) -> Option<PathBuf> {
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => dirs.push(entry.path()),
                Ok(kind) if kind.is_file() => {}
                _ => return Some(entry.path()),
            }
        }
    }
    None
}

/// git: the worktree's own git directory made ready (see [`prepare`]).
fn prepare_git(
    ctx: &Context,
    git: &Git,
    id: &WorkspaceId,
    ws: &Path,
    bwrap: &Path,
    kept: &mut Option<KeptStore>,
) -> Result<PrivateStore> {
    let dir = ctx.layout.private_store(id);
    // A half-done merge (or conflicts) is the user's to finish: neither the agent's git
    // directory nor a bring-back into the worktree's index would keep its state.
    let worktree_git = git.worktree_git_dir(ws)?;
    // The index a store was made or brought back to had no conflicts (it was checked, or
    // written from a tree): while it is the same file, it has none.
    let index = crate::vcs::git::stat_key(&worktree_git.join("index"));
    let index_checked = index != "-"
        && read_synced(&dir).is_some_and(|s| s.user_op.ends_with(&format!(" {index}")));
    if let Some(busy) = git.in_progress(ws, &worktree_git, index_checked)? {
        return Err(CliError::failure(format!(
            "worktree {} holds {}, which a sandboxed run cannot carry into its own git directory",
            ws.display(),
            busy.what
        ))
        .hint(format!(
            "{}, then run again; nothing was changed (or run without --sandbox)",
            busy.how
        )));
    }
    if let Some(mut synced) = read_synced(&dir).filter(|_| git_dir(&dir).is_dir()) {
        if own_state(&dir).as_deref() != Some(synced.op.as_str()) {
            bring_back_git(ctx, git, id, ws, bwrap).map_err(|err| {
                err.hint(format!(
                    "the command was not run; the agent's commits stay in its own git directory {} (its files are in the worktree): to start afresh from the worktree's files, delete {} (those commits are then lost)",
                    git_dir(&dir).display(),
                    dir.display()
                ))
            })?;
            synced = read_synced(&dir).unwrap_or(synced);
        }
        if git.checkout_key(&worktree_git).as_deref() == Some(synced.user_op.as_str()) {
            return Ok(mounts(&dir, &synced, None));
        }
    }
    make_git(ctx, git, id, ws, &dir, kept)
}

/// git: makes the worktree's own git directory afresh from its `HEAD` and index.
fn make_git(
    ctx: &Context,
    git: &Git,
    id: &WorkspaceId,
    ws: &Path,
    dir: &Path,
    kept: &mut Option<KeptStore>,
) -> Result<PrivateStore> {
    clear(ctx, id, dir, kept)?;
    fs::create_dir_all(dir).map_err(|e| io("create", dir, &e))?;
    let at = git.checkout(ws)?;
    let user_op = git.checkout_key(&at.git_dir).unwrap_or_default();
    let base = git.base_of(&at.commit);
    let bases = ctx.layout.private_stores().join(".bases");
    let made = git.base_objects(&base, &bases).and_then(|objects| {
        git.make_private(&git_dir(dir), &dir.join("gitfile"), &at, &base, &objects)?;
        Ok(objects)
    });
    let base_objects = match made {
        Ok(objects) => objects,
        Err(err) => {
            let _ = fs::remove_dir_all(dir);
            return Err(CliError::from(err).hint(
                "the worktree's own git directory for sandboxed runs could not be made; the command was not run",
            ));
        }
    };
    let synced = Synced {
        at: WorkingCommit {
            commit: at.commit,
            parents: vec![base],
        },
        op: own_state(dir).unwrap_or_default(),
        user_op,
        base_objects: Some(base_objects),
    };
    write_made(dir, &synced.op)?;
    write_synced(dir, &synced)?;
    Ok(mounts(dir, &synced, None))
}

/// git: brings back the agent's `HEAD` and what it staged (see [`bring_back`]), then moves
/// aside any submodule `.git` in the worktree that leads the user's git out of the
/// repository's own git directory.
fn bring_back_git(
    ctx: &Context,
    git: &Git,
    id: &WorkspaceId,
    ws: &Path,
    bwrap: &Path,
) -> Result<Vec<PathBuf>> {
    let dir = ctx.layout.private_store(id);
    let Some(synced) = read_synced(&dir).filter(|_| git_dir(&dir).is_dir()) else {
        return Ok(vec![]);
    };
    if own_state(&dir).as_deref() != Some(synced.op.as_str()) {
        let at = git.checkout(ws)?;
        take_back_git(ctx, git, id, ws, &dir, &synced, &at, bwrap)?;
    }
    let git_dir = git.worktree_git_dir(ws)?;
    Ok(move_aside_gitlink_dirs(
        git,
        &git_dir,
        ws,
        &dir.join("gitlinks"),
    ))
}

#[allow(clippy::too_many_arguments)]
fn take_back_git(
    ctx: &Context,
    git: &Git,
    id: &WorkspaceId,
    ws: &Path,
    dir: &Path,
    synced: &Synced,
    at: &Checkout,
    bwrap: &Path,
) -> Result<()> {
    let kept = || {
        format!(
            "the agent's commits stay in its own git directory {} (its files are in the worktree); the next sandboxed run tries again",
            git_dir(dir).display()
        )
    };
    let out = dir.join("out");
    if fs::symlink_metadata(&out).is_ok() {
        fs::remove_dir_all(&out).map_err(|e| io("remove", &out, &e))?;
    }
    fs::create_dir(&out).map_err(|e| io("create", &out, &e))?;
    let script = format!(
        "set -e\n\
         out=\"$1\"; from=\"$2\"\n\
         head=$(git rev-parse --verify HEAD^{{commit}})\n\
         git for-each-ref --format='delete %(refname)' {EXPORT_REFS} | git update-ref --stdin\n\
         [ \"$head\" = \"$from\" ] || git update-ref {EXPORT_REFS}head \"$head\"\n\
         if tree=$(git write-tree 2>/dev/null) && [ \"$tree\" != \"$(git rev-parse \"$head^{{tree}}\")\" ]; then\n\
           index=$(git commit-tree \"$tree\" -p \"$head\" -m staged </dev/null)\n\
           git update-ref {EXPORT_REFS}index \"$index\"\n\
         fi\n\
         if [ -z \"$(git for-each-ref {EXPORT_REFS})\" ]; then echo unchanged; exit 0; fi\n\
         git bundle create -q \"$out/export.bundle\" --branches=agent-workspace-export ^\"$from\"\n"
    );
    let private = mounts(dir, synced, Some(out.clone()));
    let said = confined(
        ctx,
        ws,
        private,
        bwrap,
        &script,
        &out,
        std::slice::from_ref(&synced.at.commit),
    )
    .map_err(|err| {
        CliError::failure(format!(
            "could not export the work of workspace {id:?} from its sandbox"
        ))
        .cause(err.message.clone())
        .hint(kept())
    })?;
    // Read after the export (which writes the store too): every process of the sandbox has
    // ended, nothing else changes it.
    let op = own_state(dir).unwrap_or_default();
    let record = |head: String| {
        write_synced(
            dir,
            &Synced {
                at: WorkingCommit {
                    commit: head,
                    parents: synced.at.parents.clone(),
                },
                op: op.clone(),
                user_op: git.checkout_key(&at.git_dir).unwrap_or_default(),
                base_objects: synced.base_objects.clone(),
            },
        )
    };
    if said.trim() == "unchanged" {
        let _ = fs::remove_dir_all(&out);
        return record(synced.at.commit.clone());
    }
    let bundle = out.join("export.bundle");
    // Written inside the sandbox, whose processes have all ended: only a regular file of a
    // bounded size is handed to git.
    match fs::symlink_metadata(&bundle) {
        Ok(meta) if meta.file_type().is_file() && meta.len() <= BUNDLE_LIMIT => {}
        _ => {
            return Err(CliError::failure(format!(
                "the export of workspace {id:?} left no bundle (or not a regular file of at most {} GiB) at {}",
                BUNDLE_LIMIT >> 30,
                bundle.display()
            ))
            .hint(kept()))
        }
    }
    git.take_back(id, ws, at, &synced.at.commit, &bundle)
        .map_err(|err| {
            CliError::from(err)
                .cause(format!("bringing back the work of workspace {id:?}"))
                .hint(kept())
        })
        .and_then(|head| {
            let _ = fs::remove_dir_all(&out);
            record(head)
        })
}

/// Every submodule of the worktree (a gitlink in its index) whose `.git` does not lead into
/// the repository's own git directory: the agent made it, and the user's `git status` would
/// run the configuration it names. Each is renamed `.git.from-sandbox` (numbered when taken);
/// returns the new paths. The worktree's files are only looked at, never read by git.
///
/// The worktree's gitlinks are listed again only when its index changed since `cache` (the
/// index's size and time, then the paths; agent-workspace's own file, never mounted).
fn move_aside_gitlink_dirs(git: &Git, git_dir: &Path, ws: &Path, cache: &Path) -> Vec<PathBuf> {
    let key = crate::vcs::git::stat_key(&git_dir.join("index"));
    let links = match crate::store::private_state::gitlinks(cache, &key) {
        Some(links) => links,
        None => {
            let Ok(links) = git.gitlinks(git_dir) else {
                return vec![];
            };
            crate::store::private_state::keep_gitlinks(cache, &key, &links);
            links
        }
    };
    let mut moved = vec![];
    for link in links {
        // Each step a real directory: a link could lead the rename out of the worktree.
        let mut path = ws.to_path_buf();
        let real = Path::new(&link).components().all(|part| {
            path.push(part);
            matches!(part, std::path::Component::Normal(_))
                && fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_dir())
        });
        let dot_git = path.join(".git");
        if !real || fs::symlink_metadata(&dot_git).is_err() || leads_home(git, &path, &dot_git) {
            continue;
        }
        moved.extend(rename_aside(&path));
    }
    moved
}

/// Renames the `.git` in `dir` to `.git.from-sandbox` (numbered when taken); the new path.
fn rename_aside(dir: &Path) -> Option<PathBuf> {
    let mut aside = dir.join(".git.from-sandbox");
    let mut n = 1;
    while fs::symlink_metadata(&aside).is_ok() {
        n += 1;
        aside = dir.join(format!(".git.from-sandbox.{n}"));
    }
    fs::rename(dir.join(".git"), &aside).ok().map(|()| aside)
}

/// jj: a `.git` at the root of the workspace at `ws` that is not the one jj made there (jj
/// 0.46's link to the repository's worktree entry, or none): the agent made it, and the
/// user's `git status` there would run the configuration it names. Renamed aside; its new
/// path.
fn move_aside_foreign_git(jj: &Jj, ws: &Path) -> Option<PathBuf> {
    match jj.git_link_is_ours(ws) {
        true => None,
        false => rename_aside(ws),
    }
}

/// Whether the submodule `.git` at `dot_git` is a `.git` file naming a directory inside the
/// repository's own git directory (as `git submodule` makes them).
fn leads_home(git: &Git, submodule: &Path, dot_git: &Path) -> bool {
    let Ok(text) = crate::store::fsutil::read_untrusted_string(dot_git, 4096) else {
        return false;
    };
    let Some(named) = text.strip_prefix("gitdir: ") else {
        return false;
    };
    git.owns(&submodule.join(named.trim_end_matches(['\n', '\r'])))
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
    read_synced(dir).is_some_and(|synced| own_state(dir).as_deref() == Some(synced.op.as_str()))
}

/// A workspace's own store kept when the workspace was removed, and what it holds that did
/// not come back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeptStore {
    /// The store (jj: a repository; git: a git directory), moved aside.
    pub path: PathBuf,
    /// What it holds, in words.
    pub holds: String,
}

/// Removes workspace `id`'s own store with the workspace, unless it holds work that did not
/// come back: commits that could not be brought back (`settled`: what [`settle`] said, when
/// it was asked), or anything outside what comes back (jj: `@` and its ancestors; git:
/// `HEAD` and the index), such as another branch, a stash, a tag or a head left behind. Then
/// it is moved aside, whole, under the namespace's kept-aside directory, and said where.
pub(crate) fn remove(ctx: &Context, id: &WorkspaceId, settled: Option<bool>) -> Option<KeptStore> {
    let dir = ctx.layout.private_store(id);
    fs::symlink_metadata(&dir).ok()?;
    let holds = match kept_store(&dir) {
        None => None,
        Some(_) if !settled.unwrap_or_else(|| untouched(&dir)) => {
            Some("commits that could not be brought back".to_string())
        }
        Some(_) => beyond(ctx, &dir),
    };
    let Some(holds) = holds else {
        let _ = fs::remove_dir_all(&dir);
        prune_bases(&ctx.layout.private_stores());
        return None;
    };
    Some(keep_aside(ctx, id, &dir, holds))
}

/// What the store at `dir` holds outside what came back, in words; `None` when nothing.
/// git's refs are read as data and looked up in the user's repository; jj's heads are asked
/// of jj inside the workspace's confinement (never outside it).
fn beyond(ctx: &Context, dir: &Path) -> Option<String> {
    let made = crate::store::private_state::read_made(dir);
    if made.is_some() && made == own_state(dir) {
        return None;
    }
    let Some(synced) = read_synced(dir) else {
        return Some("a state agent-workspace could not read".into());
    };
    if let Some(git) = ctx.vcs.as_git() {
        let Some(refs) = crate::vcs::git::private_refs(&git_dir(dir)) else {
            return Some("refs agent-workspace could not read (or too many of them)".into());
        };
        let mut tips = vec![synced.at.commit.clone()];
        tips.extend(synced.at.parents.iter().cloned());
        return match git.outside(&refs, &tips, &dir.join(".refs")) {
            Ok(names) if names.is_empty() => None,
            Ok(names) => Some(format!(
                "work outside the HEAD and index that came back: {}",
                names_of(&names)
            )),
            Err(err) => Some(format!(
                "refs that could not be checked ({})",
                CliError::from(err).message
            )),
        };
    }
    jj_heads_beyond(ctx, dir, &synced)
}

/// At most ten of `names` (each in printable characters), then how many more.
fn names_of(names: &[String]) -> String {
    let mut text: Vec<String> = names
        .iter()
        .take(10)
        .map(|n| {
            n.chars()
                .map(|c| if c.is_control() { '?' } else { c })
                .take(200)
                .collect()
        })
        .collect();
    if names.len() > 10 {
        text.push(format!("and {} more", names.len() - 10));
    }
    text.join(", ")
}

/// jj: the visible heads of the store at `dir` outside `@` and its ancestors, asked of jj
/// inside the sandbox (on an empty directory: the workspace may be gone), in words.
fn jj_heads_beyond(ctx: &Context, dir: &Path, synced: &Synced) -> Option<String> {
    let unread = |why: String| Some(format!("heads agent-workspace could not read ({why})"));
    let bwrap = match sandbox::find() {
        Ok(bwrap) => bwrap,
        Err(err) => return unread(CliError::from(err).message),
    };
    let scratch = dir.join("check");
    let _ = fs::remove_dir_all(&scratch);
    if let Err(err) = fs::create_dir(&scratch) {
        return unread(err.to_string());
    }
    let script = "jj --no-pager --color=never --ignore-working-copy log --no-graph \
         -r 'visible_heads() ~ ::@' \
         -T 'commit_id ++ \" \" ++ bookmarks.map(|b| b.name()).join(\" \") ++ \"\\n\"'\n";
    let out = dir.join("out");
    let _ = fs::create_dir_all(&out);
    let said = confined(
        ctx,
        &scratch,
        mounts(dir, synced, None),
        &bwrap,
        script,
        &out,
        &[],
    );
    let _ = fs::remove_dir_all(&scratch);
    let _ = fs::remove_dir_all(&out);
    let said = match said {
        Ok(said) => said,
        Err(err) => return unread(err.message),
    };
    let mut commits = vec![];
    let mut bookmarks = vec![];
    for line in said.lines().take(10_000) {
        let mut words = line.split(' ');
        let commit = words.next().unwrap_or_default();
        if commit.len() != 40 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
            return unread(format!("jj printed {:?}", names_of(&[line.to_string()])));
        }
        commits.push(commit.get(..12).unwrap_or(commit).to_string());
        bookmarks.extend(words.filter(|w| !w.is_empty()).map(str::to_string));
    }
    if commits.is_empty() {
        return None;
    }
    let noun = if commits.len() == 1 {
        "commit"
    } else {
        "commits"
    };
    let mut text = format!(
        "{} {noun} outside @ and its ancestors (what came back): {}",
        commits.len(),
        names_of(&commits)
    );
    if !bookmarks.is_empty() {
        let noun = if bookmarks.len() == 1 {
            "bookmark"
        } else {
            "bookmarks"
        };
        text += &format!(" ({noun} {})", names_of(&bookmarks));
    }
    Some(text)
}

/// Moves the store at `dir` aside under the namespace's kept-aside directory, made whole
/// first (its base's pack linked in, so it no longer borrows a pack that may go). Where it
/// cannot be moved it stays where it is, and that is said.
fn keep_aside(ctx: &Context, id: &WorkspaceId, dir: &Path, holds: String) -> KeptStore {
    let here = |holds: String| KeptStore {
        path: kept_store(dir).unwrap_or_else(|| dir.to_path_buf()),
        holds,
    };
    let objects = match git_dir(dir).is_dir() {
        true => git_dir(dir).join("objects"),
        false => wc(dir).join(".jj/repo/store/git/objects"),
    };
    if let Some(base) = read_synced(dir).and_then(|s| s.base_objects) {
        link_pack(&base.join("pack"), &objects);
    }
    let kept_root = ctx.layout.dir.join(crate::store::aside::KEPT_DIR);
    let dest = crate::store::aside::fresh_dest(&kept_root, id.as_str());
    let moved = fs::create_dir_all(&kept_root).and_then(|()| fs::rename(dir, &dest));
    match moved {
        Ok(()) => {
            prune_bases(&ctx.layout.private_stores());
            KeptStore {
                path: kept_store(&dest).unwrap_or(dest),
                holds,
            }
        }
        Err(_) => here(holds),
    }
}

/// Hard-links (or copies) every file of the pack directory `from` into the objects directory
/// `objects` of an agent's store, then drops its alternates: only when `objects` and its
/// `pack` are real directories (the agent could have left a link leading anywhere).
fn link_pack(from: &Path, objects: &Path) {
    let real = |p: &Path| fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_dir());
    let pack = objects.join("pack");
    if !real(objects) || !real(&pack) {
        return;
    }
    let Ok(entries) = fs::read_dir(from) else {
        return;
    };
    for entry in entries.flatten() {
        let to = pack.join(entry.file_name());
        if fs::symlink_metadata(&to).is_ok() {
            continue;
        }
        let linked = crate::store::fsutil::hard_link(&entry.path(), &to);
        if linked.is_err() && fs::copy(entry.path(), &to).is_err() {
            return;
        }
    }
    let _ = fs::remove_file(objects.join("info/alternates"));
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
        let tmp = tempfile::tempdir().unwrap();
        let parse = |synced: &Synced| {
            write_synced(tmp.path(), synced).unwrap();
            read_synced(tmp.path())
        };
        let synced = Synced {
            at: WorkingCommit {
                commit: "abc".into(),
                parents: vec!["p1".into(), "p2".into()],
            },
            op: "o1,o2".into(),
            user_op: "u1".into(),
            base_objects: Some("/x/objects".into()),
        };
        assert_eq!(parse(&synced), Some(synced.clone()));
        let rootless = Synced {
            at: WorkingCommit {
                commit: "abc".into(),
                parents: vec![],
            },
            base_objects: None,
            ..synced
        };
        assert_eq!(parse(&rootless), Some(rootless));
    }
}
