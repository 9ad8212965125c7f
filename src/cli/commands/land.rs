//! `land`: bring a workspace's commits onto a target (the main working copy or branch, the
//! parent workspace's, or `--onto REV`).

use std::fmt::Write as _;

use clap::{Args, ValueEnum};
use serde::Serialize;

use crate::cli::invocation::{Handle, Invocation};
use crate::error::{CliError, Result};
use crate::store::layout::WorkspaceId;
use crate::store::metadata::{Conflict, Resolved, Side};
use crate::store::timestamp::Timestamp;
use crate::vcs::land::{ConflictKind, Landing};
use crate::vcs::Commit;
use crate::workspace::context::Context;
use crate::workspace::land::{self, Request};

/// Bring a workspace's commits onto a target, its unrecorded edits recorded first.
#[derive(Debug, Args)]
pub struct LandArgs {
    /// Workspace to land
    #[arg(value_parser = WorkspaceId::from_arg)]
    pub id: WorkspaceId,
    /// Land onto this revision: one commit (jj) or a local branch (git) [default: the parent
    /// workspace's working copy or branch, else the main workspace's]
    #[arg(long, value_name = "REV")]
    pub onto: Option<String>,
    /// Resolve each conflicting hunk by taking this side (both sides' other changes stay)
    #[arg(long, value_enum, value_name = "SIDE")]
    pub prefer: Option<Prefer>,
    /// jj: land even when conflicts remain, leaving them as jj conflicts to resolve
    /// [default: a conflict changes nothing]
    #[arg(long)]
    pub allow_conflicts: bool,
    /// Show what would land and which files would conflict; change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Refuse, rather than wait, while another land of this repository is under way
    /// [default: wait for it, up to 10 minutes]
    #[arg(long)]
    pub no_wait: bool,
    /// Print JSON (schema_version 1) instead of text
    #[arg(long)]
    pub json: bool,
}

/// The side `--prefer` takes.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Prefer {
    /// The workspace's side of each conflicting hunk
    Workspace,
    /// The target's side of each conflicting hunk
    Target,
}

pub(in crate::cli) fn cmd_land(inv: &Invocation, args: &LandArgs) -> Result<i32> {
    let ui = inv.ui;
    let Handle { mut ctx, .. } = inv.workspace(&args.id)?;
    if args
        .onto
        .as_deref()
        .is_some_and(|r| r.trim().is_empty() || r.starts_with('-'))
    {
        return Err(CliError::usage("--onto needs a revision")
            .hint("e.g. `agent-workspace land w1 --onto main`"));
    }
    if args.allow_conflicts && !ctx.vcs.lands_conflicts() {
        return Err(
            CliError::usage("--allow-conflicts is for jj repositories: git never lands a conflicted merge")
                .hint(format!("drop it; `agent-workspace land {} --prefer workspace|target` resolves conflicting hunks", args.id)),
        );
    }
    let req = Request {
        id: &args.id,
        onto: args.onto.as_deref(),
        prefer: args.prefer.map(|p| match p {
            Prefer::Workspace => Side::Workspace,
            Prefer::Target => Side::Target,
        }),
        allow_conflicts: args.allow_conflicts,
        dry_run: args.dry_run,
        no_wait: args.no_wait,
    };
    let progress = ui.progress(&format!("land of {}", args.id));
    ctx.progress = progress.progress();
    let landing = land::land(&ctx, &req);
    drop(progress);
    let landing = landing?;
    let text = match args.json {
        true => json(&args.id, args.dry_run, &landing),
        false => text(&args.id, args.dry_run, &landing),
    };
    ui.data(&text)?;
    if !landing.not_landed.is_empty() {
        for path in &landing.not_landed {
            ui.warning(format!(
                "not landed: {} (jj does not track it)",
                path.display()
            ));
        }
        ui.hint("jj tracks no new file larger than snapshot.max-new-file-size (1 MiB unless configured), none outside snapshot.auto-track and nothing inside a nested repository: shrink or move such a file, or raise the limit (`jj config set --repo snapshot.max-new-file-size 10MiB`), then land again; ignore it if it is no work to keep");
    }
    if !landing.conflicts.is_empty() && !args.json {
        ui.error(&conflict_error(
            &ctx,
            &args.id,
            args.prefer.is_some(),
            &landing,
        ));
    }
    Ok(i32::from(!landing.conflicts.is_empty()))
}

/// `landed`, `conflicted` or `nothing`; a dry run's `would_land` or `would_conflict` (it
/// never says `landed`).
fn outcome(landing: &Landing, dry_run: bool) -> &'static str {
    match (
        landing.commits.is_empty(),
        landing.conflicts.is_empty(),
        dry_run,
    ) {
        (true, _, _) => "nothing",
        (false, true, false) => "landed",
        (false, false, false) => "conflicted",
        (false, true, true) => "would_land",
        (false, false, true) => "would_conflict",
    }
}

fn short(id: &str) -> &str {
    &id[..id.len().min(12)]
}

fn text(id: &str, dry_run: bool, landing: &Landing) -> String {
    let mut out = String::new();
    let target = &landing.target;
    if let Some(as_of) = &landing.files_as_of {
        let _ = writeln!(
            out,
            "A run holds workspace {id}: its work is read {}",
            match as_of {
                crate::vcs::diff::AsOf::LiveFiles => "from its live files".to_string(),
                other => other.describe(),
            }
        );
    }
    if landing.commits.is_empty() {
        let _ = writeln!(
            out,
            "Nothing to land: workspace {id} has no commits outside {target}"
        );
        return out;
    }
    let n = landing.commits.len();
    let verb = match (dry_run, landing.conflicts.is_empty(), landing.applied) {
        (true, _, _) => "Would land",
        (false, true, _) => "Landed",
        (false, false, true) => "Landed with conflicts",
        (false, false, false) => "Did not land",
    };
    let _ = writeln!(out, "{verb} {n} commit{} of {id} onto {target}", plural(n));
    for commit in &landing.commits {
        let _ = writeln!(out, "  {} {}", short(&commit.id), commit.subject);
    }
    let _ = writeln!(
        out,
        "{} file{} changed",
        landing.files.len(),
        plural(landing.files.len())
    );
    for r in &landing.resolved {
        let _ = writeln!(
            out,
            "Resolved {} by taking the {} side",
            r.file,
            r.side.as_str()
        );
    }
    for c in &landing.conflicts {
        let _ = writeln!(out, "Conflict in {} ({})", c.file, short(&c.commit));
    }
    if let Some(head) = landing.git().and_then(|g| g.reattached_head.as_ref()) {
        let _ = writeln!(
            out,
            "Put the workspace's detached HEAD ({}) back on its branch",
            short(head)
        );
    }
    if let (false, Some(undo)) = (dry_run, &landing.undo) {
        let _ = writeln!(out, "Undo: {undo}");
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The error line and hint for conflicts, after the report.
fn conflict_error(ctx: &Context, id: &str, prefer: bool, landing: &Landing) -> CliError {
    // A file is counted once, however many landed commits hold its conflict.
    let mut files: Vec<&str> = landing.conflicts.iter().map(|c| c.file.as_str()).collect();
    files.sort_unstable();
    files.dedup();
    let n = files.len();
    // jj: markers held as text are no conflict jj knows: neither `--prefer` nor `jj
    // resolve` settles them, only an edit does.
    let markers: Vec<&str> = files
        .iter()
        .copied()
        .filter(|f| {
            landing
                .jj()
                .is_some_and(|jj| jj.marker_files.iter().any(|m| m == f))
        })
        .collect();
    let others = n - markers.len();
    let kind = ctx.vcs.conflict_kind(landing.applied);
    if matches!(kind, ConflictKind::Jj { .. }) && !markers.is_empty() {
        let (message, hint) = match landing.applied {
            true => (
                format!("the land left {n} conflicted file{} in the landed commits", plural(n)),
                format!(
                    "{} {} conflict markers as ordinary text, not a conflict jj knows: edit {} in the target to settle {}{}, or revert the land with `{}`",
                    markers.join(", "),
                    if markers.len() == 1 { "holds" } else { "hold" },
                    if markers.len() == 1 { "it" } else { "them" },
                    if markers.len() == 1 { "it" } else { "them" },
                    match others {
                        0 => String::new(),
                        _ => " and resolve the others there (`jj resolve`)".into(),
                    },
                    landing.undo.as_deref().unwrap_or("jj undo")
                ),
            ),
            false => (
                format!(
                    "landing workspace {id} onto {} conflicts in {n} file{}; nothing was changed",
                    landing.target,
                    plural(n)
                ),
                format!(
                    "{} {} conflict markers as ordinary text, not a conflict jj knows: edit {} in the workspace and land again{}, or land with --allow-conflicts to bring the markers into the target as they are",
                    markers.join(", "),
                    if markers.len() == 1 { "holds" } else { "hold" },
                    if markers.len() == 1 { "it" } else { "them" },
                    match (others, prefer) {
                        (0, _) | (_, true) => String::new(),
                        _ => " (with --prefer workspace|target for the other conflicts)".into(),
                    },
                ),
            ),
        };
        return CliError::failure(message).hint(hint);
    }
    match kind {
        ConflictKind::Jj { applied: true } => CliError::failure(format!(
            "the land left {n} conflicted file{} in the landed commits",
            plural(n)
        ))
        .hint(format!(
            "resolve them in the target (`jj resolve`), or revert the land with `{}` and retry with `agent-workspace land {id} --prefer workspace|target`",
            landing.undo.as_deref().unwrap_or("jj undo")
        )),
        ConflictKind::Jj { applied: false } => CliError::failure(format!(
            "landing workspace {id} onto {} conflicts in {n} file{}; nothing was changed",
            landing.target,
            plural(n)
        ))
        .hint(match prefer {
            // What --prefer leaves is a conflict it never settles (the workspace's own, or
            // one of the commit its commits sit on).
            true => format!(
                "--prefer settles neither a conflict the workspace's commits hold themselves nor one of the commit they sit on: resolve them in workspace {id} (`jj resolve`) and land again, or land with --allow-conflicts to keep them as jj conflicts to resolve"
            ),
            false => format!(
                "retry with `agent-workspace land {id} --prefer workspace|target` (taking that side in the conflicting hunks), or with --allow-conflicts to land them as jj conflicts to resolve"
            ),
        }),
        ConflictKind::Git if prefer => CliError::failure(format!(
            "merging workspace {id} into {} conflicts in {n} file{} that --prefer cannot settle; nothing was changed",
            landing.target,
            plural(n)
        ))
        .hint(format!(
            "--prefer settles neither a modify/delete conflict, nor a file one side renamed while the other changed it and holds the new name too (git would merge one into the other), nor a file that differs between the workspace's merge bases with {0} (there are more than one once a commit it started on was amended or rebased in {0}); rebase the workspace onto {0} (`git rebase --autostash {0}` in it) and land again, or merge by hand: git merge -X no-renames {1}",
            landing.target,
            landing.conflicts[0].commit
        )),
        ConflictKind::Git => CliError::failure(format!(
            "merging workspace {id} into {} conflicts in {n} file{}; nothing was changed",
            landing.target,
            plural(n)
        ))
        .hint(format!(
            "retry with `agent-workspace land {id} --prefer workspace|target`, or merge by hand: git merge {}",
            landing.conflicts[0].commit
        )),
    }
}

/// `land --json`.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(in crate::cli) struct LandJson<'a> {
    schema_version: u64,
    workspace_id: &'a str,
    dry_run: bool,
    #[cfg_attr(test, schemars(extend("enum" = ["nothing", "landed", "conflicted", "would_land", "would_conflict"])))]
    outcome: &'static str,
    target: String,
    commits: &'a [Commit],
    /// The paths the landed commits change.
    paths: &'a [String],
    conflicts: &'a [Conflict],
    resolved: &'a [Resolved],
    recorded_edits: bool,
    applied: bool,
    operation_before: Option<&'a str>,
    merge_commit: Option<&'a str>,
    target_before: Option<&'a str>,
    undo: Option<&'a str>,
    reattached_head: Option<&'a str>,
    operations: &'a [String],
    /// Files of the workspace that no commit of it holds though they are not ignored (jj:
    /// larger than `snapshot.max-new-file-size`, outside `snapshot.auto-track`, a nested
    /// repository): not landed; they stay in the workspace.
    not_landed: &'a [std::path::PathBuf],
    /// Whether a live run of another process holds the workspace (a dry run then only
    /// looks: no lease, no snapshot, nothing written to it).
    run_live: bool,
    /// With `run_live`: the moment its work was read, `live-files` or `last-snapshot` (jj:
    /// its working-copy commit as last snapshotted).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(extend("enum" = ["live-files", "last-snapshot"])))]
    files_as_of: Option<&'static str>,
    /// With `last-snapshot`: when jj wrote that working-copy commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    snapshot_at: Option<&'a Timestamp>,
}

fn json(id: &str, dry_run: bool, landing: &Landing) -> String {
    let (jj, git) = (landing.jj(), landing.git());
    let doc = LandJson {
        schema_version: 1,
        workspace_id: id,
        dry_run,
        outcome: outcome(landing, dry_run),
        target: landing.target.to_string(),
        commits: &landing.commits,
        paths: &landing.files,
        conflicts: &landing.conflicts,
        resolved: &landing.resolved,
        recorded_edits: landing.recorded_edits,
        applied: landing.applied,
        operation_before: jj.and_then(|j| j.operation_before.as_deref()),
        merge_commit: git.and_then(|g| g.merge_commit.as_deref()),
        target_before: git.and_then(|g| g.target_before.as_deref()),
        undo: landing.undo.as_deref(),
        reattached_head: git.and_then(|g| g.reattached_head.as_deref()),
        operations: jj.map_or(&[], |j| &j.operations),
        not_landed: &landing.not_landed,
        run_live: landing.files_as_of.is_some(),
        files_as_of: landing.files_as_of.as_ref().map(|a| a.code()),
        snapshot_at: landing.files_as_of.as_ref().and_then(|a| a.snapshot_at()),
    };
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}
