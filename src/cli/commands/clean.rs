//! `clean`: record a workspace's edits, forget it and remove its directory; one by one or in
//! bulk by status and age.

use std::time::{Duration, SystemTime};

use clap::Args;
use serde::Serialize;

use crate::cli::invocation::Invocation;
use crate::error::{CliError, ErrorJson, Result};
use crate::store::aside::{self, Aside};
use crate::store::layout::WorkspaceId;
use crate::store::lock;
use crate::ui::Ui;
use crate::workspace;
use crate::workspace::context::Context;
use crate::workspace::error::WorkspaceError;
use crate::workspace::inventory::{self, Entry, Problem};
use crate::workspace::land::Landed;

use crate::store::timestamp::Timestamp;
use crate::ui::report::{describe, AsideJson, RemovalJson, RunLogsJson};
use crate::workspace::remove::{self, Removal, KEPT_DIR};

/// Remove workspaces, keeping their edits in the repository.
#[derive(Debug, Args)]
pub struct CleanArgs {
    /// Workspaces to remove
    #[arg(value_parser = WorkspaceId::from_arg)]
    pub ids: Vec<WorkspaceId>,
    /// Select every workspace of this repository
    #[arg(long, conflicts_with = "ids")]
    pub all: bool,
    /// Select workspaces with this status (repeatable)
    #[arg(long, value_name = "STATUS", conflicts_with = "ids",
          value_parser = ["done", "error", "crashed", "interrupted", "idle", "landed", "conflicted"])]
    pub status: Vec<String>,
    /// Select workspaces not updated for this long (e.g. 7d, 12h, 30m)
    #[arg(long, value_name = "DURATION", conflicts_with = "ids", value_parser = humantime::parse_duration)]
    pub older_than: Option<Duration>,
    /// Select workspaces whose last land brought all their work into its target: nothing
    /// unrecorded, no commit outside it
    #[arg(long, conflicts_with = "ids")]
    pub landed: bool,
    /// Show what would be removed, remove nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Print JSON (schema_version 1) instead of text
    #[arg(long)]
    pub json: bool,
    /// Stop a live run first; remove directories the backend no longer knows; with
    /// --delete-branch, delete unmerged branches too
    #[arg(long)]
    pub force: bool,
    /// git backend: also delete the workspace's branch when it is fully merged
    #[arg(long)]
    pub delete_branch: bool,
    /// Delete the files no commit keeps instead of keeping them aside in <namespace>/.kept/
    #[arg(long)]
    pub discard_untracked: bool,
    /// Only delete the kept-aside directories (<namespace>/.kept/<id>-<time>) of the named
    /// workspaces, or of every workspace with --all; remove no workspace
    #[arg(long, conflicts_with_all = ["status", "older_than", "landed", "force", "delete_branch", "discard_untracked"])]
    pub purge_kept: bool,
}

/// What happened to one selected workspace.
enum Outcome {
    Removed(Box<Removal>),
    /// A dry run's: what the removal would keep aside, when it could be surveyed, and the
    /// run logs it would remove.
    WouldRemove(Option<Aside>, Option<remove::RunLogs>),
    Skipped(String),
    Failed(CliError),
}

pub(in crate::cli) fn cmd_clean(inv: &Invocation, args: &CleanArgs) -> Result<i32> {
    let ui = inv.ui;
    let bulk = args.all || !args.status.is_empty() || args.older_than.is_some() || args.landed;
    if args.ids.is_empty() && !bulk {
        return Err(CliError::usage(
            "name the workspaces to clean, or select them with --all, --status, --older-than or --landed",
        )
        .hint("e.g. `agent-workspace clean w1` or `agent-workspace clean --all --status done`"));
    }
    let ctx = inv.context()?;
    // A clean a kill interrupted is finished first (never in a dry run, which changes
    // nothing): a named one counts as removed by this clean, any other is said on stderr.
    let settled = match args.dry_run {
        true => vec![],
        false => remove::settle_interrupted(&ctx)?,
    };
    let (named, others): (Vec<_>, Vec<_>) = settled
        .into_iter()
        .partition(|f| !bulk && f.removal.is_ok() && args.ids.contains(&f.id));
    for line in crate::ui::report::settled(&others) {
        ui.note(line);
    }
    if !args.dry_run {
        super::finish_repairs(ui, &ctx);
    }
    if args.purge_kept {
        return purge_kept(ui, &ctx, args);
    }
    for id in &args.ids {
        crate::cli::invocation::checked(&ctx, id)?;
    }
    let finished: Vec<(WorkspaceId, std::path::PathBuf, Outcome)> = named
        .into_iter()
        .filter_map(|f| Some((f.id, f.path, Outcome::Removed(Box::new(f.removal.ok()?)))))
        .collect();
    let selected: Vec<_> = select(&ctx, args, bulk)?
        .into_iter()
        .filter(|s| !finished.iter().any(|(done, _, _)| *done == s.id))
        .map(|s| {
            let outcome = match s.skip {
                Some(reason) => Outcome::Skipped(reason),
                None => clean_one(&ctx, args, bulk, &s.id, s.entry),
            };
            let path = ctx.layout.workspace(&s.id);
            (s.id, path, outcome)
        })
        .collect();
    let results: Vec<_> = finished.into_iter().chain(selected).collect();
    report(ui, &results, args)?;
    let failed = results.iter().any(|(_, _, o)| match o {
        Outcome::Failed(_) => true,
        Outcome::Skipped(_) => !bulk,
        _ => false,
    });
    Ok(i32::from(failed))
}

/// The workspaces selected: by the bulk selectors, or the named ones (`None`: unknown id).
fn select(ctx: &Context, args: &CleanArgs, bulk: bool) -> Result<Vec<Selected>> {
    if bulk {
        let (mut entries, warning) = inventory::all(ctx);
        if let Some(err) = warning {
            return Err(err);
        }
        workspace::land::follow(ctx, &mut entries);
        return Ok(entries
            .into_iter()
            .filter(|e| matches(e, args))
            .filter_map(|e| match args.landed {
                false => Some(Selected::of(e)),
                true => match workspace::land::landed(ctx, &e) {
                    Landed::No => None,
                    Landed::All => Some(Selected::of(e)),
                    // Its commits landed, but not these files: said, and the workspace
                    // (with them) stays.
                    Landed::LeftOut(files) => Some(Selected {
                        skip: Some(left_out(&e.id, &files)),
                        ..Selected::of(e)
                    }),
                },
            })
            .collect());
    }
    // A named workspace is read from its files and its registration checked (by name and by
    // recorded root): a directory whose registration is unknown is never removed as if the
    // backend had recorded its edits.
    args.ids
        .iter()
        .map(|id| match inventory::one(ctx, id) {
            (_, Some(err)) => Err(err),
            (entry, None) => Ok(Selected {
                id: id.clone(),
                entry,
                skip: None,
            }),
        })
        .collect()
}

/// A workspace `clean` was asked to remove: its entry (`None`: unknown id), and why it is
/// left alone when the selection itself decided so.
struct Selected {
    id: WorkspaceId,
    entry: Option<Entry>,
    skip: Option<String>,
}

impl Selected {
    fn of(entry: Entry) -> Selected {
        Selected {
            id: entry.id.clone(),
            entry: Some(entry),
            skip: None,
        }
    }
}

/// Why `clean --landed` leaves a workspace whose commits all landed but whose `files` no
/// commit holds (jj did not track them), so no land brought them.
fn left_out(id: &WorkspaceId, files: &[std::path::PathBuf]) -> String {
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    format!(
        "its commits landed, but not {} (jj does not track {}: too big to snapshot, outside snapshot.auto-track or a nested repository); `agent-workspace clean {id}` removes it keeping {} aside",
        names.join(", "),
        if files.len() == 1 { "it" } else { "them" },
        if files.len() == 1 { "it" } else { "them" },
    )
}

/// Decides about one selected workspace and, unless refused or a dry run, removes it.
fn clean_one(
    ctx: &Context,
    args: &CleanArgs,
    bulk: bool,
    id: &WorkspaceId,
    entry: Option<Entry>,
) -> Outcome {
    let Some(entry) = entry else {
        return Outcome::Failed(workspace::unknown(id, &ctx.layout.workspace(id)));
    };
    match &entry.problem {
        Some(Problem::Mismatch(m)) => {
            return Outcome::Failed(
                WorkspaceError::Mismatch {
                    id: id.clone(),
                    mismatch: m.clone(),
                }
                .into(),
            )
        }
        // Named: the same error the removal itself gives for an unregistered directory.
        // Forgotten by an interrupted clean: its journal lets the removal finish it.
        Some(Problem::Unregistered) if !bulk && !args.force && !remove::interrupted(ctx, id) => {
            return Outcome::Failed(workspace::unregistered(id, &entry.path))
        }
        _ => {}
    }
    // Bulk: a workspace another process holds without a live run (one being created or
    // cleaned) is skipped like a live one; --force stops runs, never a creation.
    if bulk && !entry.is_live() && lock::is_held(&ctx.layout.lease(id)) {
        return Outcome::Skipped(
            "another agent-workspace process holds it (creating, running or cleaning it); try again once it is done"
                .into(),
        );
    }
    match (
        refusal(&entry, args.force, remove::interrupted(ctx, id)),
        args.dry_run,
    ) {
        (Some(reason), _) => Outcome::Skipped(reason),
        (None, true) => Outcome::WouldRemove(
            remove::preview(ctx, &entry, &remove_options(args)).ok(),
            remove::run_logs(ctx, id),
        ),
        (None, false) => match remove::remove(ctx, &entry, &remove_options(args), None) {
            Ok(removal) => Outcome::Removed(Box::new(removal)),
            Err(err) => Outcome::Failed(err),
        },
    }
}

fn remove_options(args: &CleanArgs) -> remove::Options {
    remove::Options {
        force: args.force,
        delete_branch: args.delete_branch,
        discard_untracked: args.discard_untracked,
        keep_disposable: false,
    }
}

fn matches(entry: &Entry, args: &CleanArgs) -> bool {
    let status_ok = args.status.is_empty() || args.status.iter().any(|s| s == entry.status());
    let age_ok = args.older_than.is_none_or(|age| {
        let now = SystemTime::now();
        let since_update = entry.updated_at().and_then(|t| t.age(now));
        let since_update = since_update.or_else(|| {
            let modified = std::fs::metadata(&entry.path).and_then(|m| m.modified());
            modified
                .ok()
                .map(|t| Timestamp::from_time(t).age(now).unwrap_or_default())
        });
        since_update.is_some_and(|since| since >= age)
    });
    status_ok && age_ok
}

/// Why a workspace must not be removed as asked, if it must not.
/// `resuming`: an interrupted clean's journal is left, so an unregistered workspace is one it
/// forgot and the removal finishes it.
fn refusal(entry: &Entry, force: bool, resuming: bool) -> Option<String> {
    match &entry.problem {
        Some(Problem::NotADirectory) => {
            return Some(format!(
                "{} is a symlink or file, not a workspace; not touching it",
                entry.path.display()
            ))
        }
        Some(Problem::NewerSchema(v)) => {
            return Some(format!(
                "its record is schema {v}, from a newer agent-workspace"
            ))
        }
        Some(Problem::Unregistered) if !force && !resuming => {
            let err = workspace::unregistered(&entry.id, &entry.path);
            return Some(format!("{}; {}", err.message, err.hint.unwrap_or_default()));
        }
        _ => {}
    }
    match &entry.record {
        Some(r) if entry.is_live() && !force => Some(format!(
            "a run is live (pid {}, since {}); pass --force to stop it first",
            r.pid.unwrap_or(0),
            r.started_at.as_ref().map_or("?".into(), |t| t.to_string())
        )),
        _ => None,
    }
}

/// `clean --purge-kept`: deletes kept-aside directories.
fn purge_kept(ui: &Ui, ctx: &Context, args: &CleanArgs) -> Result<i32> {
    let root = ctx.layout.dir.join(KEPT_DIR);
    let io = |e: std::io::Error| {
        CliError::failure(format!("could not purge {}: {e}", root.display()))
            .hint("check the directory's permissions")
    };
    if std::fs::symlink_metadata(&root).is_ok_and(|m| !m.is_dir()) {
        return Err(
            CliError::failure(format!("{} is not a directory", root.display()))
                .hint("remove it by hand; agent-workspace does not follow symlinks"),
        );
    }
    let mut dirs = Vec::new();
    match args.all {
        true => dirs = aside::kept_dirs(&root, None).map_err(io)?,
        false => {
            for id in &args.ids {
                dirs.extend(aside::kept_dirs(&root, Some(id)).map_err(io)?);
            }
        }
    }
    let mut text = String::new();
    for dir in &dirs {
        if !args.dry_run {
            aside::purge(dir).map_err(io)?;
        }
        let verb = if args.dry_run {
            "Would purge"
        } else {
            "Purged"
        };
        text += &format!("{verb} {}\n", dir.display());
    }
    if args.json {
        let doc = PurgeJson {
            dry_run: args.dry_run,
            purged: dirs,
            schema_version: 1,
        };
        text = format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        );
    } else if dirs.is_empty() {
        ui.note("No kept-aside directory matched");
    }
    ui.data(&text)?;
    Ok(0)
}

fn report(
    ui: &Ui,
    results: &[(WorkspaceId, std::path::PathBuf, Outcome)],
    args: &CleanArgs,
) -> Result<()> {
    if args.json {
        let (mut removed, mut skipped, mut failed) = (vec![], vec![], vec![]);
        for (id, path, outcome) in results {
            match outcome {
                Outcome::Removed(removal) => {
                    removed.push(RemovalJson::new(id, path, Some(removal)))
                }
                Outcome::WouldRemove(aside, logs) => {
                    let mut json = RemovalJson::new(id, path, None);
                    json.untracked = aside.as_ref().map(AsideJson::from);
                    json.run_logs = logs.as_ref().map(RunLogsJson::from);
                    removed.push(json)
                }
                Outcome::Skipped(reason) => skipped.push(SkippedJson {
                    reason: reason.clone(),
                    workspace_id: id.to_string(),
                }),
                Outcome::Failed(err) => failed.push(FailedJson {
                    error: err.to_json(),
                    workspace_id: id.to_string(),
                }),
            }
        }
        let doc = CleanJson {
            dry_run: args.dry_run,
            failed,
            removed,
            schema_version: 1,
            skipped,
        };
        return ui.data(&format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        ));
    }
    let mut text = String::new();
    for (id, path, outcome) in results {
        match outcome {
            Outcome::Removed(removal) => text += &format!("{}\n", describe(id, path, removal)),
            Outcome::WouldRemove(aside, logs) => {
                let keep = crate::ui::report::would_keep(aside.as_ref());
                let logs = crate::ui::report::describe_run_logs(logs.as_ref(), true);
                text += &format!("Would remove {id} ({}){keep}{logs}\n", path.display())
            }
            Outcome::Skipped(reason) => ui.note(format!("Skipped {id}: {reason}")),
            Outcome::Failed(err) => ui.error(err),
        }
    }
    if results.is_empty() {
        ui.note("No workspace matched");
    }
    ui.data(&text)
}

/// `clean --json`: what was removed (or would be), skipped and failed. Fields in alphabetical
/// order, as they have always been printed.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(in crate::cli) struct CleanJson {
    dry_run: bool,
    failed: Vec<FailedJson>,
    removed: Vec<RemovalJson>,
    schema_version: u32,
    skipped: Vec<SkippedJson>,
}

/// A workspace `clean` left alone, and why.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
struct SkippedJson {
    reason: String,
    workspace_id: String,
}

/// A workspace `clean` failed to remove, and the error.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
struct FailedJson {
    error: ErrorJson,
    workspace_id: String,
}

/// `clean --purge-kept --json`: the kept-aside directories deleted (or that would be).
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(in crate::cli) struct PurgeJson {
    dry_run: bool,
    purged: Vec<std::path::PathBuf>,
    schema_version: u32,
}
