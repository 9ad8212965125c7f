//! `sync-tools`: copy the repository's current tools bundle into a workspace now.

use clap::Args;
use serde::Serialize;

use crate::cli::invocation::{Handle, Invocation};
use crate::error::Result;
use crate::store::layout::WorkspaceId;
use crate::store::metadata;
use crate::workspace::{self, tools::Synced};

/// Copy the repository's tools (tools.paths) into a workspace's tools directory now.
#[derive(Debug, Args)]
pub struct SyncToolsArgs {
    /// Workspace id
    #[arg(value_parser = WorkspaceId::from_arg)]
    pub id: WorkspaceId,
    /// Print JSON (schema_version 1) instead of text
    #[arg(long)]
    pub json: bool,
}

pub(in crate::cli) fn cmd_sync_tools(inv: &Invocation, args: &SyncToolsArgs) -> Result<i32> {
    let ui = inv.ui;
    let Handle { ctx, .. } = inv.workspace(&args.id)?;
    let record = workspace::usable(&ctx, &args.id, "copy tools into")?;
    let _hold = workspace::hold(&ctx, &args.id, Some(&record))?;
    // Read again under the lease: a run may have ended in between.
    let mut record = workspace::usable(&ctx, &args.id, "copy tools into")?;
    let mut notes = vec![];
    // An untrusted repository file is refused here too: `run --trust-config` copies it.
    let synced = workspace::tools::sync(&ctx, &mut record, true, false, &mut notes);
    ui.notes(&notes);
    let text = match synced? {
        Some(synced) => {
            metadata::save(&record)?;
            match args.json {
                true => json(&args.id, Some(&synced)),
                false => format!(
                    "tools of workspace {}: version {} in {} ({})\n",
                    args.id,
                    synced.version,
                    synced.bundle.display(),
                    synced.paths.join(", ")
                ),
            }
        }
        None if args.json => json(&args.id, None),
        None => format!(
            "nothing to copy into workspace {}: none of tools.paths exists in {}\n",
            args.id,
            ctx.repo.root.display()
        ),
    };
    ui.data(&text)?;
    Ok(0)
}

/// `sync-tools --json`.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(in crate::cli) struct SyncJson<'a> {
    schema_version: u64,
    workspace_id: &'a str,
    /// The bundle directory; null when nothing was copied.
    dir: Option<&'a std::path::Path>,
    version: Option<&'a str>,
    paths: Vec<&'a str>,
}

fn json(id: &str, synced: Option<&Synced>) -> String {
    let value = SyncJson {
        schema_version: 1,
        workspace_id: id,
        dir: synced.map(|s| s.bundle.as_path()),
        version: synced.map(|s| s.version.as_str()),
        paths: synced.map_or(vec![], |s| s.paths.iter().map(String::as_str).collect()),
    };
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}
