//! `hook claude-code`: what Claude Code's `WorktreeCreate` and `WorktreeRemove` hooks run, so
//! its own isolation (`claude -w NAME`, the EnterWorktree tool, subagents with `isolation:
//! "worktree"`) makes and removes agent-workspace workspaces.
//!
//! The event arrives as JSON on stdin. `WorktreeCreate` makes (or reattaches) the workspace
//! named after the event's `name` and prints its directory, and only that, on stdout: the
//! session then works there. `WorktreeRemove` removes the workspace at the event's
//! `worktree_path` by `clean`'s rules: its edits recorded in a commit it names, files no
//! commit holds kept aside, never discarded. A failure exits non-zero with the reason on
//! stderr, which Claude Code shows; other events are answered with nothing (exit 0).

use std::io::Read;
use std::path::PathBuf;

use clap::{Args, FromArgMatches, ValueEnum};
use serde::Deserialize;

use crate::cli::invocation::Invocation;
use crate::error::{CliError, Result};
use crate::store::layout::WorkspaceId;

/// Answer a coding agent's hook event (read on stdin) with agent-workspace's workspaces
///
/// Run by the hooks `agent-workspace integrate` adds, not by hand. `claude-code`: a
/// `WorktreeCreate` event makes (or reattaches) the workspace named after the event and
/// prints its directory; a `WorktreeRemove` event removes it as `clean` does, its edits
/// kept in a commit and files no commit holds kept aside. Other events do nothing.
#[derive(Debug, Args)]
pub struct HookArgs {
    /// The agent whose hook runs this
    #[arg(value_enum)]
    pub agent: HookAgent,
}

/// The coding agents whose hooks agent-workspace answers.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum HookAgent {
    /// Claude Code (`WorktreeCreate`, `WorktreeRemove`)
    ClaudeCode,
}

/// The most bytes of an event read from stdin.
const EVENT_LIMIT: u64 = 1 << 20;

/// What the hook reads of Claude Code's event; the rest is left alone.
#[derive(Debug, Deserialize)]
struct Event {
    hook_event_name: String,
    #[serde(default, alias = "worktree_name")]
    name: Option<String>,
    #[serde(default)]
    worktree_path: Option<PathBuf>,
}

pub(in crate::cli) fn cmd_hook(inv: &Invocation, _args: &HookArgs) -> Result<i32> {
    let mut bytes = vec![];
    std::io::stdin()
        .take(EVENT_LIMIT)
        .read_to_end(&mut bytes)
        .map_err(|e| bad_event(&format!("cannot read it from stdin: {e}")))?;
    let event: Event = serde_json::from_slice(&bytes)
        .map_err(|e| bad_event(&format!("it is not the JSON Claude Code sends: {e}")))?;
    match event.hook_event_name.as_str() {
        "WorktreeCreate" => {
            let name = event
                .name
                .ok_or_else(|| bad_event("a WorktreeCreate event without a name"))?;
            create(inv, &workspace_id(&name))
        }
        "WorktreeRemove" => {
            let path = event
                .worktree_path
                .ok_or_else(|| bad_event("a WorktreeRemove event without a worktree_path"))?;
            remove(inv, &path)
        }
        _ => Ok(0),
    }
}

fn bad_event(why: &str) -> CliError {
    CliError::usage(format!("cannot read the hook's event: {why}")).hint(
        "`agent-workspace hook claude-code` is run by Claude Code's hooks, with the event on stdin",
    )
}

/// A workspace id for the name Claude Code gave: the name itself when it is one, else its
/// letters, digits, `.`, `_` and `-` (others as `-`), starting with a letter or digit, at
/// most 64; `claude` when nothing is left.
pub(crate) fn workspace_id(name: &str) -> WorkspaceId {
    if let Ok(id) = WorkspaceId::parse(name) {
        return id;
    }
    let mapped: String = name
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() || "._-".contains(c) {
            true => c,
            false => '-',
        })
        .collect();
    let trimmed: String = mapped
        .trim_start_matches(|c: char| !c.is_ascii_alphanumeric())
        .chars()
        .take(64)
        .collect();
    WorkspaceId::parse(&trimmed)
        .or_else(|_| WorkspaceId::parse("claude"))
        .expect("`claude` is a workspace id")
}

/// Makes or reattaches workspace `id` as `create` does, recording the workflow
/// `claude-code`, and prints its directory alone.
fn create(inv: &Invocation, id: &WorkspaceId) -> Result<i32> {
    let start = parsed::<crate::cli::start::StartArgs>(&["--workflow", "claude-code"]);
    let begun = crate::cli::start::begin(inv, id, &start)?;
    let Some(entered) = begun.entered else {
        return Err(CliError::usage(format!(
            "workspace {id:?} is the one this hook runs in: Claude Code cannot isolate into it again"
        ))
        .hint("start Claude Code from the repository, not from inside a workspace"));
    };
    crate::store::metadata::save(&entered.record).map_err(CliError::from)?;
    inv.ui.data(&format!("{}\n", begun.path.display()))?;
    Ok(0)
}

/// Removes the workspace at `path` as `clean ID` does (never discarding a file).
fn remove(inv: &Invocation, path: &std::path::Path) -> Result<i32> {
    let id = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| WorkspaceId::parse(n).ok());
    let ctx = inv.context()?;
    let ours = id.as_ref().is_some_and(|id| {
        let here = ctx.layout.workspace(id);
        match (std::fs::canonicalize(&here), std::fs::canonicalize(path)) {
            (Ok(a), Ok(b)) => a == b,
            _ => here == path,
        }
    });
    let (true, Some(id)) = (ours, id) else {
        return Err(CliError::failure(format!(
            "{} is no workspace of agent-workspace in this repository",
            crate::ui::output::escape_controls(&path.display().to_string())
        ))
        .hint(
            "agent-workspace removes only the workspaces it made; remove this directory yourself",
        ));
    };
    drop(ctx);
    let clean = parsed::<crate::cli::commands::clean::CleanArgs>(&[id.as_str()]);
    crate::cli::commands::clean::cmd_clean(inv, &clean)
}

/// `T`'s arguments as the command line `args` gives them (defaults for the rest).
fn parsed<T: Args + FromArgMatches>(args: &[&str]) -> T {
    let command = T::augment_args(clap::Command::new("hook"));
    let matches = command
        .try_get_matches_from(std::iter::once("hook").chain(args.iter().copied()))
        .expect("the hook's own arguments parse");
    T::from_arg_matches(&matches).expect("the hook's own arguments parse")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_claude_code_gives_becomes_a_workspace_id() {
        assert_eq!(workspace_id("fix-1").as_str(), "fix-1");
        assert_eq!(
            workspace_id("agent-ab6d160c1cf9cd4cc").as_str(),
            "agent-ab6d160c1cf9cd4cc"
        );
        assert_eq!(
            workspace_id("feature/login page").as_str(),
            "feature-login-page"
        );
        assert_eq!(workspace_id("--x").as_str(), "x");
        assert_eq!(workspace_id("ü").as_str(), "claude");
        assert_eq!(workspace_id(&"a".repeat(100)).as_str().len(), 64);
    }
}
