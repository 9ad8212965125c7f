//! A configuration file's shape, as TOML gives it: every section and key, unknown ones
//! refused. `mod.rs` applies what a file sets onto the `Config`.

use std::path::PathBuf;

use serde::Deserialize;

use crate::repo::Backend;

/// One configuration file's content. Unknown keys are errors, so a typo never goes unnoticed.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileContent {
    pub(super) backend: Option<Backend>,
    #[serde(default)]
    pub(super) git: GitSection,
    #[serde(default)]
    pub(super) jj: JjSection,
    #[serde(default)]
    pub(super) clean: CleanSection,
    #[serde(default)]
    pub(super) sandbox: SandboxSection,
    #[serde(default)]
    pub(super) limits: LimitsSection,
    #[serde(default)]
    pub(super) ports: PortsSection,
    #[serde(default)]
    pub(super) tools: ToolsSection,
    #[serde(default)]
    pub(super) setup: SetupSection,
    #[serde(default)]
    pub(super) copy: CopySection,
    #[serde(default)]
    pub(super) retention: RetentionSection,
    #[serde(default)]
    pub(super) pool: PoolSection,
    #[serde(default)]
    pub(super) direnv: DirenvSection,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DirenvSection {
    pub(super) reuse: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PoolSection {
    pub(super) size: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ToolsSection {
    pub(super) paths: Option<Vec<String>>,
    pub(super) dir: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CopySection {
    pub(super) include: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SetupSection {
    pub(super) command: Option<CommandSpec>,
}

/// A command as a configuration file gives it: a string for `sh -c`, or an argv list.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum CommandSpec {
    Shell(String),
    Argv(Vec<String>),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RetentionSection {
    pub(super) done: Option<String>,
    pub(super) landed: Option<String>,
    pub(super) error: Option<String>,
    pub(super) crashed: Option<String>,
    pub(super) interrupted: Option<String>,
    pub(super) idle: Option<String>,
    pub(super) kept: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LimitsSection {
    pub(super) max_workspaces: Option<usize>,
    pub(super) min_free_disk: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PortsSection {
    pub(super) count: Option<u16>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GitSection {
    pub(super) branch_prefix: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct JjSection {
    pub(super) colocate: Option<ColocateSpec>,
}

/// `jj.colocate` as a file gives it: `true`, `false` or a word (`"auto"`, checked when
/// applied).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum ColocateSpec {
    Flag(bool),
    Word(String),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CleanSection {
    pub(super) disposable: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SandboxSection {
    pub(super) enabled: Option<bool>,
    pub(super) network: Option<bool>,
    pub(super) writable: Option<Vec<PathBuf>>,
    pub(super) sockets: Option<Vec<PathBuf>>,
    pub(super) readable: Option<Vec<PathBuf>>,
    pub(super) pass_env: Option<Vec<String>>,
    pub(super) limits: Option<SandboxLimitsSection>,
    pub(super) bring_back_timeout: Option<String>,
    pub(super) allowed_hosts: Option<Vec<String>>,
}

/// `[sandbox.limits]`: what one sandboxed run may take of the machine (the user's file only).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SandboxLimitsSection {
    pub(super) pids: Option<i64>,
    pub(super) memory: Option<String>,
    pub(super) cpus: Option<f64>,
    pub(super) tmp: Option<String>,
}
