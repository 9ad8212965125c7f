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
use crate::workspace::session::{self, Session};

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
    /// (Internal) hold this workspace for a session until its process ends
    #[arg(long, hide = true, value_name = "ID", requires_all = ["session", "session_pid", "lease_fd"])]
    pub hold: Option<String>,
    /// (Internal) the session held for
    #[arg(long, hide = true)]
    pub session: Option<String>,
    /// (Internal) the session's process
    #[arg(long, hide = true)]
    pub session_pid: Option<u32>,
    /// (Internal) that process's start time
    #[arg(long, hide = true)]
    pub session_start: Option<u64>,
    /// (Internal) the workspace's lease, handed down held
    #[arg(long, hide = true)]
    pub lease_fd: Option<i32>,
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
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default, alias = "worktree_name")]
    name: Option<String>,
    #[serde(default)]
    worktree_path: Option<PathBuf>,
}

pub(in crate::cli) fn cmd_hook(inv: &Invocation, args: &HookArgs) -> Result<i32> {
    if let (Some(id), Some(session), Some(pid), Some(fd)) =
        (&args.hold, &args.session, args.session_pid, args.lease_fd)
    {
        let id = WorkspaceId::parse(id).map_err(|e| CliError::usage(e.to_string()))?;
        let session = Session {
            id: session.clone(),
            pid,
            start: args.session_start,
        };
        return hold(inv, &id, &session, fd);
    }
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
            create(inv, &workspace_id(&name), event.session_id.as_deref())
        }
        "WorktreeRemove" => {
            let path = event
                .worktree_path
                .ok_or_else(|| bad_event("a WorktreeRemove event without a worktree_path"))?;
            remove(inv, &path, event.session_id.as_deref())
        }
        "SessionEnd" => {
            if let Some(session) = &event.session_id {
                session::ended(session, std::time::Duration::from_secs(10));
            }
            Ok(0)
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
/// `claude-code`, and prints its directory alone. When the session's process is known, the
/// workspace is recorded running for it and a detached holder keeps its lease until the
/// session ends (see `workspace::session`).
fn create(inv: &Invocation, id: &WorkspaceId, session_id: Option<&str>) -> Result<i32> {
    // The same session asking again for a workspace it holds (EnterWorktree after `-w`, a
    // resumed session): it is handed back as it is.
    if let Some(sid) = session_id {
        if !session::holders(sid, Some(id)).is_empty() {
            let ctx = inv.context()?;
            inv.ui
                .data(&format!("{}\n", ctx.layout.workspace(id).display()))?;
            return Ok(0);
        }
    }
    let start = parsed::<crate::cli::start::StartArgs>(&["--workflow", "claude-code"]);
    let begun = crate::cli::start::begin(inv, id, &start)?;
    let Some(mut entered) = begun.entered else {
        return Err(CliError::usage(format!(
            "workspace {id:?} is the one this hook runs in: Claude Code cannot isolate into it again"
        ))
        .hint("start Claude Code from the repository, not from inside a workspace"));
    };
    let caller = crate::exec::liveness::hook_caller();
    let session = match (session_id, caller) {
        (Some(sid), Some((pid, start))) => Some(Session {
            id: sid.to_string(),
            pid,
            start,
        }),
        _ => None,
    };
    if let Some(session) = &session {
        let held = &entered.record;
        let ours = held.status == crate::store::metadata::Status::Running
            && held.command == session::command(&session.id);
        if !ours {
            entered
                .record
                .start_run(session::command(&session.id), session.pid, session.start);
        }
    }
    crate::store::metadata::save(&entered.record).map_err(CliError::from)?;
    if let Some(session) = &session {
        session::start_holder(&begun.ctx, id, session, &entered.lease).map_err(|e| {
            CliError::failure(format!("cannot hold workspace {id:?} for the session: {e}")).hint(
                "the workspace is made; run Claude Code again, or work in it with `agent-workspace run`",
            )
        })?;
    }
    inv.ui.data(&format!("{}\n", begun.path.display()))?;
    Ok(0)
}

/// The holder's life: the lease it was handed kept until the session ends, then the outcome
/// recorded.
fn hold(inv: &Invocation, id: &WorkspaceId, session: &Session, fd: i32) -> Result<i32> {
    let Some(_lease) = crate::exec::process::adopt(Some(fd)) else {
        return Ok(1);
    };
    let ctx = inv.context()?;
    session::hold(&ctx, id, session);
    Ok(0)
}

/// Removes the workspace at `path` as `clean ID` does (never discarding a file), once the
/// session asking has let its own hold of it go.
fn remove(inv: &Invocation, path: &std::path::Path, session_id: Option<&str>) -> Result<i32> {
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
    // Removed already (the same event from a second settings file): nothing left to do.
    if let (false, Some(id)) = (ours, &id) {
        let gone = std::fs::symlink_metadata(path).is_err()
            && std::fs::symlink_metadata(ctx.layout.workspace(id)).is_err();
        if gone && path.parent() == Some(ctx.layout.dir.as_path()) {
            return Ok(0);
        }
    }
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
    if let Some(session_id) = session_id {
        session::let_go(session_id, &id, std::time::Duration::from_secs(10));
    }
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
