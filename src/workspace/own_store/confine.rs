//! The sandbox the backend's calls on an own store run in: the workspace's, without network,
//! with the store mounted instead of the repository's.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::exec::sandbox::{self, Confinement, PrivateStore};
use crate::workspace::context::Context;
use crate::workspace::error::{OwnStoreError, WorkspaceError};

/// The sandbox of the workspace at `ws` with its own store `private`, made by `bwrap`.
/// What the agent could write is looked at first: jj and git never make anything but files
/// and directories in a store, and opening anything else (a FIFO, a link to a device) could
/// block them, or never end, with the user waiting.
pub(super) fn confinement(
    ctx: &Context,
    ws: &Path,
    private: PrivateStore,
    bwrap: &Path,
) -> Result<Confinement> {
    for mount in private.mounts.iter().filter(|m| m.writable) {
        if let Some(odd) = odd_entry(&mount.source) {
            return Err(OwnStoreError::OddEntry { odd }.into());
        }
    }
    let canonical = fs::canonicalize(ws).map_err(|e| WorkspaceError::io("resolve", ws, e))?;
    let namespace_dir = canonical.parent().unwrap_or(&canonical).to_path_buf();
    let me = std::env::current_exe().map_err(|source| OwnStoreError::NoBinary { source })?;
    let backend = ctx.vcs.sandbox_paths(&ctx.repo, &canonical, true)?;
    let root = fs::canonicalize(&ctx.layout.root).unwrap_or_else(|_| ctx.layout.root.clone());
    let scope = sandbox::Scope {
        repo: &ctx.repo,
        workspace: &canonical,
        root: &root,
        namespace_dir: &namespace_dir,
        readable: sandbox::readable(&me, &[]),
        private: Some(private),
        backend,
        proxy: None,
    };
    let options = sandbox::Options {
        network: false,
        ..sandbox::Options::default()
    };
    // The agent could leave what makes jj or git wait for ever (a configuration including a
    // FIFO of the workspace): no call in this sandbox outlives its time.
    Ok(Confinement::new(bwrap, &options, &scope).within(ctx.config.bring_back_timeout()))
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
