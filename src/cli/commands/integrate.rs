//! `integrate claude-code`: adds agent-workspace's hooks to Claude Code's settings, so its own
//! isolation (`claude -w`, EnterWorktree, subagents with `isolation: "worktree"`) makes and
//! removes agent-workspace workspaces (`hook claude-code` answers them).

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use serde_json::{json, Map, Value};

use crate::cli::invocation::Invocation;
use crate::error::{CliError, Result};

/// Add agent-workspace's hooks to a coding agent's settings, so its own worktrees become workspaces
///
/// `claude-code`: adds `WorktreeCreate` and `WorktreeRemove` hooks running `agent-workspace
/// hook claude-code` to Claude Code's settings of this repository
/// (`.claude/settings.local.json`; `--scope project` for `.claude/settings.json`, shared
/// through the repository; `--scope user` for `~/.claude/settings.json`). Everything else in
/// the file is kept; running it again changes nothing; `--remove` takes out exactly the
/// entries it added.
///
/// Example: `agent-workspace integrate claude-code && claude -w fix-1`
#[derive(Debug, Args)]
pub struct IntegrateArgs {
    /// The coding agent to integrate with
    #[arg(value_enum)]
    pub agent: IntegrateAgent,
    /// Which settings file: this repository's, yours alone (`local`), or shared (`project`);
    /// or every repository's (`user`)
    #[arg(long, value_enum, default_value = "local")]
    pub scope: Scope,
    /// Take agent-workspace's hooks out instead
    #[arg(long)]
    pub remove: bool,
    /// Print the file as it would be written, and write nothing
    #[arg(long)]
    pub dry_run: bool,
}

/// The coding agents `integrate` knows.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum IntegrateAgent {
    /// Claude Code (its WorktreeCreate and WorktreeRemove hooks)
    ClaudeCode,
}

/// Which Claude Code settings file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scope {
    /// `.claude/settings.local.json` in the repository (yours alone)
    Local,
    /// `.claude/settings.json` in the repository (shared with everyone who clones it)
    Project,
    /// `~/.claude/settings.json` (every repository)
    User,
}

/// The events whose hooks are ours.
const EVENTS: [&str; 3] = ["WorktreeCreate", "WorktreeRemove", "SessionEnd"];

/// Where `integrate` installs the skill, relative to a `.claude` directory.
pub(in crate::cli) const SKILL_PATH: &str = "skills/agent-workspace/SKILL.md";

/// `integrate`, installing `skill` (the skill's text, made by `cli/skill.rs`) beside the hooks.
pub(in crate::cli) fn cmd_integrate(
    inv: &Invocation,
    args: &IntegrateArgs,
    skill: &str,
) -> Result<i32> {
    let command = hook_command(args.scope);
    let mut wrote = false;
    let targets = targets(inv, args.scope)?;
    for (file, events) in &targets {
        wrote |= integrate_file(inv, args, file, events, &command)?;
    }
    // Beside each settings file: in a jj repository the session reads the user's too.
    for claude_dir in targets.iter().filter_map(|(file, _)| file.parent()) {
        wrote |= integrate_skill(inv, args, &claude_dir.join(SKILL_PATH), skill)?;
    }
    if wrote && !args.remove && !args.dry_run {
        inv.ui.data(
            "`claude -w NAME`, EnterWorktree and isolated subagents now work in agent-workspace workspaces\n",
        )?;
    }
    Ok(0)
}

/// The settings files to change and the events of each: the scope's file for every event;
/// in a jj repository, the user's file too for the events fired from inside a workspace
/// (a jj workspace is no git worktree of the repository, so Claude Code reads a session's
/// settings there from the workspace, where the repository's files are not; a hook that
/// fires twice does its work once).
fn targets(inv: &Invocation, scope: Scope) -> Result<Vec<(PathBuf, &'static [&'static str])>> {
    let mut targets = vec![(settings_file(inv, scope)?, &EVENTS[..])];
    if scope != Scope::User {
        let ctx = inv.context()?;
        if !ctx.vcs.workspaces_are_git_worktrees() {
            targets.push((settings_file(inv, Scope::User)?, &EVENTS[1..]));
        }
    }
    Ok(targets)
}

/// Adds (or removes) the hooks of `events` in `file`, saying what it did; whether it wrote.
fn integrate_file(
    inv: &Invocation,
    args: &IntegrateArgs,
    file: &Path,
    events: &[&str],
    command: &str,
) -> Result<bool> {
    let shown = crate::ui::output::escape_controls(&file.display().to_string()).into_owned();
    let mut settings = match std::fs::symlink_metadata(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Value::Object(Map::new()),
        _ => read(file, &shown)?,
    };
    let changed = match args.remove {
        true => remove_ours(&mut settings),
        false => add_ours(&mut settings, command, events)?,
    };
    let ui = inv.ui;
    let names = events.join(", ");
    let mut text = serde_json::to_string_pretty(&settings).unwrap_or_default();
    text.push('\n');
    if !changed {
        ui.data(&match args.remove {
            true => format!("{shown} holds no hook of agent-workspace: nothing to remove\n"),
            false => format!("{shown} already runs `{command}` for {names}\n"),
        })?;
        return Ok(false);
    }
    if args.dry_run {
        ui.data(&format!("Would write {shown}:\n{text}"))?;
        return Ok(false);
    }
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| {
            CliError::failure(format!("cannot make {}: {e}", dir.display()))
                .hint("check the directory's permissions; nothing was written")
        })?;
    }
    crate::store::fsutil::write_atomic(file, text.as_bytes()).map_err(|e| {
        CliError::failure(format!("cannot write {shown}: {e}"))
            .hint("check the file's permissions; nothing was written")
    })?;
    ui.data(&match args.remove {
        true => format!("Removed agent-workspace's hooks from {shown}\n"),
        false => format!("Added {names} hooks running `{command}` to {shown}\n"),
    })?;
    Ok(true)
}

/// Installs (or removes) the skill at `file`: written when missing or another version of
/// ours, removed only when it is ours as generated; whether it wrote.
fn integrate_skill(
    inv: &Invocation,
    args: &IntegrateArgs,
    file: &Path,
    text: &str,
) -> Result<bool> {
    let shown = crate::ui::output::escape_controls(&file.display().to_string()).into_owned();
    let now = match std::fs::symlink_metadata(file) {
        Ok(_) => Some(
            crate::store::fsutil::read_untrusted_string(
                file,
                crate::store::fsutil::UNTRUSTED_LIMIT,
            )
            .unwrap_or_default(),
        ),
        Err(_) => None,
    };
    let ui = inv.ui;
    if args.remove {
        if now.as_deref() != Some(text) {
            if now.is_some() {
                ui.data(&format!(
                    "{shown} is not the skill as agent-workspace writes it: left as it is\n"
                ))?;
            }
            return Ok(false);
        }
        if !args.dry_run {
            std::fs::remove_file(file).map_err(|e| {
                CliError::failure(format!("cannot remove {shown}: {e}"))
                    .hint("check the file's permissions")
            })?;
            if let Some(dir) = file.parent() {
                let _ = std::fs::remove_dir(dir);
            }
        }
        ui.data(&format!(
            "{} the skill {shown}\n",
            if args.dry_run {
                "Would remove"
            } else {
                "Removed"
            }
        ))?;
        return Ok(!args.dry_run);
    }
    let ours = now
        .as_deref()
        .is_none_or(|t| t.starts_with("---\nname: agent-workspace\n"));
    if now.as_deref() == Some(text) {
        return Ok(false);
    }
    if !ours {
        ui.data(&format!(
            "{shown} is a skill of someone else's: left as it is\n"
        ))?;
        return Ok(false);
    }
    if args.dry_run {
        ui.data(&format!("Would write the skill {shown}\n"))?;
        return Ok(false);
    }
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| {
            CliError::failure(format!("cannot make {}: {e}", dir.display()))
                .hint("check the directory's permissions")
        })?;
    }
    crate::store::fsutil::write_atomic(file, text.as_bytes()).map_err(|e| {
        CliError::failure(format!("cannot write {shown}: {e}")).hint("check the file's permissions")
    })?;
    ui.data(&format!("Wrote the skill {shown}\n"))?;
    Ok(true)
}

/// The settings file of `scope`: in the repository's main working copy, or under HOME.
fn settings_file(inv: &Invocation, scope: Scope) -> Result<PathBuf> {
    if scope == Scope::User {
        let home = crate::vars::non_empty("HOME").ok_or_else(|| {
            CliError::usage("HOME is not set: --scope user writes ~/.claude/settings.json")
                .hint("set HOME, or use --scope local in a repository")
        })?;
        return Ok(Path::new(&home).join(".claude/settings.json"));
    }
    let ctx = inv.context()?;
    let name = match scope {
        Scope::Project => "settings.json",
        _ => "settings.local.json",
    };
    Ok(ctx.repo.root.join(".claude").join(name))
}

/// The file's settings, which must be a JSON object.
fn read(file: &Path, shown: &str) -> Result<Value> {
    let text =
        crate::store::fsutil::read_untrusted_string(file, crate::store::fsutil::UNTRUSTED_LIMIT)
            .map_err(|e| {
                CliError::failure(format!("cannot read {shown}: {e}"))
                    .hint("fix or move the file; nothing was written")
            })?;
    let value: Value = match text.trim() {
        "" => Value::Object(Map::new()),
        _ => serde_json::from_str(&text).map_err(|e| {
            CliError::failure(format!("{shown} is not valid JSON: {e}"))
                .hint("fix the file (Claude Code cannot read it either); nothing was written")
        })?,
    };
    match value.is_object() {
        true => Ok(value),
        false => Err(CliError::failure(format!("{shown} is not a JSON object"))
            .hint("fix the file (Claude Code cannot read it either); nothing was written")),
    }
}

/// What the hooks run: this binary by name where PATH finds this very binary (and always for
/// the shared project file), else by its path.
fn hook_command(scope: Scope) -> String {
    let me = std::env::current_exe().ok();
    let found = which::which("agent-workspace").ok();
    let same = match (&me, &found) {
        (Some(me), Some(found)) => {
            std::fs::canonicalize(me).ok() == std::fs::canonicalize(found).ok()
        }
        _ => false,
    };
    match (scope == Scope::Project || same, me) {
        (false, Some(me)) => format!(
            "{} hook claude-code",
            shell_quoted(&me.display().to_string())
        ),
        _ => "agent-workspace hook claude-code".to_string(),
    }
}

fn shell_quoted(text: &str) -> String {
    match text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
    {
        true => text.to_string(),
        false => format!("'{}'", text.replace('\'', r"'\''")),
    }
}

/// Whether a hook entry (`{"type": "command", "command": ...}`) is one of ours.
fn is_ours(hook: &Value) -> bool {
    hook.get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| {
            c.trim_end().ends_with("agent-workspace hook claude-code") || {
                let c = c.trim_end();
                c.ends_with(" hook claude-code")
                    && c.trim_end_matches(" hook claude-code")
                        .trim_matches('\'')
                        .ends_with("/agent-workspace")
            }
        })
}

/// Adds a group running `command` to each of `events` unless one of ours is there;
/// whether anything changed.
fn add_ours(settings: &mut Value, command: &str, events: &[&str]) -> Result<bool> {
    let not_object = |what: &str| {
        CliError::failure(format!(
            "the settings' {what} is not a JSON object or list as Claude Code expects"
        ))
        .hint("fix the file; nothing was written")
    };
    let root = settings
        .as_object_mut()
        .ok_or_else(|| not_object("top level"))?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| not_object("`hooks`"))?;
    let mut changed = false;
    for event in events {
        let groups = hooks
            .entry(*event)
            .or_insert_with(|| Value::Array(vec![]))
            .as_array_mut()
            .ok_or_else(|| not_object(&format!("`hooks.{event}`")))?;
        let present = groups.iter().any(|g| {
            g.get("hooks")
                .and_then(Value::as_array)
                .is_some_and(|hs| hs.iter().any(is_ours))
        });
        if !present {
            groups.push(json!({ "hooks": [{ "type": "command", "command": command }] }));
            changed = true;
        }
    }
    Ok(changed)
}

/// Takes every hook of ours out (and the groups and events left empty); whether any was.
fn remove_ours(settings: &mut Value) -> bool {
    let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) else {
        return false;
    };
    let mut changed = false;
    for event in EVENTS {
        let Some(groups) = hooks.get_mut(event).and_then(Value::as_array_mut) else {
            continue;
        };
        for group in groups.iter_mut() {
            if let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                let before = list.len();
                list.retain(|h| !is_ours(h));
                changed |= list.len() != before;
            }
        }
        groups.retain(|g| {
            g.get("hooks")
                .and_then(Value::as_array)
                .is_none_or(|hs| !hs.is_empty())
        });
        if groups.is_empty() {
            hooks.remove(event);
        }
    }
    if hooks.is_empty() {
        if let Some(root) = settings.as_object_mut() {
            root.remove("hooks");
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_hooks_are_added_once_and_taken_out() {
        let mut settings = json!({
            "model": "x",
            "hooks": { "WorktreeCreate": [{ "hooks": [{ "type": "command", "command": "mine.sh" }] }],
                       "Stop": [] }
        });
        assert!(add_ours(&mut settings, "agent-workspace hook claude-code", &EVENTS).unwrap());
        assert!(!add_ours(&mut settings, "agent-workspace hook claude-code", &EVENTS).unwrap());
        assert_eq!(
            settings["hooks"]["WorktreeCreate"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        assert!(remove_ours(&mut settings));
        assert_eq!(
            settings,
            json!({
                "model": "x",
                "hooks": { "WorktreeCreate": [{ "hooks": [{ "type": "command", "command": "mine.sh" }] }],
                           "Stop": [] }
            })
        );
        assert!(!remove_ours(&mut settings));
        let mut by_path = json!({});
        add_ours(
            &mut by_path,
            "'/opt/my tools/agent-workspace' hook claude-code",
            &EVENTS,
        )
        .unwrap();
        assert!(remove_ours(&mut by_path));
        assert_eq!(by_path, json!({}));
    }
}
