//! The last land of a workspace, as its record keeps it, and the status it shows.

use serde::{Deserialize, Serialize};

use super::{Record, Status};
use crate::store::timestamp::Timestamp;

/// What a land went onto, as records keep it: `<name>@` for a jj workspace's working copy,
/// else the revision as given (jj: the commit ids `--onto` resolved to, comma-separated;
/// git: the branch). Read and written as that text, so records keep their form.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub(crate) enum LandTarget {
    /// jj: the working copy of the workspace of this name.
    WorkingCopy(String),
    /// jj: the commits `--onto` named; git: the branch.
    Revision(String),
}

impl LandTarget {
    /// The workspace whose working copy the land went onto (jj).
    pub(crate) fn working_copy(&self) -> Option<&str> {
        match self {
            LandTarget::WorkingCopy(name) => Some(name),
            LandTarget::Revision(_) => None,
        }
    }
}

impl From<String> for LandTarget {
    fn from(text: String) -> LandTarget {
        match text.strip_suffix('@') {
            Some(name) => LandTarget::WorkingCopy(name.to_string()),
            None => LandTarget::Revision(text),
        }
    }
}

impl From<&str> for LandTarget {
    fn from(text: &str) -> LandTarget {
        LandTarget::from(text.to_string())
    }
}

impl From<LandTarget> for String {
    fn from(target: LandTarget) -> String {
        target.to_string()
    }
}

impl std::fmt::Display for LandTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LandTarget::WorkingCopy(name) => write!(f, "{name}@"),
            LandTarget::Revision(rev) => f.write_str(rev),
        }
    }
}

/// How a land ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub(crate) enum Outcome {
    /// Every commit reached the target without a conflict left.
    Landed,
    /// jj: the commits landed with conflicts recorded in them; git: nothing was merged.
    Conflicted,
}

impl Outcome {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Outcome::Landed => "landed",
            Outcome::Conflicted => "conflicted",
        }
    }
}

/// The side `--prefer` took for a conflicted file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub(crate) enum Side {
    Workspace,
    Target,
}

impl Side {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Side::Workspace => "workspace",
            Side::Target => "target",
        }
    }
}

/// A conflicted file resolved by taking one side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct Resolved {
    #[serde(rename = "path", alias = "file")]
    pub file: String,
    pub side: Side,
}

/// A file left conflicted in a commit (git: the workspace's tip, which was not merged).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct Conflict {
    #[serde(rename = "commit_id", alias = "commit")]
    pub commit: String,
    #[serde(rename = "path", alias = "file")]
    pub file: String,
}

/// What the last `land` of a workspace did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct Land {
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    pub at: Timestamp,
    /// What the commits landed on: `<name>@` (jj working copy), a commit (jj `--onto`), or a
    /// branch (git).
    #[cfg_attr(test, schemars(with = "String"))]
    pub target: LandTarget,
    /// The landed commits, oldest first (jj: as rewritten by the land).
    pub commits: Vec<String>,
    /// jj: the change ids of `commits`, in the same order: a landed commit the user reworded
    /// or rebased in the target since is still found by its change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<String>,
    pub outcome: Outcome,
    #[serde(default)]
    pub resolved: Vec<Resolved>,
    #[serde(default)]
    pub conflicts: Vec<Conflict>,
    /// jj: the operation before the land; `jj op restore <it>` reverts the land.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_before: Option<String>,
    /// The start time and supervisor pid of the workspace's last run when it landed: a run
    /// since then (another start or supervisor) is newer than the land.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    pub after_run_started_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_run_pid: Option<u32>,
    /// git: the commit the target branch was moved to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_commit: Option<String>,
    /// Recorded by the command after a `land` that was interrupted once the target had
    /// moved (see [`Intent`]): `commits` are then the workspace's commits found in the
    /// target, empty when the state before the land could not be read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recovered: bool,
    /// A conflicted land that changed nothing (jj without `--allow-conflicts`; git's always):
    /// there is nothing in the target to follow or to undo.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unapplied: bool,
}

impl Land {
    /// A land onto `target` with nothing else known: what a backend is asked about when it
    /// checks whether a workspace's work is in that target (`recovered`: the commits it
    /// brought are not known).
    pub(crate) fn probe(target: &LandTarget, recovered: bool) -> Land {
        Land {
            // Never kept: only its target and commits are asked about.
            at: Timestamp::now(),
            target: target.clone(),
            commits: vec![],
            changes: vec![],
            outcome: Outcome::Landed,
            resolved: vec![],
            conflicts: vec![],
            operation_before: None,
            after_run_started_at: None,
            after_run_pid: None,
            merge_commit: None,
            recovered,
            unapplied: false,
        }
    }
}

/// A land under way, saved in the record before the backend changes anything, so that the
/// next command of any kind can tell whether a land that was killed happened and record it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct Intent {
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    pub at: Timestamp,
    /// The target as [`Land::target`] names it.
    #[cfg_attr(test, schemars(with = "String"))]
    pub target: LandTarget,
    /// jj: the operation heads before the land (nothing happened while they are the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation_before: Option<String>,
    /// git: the commit the target branch was at before the land.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_before: Option<String>,
    /// The last run when the land started ([`Land::after_run_started_at`]), so a land
    /// finished after another run is not taken for newer than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    pub after_run_started_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_run_pid: Option<u32>,
}

/// Whether the last land was checked against the repository by this command.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Check {
    /// Not checked: shown as recorded.
    #[default]
    Unchecked,
    /// The land's work is in its target now.
    Verified,
    /// The land's work is no longer in its target (undone): the run's status shows.
    Undone,
}

impl Check {
    /// `land_state` in `status --json`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Check::Unchecked => "unchecked",
            Check::Verified => "verified",
            Check::Undone => "undone",
        }
    }
}

impl Record {
    /// The status to show: `landed` or `conflicted` when the last land is newer than the last
    /// run (and no run is live) and was not found undone, else the recorded status.
    pub(crate) fn shown_status(&self) -> &'static str {
        // A run that never started its command, newer than the last land (none runs now).
        if let Some(ns) = &self.not_started {
            let after_land = self
                .land
                .as_ref()
                .is_none_or(|l| ns.at.time() >= l.at.time());
            if self.status != Status::Running && after_land {
                return "not-started";
            }
        }
        match self.shown_land() {
            Some(land) if self.land_check != Check::Undone => land.outcome.as_str(),
            _ => self.status.as_str(),
        }
    }

    /// jj: the change ids the last land brought into its target, when it changed the target
    /// and recorded them (empty otherwise).
    pub(crate) fn landed_changes(&self) -> &[String] {
        match &self.land {
            Some(land) if !land.unapplied => &land.changes,
            _ => &[],
        }
    }

    /// The last land when it is what the status shows: newer than the last run, none live.
    pub(crate) fn shown_land(&self) -> Option<&Land> {
        self.land
            .as_ref()
            .filter(|land| self.status != Status::Running && self.land_is_newest(land))
    }

    /// Whether no run started since `land` (timestamps of one second cannot tell a run
    /// started right after a land from one that ended just before it; the run's identity can).
    pub(crate) fn land_is_newest(&self, land: &Land) -> bool {
        land.after_run_started_at == self.started_at && land.after_run_pid == self.pid
    }
}
