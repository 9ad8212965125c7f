//! A workspace's run history: marking a run started, recording how it ended, bounded.

use serde::{Deserialize, Serialize};

use super::{now, Record, Status, MAX_RUNS};
use crate::store::timestamp::Timestamp;

/// One finished (or crashed) run in a workspace's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct Run {
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    pub started_at: Timestamp,
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    pub finished_at: Option<Timestamp>,
    pub duration_ms: Option<u64>,
    pub status: Status,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// The sandbox's limit this run reached, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_hit: Option<super::LimitHit>,
    pub command: Vec<String>,
    pub workflow: Option<String>,
    pub pid: Option<u32>,
    /// How the run was sandboxed; none when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<super::SandboxOptions>,
    /// The checkpoint `run --checkpoint` made after this run, when it recorded anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<Checkpoint>,
}

/// A run that never started its command: when, and why (the error it ended with).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct NotStarted {
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    pub at: Timestamp,
    pub reason: String,
}

impl Record {
    /// Records that a run ended before its command started, for `reason`.
    pub(crate) fn record_not_started(&mut self, reason: String) {
        let at = now();
        self.updated_at = at.clone();
        self.not_started = Some(NotStarted { at, reason });
    }
}

/// A commit a checkpoint made: its id, and its change id with jj.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct Checkpoint {
    #[serde(rename = "commit_id", alias = "commit")]
    pub commit: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_id: Option<String>,
}

impl Record {
    /// Marks a run of `command` by the supervisor `pid` as started now.
    pub(crate) fn start_run(&mut self, command: Vec<String>, pid: u32, pid_start: Option<u64>) {
        let now = now();
        self.status = Status::Running;
        self.command = command;
        self.started_at = Some(now.clone());
        self.updated_at = now;
        self.finished_at = None;
        self.exit_code = None;
        self.signal = None;
        self.limit_hit = None;
        self.refused_hosts = vec![];
        self.pid = Some(pid);
        self.pid_start = pid_start;
        self.not_started = None;
    }

    /// Records how the current run ended and adds it to the history (with the limit it
    /// reached, set in `limit_hit` before).
    pub(crate) fn finish_run(
        &mut self,
        status: Status,
        code: i32,
        signal: Option<i32>,
        took: std::time::Duration,
    ) {
        let finished = now();
        self.status = status;
        self.exit_code = Some(code);
        self.signal = signal;
        self.finished_at = Some(finished.clone());
        self.updated_at = finished.clone();
        self.push_run(Run {
            // `start_run` set it; a record edited since without one takes the end.
            started_at: self.started_at.clone().unwrap_or_else(|| finished.clone()),
            finished_at: Some(finished),
            duration_ms: Some(took.as_millis() as u64),
            status,
            exit_code: Some(code),
            signal,
            limit_hit: self.limit_hit,
            command: self.command.clone(),
            workflow: self.workflow.clone(),
            pid: self.pid,
            sandbox: self.sandbox.clone(),
            checkpoint: None,
        });
    }

    /// Appends a finished run, keeping the newest [`MAX_RUNS`].
    pub(crate) fn push_run(&mut self, run: Run) {
        self.runs.push(run);
        if self.runs.len() > MAX_RUNS {
            let excess = self.runs.len() - MAX_RUNS;
            self.runs.drain(..excess);
        }
    }
}
