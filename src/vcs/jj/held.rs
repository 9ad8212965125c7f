//! Whether lands still hold, read from the repository's view alone (no working copy is
//! snapshotted): the work of each landed workspace is in its target, for many workspaces in
//! one query per target; and what a land that was killed did.

use std::collections::BTreeMap;

use super::{workspace_revset, Jj, MAIN_WORKSPACE};
use crate::store::layout::WorkspaceId;
use crate::store::metadata::{Land, LandTarget};
use crate::vcs::error::Result;
use crate::vcs::land::hex_ids;

impl Jj {
    /// Of the `lands` (workspace id, its last land), the workspaces whose land is still in
    /// its target: an undone land (`jj undo`, `jj op revert`, `jj op restore`) is not.
    /// A land onto a working copy is judged by the changes it landed (their visible commits
    /// all in `::<name>@`), whatever the workspace did since and however the target's user
    /// rewrote them; a land onto a commit, or one recorded without its commits (recovered),
    /// by the workspace's commits: none non-empty up to its working-copy commit outside
    /// the target.
    pub(crate) fn lands_held(&self, lands: &[(&WorkspaceId, &Land)]) -> Result<Vec<WorkspaceId>> {
        let (by_changes, by_shape): (Vec<_>, Vec<_>) = lands.iter().partition(|(_, land)| {
            land.target.working_copy().is_some() && !hex_ids(&land.commits).is_empty()
        });
        let mut held = self.held_by_changes(&by_changes)?;
        let mut by_stop: BTreeMap<String, Vec<&WorkspaceId>> = BTreeMap::new();
        for (id, land) in by_shape {
            if let Some(stop) = stop(land) {
                by_stop.entry(stop).or_default().push(id);
            }
        }
        for (stop, ids) in by_stop {
            held.extend(self.held_in(&ids, &stop)?);
        }
        Ok(held)
    }

    /// [`Jj::lands_held`] for lands onto a working copy: one query for the change ids of
    /// every landed commit (hidden ones too, after an undo), then one per target for the
    /// changes with a visible commit outside it.
    fn held_by_changes(&self, lands: &[&(&WorkspaceId, &Land)]) -> Result<Vec<WorkspaceId>> {
        if lands.is_empty() {
            return Ok(vec![]);
        }
        let commits: Vec<&str> = lands
            .iter()
            .flat_map(|(_, l)| hex_ids(&l.commits))
            .collect();
        let revset: Vec<String> = commits.iter().map(|c| format!("present({c})")).collect();
        let out = self
            .query()?
            .args(["log", "--no-graph", "-T"])
            .arg(r#"commit_id ++ " " ++ change_id ++ "\n""#)
            .arg(format!("--revisions={}", revset.join(" | ")))
            .stdout()?;
        let change_of: BTreeMap<&str, &str> =
            out.lines().filter_map(|l| l.split_once(' ')).collect();
        let mut by_target: BTreeMap<&LandTarget, Vec<(&WorkspaceId, Vec<&str>)>> = BTreeMap::new();
        for (id, land) in lands {
            // A landed commit jj cannot name is taken as not held: never removed as landed.
            let changes: Option<Vec<&str>> = hex_ids(&land.commits)
                .into_iter()
                .map(|c| change_of.get(c).copied())
                .collect();
            if let Some(changes) = changes {
                by_target
                    .entry(&land.target)
                    .or_default()
                    .push((id, changes));
            }
        }
        let mut held = vec![];
        for (target, lands) in by_target {
            // Only lands onto a working copy are judged by their changes.
            let Some(name) = target.working_copy() else {
                continue;
            };
            let changes: Vec<String> = lands
                .iter()
                .flat_map(|(_, c)| c.iter())
                .filter(|c| c.bytes().all(|b| b.is_ascii_lowercase()))
                .map(|c| format!("present(change_id({c}))"))
                .collect();
            let out = self
                .query()?
                .args(["log", "--no-graph", "-T", r#"change_id ++ "\n""#])
                .arg(format!(
                    "--revisions=({}) ~ ::present({})",
                    changes.join(" | "),
                    workspace_revset(name)
                ))
                .stdout()?;
            let outside: Vec<&str> = out.lines().collect();
            held.extend(
                lands
                    .iter()
                    .filter(|(_, c)| c.iter().all(|c| !outside.contains(c)))
                    .map(|(id, _)| (*id).clone()),
            );
        }
        Ok(held)
    }

    /// Of workspaces `ids`, those whose working-copy commit has no non-empty ancestor
    /// outside `::stop`: one query, whose answer names their working copies (of these and
    /// of any other workspace on the same commits, jj's `default` among them: only names
    /// of `ids` are kept).
    fn held_in(&self, ids: &[&WorkspaceId], stop: &str) -> Result<Vec<WorkspaceId>> {
        let wcs: Vec<String> = ids
            .iter()
            .map(|id| format!("present({})", workspace_revset(id)))
            .collect();
        let wcs = wcs.join(" | ");
        // The non-empty commits of any of them outside the target, and all built on those.
        let outside = format!("((::({wcs}) ~ ::({stop})) ~ empty())::");
        let out = self
            .query()?
            .args(["log", "--no-graph", "-T"])
            .arg(r#"working_copies.map(|w| w.name() ++ "\n").join("")"#)
            .arg(format!("--revisions=({wcs}) ~ ({outside})"))
            .stdout()?;
        Ok(out
            .lines()
            .filter_map(|name| ids.iter().find(|id| id.as_str() == name))
            .map(|id| (*id).clone())
            .collect())
    }

    /// What a killed land of workspace `id` onto `target` (as [`Land::target`] names it)
    /// did: `None` when its work is not all in the target; else the commits it landed and
    /// whether any is conflicted. Onto a working copy, the landed commits are those of the
    /// workspace's changes at operation `before` (the land's start) now in the target;
    /// none of them there (or that operation unreadable) is no land: `None`.
    pub(crate) fn landed_since(
        &self,
        id: &WorkspaceId,
        target: &LandTarget,
        base: &[String],
        before: Option<&str>,
    ) -> Result<Option<(Vec<String>, bool)>> {
        let ws = workspace_revset(id);
        let (commits, landed) = match target {
            LandTarget::WorkingCopy(name) => {
                let probe = Land::probe(target, false);
                let landed = !self.lands_held(&[(id, &probe)])?.is_empty();
                let commits = match (landed, before) {
                    (true, Some(op)) => self.landed_changes(&ws, name, op).unwrap_or_default(),
                    _ => vec![],
                };
                // Nothing of the workspace's came into the target since the land began: it
                // did not land (a land that failed before moving anything, its workspace's
                // work all in the target already or kept aside; jj's operation moved with
                // the repairs it made).
                let landed = landed && !commits.is_empty();
                (commits, landed)
            }
            LandTarget::Revision(rev) => {
                let asked = [rev.clone()];
                let Some(&onto) = hex_ids(&asked).first() else {
                    return Ok(None);
                };
                // Onto a commit: the work is rebased onto it, so it lies above it.
                let work = format!("(::{ws} ~ ::{onto}) ~ empty()");
                let list = self.ids(&work)?;
                let astray = self.ids(&format!("({work}) ~ {onto}::"))?;
                let landed = !list.is_empty() && astray.is_empty();
                (list, landed)
            }
        };
        if !landed {
            return Ok(None);
        }
        let base = hex_ids(base);
        let since = match base.is_empty() {
            true => format!("::{ws}"),
            false => format!("::{ws} ~ ::({})", base.join(" | ")),
        };
        let conflicted = !self.ids(&format!("({since}) & conflicts()"))?.is_empty();
        Ok(Some((commits, conflicted)))
    }

    /// The non-empty commits in `::<name>@` now of the changes workspace `ws` (a revset) had
    /// outside it at operation `op`, oldest first.
    fn landed_changes(&self, ws: &str, name: &str, op: &str) -> Result<Vec<String>> {
        if !op.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(vec![]);
        }
        let target = workspace_revset(name);
        let out = self
            .query()?
            .arg(format!("--at-operation={op}"))
            .args(["log", "--no-graph", "-T", r#"change_id ++ "\n""#])
            .arg(format!("--revisions=::{ws} ~ ::present({target})"))
            .stdout()?;
        let changes: Vec<String> = out
            .lines()
            .filter(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_lowercase()))
            .map(|c| format!("present(change_id({c}))"))
            .collect();
        if changes.is_empty() {
            return Ok(vec![]);
        }
        self.ids(&format!(
            "(({}) & ::{target}) ~ empty()",
            changes.join(" | ")
        ))
    }

    /// The commit ids `revset` names, oldest first.
    fn ids(&self, revset: &str) -> Result<Vec<String>> {
        let out = self
            .query()?
            .args([
                "log",
                "--no-graph",
                "--reversed",
                "-T",
                r#"commit_id ++ "\n""#,
            ])
            .arg(format!("--revisions={revset}"))
            .stdout()?;
        Ok(out.lines().map(str::to_string).collect())
    }

    /// The target a land to the main working copy is recorded under before it is made.
    pub(crate) fn main_target() -> LandTarget {
        LandTarget::WorkingCopy(MAIN_WORKSPACE.to_string())
    }
}

/// The revset a land's work must be below: the target working copy, else the last landed
/// commit (a land onto a commit).
fn stop(land: &Land) -> Option<String> {
    match &land.target {
        LandTarget::WorkingCopy(name) => Some(workspace_revset(name)),
        LandTarget::Revision(_) => {
            let last = land.commits.last()?;
            let ids = hex_ids(std::slice::from_ref(last));
            ids.first().map(|id| format!("present({id})"))
        }
    }
}
