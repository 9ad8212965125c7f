//! Landing a jj workspace: its commits rebased between a working-copy commit and its parents
//! (or onto a commit) in one `jj rebase`, conflicts recorded by jj and listed per commit.
//! The calls are few on purpose: one snapshot of the workspace, one query of the target
//! (which snapshots its working copy and says what it has changed), the recording of the
//! workspace's edits, the rebase, then a look at the result beside the workspace's update.

use std::path::{Path, PathBuf};

use super::land_preview::{land_set, Preview};
use super::stale::Probe;
use super::{recovery_dir, workspace_revset, Jj, MAIN_WORKSPACE};
use crate::vcs::land::{overlap, LandError, Landing, Plan, Result, Target, TargetKind};
use crate::vcs::VcsError;

/// What the workspace's working-copy commit holds: `nothing`, or work with or without a
/// description.
const WORK_TEMPLATE: &str = r#"if(empty && description == "", "nothing", if(description == "", "undescribed", "described"))"#;

/// The target: a revset in the repository `dir` is, as recorded, and whether it is a working
/// copy (then `revset` is `@` of `dir`).
pub(super) struct Place {
    pub(super) revset: String,
    recorded: Option<String>,
    pub(super) dir: PathBuf,
    pub(super) working_copy: bool,
}

impl Jj {
    /// Lands workspace `plan.id`; see [`crate::vcs::Vcs::land`]. What would land (its
    /// working-copy commit included when it holds work) is checked against the target's
    /// working copy before anything is recorded or rebased.
    pub fn land(&self, plan: &Plan) -> Result<Landing> {
        let place = self.land_place(&plan.target)?;
        let work = self.snapshot_for_land(plan)?;
        let preview = self.preview(plan, &place)?;
        let mut landing = Landing {
            target: target_name(&place, &preview),
            ..Landing::default()
        };
        if preview.commits.is_empty() {
            return Ok(landing);
        }
        let mut files: Vec<String> = preview
            .commits
            .iter()
            .flat_map(|c| c.files.clone())
            .collect();
        files.sort();
        files.dedup();
        landing.files = files;
        if place.working_copy {
            refuse_dirty(&place.dir, &landing.files, &preview.target_files)?;
        }
        let op = self.operation_now()?;
        landing.operation_before = Some(op.clone());
        let changes: Vec<&str> = preview.commits.iter().map(|c| c.change.as_str()).collect();
        if plan.dry_run {
            landing.commits = preview.commits.iter().map(|c| c.commit.clone()).collect();
            self.predict(&place, &preview.commits, &mut landing)?;
            return Ok(landing);
        }
        if work != "nothing" {
            self.record_edits(plan, work == "described")?;
            landing.recorded_edits = true;
        }
        // Recording keeps the change id of the working-copy commit, so the changes stay.
        let set = land_set(plan.id, plan.base, &place.revset, false);
        self.rebase(plan, &place, &set, false, preview.target_in_workspace)?;
        landing.applied = true;
        if let Some(side) = plan.prefer {
            landing.resolved = self.prefer(&place, &changes, side)?;
        }
        // The workspace's own working copy follows its rewritten commits meanwhile.
        let updating = self
            .call(plan.ws)?
            .args(["workspace", "update-stale"])
            .start()?;
        let filled = self.fill(&changes, &mut landing);
        updating.wait()?;
        filled?;
        Ok(landing)
    }

    /// Resolves the target: `@` of the main workspace or of the parent workspace, or the one
    /// commit `--onto` names.
    fn land_place(&self, target: &Target) -> Result<Place> {
        match target {
            Target::Rev(rev) => {
                let commit = self.one_commit(rev)?;
                Ok(Place {
                    revset: commit.clone(),
                    recorded: Some(commit),
                    dir: self.main.clone(),
                    working_copy: false,
                })
            }
            Target::Workspace { id, path } => Ok(Place {
                revset: "@".into(),
                recorded: Some(format!("{id}@")),
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
    fn snapshot_for_land(&self, plan: &Plan) -> Result<String> {
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
        Ok(out.trim().to_string())
    }

    /// Records the workspace's edits as a commit of their own under a new empty working-copy
    /// commit, so the work lands and the workspace goes on above it.
    fn record_edits(&self, plan: &Plan, described: bool) -> Result<()> {
        let call = self.call(plan.ws)?;
        let call = match described {
            true => call.arg("new"),
            false => call
                .args(["commit", "-m"])
                .arg(format!("[workspace {}] edits recorded by land", plan.id)),
        };
        call.stdout()?;
        Ok(())
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

    /// The one `jj rebase` of a land: between the target working-copy commit and its parents,
    /// with the workspace's working copy kept on top of its commits; or onto a commit, with
    /// whatever is built on the commits following them. A trial touches no working copy.
    /// When the workspace is built on the target working-copy commit (`below`), the commits
    /// go below that commit only, and the workspace's working copy follows it.
    pub(super) fn rebase(
        &self,
        plan: &Plan,
        place: &Place,
        set: &str,
        trial: bool,
        below: bool,
    ) -> Result<()> {
        let mut call = self.call(&place.dir)?;
        if trial {
            call = call.arg("--ignore-working-copy");
        }
        let ws = workspace_revset(plan.id);
        let call = match (place.working_copy, trial) {
            (true, false) if !below => {
                call.args(["rebase", "-r", set, "-B", &place.revset, "-B", &ws])
            }
            (true, _) => call.args(["rebase", "-r", set, "-B", &place.revset]),
            (false, _) => call
                .args(["rebase", "-s"])
                .arg(format!("roots({set})"))
                .args(["-o", &place.revset]),
        };
        call.stdout().map_err(|e| LandError::Rebase {
            id: plan.id.to_string(),
            source: Box::new(e),
        })?;
        Ok(())
    }
}

/// The recorded target: as asked, else the main working copy's workspace name (`default`
/// when several workspaces share that commit, or none is named).
fn target_name(place: &Place, preview: &Preview) -> String {
    if let Some(recorded) = &place.recorded {
        return recorded.clone();
    }
    let default = format!("{MAIN_WORKSPACE}@");
    match preview.target_names.as_slice() {
        [one] => one.clone(),
        _ => default,
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
