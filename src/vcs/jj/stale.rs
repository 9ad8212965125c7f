//! A working copy another workspace made stale: detecting it cheaply and updating it with
//! `jj workspace update-stale`, its files carried across in a copy that survives a kill.

use std::fs;
use std::path::{Path, PathBuf};

use super::Jj;
use crate::vcs::error::{CarryFailure, Result, VcsError};
use crate::{recovery, tree};

/// What querying a workspace's working copy found.
pub(super) enum Probe {
    Fresh(String),
    Stale,
    /// jj has no working-copy commit for it: the workspace was forgotten.
    Unknown,
}

impl Jj {
    /// Queries the working-copy commit of `ws` with `template`; like every jj command run
    /// there, this snapshots the working copy first.
    pub(super) fn probe(&self, ws: &Path, template: &str) -> Result<Probe> {
        let out = self
            .call(ws)?
            .args(["log", "--no-graph", "-r", "@", "-T", template])
            .stdout();
        match out {
            Ok(out) => Ok(Probe::Fresh(out)),
            Err(e) if e.stderr().contains("working copy is stale") => Ok(Probe::Stale),
            Err(e) if e.stderr().contains("doesn't have a working-copy commit") => {
                Ok(Probe::Unknown)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Runs `workspace update-stale` when the working copy is stale, keeping its edits.
    pub fn update_stale(&self, ws: &Path, scratch: &Path) -> Result<bool> {
        match self.probe(ws, "''")? {
            Probe::Fresh(_) => Ok(false),
            Probe::Stale => self.carry_across_update(ws, scratch).map(|()| true),
            Probe::Unknown => Err(VcsError::Unregistered {
                id: ws.file_name().unwrap_or_default().to_string_lossy().into(),
                path: ws.to_path_buf(),
            }),
        }
    }

    /// Updates a stale working copy. The user's files are copied to `scratch` first and put
    /// back afterwards, so edits jj never recorded survive the update; if putting them back
    /// fails, the error names where they are kept.
    pub(super) fn carry_across_update(&self, ws: &Path, scratch: &Path) -> Result<()> {
        let kept = |e: std::io::Error| VcsError::Carry {
            action: "carry the edits of the stale working copy",
            path: ws.to_path_buf(),
            source: Box::new(e.into()),
            kept: recovery::files(scratch),
            resumes: false,
        };
        if !recovery::is_complete(scratch) {
            // A partial copy from an interrupted repair: the workspace was not touched yet.
            recovery::discard(scratch).map_err(kept)?;
            // Never start a copy that cannot fit: a full disk would leave a copy of empty
            // files. A failed copy is removed again, never presented as keeping anything.
            let not_carried = |why: String| VcsError::NotCarried {
                path: ws.to_path_buf(),
                why,
            };
            crate::disk::check_room(scratch, crate::disk::usage(ws).allocated)
                .map_err(|e| not_carried(e.to_string()))?;
            if let Err(e) = tree::copy(ws, &recovery::files(scratch))
                .and_then(|()| recovery::mark_complete(scratch))
            {
                let _ = recovery::discard(scratch);
                return Err(not_carried(format!("copying its files failed: {e}")));
            }
        }
        self.finish_recovery(ws, scratch)
    }

    /// Puts back a whole copy at `scratch`: `update-stale` (a no-op when already done; it
    /// waits for a still-running one through jj's working-copy lock), the copy mirrored over
    /// the workspace, a snapshot, and only then the copy removed. Safe to repeat.
    fn finish_recovery(&self, ws: &Path, scratch: &Path) -> Result<()> {
        let named = |source: CarryFailure| VcsError::Carry {
            action: "carry the edits of the stale working copy",
            path: ws.to_path_buf(),
            source: Box::new(source),
            kept: recovery::files(scratch),
            resumes: true,
        };
        let io = |e: std::io::Error| named(e.into());
        self.call(ws)?
            .args(["workspace", "update-stale"])
            .stdout()
            .map_err(|e| named(e.into()))?;
        tree::mirror(&recovery::files(scratch), ws).map_err(io)?;
        // Record the carried edits now, on top of the updated working-copy commit.
        self.call(ws)?
            .args(["log", "--no-graph", "-r", "@", "-T", "''"])
            .stdout()
            .map_err(|e| named(e.into()))?;
        recovery::discard(scratch).map_err(io)
    }

    /// Finishes a repair a killed run left at `scratch` (or drops its partial copy).
    /// Returns whether files were put back.
    pub fn resume_recovery(&self, ws: &Path, scratch: &Path) -> Result<bool> {
        if recovery::is_complete(scratch) {
            return self.finish_recovery(ws, scratch).map(|()| true);
        }
        if recovery::exists(scratch) {
            recovery::discard(scratch).map_err(|source| VcsError::PartialCopy {
                path: scratch.to_path_buf(),
                source,
            })?;
        }
        Ok(false)
    }

    /// Cheap check: has any operation happened since the working copy was last updated, or
    /// since `checked` (the [`Jj::op_heads_key`] of the last check)?
    pub fn may_be_stale(&self, ws: &Path, checked: Option<&str>) -> bool {
        let checkout = ws.join(".jj").join("working_copy").join("checkout");
        let heads = self.store.join("op_heads").join("heads");
        let modified = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
        match (modified(&checkout), modified(&heads)) {
            (Some(wc), Some(op)) if op <= wc => false,
            _ => checked.is_none() || checked != self.op_heads_key().as_deref(),
        }
    }
}

/// The revset naming workspace `id`'s working-copy commit; ids never need escaping inside a
/// string literal because they hold no quotes or backslashes.
/// Where the files of the workspace at `ws` are carried across `update-stale`: beside it, in
/// the namespace directory, named after its directory (a dot-name, so never a workspace).
pub fn recovery_dir(ws: &Path) -> PathBuf {
    let id = ws.file_name().unwrap_or_default().to_string_lossy();
    ws.with_file_name(format!(".recovering-{id}"))
}
