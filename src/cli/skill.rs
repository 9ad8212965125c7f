//! The skill: a `SKILL.md` that teaches a coding agent the daily flow with agent-workspace,
//! generated from the command-line and MCP definitions so it cannot drift from them.
//! `agent-workspace skill` prints it; `integrate claude-code` installs it as
//! `.claude/skills/agent-workspace/SKILL.md`. The checked-in copy
//! (`skills/agent-workspace/SKILL.md`) is compared with it by a test;
//! `AGENT_WORKSPACE_WRITE_DOCS=1 cargo test --lib skill` writes it anew.

use clap::CommandFactory;

use super::parse::Cli;

/// The skill's text.
pub(in crate::cli) fn text() -> String {
    let mut out = String::from(
        "---
name: agent-workspace
description: Work in an isolated, resumable workspace of this repository (jj or git) with agent-workspace; run commands there, see what changed, checkpoint, land onto main and clean up. Use it instead of git worktree add, jj workspace add or editing the main working copy.
---

# agent-workspace

Every piece of work gets its own workspace: a working copy of this repository outside it,
with the repository's `.envrc` loaded, its status recorded, and nothing lost when it is
removed. A workspace is named by an id (1-64 of `A-Z a-z 0-9 . _ -`).

## The daily flow

1. `agent-workspace run ID -- COMMAND...` runs a command in workspace ID, creating it from
   the main working copy's parent when it does not exist (`cd \"$(agent-workspace create ID)\"`
   to work in it directly).
2. `agent-workspace diff ID` shows what the workspace changed; `agent-workspace status` lists
   every workspace, `agent-workspace status ID` one in detail.
3. `agent-workspace checkpoint ID` records the current state as a commit and goes on.
4. `agent-workspace land ID` brings the work onto the main working copy (`--dry-run` first
   shows what it would do); a conflict is refused with nothing changed.
5. `agent-workspace clean ID` removes the workspace; its edits stay in a commit the output
   names, and files no commit holds are kept aside and named.

## Never

- never `git worktree add`, `jj workspace add` or `git worktree remove` by hand: the tool
  keeps its own record of every workspace;
- never delete a workspace's directory (`rm -rf`): `clean` keeps what is in it;
- never edit the main working copy for work that belongs in a workspace;
- never pass `--force` or `--discard-untracked` unless the user asked.

## Commands

",
    );
    let cli = Cli::command();
    for sub in cli
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        let about = sub.get_about().map(ToString::to_string).unwrap_or_default();
        out.push_str(&format!(
            "- `agent-workspace {}`: {about}\n",
            sub.get_name()
        ));
    }
    out.push_str(
        "\nEach takes `--help`; `--json` gives a document a program can read.\n\n## MCP tools\n\n\
         Through `agent-workspace mcp` (an MCP server on stdin and stdout), the same work as \
         tools:\n\n",
    );
    for tool in super::mcp::tools::all() {
        let description = tool.description.as_deref().unwrap_or_default();
        out.push_str(&format!("- `{}`: {description}\n", tool.name));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checked-in skill is the generated one.
    #[test]
    fn the_checked_in_skill_is_the_generated_one() {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(crate::cli::commands::integrate::SKILL_PATH);
        let text = text();
        if std::env::var_os("AGENT_WORKSPACE_WRITE_DOCS").is_some() {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, &text).unwrap();
        }
        let checked_in = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(
            checked_in == text,
            "{} is out of date with the CLI and MCP definitions: run `AGENT_WORKSPACE_WRITE_DOCS=1 cargo test --lib skill` and check the diff",
            file.display()
        );
        assert!(text.starts_with("---\nname: agent-workspace\ndescription: "));
        // The front matter is YAML: a plain value holds no ": " and starts with no indicator.
        let description = text
            .lines()
            .nth(2)
            .unwrap()
            .trim_start_matches("description: ");
        assert!(
            !description.contains(": ")
                && !description.starts_with(['`', '"', '\'', '*', '&', '!'])
        );
    }
}
