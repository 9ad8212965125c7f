//! `diff`: what a workspace changed since it was created, as a summary, a patch or JSON.

use clap::Args;
use serde::Serialize;

use crate::cli::invocation::{Handle, Invocation};
use crate::error::Result;
use crate::store::layout::WorkspaceId;
use crate::store::timestamp::Timestamp;
use crate::ui::output;
use crate::vcs::diff::{Changes, FileChange, WorkCommit};
use crate::workspace::changes;

/// Show what a workspace changed since it was created: its commits and its files, latest
/// edits included.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Workspace id
    #[arg(value_parser = WorkspaceId::from_arg)]
    pub id: WorkspaceId,
    /// Print the commits and a line per changed file with its insertions and deletions
    /// (the default)
    #[arg(long, conflicts_with_all = ["patch", "json"])]
    pub stat: bool,
    /// Print a git-format patch that `git apply` accepts at the base
    #[arg(long, conflicts_with = "json")]
    pub patch: bool,
    /// Print JSON (schema_version 1) instead of text
    #[arg(long)]
    pub json: bool,
}

pub(in crate::cli) fn cmd_diff(inv: &Invocation, args: &DiffArgs) -> Result<i32> {
    let ui = inv.ui;
    let Handle { ctx, id, .. } = inv.workspace(&args.id)?;
    let target = changes::open(&ctx, &id)?;
    // The patch and the JSON name the latest tree; the summary does not (git: no tree written).
    let tree = args.patch || args.json;
    let found = changes::read(
        &ctx,
        &id,
        &target.record,
        &target.path,
        !target.watching,
        tree,
    )?;
    if args.patch {
        let patch = ctx.vcs.patch(&found.against, &found.latest)?;
        return ui.data_bytes(&patch).map(|()| 0);
    }
    let text = match args.json {
        true => json(&target.record, &found, target.watching),
        false => summary(&id, target.record.backend.as_str(), &found, target.watching),
    };
    ui.data(&text)?;
    Ok(0)
}

/// `diff --json`.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(in crate::cli) struct DiffJson<'a> {
    schema_version: u64,
    workspace_id: &'a str,
    backend: crate::repo::Backend,
    base_commits: &'a [String],
    /// The commit (or merged tree) the files are compared to.
    against: &'a str,
    /// The workspace's latest state: jj's working-copy commit, or git's tree of its files.
    latest: &'a str,
    commits: &'a [WorkCommit],
    files: &'a [FileChange],
    totals: Totals,
    /// The moment the files show: `live-files`, or `last-snapshot` (jj, while a run holds
    /// the workspace: its files as jj last recorded them, nothing snapshotted now).
    #[cfg_attr(test, schemars(extend("enum" = ["live-files", "last-snapshot"])))]
    files_as_of: &'static str,
    /// With `last-snapshot`: when jj wrote the working-copy commit shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    snapshot_at: Option<&'a Timestamp>,
    /// Whether a live run of another process holds the workspace (it was only looked at).
    run_live: bool,
}

/// The sums over every changed file.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
struct Totals {
    files_count: usize,
    added: u64,
    removed: u64,
    binary_count: usize,
}

fn totals(files: &[FileChange]) -> Totals {
    Totals {
        files_count: files.len(),
        added: files.iter().map(|f| f.added).sum(),
        removed: files.iter().map(|f| f.removed).sum(),
        binary_count: files.iter().filter(|f| f.binary).count(),
    }
}

fn json(record: &crate::store::metadata::Record, found: &Changes, watching: bool) -> String {
    let value = DiffJson {
        schema_version: 1,
        workspace_id: &record.workspace_id,
        backend: record.backend,
        base_commits: &record.base_commits,
        against: &found.against,
        latest: &found.latest,
        commits: &found.commits,
        files: &found.files,
        totals: totals(&found.files),
        files_as_of: found.as_of.code(),
        snapshot_at: found.as_of.snapshot_at(),
        run_live: watching,
    };
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}

/// The default view: a line per commit, a line per file, then the totals.
fn summary(id: &str, backend: &str, found: &Changes, watching: bool) -> String {
    let short = |c: &str| c.chars().take(12).collect::<String>();
    let moment = match watching {
        false => "latest edits included".to_string(),
        true => format!("{}, while a run holds it", found.as_of.describe()),
    };
    let mut out = format!(
        "workspace {id} ({backend}): {} on top of {}, {moment}\n",
        plural(found.commits.len() as u64, "commit"),
        short(&found.against)
    );
    if !found.commits.is_empty() {
        let rows = found.commits.iter().map(|c| {
            let subject = &c.subject;
            let rest = match &c.change_id {
                Some(change) => format!("{}  {subject}", short(change)),
                None => subject.to_string(),
            };
            [short(&c.commit_id), rest]
        });
        output::columns(rows, &mut out);
    }
    out.push('\n');
    let rows = found.files.iter().map(|f| {
        let (ins, del) = match f.binary {
            true => ("bin".into(), "bin".into()),
            false => (format!("+{}", f.added), format!("-{}", f.removed)),
        };
        let path = match &f.old_path {
            Some(old) => format!("{old} -> {}", f.path),
            None => f.path.clone(),
        };
        [f.status.as_str().to_string(), ins, del, path]
    });
    output::columns(rows, &mut out);
    let t = totals(&found.files);
    out += &format!(
        "{} changed, {}(+), {}(-)\n",
        plural(t.files_count as u64, "file"),
        plural(t.added, "insertion"),
        plural(t.removed, "deletion")
    );
    out
}

fn plural(n: u64, word: &str) -> String {
    match n {
        1 => format!("1 {word}"),
        n => format!("{n} {word}s"),
    }
}
