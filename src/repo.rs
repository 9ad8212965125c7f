//! The repository a command acts on: its backend and its identity (the main workspace's root
//! and the shared store). How it is found is the backends' (`vcs::discover`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Which version-control system manages a workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Jj,
    Git,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Jj => "jj",
            Backend::Git => "git",
        }
    }

    /// Parses a name given on the command line or in `AGENT_WORKSPACE_BACKEND`.
    pub fn parse(text: &str) -> Option<Backend> {
        match text {
            "jj" => Some(Backend::Jj),
            "git" => Some(Backend::Git),
            _ => None,
        }
    }
}

/// The repository a command acts on, identified by its main workspace (or main worktree).
#[derive(Debug, Clone)]
pub(crate) struct Repo {
    /// Canonical root of the main workspace: the identity hashed into the namespace.
    pub root: PathBuf,
    pub backend: Backend,
    /// jj: the shared `.jj/repo` store; git: the common git dir.
    pub store: PathBuf,
}
