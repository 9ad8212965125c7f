//! Landing<JjLanded> a jj workspace: its commits rebased between a working-copy commit and its parents
//! (or onto a commit), conflicts decided on jj's own result before any working copy changes.
//! One snapshot of the workspace, one query of the target (which snapshots its working copy
//! and says what it has changed), then the land as a trial that touches no working copy: the
//! recording of the workspace's edits, the rebase, the workspace's working copy put on top,
//! `--prefer`'s resolutions. Kept, the working copies are updated to it; a conflict not
//! allowed, or a dry run, puts the repository back as it was.

use std::path::Path;

use super::by_change;
use super::land_preview::{land_set, Landed, Place, Preview};
use super::land_result::{Span, Trial};
use super::stale::Probe;
use super::{recovery_dir, workspace_revset, Jj, MAIN_WORKSPACE};
use crate::exec::process::{Call, ProcessError};
use crate::store::layout::WorkspaceId;
use crate::store::metadata::{Conflict, LandTarget};
use crate::vcs::land::{
    hex_ids, overlap, JjLanded, LandError, Landing, Plan, Result, Target, TargetKind,
};
use crate::vcs::VcsError;

/// What the workspace's working-copy commit holds: `nothing`, or work with or without a
/// description.
const WORK_TEMPLATE: &str = r#"if(empty && description == "", "nothing", if(description == "", "undescribed", "described"))"#;

/// What a workspace's working-copy commit holds, as [`WORK_TEMPLATE`] answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Work {
    /// Empty and undescribed: nothing to record.
    Nothing,
    /// Edits without a description: recorded by the land with one.
    Undescribed,
    /// Described (edits or not): the agent's own commit, kept as it is.
    Described,
}

impl Work {
    /// [`WORK_TEMPLATE`]'s answer; anything else is taken as edits to record.
    fn parse(answer: &str) -> Work {
        match answer.trim() {
            "nothing" => Work::Nothing,
            "described" => Work::Described,
            _ => Work::Undescribed,
        }
    }
}

impl Jj {
    /// Lands workspace `plan.id`; see [`crate::vcs::Vcs::land`]. What would land (its
    /// working-copy commit included when it holds work) is checked against the target's
    /// working copy before anything is recorded or rebased. The land is then made as a trial
    /// of operations jj writes but does not integrate (`--no-integrate-operation`, each step
    /// at the one before with `--at-op`): no working copy, no operation log and no other
    /// process sees it, and jj's own result decides. A dry run, or a conflict the land may
    /// not leave, ends there with nothing changed; otherwise the last operation is
    /// integrated and both working copies are brought up to date with it.
    ///
    /// The trial is integrated only while the target working copy is as the preview saw
    /// it: it is snapshotted again first, and an edit made there meanwhile makes the land
    /// start over from the preview (up to [`ATTEMPTS`] times), so no edit is overwritten.
    pub(crate) fn land(&self, plan: &Plan) -> Result<Landing<JjLanded>> {
        let place = self.land_place(&plan.target)?;
        if place.working_copy && place.dir != self.main {
            // A parent workspace another workspace made stale (a repair a killed run left
            // included) is brought up to date first, its unrecorded edits carried across:
            // jj reads nothing from a stale working copy, and a bare `update-stale` would
            // leave those edits in a divergent commit only.
            let scratch = recovery_dir(&place.dir);
            self.resume_recovery(&place.dir, &scratch)?;
            self.update_stale(&place.dir, &scratch)?;
        }
        let (work, as_of) = match plan.watching {
            true => {
                let (work, at) = self.last_snapshot_for_land(plan)?;
                let at = Some(at)
                    .filter(|at| !at.is_empty())
                    .map(|at| crate::store::timestamp::Timestamp::parse(&at));
                (work, Some(crate::vcs::diff::AsOf::LastSnapshot(at)))
            }
            false => (self.snapshot_for_land(plan)?, None),
        };
        for _ in 0..ATTEMPTS {
            if let Some(mut landing) = self.land_once(plan, &place, work)? {
                landing.files_as_of = as_of;
                return Ok(landing);
            }
        }
        Err(LandError::TargetChanging {
            path: place.dir.clone(),
        })
    }

    /// One attempt of [`Jj::land`]; `None` when the target working copy changed before the
    /// trial could be integrated (nothing was changed).
    fn land_once(
        &self,
        plan: &Plan,
        place: &Place,
        work: Work,
    ) -> Result<Option<Landing<JjLanded>>> {
        let preview = self.preview(plan, place)?;
        let mut landing = Landing::onto(target_name(place, &preview));
        if preview.commits.is_empty() {
            return Ok(Some(landing));
        }
        landing.files = files_of(&preview.commits);
        let before = self.operation_now()?;
        let before_op = before.clone();
        landing.by.operation_before = Some(before.clone());
        if place.working_copy {
            self.refuse_conflicted_target(place, &preview, &before)?;
            refuse_dirty(&place.dir, &landing.files, &preview.target_files)?;
            self.refuse_untracked_in_the_way(&place.dir, &landing.files, &preview.target_commit)?;
            if !plan.dry_run {
                crate::vcs::land::room_for_land(&place.dir, plan.ws, &landing.files)?;
            }
        }
        self.refuse_moving_others(plan, place, &before)?;
        let origin = self.origin(plan, place, &before)?;
        let mut trial = Trial {
            ops: vec![],
            at: before,
        };
        let landed = self.trial(plan, place, &preview, work, &mut trial, &mut landing)?;
        let keep = !plan.dry_run && (landing.conflicts.is_empty() || plan.allow_conflicts);
        if trial.ops.is_empty() && place.working_copy {
            // Moving commits below a working-copy commit always makes an operation: jj did
            // not say which.
            return Err(LandError::NoOperation {
                id: plan.id.clone(),
            });
        }
        if !keep || trial.ops.is_empty() {
            // Nothing to keep, or (`--onto`) the commits already sat on the target.
            as_previewed(&preview, &landed, &mut landing);
            landing.applied = keep;
            return Ok(Some(landing));
        }
        if place.working_copy && self.target_moved(place, &preview)? {
            return Ok(None);
        }
        // Compare and swap: the trial is integrated only onto the operation it was made at.
        // Any command since (a user's `jj commit` in main, a snapshot) plans the land again;
        // jj would otherwise merge the two into divergent commits.
        if self.operation_now()? != before_op {
            return Ok(None);
        }
        self.query()?
            .args(["op", "integrate", &trial.at])
            .stdout()?;
        landing.applied = true;
        landing.recorded_edits = work != Work::Nothing;
        // A workspace built on the target working-copy commit follows that commit: only
        // the landed commits go back.
        let chain = match preview.target_in_workspace {
            true => None,
            false => Some(Chain {
                id: plan.id,
                target: landing.target.working_copy(),
            }),
        };
        landing.undo = Some(undo_line(chain, &moved(&preview, &landed), &origin));
        landing.by.operations = trial.ops;
        // Both working copies follow the result: jj snapshots each first (an edit made since
        // the preview is kept), then updates it to its rewritten commit.
        if place.working_copy {
            self.write_target_after_land(
                plan.id,
                &place.dir,
                &preview.target_commit,
                &landing.files,
            )?;
        }
        self.call(plan.ws)?
            .args(["workspace", "update-stale"])
            .stdout()?;
        Ok(Some(landing))
    }

    /// Brings a land's target working copy at `dir` up to date after a killed land moved
    /// it. A workspace's edits made since are carried across (see
    /// [`Jj::carry_across_update`]); the main working copy is updated by jj alone.
    pub(crate) fn update_target_working_copy(&self, dir: &Path) -> crate::vcs::Result<()> {
        if dir != self.main {
            self.update_stale(dir, &recovery_dir(dir))?;
            return Ok(());
        }
        self.write_main_whole(dir)
    }

    /// Whether the target working-copy commit is no longer the one the preview saw, once
    /// its working copy is snapshotted again (an edit made there since the preview).
    fn target_moved(&self, place: &Place, preview: &Preview) -> Result<bool> {
        let out = self
            .call(&place.dir)?
            .args(["log", "--no-graph", "-r", &place.revset, "-T", "commit_id"])
            .stdout()?;
        Ok(out.trim() != preview.target_commit)
    }

    /// The land itself as unintegrated operations: the workspace's edits recorded, its
    /// commits rebased, the workspace's working copy put on top of them, `--prefer`'s
    /// resolutions; then what landed and every conflict it left, in the landed commits and
    /// in the target working-copy commit. Returns the landed commits as the trial left them.
    fn trial(
        &self,
        plan: &Plan,
        place: &Place,
        preview: &Preview,
        work: Work,
        trial: &mut Trial,
        landing: &mut Landing<JjLanded>,
    ) -> Result<Vec<Landed>> {
        let changes: Vec<&str> = preview.commits.iter().map(|c| c.change.as_str()).collect();
        let origin_at = trial.at.clone();
        let origin_before = match plan.prefer {
            Some(_) => self.origin(plan, place, &origin_at)?,
            None => vec![],
        };
        if work != Work::Nothing {
            let call = self.step(plan.ws, &trial.at)?;
            let call = match work == Work::Described {
                true => call.arg("new"),
                false => call
                    .args(["commit", "-m"])
                    .arg(format!("[workspace {}] edits recorded by land", plan.id)),
            };
            trial.run(call)?;
        }
        // Recording keeps the change id of the working-copy commit, so the changes stay.
        let set = land_set(plan.id, plan.base, &place.revset, false);
        let call = self.step(&place.dir, &trial.at)?;
        let call = match place.working_copy {
            // `-B`: the target's parents become the commits' parents, so only the
            // workspace's own commits land, never the base it started from.
            true => call.args(["rebase", "-r", &set, "-B", &place.revset]),
            false => call
                .args(["rebase", "-s"])
                .arg(format!("roots({set})"))
                .args(["-o", &place.revset]),
        };
        trial.run(call).map_err(|e| rebase_failed(plan, e))?;
        if place.working_copy && !preview.target_in_workspace {
            // After `rebase -r`, the workspace's working copy sat where its commits were.
            let call = self
                .step(&place.dir, &trial.at)?
                .args(["rebase", "-s"])
                .arg(workspace_revset(plan.id))
                .arg("-o")
                .arg(format!("heads({})", by_change(&changes)));
            trial.run(call).map_err(|e| rebase_failed(plan, e))?;
        }
        if let Some(side) = plan.prefer {
            // The commits the landed ones sit on, as they were before the land: their
            // conflicts are not the workspace's against the target.
            let mut inherited = vec![];
            for commit in &origin_before {
                inherited.extend(self.conflicted_files(&origin_at, commit)?);
            }
            let own: Vec<&str> = preview
                .commits
                .iter()
                .filter(|c| c.conflicted)
                .map(|c| c.change.as_str())
                .collect();
            landing.resolved = self.prefer(&changes, &own, &inherited, side, trial)?;
        }
        let landed = self.fill(&trial.at, &changes, landing)?;
        if place.working_copy {
            self.target_conflicts(place, &trial.at, landing)?;
        }
        if let Some(head) = landed.last() {
            // What the land writes: the target working-copy commit's change, or (`--onto`)
            // the landed commits' on the commit they land on.
            let (from, to) = match place.working_copy {
                true => (preview.target_commit.as_str(), place.revset.as_str()),
                false => (place.revset.as_str(), head.commit.id.as_str()),
            };
            let span = Span {
                dir: &place.dir,
                at: &trial.at,
                from,
                to,
            };
            self.marker_conflicts(&span, &head.commit.id, landing)?;
        }
        Ok(landed)
    }

    /// A step of a trial: a jj command in `dir` at operation `at`, whose operation is
    /// written but not integrated. Not `--quiet`: jj names that operation on stderr.
    pub(super) fn step(&self, dir: &Path, at: &str) -> Result<Call> {
        Ok(Call::new(self.binary()?)
            .args(["--no-pager", "--color=never", "--no-integrate-operation"])
            .arg(format!("--at-op={at}"))
            .arg("-R")
            .arg(dir)
            .dir(&self.main)
            .env("COLUMNS", "200")
            .env("LINES", "50"))
    }

    /// A read-only query at operation `at` (which may be a trial's, not integrated).
    pub(super) fn query_at(&self, at: &str) -> Result<Call> {
        Ok(self.call(&self.main)?.arg(format!("--at-op={at}")))
    }
    /// Resolves the target: `@` of the main workspace or of the parent workspace, or the one
    /// commit `--onto` names.
    fn land_place(&self, target: &Target) -> Result<Place> {
        match target {
            Target::Rev(rev) => {
                let commit = self.one_commit(rev)?;
                Ok(Place {
                    revset: commit.clone(),
                    recorded: Some(LandTarget::Revision(commit)),
                    dir: self.main.clone(),
                    working_copy: false,
                })
            }
            Target::Workspace { id, path } => Ok(Place {
                revset: "@".into(),
                recorded: Some(LandTarget::WorkingCopy(id.to_string())),
                dir: path.clone(),
                working_copy: true,
            }),
            Target::Main => Ok(Place {
                revset: "@".into(),
                recorded: None,
                dir: self.main.clone(),
                working_copy: true,
            }),
        }
    }

    /// The commit id of `rev`, which must name exactly one commit.
    fn one_commit(&self, rev: &str) -> Result<String> {
        let unknown = |why: String| LandError::UnknownTarget {
            rev: rev.to_string(),
            why,
            kind: TargetKind::JjRevision,
        };
        let out = self
            .query()?
            .args([
                "log",
                "--no-graph",
                "--limit",
                "2",
                "-T",
                r#"commit_id ++ "\n""#,
            ])
            .arg(format!("--revisions={rev}"))
            .stdout()
            .map_err(|e| unknown(e.stderr().trim().to_string()))?;
        let ids: Vec<&str> = out.lines().collect();
        match ids.as_slice() {
            [one] => Ok(one.to_string()),
            [] => Err(unknown("it names no commit".into())),
            _ => Err(unknown("it names more than one commit".into())),
        }
    }

    /// Snapshots the workspace (bringing a stale one up to date first, its edits kept) and
    /// says what its working-copy commit holds ([`WORK_TEMPLATE`]).
    fn snapshot_for_land(&self, plan: &Plan) -> Result<Work> {
        let ws = plan.ws;
        self.resume_recovery(ws, &recovery_dir(ws))?;
        let out = match self.probe(ws, WORK_TEMPLATE)? {
            Probe::Fresh(out) => out,
            Probe::Unknown => {
                return Err(VcsError::Unregistered {
                    id: plan.id.to_string(),
                    path: ws.to_path_buf(),
                }
                .into())
            }
            Probe::Stale => {
                self.carry_across_update(ws, &recovery_dir(ws))?;
                self.call(ws)?
                    .args(["log", "--no-graph", "-r", "@", "-T", WORK_TEMPLATE])
                    .stdout()?
            }
        };
        Ok(Work::parse(&out))
    }

    /// [`Jj::snapshot_for_land`] for a workspace a live run holds: what its working-copy
    /// commit held at its last snapshot, read without snapshotting (no lock, no operation),
    /// with the time that commit was written.
    fn last_snapshot_for_land(&self, plan: &Plan) -> Result<(Work, String)> {
        let template = format!(
            r#"{WORK_TEMPLATE} ++ " " ++ committer.timestamp().utc().format("%Y-%m-%dT%H:%M:%SZ")"#
        );
        let out = self
            .call(plan.ws)?
            .args([
                "--ignore-working-copy",
                "log",
                "--no-graph",
                "-r",
                "@",
                "-T",
            ])
            .arg(template)
            .stdout()?;
        let (work, at) = out.trim().split_once(' ').unwrap_or((out.trim(), ""));
        Ok((Work::parse(work), at.to_string()))
    }

    /// The current operation: read from the operation heads, asking jj only when there are
    /// several (concurrent operations not merged yet).
    fn operation_now(&self) -> Result<String> {
        match self.op_heads_key() {
            Some(key) if !key.contains(',') => Ok(key),
            _ => Ok(self
                .query()?
                .args(["op", "log", "--no-graph", "--limit", "1", "-T", "id"])
                .stdout()?
                .trim()
                .to_string()),
        }
    }

    /// The commits the land's commits came from: the parents of the roots of what lands,
    /// outside it, as they are before the land.
    fn origin(&self, plan: &Plan, place: &Place, at: &str) -> Result<Vec<String>> {
        let set = land_set(plan.id, plan.base, &place.revset, true);
        let out = self
            .call(&place.dir)?
            .arg(format!("--at-op={at}"))
            .args(["log", "--no-graph", "-T", r#"commit_id ++ "\n""#])
            .arg(format!("--revisions=parents(roots({set})) ~ ({set})"))
            .stdout()?;
        Ok(out.lines().map(str::to_string).collect())
    }

    /// Refuses a land onto a working copy that has unresolved conflicts itself, naming them:
    /// the land would add to them, and they are not the workspace's.
    fn refuse_conflicted_target(&self, place: &Place, preview: &Preview, at: &str) -> Result<()> {
        if !preview.target_conflicted {
            return Ok(());
        }
        Err(LandError::TargetConflicted {
            path: place.dir.clone(),
            files: self.conflicted_files(at, &preview.target_commit)?,
            jj: true,
        })
    }

    /// Refuses a land that would rewrite the commits of another workspace (one built on the
    /// commits that would land, e.g. started with `--base-change` on a checkpoint): that
    /// workspace's lease is not held, and its working copy would change under it.
    fn refuse_moving_others(&self, plan: &Plan, place: &Place, at: &str) -> Result<()> {
        // The workspace's working copy moves too (it is put on top of the landed commits),
        // and whatever is built on it with it.
        let set = format!(
            "{} | {}",
            land_set(plan.id, plan.base, &place.revset, true),
            workspace_revset(plan.id)
        );
        let mut mine = vec![workspace_revset(plan.id)];
        if place.working_copy {
            mine.push(place.revset.clone());
        }
        let out = self
            .call(&place.dir)?
            .arg(format!("--at-op={at}"))
            .args(["log", "--no-graph", "-T", r#"working_copies ++ " ""#])
            .arg(format!(
                "--revisions=(descendants({set}) & working_copies()) ~ ({})",
                mine.join(" | ")
            ))
            .stdout()?;
        let mut others: Vec<String> = out
            .split_whitespace()
            .map(|w| w.trim_end_matches('@').to_string())
            .collect();
        others.sort();
        others.dedup();
        if others.is_empty() {
            return Ok(());
        }
        Err(LandError::MovesOthers {
            id: plan.id.clone(),
            others,
        })
    }

    /// Adds the conflicts the land left in the target working-copy commit itself (its own
    /// edits against the landed commits), beyond those it inherits from them.
    fn target_conflicts(
        &self,
        place: &Place,
        at: &str,
        landing: &mut Landing<JjLanded>,
    ) -> Result<()> {
        let out = self
            .call(&place.dir)?
            .arg(format!("--at-op={at}"))
            .args(["log", "--no-graph", "-r"])
            .arg(&place.revset)
            .args(["-T", r#"if(conflict, commit_id)"#])
            .stdout()?;
        let commit = out.trim();
        if !commit.is_empty() {
            for file in self.conflicted_files(at, commit)? {
                landing.add_conflict(commit, file);
            }
        }
        Ok(())
    }
}

/// How many times a land starts over when the target working copy changes under it.
const ATTEMPTS: usize = 3;

fn rebase_failed(plan: &Plan, e: ProcessError) -> LandError {
    LandError::Rebase {
        id: plan.id.clone(),
        source: Box::new(e),
    }
}

/// The files the commits change, sorted, once each.
fn files_of(commits: &[Landed]) -> Vec<String> {
    let mut files: Vec<String> = commits.iter().flat_map(|c| c.files.clone()).collect();
    files.sort();
    files.dedup();
    files
}

/// After a trial that was put back: the commits as they are (the trial's are gone), and each
/// conflict named by the commit it would have come from.
fn as_previewed(preview: &Preview, trial: &[Landed], landing: &mut Landing<JjLanded>) {
    let original = |commit: &str| {
        trial
            .iter()
            .find(|l| l.commit.id == commit)
            .and_then(|l| preview.commits.iter().find(|c| c.change == l.change))
            .map(|c| c.commit.id.clone())
            .unwrap_or_else(|| preview.target_commit.clone())
    };
    let conflicts: Vec<Conflict> = landing
        .conflicts
        .iter()
        .map(|c| Conflict {
            commit: original(&c.commit),
            file: c.file.clone(),
        })
        .collect();
    landing.conflicts = conflicts;
    landing.commits = preview.commits.iter().map(|c| c.commit.clone()).collect();
    landing.recorded_edits = false;
    landing.applied = false;
}

/// The workspace whose commits above the landed ones [`undo_line`] moves back with them,
/// and the target working copy's workspace (its name in the land's target, `default` for the
/// main one), whose history they leave alone.
struct Chain<'a> {
    id: &'a WorkspaceId,
    target: Option<&'a str>,
}

/// One landed change for [`undo_line`]: its commit before the land and as the land left it.
struct Moved<'a> {
    change: &'a str,
    before: &'a str,
    after: &'a str,
}

/// The landed changes, oldest first, each with its commit before the land (`preview`) and
/// after it (`landed`, the trial's result).
fn moved<'a>(preview: &'a Preview, landed: &'a [Landed]) -> Vec<Moved<'a>> {
    preview
        .commits
        .iter()
        .filter_map(|c| {
            let after = landed.iter().find(|l| l.change == c.change)?;
            Some(Moved {
                change: &c.change,
                before: &c.commit.id,
                after: &after.commit.id,
            })
        })
        .collect()
}

/// The command that takes the land back out of the target and nothing else, whatever was
/// done after it, touching only the landed commits (and the workspace's commits above
/// them up to its working copy):
/// 1. a check that every landed commit is still as the land left it (`exactly`: jj fails
///    with "The revset has fewer than the expected N revisions" and nothing changes when
///    one was rewritten or abandoned since, so no later edit of them is overwritten);
/// 2. the landed commits moved back onto the commits they came from (`jj rebase -r`),
///    with the workspace's commits above them that are not in the target's history (a
///    commit of the user's the workspace was rebased onto stays in the target): what was
///    built on them in the target since (its working copy, the user's later commits) is
///    rebased onto their parents and keeps its own changes;
/// 3. each landed commit's files put back exactly as they were before the land (`jj
///    restore --from <before> --into <change>`, oldest first): `--prefer`'s resolutions
///    are gone and the workspace has its own side of every hunk back.
///
/// Neither `jj op restore` (it drops every later operation) nor `jj op revert` of the
/// land's operations (it brings back the pre-land version of every commit they rewrote,
/// the target working-copy commit included: a change the user committed since becomes
/// divergent) is printed.
fn undo_line(chain: Option<Chain>, moved: &[Moved], origin: &[String]) -> String {
    let short = |commit: &str| commit[..commit.len().min(12)].to_string();
    let is_hex = |id: &&Moved| {
        [id.before, id.after]
            .iter()
            .all(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    let moved: Vec<&Moved> = moved.iter().filter(is_hex).collect();
    let changes: Vec<&str> = moved.iter().map(|m| m.change).collect();
    let after: Vec<String> = moved.iter().map(|m| short(m.after)).collect();
    let mut steps = vec![format!(
        "jj log --no-graph -T '' -r 'exactly(({}) & ::visible_heads(), {})'",
        after.join(" | "),
        after.len()
    )];
    // Ids hold no single quote (layout's id rules), change ids only letters.
    let onto: Vec<String> = hex_ids(origin)
        .iter()
        .map(|c| format!("-o {}", short(c)))
        .collect();
    let set = by_change(&changes);
    let rebased = match chain {
        Some(Chain {
            id,
            target: Some(target),
        }) => format!(
            "{set} | (({set})::{} ~ ::present({}))",
            workspace_revset(id),
            workspace_revset(target)
        ),
        Some(Chain { id, target: None }) => format!("({set})::{}", workspace_revset(id)),
        None => set,
    };
    steps.push(format!("jj rebase -r '{rebased}' {}", onto.join(" ")));
    steps.extend(moved.iter().map(|m| {
        format!(
            "jj restore --from {} --into '{}'",
            short(m.before),
            by_change(&[m.change])
        )
    }));
    steps.join(" && ")
}

/// The recorded target: as asked, else the main working copy's workspace name (`default`
/// when several workspaces share that commit, or none is named).
fn target_name(place: &Place, preview: &Preview) -> LandTarget {
    if let Some(recorded) = &place.recorded {
        return recorded.clone();
    }
    match preview.target_names.as_slice() {
        [one] => LandTarget::from(one.clone()),
        _ => LandTarget::WorkingCopy(MAIN_WORKSPACE.to_string()),
    }
}

/// Refuses a land whose target working copy has edits in files the land changes.
fn refuse_dirty(wc: &Path, files: &[String], dirty: &[String]) -> Result<()> {
    let both = overlap(files, dirty);
    if both.is_empty() {
        return Ok(());
    }
    Err(LandError::Dirty {
        path: wc.to_path_buf(),
        files: both,
        jj: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undo_lines() {
        let origin = ["0123456789abcdef".to_string(), "x;rm".to_string()];
        let moved = [
            Moved {
                change: "kx",
                before: "aaaaaaaaaaaaaaaa",
                after: "cccccccccccccccc",
            },
            Moved {
                change: "zz",
                before: "bbbbbbbbbbbb",
                after: "dddddddddddd",
            },
            Moved {
                change: "yy",
                before: "b;rm",
                after: "eeee",
            },
        ];
        let id = WorkspaceId::parse("w1").unwrap();
        let w1 = |target| Some(Chain { id: &id, target });
        assert_eq!(
            undo_line(w1(Some("default")), &moved[..1], &origin[..1]),
            concat!(
                "jj log --no-graph -T '' -r 'exactly((cccccccccccc) & ::visible_heads(), 1)'",
                " && jj rebase -r 'change_id(kx) | ((change_id(kx))::\"w1\"@ ~ ::present(\"default\"@))' -o 0123456789ab",
                " && jj restore --from aaaaaaaaaaaa --into 'change_id(kx)'"
            )
        );
        assert_eq!(
            undo_line(w1(None), &moved, &origin),
            concat!(
                "jj log --no-graph -T '' -r 'exactly((cccccccccccc | dddddddddddd) & ::visible_heads(), 2)'",
                " && jj rebase -r '(change_id(kx) | change_id(zz))::\"w1\"@' -o 0123456789ab",
                " && jj restore --from aaaaaaaaaaaa --into 'change_id(kx)'",
                " && jj restore --from bbbbbbbbbbbb --into 'change_id(zz)'"
            )
        );
        assert_eq!(
            undo_line(None, &moved[..1], &origin[..1]),
            concat!(
                "jj log --no-graph -T '' -r 'exactly((cccccccccccc) & ::visible_heads(), 1)'",
                " && jj rebase -r 'change_id(kx)' -o 0123456789ab",
                " && jj restore --from aaaaaaaaaaaa --into 'change_id(kx)'"
            )
        );
    }
}
