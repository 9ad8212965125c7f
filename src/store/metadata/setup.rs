//! What a workspace's setup command (`setup.command`) did, kept in its record.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::store::timestamp::Timestamp;

/// How the setup ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub(crate) enum SetupStatus {
    /// Exited 0: not run again.
    Done,
    /// Exited non-zero, died of a signal or could not start: retried by the next run.
    Failed,
    /// Not run: the repository file naming it differs from the base revision's (retried by
    /// the next run, which may pass `--trust-config`).
    Refused,
}

/// The setup's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct Setup {
    pub status: SetupStatus,
    pub command: Vec<String>,
    /// The configuration file that named the command.
    pub config_file: PathBuf,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub signal: Option<i32>,
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    pub started_at: Timestamp,
    #[serde(default)]
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    pub finished_at: Option<Timestamp>,
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// Its output (stdout and stderr), outside the workspace.
    #[serde(default)]
    pub log: Option<PathBuf>,
}
