//! `skill`: prints the skill that teaches a coding agent the daily flow (see `cli/skill.rs`).

use clap::Args;

use crate::cli::invocation::Invocation;
use crate::error::Result;

/// Print the skill (SKILL.md) that teaches a coding agent to work with agent-workspace
///
/// The same text `integrate claude-code` installs as `.claude/skills/agent-workspace/SKILL.md`,
/// generated from this tool's commands and MCP tools; for agents that read instructions from
/// a file of their own (Codex's `AGENTS.md`, say).
///
/// Example: `agent-workspace skill >> AGENTS.md`
#[derive(Debug, Args)]
pub struct SkillArgs {}

/// Prints `skill`, the skill's text (made by `cli/skill.rs`).
pub(in crate::cli) fn cmd_skill(inv: &Invocation, skill: &str) -> Result<i32> {
    inv.ui.data(skill)?;
    Ok(0)
}
