//! A working copy another workspace made stale: detecting it cheaply and updating it with
//! `jj workspace update-stale`, its unrecorded edits carried across (see `carry`) from a
//! copy that survives a kill.

use std::fs;
use std::path::{Path, PathBuf};

use super::classify::{self, Failure};
use super::recorded::Freshness;
use super::{workspace_revset, Jj};
use crate::exec::process::ProcessError;
use crate::vcs::error::{CarryFailure, Result, VcsError};
use crate::{store::recovery, store::tree};

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
        probed(out)
    }

    /// [`Jj::probe`] of the commits `revset` names (`@` is the working-copy commit of `ws`).
    pub(super) fn probe_revset(&self, ws: &Path, revset: &str, template: &str) -> Result<Probe> {
        probed(self.listing_call(ws, revset)?.arg(template).stdout())
    }

    /// `jj log` of `revset` in `ws` (which snapshots it), its template (`-T`'s value) still
    /// to add. The paths a template prints are relative to the workspace's root.
    pub(super) fn listing_call(
        &self,
        ws: &Path,
        revset: &str,
    ) -> Result<crate::exec::process::Call> {
        Ok(self
            .call(ws)?
            .args(["log", "--no-graph", "-r", revset, "-T"]))
    }

    /// Runs `workspace update-stale` when the working copy is stale, keeping its edits.
    /// Decided from jj's records when they show it fresh (no jj process, no snapshot); only
    /// otherwise is jj asked, which snapshots.
    pub(crate) fn update_stale(&self, ws: &Path, scratch: &Path) -> Result<bool> {
        let fresh = match super::recorded::freshness(&self.store, ws) {
            Freshness::Fresh => true,
            Freshness::SameTree { tree, commits } => self.all_have_tree(&commits, &tree),
            Freshness::Unknown => false,
        };
        if fresh {
            return Ok(false);
        }
        match self.probe(ws, "''")? {
            Probe::Fresh(_) => Ok(false),
            Probe::Stale => self.carry_across_update(ws, scratch).map(|()| true),
            Probe::Unknown => Err(VcsError::Unregistered {
                id: ws.file_name().unwrap_or_default().to_string_lossy().into(),
                path: ws.to_path_buf(),
            }),
        }
    }

    /// Whether each of `commits` has the (resolved) tree `tree`, read by git from the backing
    /// repository: one cheap process, no snapshot. Any doubt answers `false`.
    fn all_have_tree(&self, commits: &[String], tree: &str) -> bool {
        commits.iter().all(|commit| {
            let Ok(call) = self.git() else { return false };
            match call.args(["cat-file", "commit", commit]).stdout() {
                Ok(raw) => git_commit_tree(&raw) == Some(tree),
                Err(_) => false,
            }
        })
    }

    /// Updates a stale working copy, carrying across only the edits jj never recorded. The
    /// user's files are copied to `scratch` first, with the commit the working copy last
    /// recorded, so that a kill at any point leaves what the next command needs to finish.
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
            let recorded = self.checked_out(ws)?;
            let siblings = match &recorded {
                Some(commit) => self.siblings(commit)?,
                None => vec![],
            };
            // Never start a copy that cannot fit: a full disk would leave a copy of empty
            // files. A failed copy is removed again, never presented as keeping anything.
            let not_carried = |why: String| VcsError::NotCarried {
                path: ws.to_path_buf(),
                why,
            };
            crate::store::disk::check_room(scratch, crate::store::disk::usage(ws).allocated)
                .map_err(|e| not_carried(e.to_string()))?;
            if let Err(e) = tree::copy(ws, &recovery::files(scratch))
                .and_then(|()| recovery::mark_complete(scratch, recorded.as_deref(), &siblings))
            {
                let _ = recovery::discard(scratch);
                return Err(not_carried(format!("copying its files failed: {e}")));
            }
        }
        self.finish_recovery(ws, scratch)
    }

    /// The commit the working copy at `ws` has checked out, read without a snapshot: the
    /// working copy's own operation, and the workspace's commit as of that operation.
    /// `None` when jj no longer has that operation.
    fn checked_out(&self, ws: &Path) -> Result<Option<String>> {
        let state = self
            .call(ws)?
            .args(["--ignore-working-copy", "debug", "working-copy"])
            .stdout()?;
        let Some(op) = parse_operation(&state) else {
            return Ok(None);
        };
        let out = self
            .call(ws)?
            .args(["--ignore-working-copy", "--at-op", &op])
            .args(["log", "--no-graph", "-T", "commit_id", "-r"])
            .arg(workspace_revset(&workspace_id(ws)))
            .stdout();
        match out {
            Ok(id) if !id.trim().is_empty() => Ok(Some(id.trim().to_string())),
            Ok(_) => Ok(None),
            // jj lost that operation (or cannot read it): the edits cannot be told apart, so
            // the copy is kept whole.
            Err(e @ ProcessError::Failed { .. }) if !e.stderr().is_empty() => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Finishes a repair from a whole copy at `scratch`: `update-stale` (a no-op when already
    /// done; it waits for a still-running one through jj's working-copy lock), the commit it
    /// checked out recorded, the unrecorded edits merged onto it, a snapshot, and only then
    /// the copy removed. Safe to repeat: the merges are computed from jj's contents and the
    /// copy, never from the workspace's half-written files.
    fn finish_recovery(&self, ws: &Path, scratch: &Path) -> Result<()> {
        let named = |source: CarryFailure| VcsError::Carry {
            action: "carry the edits of the stale working copy",
            path: ws.to_path_buf(),
            source: Box::new(source),
            kept: recovery::files(scratch),
            resumes: true,
        };
        let io = |e: std::io::Error| named(e.into());
        // Whatever fails from here on names the copy and says the next command resumes.
        let carry_err = |e: VcsError| match e {
            VcsError::Process(p) => named(p.into()),
            VcsError::Io {
                action,
                path,
                source,
            } => io(std::io::Error::new(
                source.kind(),
                format!("could not {action} {}: {source}", path.display()),
            )),
            other => other,
        };
        self.call(ws)?
            .args(["workspace", "update-stale"])
            .stdout()
            .map_err(|e| named(e.into()))?;
        let id = workspace_id(ws);
        let updated = match recovery::updated(scratch) {
            Some(updated) => updated,
            None => {
                let Some(commit) = self.checked_out(ws).map_err(carry_err)? else {
                    return Err(named(CarryFailure::Io(std::io::Error::other(
                        "jj does not know the commit the working copy was updated to",
                    ))));
                };
                let kept_root = ws.with_file_name(".kept");
                let updated = recovery::Updated {
                    commit,
                    kept: crate::store::aside::fresh_dest(&kept_root, &id),
                };
                recovery::mark_updated(scratch, &updated).map_err(io)?;
                updated
            }
        };
        let copy = recovery::files(scratch);
        let conflict = match recovery::recorded(scratch) {
            Some(recorded) => {
                let undone = self.undone(ws, &recorded).map_err(carry_err)?;
                let carried = self
                    .carry_edits(ws, &copy, &recorded, &updated.commit, &updated.kept, undone)
                    .map_err(carry_err)?;
                match (carried.undone.is_empty(), carried.conflicts.is_empty()) {
                    (false, _) => Some(VcsError::StaleUndone {
                        id: id.clone(),
                        ws: ws.to_path_buf(),
                        files: [carried.undone, carried.conflicts].concat(),
                    }),
                    (true, false) => Some(VcsError::StaleConflict {
                        id: id.clone(),
                        ws: ws.to_path_buf(),
                        files: carried.conflicts,
                    }),
                    (true, true) => None,
                }
            }
            // Which files were edits is unknown: every file is kept as it was.
            None => {
                if fs::symlink_metadata(&updated.kept).is_ok() {
                    tree::remove(&updated.kept).map_err(io)?;
                }
                tree::copy(&copy, &updated.kept).map_err(io)?;
                Some(VcsError::StaleUnknownBase {
                    id: id.clone(),
                    ws: ws.to_path_buf(),
                    kept: updated.kept.clone(),
                })
            }
        };
        // Record the carried edits now, on top of the updated working-copy commit.
        self.call(ws)?
            .args(["log", "--no-graph", "-r", "@", "-T", "''"])
            .stdout()
            .map_err(|e| named(e.into()))?;
        if let Some(recorded) = recovery::recorded(scratch) {
            self.abandon_stale_snapshots(ws, &recorded, &recovery::siblings(scratch))
                .map_err(carry_err)?;
        }
        recovery::discard(scratch).map_err(io)?;
        match conflict {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }

    /// Whether the commit the working copy of `ws` last recorded was undone by an operation
    /// elsewhere (`jj undo`, `jj op restore`) rather than rewritten (a rebase, a land): it is
    /// not in the evolution of the workspace's working-copy commit as the repository has it.
    fn undone(&self, ws: &Path, recorded: &str) -> Result<bool> {
        let out = self
            .query()?
            .args([
                "evolog",
                "--no-graph",
                "-T",
                r#"commit.commit_id() ++ "\n""#,
                "-r",
            ])
            .arg(workspace_revset(&workspace_id(ws)))
            .stdout()?;
        Ok(!out.lines().any(|c| c.trim() == recorded))
    }

    /// Abandons what jj 0.45's `update-stale` made of the stale files: it snapshots them onto
    /// the recorded commit at the working copy's old operation, which leaves a divergent
    /// sibling of the updated commit (same change) holding the old tree. Its edits were
    /// carried (or kept aside) and recorded by then, and the old tree is the recorded commit;
    /// only commits of the change that did not exist before the update, and that nothing is
    /// built on, are abandoned.
    fn abandon_stale_snapshots(&self, ws: &Path, recorded: &str, before: &[String]) -> Result<()> {
        let current = self
            .query()?
            .args(["log", "--no-graph", "-T", "commit_id", "-r"])
            .arg(workspace_revset(&workspace_id(ws)))
            .stdout()?;
        let made: Vec<String> = self
            .siblings(recorded)?
            .into_iter()
            .filter(|c| *c != current.trim() && c != recorded && !before.contains(c))
            .collect();
        if made.is_empty() {
            return Ok(());
        }
        // One with children (another workspace built on it) stays: abandoning it would move
        // commits this command holds no lease for.
        let heads = self
            .query()?
            .args(["log", "--no-graph", "-T", r#"commit_id ++ "\n""#, "-r"])
            .arg(format!("({}) & visible_heads()", made.join(" | ")))
            .stdout()?;
        let heads: Vec<&str> = heads.lines().collect();
        if heads.is_empty() {
            return Ok(());
        }
        self.query()?
            .args(["abandon", "-r", &heads.join(" | ")])
            .stdout()?;
        Ok(())
    }

    /// Finishes a repair a killed run left at `scratch` (or drops its partial copy).
    /// Returns whether files were put back.
    pub(crate) fn resume_recovery(&self, ws: &Path, scratch: &Path) -> Result<bool> {
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
    pub(crate) fn may_be_stale(&self, ws: &Path, checked: Option<&str>) -> bool {
        let checkout = ws.join(".jj").join("working_copy").join("checkout");
        let heads = self.store.join("op_heads").join("heads");
        let modified = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
        match (modified(&checkout), modified(&heads)) {
            (Some(wc), Some(op)) if op <= wc => false,
            _ => checked.is_none() || checked != self.op_heads_key().as_deref(),
        }
    }
}

/// What a query in a workspace found, from its output or failure.
fn probed(out: std::result::Result<String, ProcessError>) -> Result<Probe> {
    match out {
        Ok(out) => Ok(Probe::Fresh(out)),
        Err(e) if classify::failure(e.stderr()) == Failure::Stale => Ok(Probe::Stale),
        Err(e) if classify::failure(e.stderr()) == Failure::NoWorkingCopy => Ok(Probe::Unknown),
        Err(e) => Err(e.into()),
    }
}

/// The name of the workspace at `ws`: its directory's name. A `String`, never parsed into a
/// `WorkspaceId`: a stale working copy may be a land's target outside the namespace (the
/// repository's own directory), whose name is no id of ours.
fn workspace_id(ws: &Path) -> String {
    ws.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// The tree of a raw git commit, unless jj recorded a conflict in it (its `jj:trees` header):
/// then the git tree is jj's representation of the conflict, not the files.
fn git_commit_tree(raw: &str) -> Option<&str> {
    let headers = raw.split("\n\n").next()?;
    if headers.lines().any(|l| l.starts_with("jj:trees")) {
        return None;
    }
    headers.lines().next()?.strip_prefix("tree ")
}

/// The working copy's operation id in `jj debug working-copy`'s output.
fn parse_operation(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let rest = line
            .trim()
            .strip_prefix("Current operation: OperationId(\"")?;
        let id = rest.split('"').next()?;
        (!id.is_empty() && id.bytes().all(|b| b.is_ascii_hexdigit())).then(|| id.to_string())
    })
}

/// Where the files of the workspace at `ws` are carried across `update-stale`: beside it, in
/// the namespace directory, named after its directory (a dot-name, so never a workspace).
pub(crate) fn recovery_dir(ws: &Path) -> PathBuf {
    let id = ws.file_name().unwrap_or_default().to_string_lossy();
    ws.with_file_name(format!(".recovering-{id}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_of_a_git_commit_unless_conflicted() {
        let raw = "tree abc1\nparent def2\nauthor a <a> 1 +0000\n\nmessage\njj:trees x\n";
        assert_eq!(git_commit_tree(raw), Some("abc1"));
        let conflicted = "tree abc1\nparent def2\njj:trees 1 2 3\n\nmessage\n";
        assert_eq!(git_commit_tree(conflicted), None);
        assert_eq!(git_commit_tree("nonsense"), None);
    }
}
