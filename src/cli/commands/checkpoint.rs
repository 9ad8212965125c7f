//! `checkpoint`: record a workspace's current state as a commit of its own.

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use crate::cli::invocation::{Handle, Invocation};
use crate::error::{CliError, Result};
use crate::store::layout::WorkspaceId;
use crate::store::metadata;
use crate::workspace::{self, Checkpointed};

/// Record a workspace's current state as a commit of its own and keep working on top of it.
#[derive(Debug, Args)]
pub struct CheckpointArgs {
    /// Workspace id
    #[arg(value_parser = WorkspaceId::from_arg)]
    pub id: WorkspaceId,
    /// Describe the checkpoint [default: `checkpoint N`]
    #[arg(short, long, value_name = "MSG")]
    pub message: Option<String>,
    /// Print JSON (schema_version 1) instead of text
    #[arg(long)]
    pub json: bool,
}

pub(in crate::cli) fn cmd_checkpoint(inv: &Invocation, args: &CheckpointArgs) -> Result<i32> {
    let ui = inv.ui;
    if args.message.as_deref().is_some_and(|m| m.trim().is_empty()) {
        return Err(CliError::usage("the checkpoint message is empty")
            .hint("pass -m a message, or leave -m out for `checkpoint N`"));
    }
    let Handle { ctx, .. } = inv.workspace(&args.id)?;
    let record = workspace::usable(&ctx, &args.id, "checkpoint")?;
    let _hold = workspace::hold(&ctx, &args.id, Some(&record))?;
    // Read again under the lease: a run may have ended in between.
    let mut record = workspace::usable(&ctx, &args.id, "checkpoint")?;
    let done = workspace::checkpoint(&ctx, &args.id, &mut record, args.message.as_deref())?;
    if done.recorded.commit.is_some() {
        metadata::save(&record).map_err(|e| {
            CliError::from(e)
                .hint("the checkpoint commit was made; only its number was not recorded")
        })?;
    }
    for u in &done.recorded.unrecorded {
        ui.warning(format!(
            "not in the checkpoint: {} ({})",
            u.path.display(),
            u.why
        ));
    }
    if !done.recorded.unrecorded.is_empty() {
        ui.hint("un-ignore or shrink these files (jj: raise snapshot.max-new-file-size) to have checkpoints keep them");
    }
    let text = match args.json {
        true => json(&record.workspace_id, &done),
        false => text(&record.workspace_id, &done),
    };
    ui.data(&text)?;
    Ok(0)
}

fn text(id: &str, done: &Checkpointed) -> String {
    let r = &done.recorded;
    let Some(commit) = &r.commit else {
        return format!(
            "nothing to checkpoint in workspace {id}: no changes since its last commit\n"
        );
    };
    let change = r
        .change_id
        .as_deref()
        .map_or(String::new(), |c| format!(", change {c}"));
    let mut out = format!(
        "checkpoint {} of workspace {id}: commit {commit}{change}\n",
        done.number
    );
    out += &format!(
        "{} file{} changed\n",
        r.files.len(),
        if r.files.len() == 1 { "" } else { "s" }
    );
    for file in &r.files {
        out += &format!("  {}\n", file.display());
    }
    out
}

/// `checkpoint --json`.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(in crate::cli) struct CheckpointJson<'a> {
    schema_version: u64,
    workspace_id: &'a str,
    created: bool,
    number: Option<u64>,
    commit_id: Option<&'a str>,
    change_id: Option<&'a str>,
    /// The first line of `description`.
    subject: Option<&'a str>,
    /// The checkpoint's whole message.
    description: Option<&'a str>,
    /// How many paths the checkpoint recorded (`paths`).
    paths_count: usize,
    paths: &'a [PathBuf],
    not_recorded: Vec<NotRecorded<'a>>,
}

#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
struct NotRecorded<'a> {
    path: &'a std::path::Path,
    why: &'a str,
}

fn json(id: &str, done: &Checkpointed) -> String {
    let r = &done.recorded;
    let created = r.commit.is_some();
    let value = CheckpointJson {
        schema_version: 1,
        workspace_id: id,
        created,
        number: created.then_some(done.number),
        commit_id: r.commit.as_deref(),
        change_id: r.change_id.as_deref(),
        subject: created.then(|| done.description.lines().next().unwrap_or("")),
        description: created.then_some(done.description.as_str()),
        paths_count: r.files.len(),
        paths: &r.files,
        not_recorded: r
            .unrecorded
            .iter()
            .map(|u| NotRecorded {
                path: &u.path,
                why: &u.why,
            })
            .collect(),
    };
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}
