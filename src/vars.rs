//! Every environment variable agent-workspace reads or sets, declared once.
//!
//! Optional settings are read here rather than through clap's `env`: direnv and nix shells
//! export empty variables, and an empty value must mean "unset", not a usage error.

use std::ffi::OsString;

/// The workspace root (see docs/reference.md, Layout).
pub(crate) const ROOT: &str = "AI_WORKSPACES_ROOT";
/// The backend when `--backend` is not given.
pub(crate) const BACKEND: &str = "AGENT_WORKSPACE_BACKEND";
/// The git branch prefix (default `agent-workspace/`).
pub(crate) const BRANCH_PREFIX: &str = "AGENT_WORKSPACE_BRANCH_PREFIX";
/// Whether jj workspaces are colocated git worktrees: `auto`, `true` or `false` (`jj.colocate`).
pub(crate) const JJ_COLOCATE: &str = "AGENT_WORKSPACE_JJ_COLOCATE";
/// Disposable build outputs `clean` may delete (comma-separated patterns; empty: none).
pub(crate) const DISPOSABLE: &str = "AGENT_WORKSPACE_DISPOSABLE";
/// How deep `run --parent` may nest workspaces (default 10).
pub(crate) const MAX_DEPTH: &str = "AGENT_WORKSPACE_MAX_DEPTH";
/// The cache directory the default root lives in, when absolute.
pub(crate) const XDG_CACHE_HOME: &str = "XDG_CACHE_HOME";
/// Where direnv keeps its trust database (`direnv/allow`), read by `doctor`.
pub(crate) const XDG_DATA_HOME: &str = "XDG_DATA_HOME";
/// The shell `shell` starts.
pub(crate) const SHELL: &str = "SHELL";
/// Passed to direnv; unset means its status lines are silenced.
pub(crate) const DIRENV_LOG_FORMAT: &str = "DIRENV_LOG_FORMAT";

/// Extra paths a sandboxed run may write (separated like PATH).
pub(crate) const SANDBOX_WRITE: &str = "AGENT_WORKSPACE_SANDBOX_WRITE";

/// Set for the command of a sandboxed run: `bwrap`, `bwrap,allowed-hosts` or `bwrap,no-network`.
pub(crate) const SANDBOX: &str = "AGENT_WORKSPACE_SANDBOX";
/// Set for the command: the workspace's first TCP port.
pub(crate) const PORT: &str = "AGENT_WORKSPACE_PORT";
/// Set for the command: all the workspace's TCP ports, comma-separated.
pub(crate) const PORTS: &str = "AGENT_WORKSPACE_PORTS";
/// Set for the command: the workspace id.
pub(crate) const ID: &str = "AGENT_WORKSPACE_ID";
/// Set for the command: the workspace directory.
pub(crate) const PATH: &str = "AGENT_WORKSPACE_PATH";
/// Set for the command: the workspace's record (the view scripts read).
pub(crate) const METADATA: &str = "AGENT_WORKSPACE_METADATA";
/// Set for the command: the canonical root of the repository's main workspace.
pub(crate) const REPO_ROOT: &str = "AGENT_WORKSPACE_REPO_ROOT";
/// Set for the command: the namespace directory name.
pub(crate) const NAMESPACE: &str = "AGENT_WORKSPACE_NAMESPACE";
/// Set for the command: the workflow name, empty when none.
pub(crate) const WORKFLOW: &str = "AGENT_WORKSPACE_WORKFLOW";

/// Set for the command when the workspace has a tools bundle: its directory.
pub(crate) const TOOL_COPY_ROOT: &str = "AGENT_TOOL_COPY_ROOT";
/// Set for the command when the workspace has a tools bundle: the sha256 of its content.
pub(crate) const TOOLS_VERSION: &str = "AGENT_TOOLS_VERSION";
/// Set for the command when the workspace has a tools bundle: the root it was copied from.
pub(crate) const TOOLS_SOURCE: &str = "AGENT_TOOLS_SOURCE";

/// A variable that is set and not empty, as text.
pub(crate) fn non_empty(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.is_empty())
}

/// A variable as it is, possibly not UTF-8 (paths).
pub(crate) fn raw(key: &str) -> Option<OsString> {
    std::env::var_os(key)
}
