//! The help's teaching parts: each subcommand's examples (its long help and its manual page's
//! EXAMPLES) and the exit codes in the top-level help's footer.

/// The exit codes, the footer of `agent-workspace --help` (and the EXIT STATUS of the pages).
pub(in crate::cli) const EXIT_CODES: &str = "\
Exit codes:
  0      success
  1      an error (an `Error:` line and a `Hint:` on stderr); land: conflicts left
  2      bad usage or a bad workspace id; nothing was touched
  125    run, shell: agent-workspace failed before the command started
  126    run, shell: the command is not executable
  127    run, shell: the command was not found
  128+N  run, shell: the command died of signal N (130: Ctrl-C)
  Otherwise run and shell exit with the command's own code.";

pub(in crate::cli) const RUN: &str = "\
Examples:
  Run an agent in workspace fix-login, created from the current change if new:
    agent-workspace run fix-login -- claude
  Build in a confined workspace started from main, checkpointing afterwards:
    agent-workspace run --base-change main --sandbox --checkpoint ci -- cargo test
  Start a child workspace from the exact state of fix-login:
    agent-workspace run --parent fix-login fix-login-tests -- cargo test";

pub(in crate::cli) const STATUS: &str = "\
Examples:
  The table of this repository's workspaces:
    agent-workspace status
  One workspace's record and run history, as JSON:
    agent-workspace status fix-login --json
  Redraw the table every 2 seconds on this terminal:
    agent-workspace status --watch --interval 2";

pub(in crate::cli) const CREATE: &str = "\
Examples:
  Make workspace fix-login ready and go there:
    cd \"$(agent-workspace create fix-login)\"
  A workspace on top of main, for the workflow review:
    agent-workspace create --base-change main --workflow review pr-42";

pub(in crate::cli) const PATH: &str = "\
Examples:
  Go to an existing workspace:
    cd \"$(agent-workspace path fix-login)\"";

pub(in crate::cli) const SHELL: &str = "\
Examples:
  A shell in workspace fix-login, its .envrc loaded:
    agent-workspace shell fix-login
  The same, confined without network:
    agent-workspace shell --sandbox --no-network fix-login";

pub(in crate::cli) const CLEAN: &str = "\
Examples:
  Remove one workspace (its unrecorded edits stay in the repository):
    agent-workspace clean fix-login
  See what removing every landed workspace would do:
    agent-workspace clean --landed --dry-run
  Remove the workspaces untouched for a week:
    agent-workspace clean --older-than 7d";

pub(in crate::cli) const CHECKPOINT: &str = "\
Examples:
  Record fix-login's current state and keep working on top of it:
    agent-workspace checkpoint fix-login -m \"login form validates\"";

pub(in crate::cli) const DIFF: &str = "\
Examples:
  The commits and changed files of fix-login:
    agent-workspace diff fix-login
  A patch to apply elsewhere:
    agent-workspace diff --patch fix-login > fix-login.patch";

pub(in crate::cli) const LAND: &str = "\
Examples:
  See what would land, and which files would conflict:
    agent-workspace land --dry-run fix-login
  Land fix-login onto main, taking the workspace's side of any conflicting hunk:
    agent-workspace land --onto main --prefer workspace fix-login";

pub(in crate::cli) const SYNC_TOOLS: &str = "\
Examples:
  Give fix-login the repository's current tools bundle:
    agent-workspace sync-tools fix-login";

pub(in crate::cli) const GC: &str = "\
Examples:
  What the retention settings would remove, and why:
    agent-workspace gc --dry-run
  Remove it:
    agent-workspace gc";

pub(in crate::cli) const POOL: &str = "\
Examples:
  Have 4 workspaces prepared, then see them:
    agent-workspace pool fill 4
    agent-workspace pool status";

pub(in crate::cli) const POOL_FILL: &str = "\
Examples:
  Prepare workspaces up to pool.size:
    agent-workspace pool fill
  Have 4 ready:
    agent-workspace pool fill 4";

pub(in crate::cli) const POOL_STATUS: &str = "\
Examples:
  The prepared workspaces, as JSON:
    agent-workspace pool status --json";

pub(in crate::cli) const POOL_DRAIN: &str = "\
Examples:
  Remove every prepared workspace:
    agent-workspace pool drain";

pub(in crate::cli) const DOCTOR: &str = "\
Examples:
  Check the tools, the root and this repository's workspaces:
    agent-workspace doctor
  The same for a script:
    agent-workspace doctor --json";

pub(in crate::cli) const COMPLETIONS: &str = "\
Examples:
  bash (in ~/.bashrc):
    source <(agent-workspace completions bash)
  zsh (in ~/.zshrc, after compinit):
    source <(agent-workspace completions zsh)
  fish:
    agent-workspace completions fish > $__fish_config_dir/completions/agent-workspace.fish";

pub(in crate::cli) const INTEGRATE: &str = "\
Examples:
  Let Claude Code's own worktrees (claude -w, EnterWorktree, subagents) be workspaces:
    agent-workspace integrate claude-code
    claude -w fix-login
  See what it would write to the shared settings, then take the hooks out again:
    agent-workspace integrate claude-code --scope project --dry-run
    agent-workspace integrate claude-code --remove";

pub(in crate::cli) const SKILL: &str = "\
Examples:
  Teach Codex (which reads AGENTS.md) the daily flow:
    agent-workspace skill >> AGENTS.md";

pub(in crate::cli) const HOOK: &str = "\
Examples:
  What Claude Code runs for a WorktreeCreate event (it prints the workspace's directory):
    echo '{\"hook_event_name\":\"WorktreeCreate\",\"name\":\"fix-login\"}' | agent-workspace hook claude-code";

pub(in crate::cli) const MCP: &str = "\
Examples:
  Let an agent drive this repository's workspaces (its MCP configuration starts this):
    agent-workspace mcp --repo ~/src/app
  Every run sandboxed, and landing allowed:
    agent-workspace mcp --sandbox --allow-land";

pub(in crate::cli) const MAN: &str = "\
Examples:
  Install the pages where man finds them:
    agent-workspace man --dir ~/.local/share/man/man1
  Read one without installing:
    agent-workspace man --dir /tmp/aw-man && man -l /tmp/aw-man/agent-workspace-run.1";
