//! `create`: make (or reattach) a workspace ready for commands, without running one.

use std::path::Path;

use clap::Args;
use serde::Serialize;

use crate::cli::global::GlobalArgs;
use crate::error::{CliError, Result};
use crate::exec::signals;
use crate::session::{self, Start};
use crate::store::layout::WorkspaceId;
use crate::store::metadata::{self, Record};
use crate::ui::report;
use crate::ui::Ui;
use crate::workspace::context::Context;

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
    /// Workflow name recorded with the workspace
    #[arg(long, value_name = "NAME")]
    pub workflow: Option<String>,
    /// Start a new workspace on a new commit on top of this revision
    #[arg(long, value_name = "REV")]
    pub base_change: Option<String>,
    /// Start a new workspace from this workspace's exact current state, unrecorded edits
    /// included, leaving that workspace as it was
    #[arg(long, value_name = "PARENT_ID", conflicts_with = "base_change", value_parser = WorkspaceId::from_arg)]
    pub parent: Option<WorkspaceId>,
    /// Do not load the workspace's .envrc
    #[arg(long)]
    pub no_direnv: bool,
    /// Allow the workspace's .envrc even if it differs from its base revision's
    #[arg(long)]
    pub trust_envrc: bool,
    /// Run the setup command of the repository's configuration file even if that file
    /// differs from the one at the workspace's base revision
    #[arg(long)]
    pub trust_config: bool,
    /// Wait for a live run in this workspace to finish instead of failing
    #[arg(long)]
    pub wait: bool,
    #[command(flatten)]
    pub sandbox: crate::cli::global::SandboxArgs,
    /// Print JSON (schema_version 1) instead of the directory
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn cmd_create(ui: &Ui, global: &GlobalArgs, args: &CreateArgs) -> Result<i32> {
    signals::install();
    let mut ctx = Context::open(global)?;
    let progress = ui.progress(&format!("workspace {}", args.id));
    ctx.progress = progress.progress();
    ctx.vcs.check_id(&args.id)?;
    let path = ctx.layout.workspace(&args.id);
    if crate::exec::sandbox::inside(&args.id, &path) {
        return Err(nested(&args.id));
    }
    if crate::workspace::remove::interrupted(&ctx, &args.id) {
        for line in report::settled(&crate::workspace::remove::settle_interrupted(&ctx)?) {
            ui.note(line);
        }
    }
    let sandboxing = args.sandbox.prepare(&ctx.config)?;
    let start = Start {
        id: &args.id,
        workflow: args.workflow.as_deref(),
        base_change: args.base_change.as_deref(),
        parent: args.parent.as_deref(),
        no_direnv: args.no_direnv,
        trust_envrc: args.trust_envrc,
        trust_config: args.trust_config,
        wait: args.wait,
        sandboxing: sandboxing.as_ref(),
    };
    let Some(entered) = session::enter(&ctx, &start, &mut |notes| ui.notes(notes))? else {
        return Err(nested(&args.id));
    };
    drop(progress);
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
pub(crate) struct CreateJson<'a> {
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
        parent: record.parent.as_deref(),
        workflow: record.workflow.as_deref(),
    };
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}
