//! `create`: make (or reattach) a workspace ready for commands, without running one.

use std::path::Path;

use clap::Args;
use serde::Serialize;

use crate::cli::invocation::Invocation;
use crate::error::{CliError, Result};
use crate::store::layout::WorkspaceId;
use crate::store::metadata::{self, Parent, Record};

/// Make a workspace ready (or reattach it) without running a command; print its directory
///
/// Does everything `run` does before the command: creates or reattaches the workspace,
/// allows its `.envrc` under the same trust rules, syncs the tools bundle and runs the
/// setup command when it is due. A workspace that exists already is reattached and left as
/// it was.
///
/// Example: `cd "$(agent-workspace create fix-1 --base-change main)"`
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// Workspace id: 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit
    #[arg(value_parser = WorkspaceId::from_arg)]
    pub id: WorkspaceId,
    #[command(flatten)]
    pub start: crate::cli::start::StartArgs,
    /// Print JSON (schema_version 1) instead of the directory
    #[arg(long)]
    pub json: bool,
}

pub(in crate::cli) fn cmd_create(inv: &Invocation, args: &CreateArgs) -> Result<i32> {
    let ui = inv.ui;
    let begun = crate::cli::start::begin(inv, &args.id, &args.start)?;
    let Some(entered) = begun.entered else {
        return Err(nested(&args.id));
    };
    let path = begun.path;
    metadata::save(&entered.record).map_err(CliError::from)?;
    let text = match args.json {
        true => json(&entered.record, entered.created),
        false => format!("{}\n", path.display()),
    };
    ui.data(&text)?;
    Ok(0)
}

/// `create` from inside the run holding the workspace: there is nothing to make.
fn nested(id: &str) -> CliError {
    CliError::usage(format!(
        "workspace {id:?} is the one this command runs in: it exists already"
    ))
    .hint("use `agent-workspace path` for its directory, or $AGENT_WORKSPACE_PATH")
}

/// `create --json`.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(in crate::cli) struct CreateJson<'a> {
    schema_version: u64,
    workspace_id: &'a str,
    /// Whether this call made the workspace (false: it existed and was reattached).
    created: bool,
    path: &'a Path,
    backend: &'a str,
    status: &'a str,
    base_commits: &'a [String],
    branch: Option<&'a str>,
    parent: Option<&'a str>,
    workflow: Option<&'a str>,
}

fn json(record: &Record, created: bool) -> String {
    let value = CreateJson {
        schema_version: 1,
        workspace_id: &record.workspace_id,
        created,
        path: &record.workspace_path,
        backend: record.backend.as_str(),
        status: record.status.as_str(),
        base_commits: &record.base_commits,
        branch: record.branch.as_deref(),
        parent: record.parent.as_ref().map(Parent::as_written),
        workflow: record.workflow.as_deref(),
    };
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}
