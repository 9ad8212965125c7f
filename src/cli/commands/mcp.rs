//! `mcp`: serve the Model Context Protocol on stdin and stdout (the server is `cli/mcp`).

use std::io::IsTerminal;

use clap::Args;

use crate::cli::invocation::Invocation;
use crate::error::Result;

/// Serve the Model Context Protocol on stdin and stdout, for agents to drive workspaces
///
/// An MCP client (Claude Code, Codex, Cursor, ...) starts this and calls its tools:
/// workspace_create, workspace_run, workspace_status, workspace_diff, workspace_checkpoint,
/// workspace_land and workspace_clean, each answering with the document the command's
/// `--json` prints (workspace_status without an id: a row per workspace; workspace_run: the
/// end of its output, the whole in a log). The server acts on one repository (--repo, else
/// the current directory's) and nowhere else. See docs/mcp.md.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Sandbox every run the server starts (a client cannot turn it off)
    #[arg(long)]
    pub sandbox: bool,
    /// Let workspace_land land (without it only a dry run is allowed)
    #[arg(long)]
    pub allow_land: bool,
}

pub(in crate::cli) fn cmd_mcp(inv: &Invocation, args: &McpArgs) -> Result<i32> {
    let ui = inv.ui;
    let ctx = inv.context()?;
    if std::io::stdin().is_terminal() {
        ui.note(format!(
            "serving MCP for {} on stdin and stdout: an MCP client starts this (see docs/mcp.md); Ctrl-D ends it",
            ctx.repo.root.display()
        ));
    }
    let options = crate::cli::mcp::Options {
        sandbox: args.sandbox,
        allow_land: args.allow_land,
    };
    crate::cli::mcp::serve(ui, &ctx, options)
}
