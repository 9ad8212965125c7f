//! `gc`: remove the workspaces the configured retention (`retention.<status>`) lets go, the
//! way `clean` removes them (edits kept, unkept files kept aside, live runs never stopped).

use std::path::PathBuf;
use std::time::SystemTime;

use clap::Args;
use serde::Serialize;

use crate::cli::invocation::Invocation;
use crate::error::{CliError, Result};
use crate::store::aside::Aside;
use crate::store::layout::WorkspaceId;
use crate::ui::report::{describe, AsideJson, RemovalJson, RunLogsJson};
use crate::ui::Ui;
use crate::workspace::context::Context;
use crate::workspace::gc::{self, Candidate, Expiry};
use crate::workspace::inventory;
use crate::workspace::remove::{self, Removal};

/// Remove workspaces past the retention configured for their status (retention.*).
#[derive(Debug, Args)]
pub struct GcArgs {
    /// Show what would be removed and why, remove nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Print JSON (schema_version 1) instead of text
    #[arg(long)]
    pub json: bool,
}

enum Outcome {
    Removed(Box<Removal>),
    /// What the removal would keep aside, when it could be counted, and the run logs it
    /// would remove.
    WouldRemove(Option<Aside>, Option<remove::RunLogs>),
    Skipped(String),
    Failed(CliError),
}

pub(in crate::cli) fn cmd_gc(inv: &Invocation, args: &GcArgs) -> Result<i32> {
    let ui = inv.ui;
    let ctx = inv.context()?;
    if !args.dry_run {
        super::settle(ui, &ctx)?;
    }
    if ctx.config.retention.is_empty() && !args.json {
        ui.note(
            "No retention is configured for workspaces (retention.<status> in agent-workspace.toml): gc removes no workspace",
        );
    }
    let (mut entries, warning) = inventory::all(&ctx);
    if let Some(err) = warning {
        return Err(err);
    }
    crate::workspace::land::follow(&ctx, &mut entries);
    let lease = |id: &WorkspaceId| ctx.layout.lease(id);
    let mut candidates = gc::select(entries, &ctx.config.retention, lease, SystemTime::now());
    gc::verify_landed(&mut candidates, |e| {
        crate::workspace::land::is_landed(&ctx, e)
    });
    // gc never discards a file: build output no commit holds is kept aside too.
    let options = remove::Options {
        keep_disposable: true,
        ..Default::default()
    };
    let results: Vec<(Candidate, Outcome)> = candidates
        .into_iter()
        .map(|c| {
            let outcome = match (&c.skip, args.dry_run) {
                (Some(why), _) => Outcome::Skipped(why.clone()),
                (None, true) => Outcome::WouldRemove(
                    remove::preview(&ctx, &c.entry, &options).ok(),
                    remove::run_logs(&ctx, &c.entry.id),
                ),
                (None, false) => match remove::remove(&ctx, &c.entry, &options, None) {
                    Ok(removal) => Outcome::Removed(Box::new(removal)),
                    Err(err) => Outcome::Failed(err),
                },
            };
            (c, outcome)
        })
        .collect();
    let kept = expired_kept(&ctx, args.dry_run);
    report(ui, &results, &kept, args)?;
    let failed = results.iter().any(|(_, o)| matches!(o, Outcome::Failed(_)))
        || kept.iter().any(|k| k.error.is_some());
    Ok(i32::from(failed))
}

/// A kept-aside directory past `retention.kept`: purged (or, in a dry run, that would be).
struct Kept {
    path: PathBuf,
    age: std::time::Duration,
    retention: std::time::Duration,
    error: Option<CliError>,
}

/// The kept-aside directories (`<namespace>/.kept/`) older than `retention.kept`, purged
/// unless `dry_run`. A name that does not say when it was made is never purged; see
/// [`crate::store::aside::kept_age`] for why a set-back clock cannot make one old.
fn expired_kept(ctx: &Context, dry_run: bool) -> Vec<Kept> {
    let Some(retention) = ctx.config.retention_kept else {
        return vec![];
    };
    let root = ctx.layout.dir.join(crate::workspace::remove::KEPT_DIR);
    let now = SystemTime::now();
    let dirs = crate::store::aside::kept_dirs(&root, None).unwrap_or_default();
    dirs.into_iter()
        .filter_map(|path| {
            let age = crate::store::aside::kept_age(&path, now)?;
            (age > retention).then_some((path, age))
        })
        .map(|(path, age)| {
            let error = match dry_run {
                true => None,
                false => crate::store::aside::purge(&path).err().map(|e| {
                    CliError::failure(format!("could not purge {}: {e}", path.display()))
                        .hint("check its permissions, then run gc again")
                }),
            };
            Kept {
                path,
                age,
                retention,
                error,
            }
        })
        .collect()
}

/// Why, in words: `done for 8d, retention.done = 7d`.
fn why(expiry: &Expiry) -> String {
    format!(
        "{} for {}, retention.{} = {}",
        expiry.status,
        gc::short(expiry.age),
        expiry.status,
        gc::short(expiry.retention)
    )
}

/// The `--json` document.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(in crate::cli) struct GcJson {
    schema_version: u32,
    dry_run: bool,
    removed: Vec<Item>,
    skipped: Vec<Item>,
    failed: Vec<Item>,
    /// Kept-aside directories past `retention.kept`, purged (or that would be).
    purged_kept: Vec<KeptItem>,
}

/// One kept-aside directory in it.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
struct KeptItem {
    path: PathBuf,
    age_seconds: u64,
    retention_seconds: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<crate::error::ErrorJson>,
}

/// One workspace in it: the removal's fields (as `clean --json`), its status, age, retention.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
struct Item {
    workspace_id: String,
    path: PathBuf,
    status: String,
    age_seconds: u64,
    retention_seconds: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<crate::error::ErrorJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    removal: Option<RemovalJson>,
}

fn item(c: &Candidate, outcome: &Outcome) -> Item {
    let (id, path) = (&c.entry.id, &c.entry.path);
    Item {
        workspace_id: id.to_string(),
        path: path.clone(),
        status: c.expiry.status.to_string(),
        age_seconds: c.expiry.age.as_secs(),
        retention_seconds: c.expiry.retention.as_secs(),
        reason: match outcome {
            Outcome::Skipped(why) => Some(why.clone()),
            _ => None,
        },
        error: match outcome {
            Outcome::Failed(err) => Some(err.to_json()),
            _ => None,
        },
        removal: match outcome {
            Outcome::Removed(r) => Some(RemovalJson::new(id, path, Some(r))),
            Outcome::WouldRemove(aside, logs) => {
                let mut json = RemovalJson::new(id, path, None);
                json.untracked = aside.as_ref().map(AsideJson::from);
                json.run_logs = logs.as_ref().map(RunLogsJson::from);
                Some(json)
            }
            _ => None,
        },
    }
}

fn report(ui: &Ui, results: &[(Candidate, Outcome)], kept: &[Kept], args: &GcArgs) -> Result<()> {
    if args.json {
        let mut doc = GcJson {
            schema_version: 1,
            dry_run: args.dry_run,
            removed: vec![],
            skipped: vec![],
            failed: vec![],
            purged_kept: kept
                .iter()
                .map(|k| KeptItem {
                    path: k.path.clone(),
                    age_seconds: k.age.as_secs(),
                    retention_seconds: k.retention.as_secs(),
                    error: k.error.as_ref().map(CliError::to_json),
                })
                .collect(),
        };
        for (c, outcome) in results {
            let list = match outcome {
                Outcome::Removed(_) | Outcome::WouldRemove(..) => &mut doc.removed,
                Outcome::Skipped(_) => &mut doc.skipped,
                Outcome::Failed(_) => &mut doc.failed,
            };
            list.push(item(c, outcome));
        }
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        return ui.data(&format!("{text}\n"));
    }
    let mut text = String::new();
    for (c, outcome) in results {
        let (id, path, why) = (&c.entry.id, &c.entry.path, why(&c.expiry));
        match outcome {
            // The line `clean` prints, so what reads one reads the other; the why on stderr.
            Outcome::Removed(r) => {
                ui.note(format!("Expired {id}: {why}"));
                text += &format!("{}\n", describe(id, path, r));
            }
            Outcome::WouldRemove(aside, logs) => {
                text += &format!("Would remove {id} ({}): {why}", path.display());
                text += &crate::ui::report::would_keep(aside.as_ref());
                text += &crate::ui::report::describe_run_logs(logs.as_ref(), true);
                text += "\n";
            }
            Outcome::Skipped(reason) => ui.note(format!("Skipped {id} ({why}): {reason}")),
            Outcome::Failed(err) => ui.error(err),
        }
    }
    if results.is_empty() {
        ui.note("No workspace is past its retention");
    }
    for k in kept {
        let why = format!(
            "kept for {}, retention.kept = {}",
            gc::short(k.age),
            gc::short(k.retention)
        );
        match (&k.error, args.dry_run) {
            (Some(err), _) => ui.error(err),
            (None, true) => text += &format!("Would purge {} ({why})\n", k.path.display()),
            (None, false) => text += &format!("Purged {} ({why})\n", k.path.display()),
        }
    }
    ui.data(&text)
}
