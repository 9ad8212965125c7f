//! `status`: a table of the namespace's workspaces, or one workspace's record.

use clap::Args;
use serde::Serialize;

use crate::cli::invocation::Invocation;
use crate::error::Result;
use crate::store::layout::WorkspaceId;
use crate::store::metadata::Record;
use crate::store::timestamp::Timestamp;
use crate::ui::output;
use crate::ui::report;
use crate::ui::status_table::{self, Columns};
use crate::ui::Ui;
use crate::workspace::details::{self, ChangeCounts, Extra};
use crate::workspace::inventory::{self, Entry, Problem};

/// Show the workspaces of this repository, or one workspace's record and history.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Show only this workspace, with its run history
    #[arg(value_parser = WorkspaceId::from_arg)]
    pub id: Option<WorkspaceId>,
    /// Print JSON (schema_version 1) instead of text
    #[arg(long)]
    pub json: bool,
    /// With ID and --json: print only the workspace's record (the shell script's JSON, its
    /// field names kept)
    #[arg(long, requires_all = ["id", "json"])]
    pub record: bool,
    /// Also measure disk usage (allocated bytes, hard links once) and the newest file time
    #[arg(long)]
    pub size: bool,
    /// Add each workspace's directory to the table
    #[arg(long, conflicts_with_all = ["id", "json"])]
    pub paths: bool,
    /// Redraw the table on this terminal until interrupted (Ctrl-C), with each run's time
    /// so far and last exit code
    #[arg(long, conflicts_with_all = ["id", "json", "size"])]
    pub watch: bool,
    /// With --watch: seconds between redraws (a decimal number from 0.05 to 3600)
    #[arg(long, value_name = "S", requires = "watch", allow_negative_numbers = true,
          value_parser = parse_interval, default_value = "1")]
    pub interval: std::time::Duration,
}

/// `--interval`: seconds, a decimal number from 0.05 to 3600.
fn parse_interval(text: &str) -> std::result::Result<std::time::Duration, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if (0.05..=3600.0).contains(&s) => Ok(std::time::Duration::from_secs_f64(s)),
        _ => Err(
            "give the seconds between redraws, a number from 0.05 to 3600 (such as 0.5 or 2)"
                .into(),
        ),
    }
}

pub(in crate::cli) fn cmd_status(inv: &Invocation, args: &StatusArgs) -> Result<i32> {
    let ui = inv.ui;
    let ctx = inv.context()?;
    super::settle(ui, &ctx)?;
    // The table alone (no option) may be the one kept for this namespace.
    let plain = args.id.is_none() && !args.json && !args.size && !args.paths && !args.watch;
    let began = plain.then(|| super::status_kept::begin(&ctx));
    if let Some(kept) = plain.then(|| super::status_kept::answer(&ctx)).flatten() {
        print_table(ui, kept.table, kept.behind, kept.plain)?;
        if !kept.hints.is_empty() {
            ui.note(kept.hints.trim_end_matches('\n'));
        }
        return Ok(0);
    }
    let (mut entries, warning) = match &args.id {
        Some(id) => {
            let (entry, warning) = inventory::one(&ctx, id);
            let entry =
                entry.ok_or_else(|| crate::workspace::unknown(id, &ctx.layout.workspace(id)))?;
            (vec![entry], warning)
        }
        // The table shows no run history: its records may come from the namespace's kept
        // ones. `--json` prints whole records, read from their files.
        None if !args.json => inventory::table(&ctx),
        None => inventory::all(&ctx),
    };
    if let Some(warning) = &warning {
        ui.warning(format!(
            "could not ask the backend which workspaces it knows: {}",
            warning.message
        ));
        if let Some(hint) = &warning.hint {
            ui.hint(hint);
        }
    }
    crate::workspace::land::follow(&ctx, &mut entries);
    let extra = details::measure(&ctx, &entries, args.id.is_some(), args.size);
    if args.record {
        return print_record(ui, &entries[0]);
    }
    let text = render(&entries, &extra, args);
    if let Some(began) = &began {
        match warning {
            None => super::status_kept::keep(&ctx, began, &entries, &extra, &text),
            Some(_) => crate::store::kept_table::forget(&ctx.layout.cache()),
        }
    }
    if args.id.is_none() && !args.json {
        print_table(ui, text, status_table::any_behind(&extra), false)?;
    } else {
        ui.data(&text)?;
    }
    if !args.json {
        print_hints(ui, &entries);
    }
    Ok(0)
}

/// Prints the table `text` (its status column coloured), then with `behind` what the `*`
/// means; `plain`: the text is known to be printable ASCII lines.
fn print_table(ui: &Ui, text: String, behind: bool, plain: bool) -> Result<()> {
    // What agents wrote (workflow names, say) is escaped before anything is styled.
    let text = output::escape_controls(&text).into_owned();
    // Without colour the escapes would only be stripped again: none are added, and the
    // text stays as it is (line by line, it would be the same unless a line ends in `\r`).
    let colour = ui.colour();
    match (
        colour || text.contains('\r') || !text.ends_with('\n'),
        plain,
    ) {
        (true, _) => ui.styled_data(&output::style_second_column(&text, |status| {
            colour.then(|| status_table::status_style(status)).flatten()
        }))?,
        // Printable ASCII holds no escape to strip: printed as it is.
        (false, true) => ui.data(&text)?,
        (false, false) => ui.styled_data(&text)?,
    }
    // What the `*` means, for a person (scripts read `--json`).
    if behind {
        ui.note_for_person(status_table::BEHIND_NOTE);
    }
    Ok(())
}

/// `status <ID> --json --record`: the record alone (as the shell script printed it), or an
/// error when the workspace has none.
fn print_record(ui: &Ui, entry: &Entry) -> Result<i32> {
    let text = match (&entry.record, &entry.raw) {
        (Some(record), _) => pretty(record),
        (None, Some(raw)) => pretty(raw),
        (None, None) => {
            return Err(crate::error::CliError::failure(format!(
                "workspace {:?} has no record ({})",
                entry.id,
                entry.problem.as_ref().map_or("none", Problem::code)
            ))
            .hint(match &entry.problem {
                Some(problem) => report::problem_hint(problem, entry),
                None => format!("`agent-workspace status {}` shows what is known", entry.id),
            }))
        }
    };
    ui.data(&text)?;
    Ok(0)
}

/// The table, one workspace's view, or the JSON of either.
fn render(entries: &[Entry], extra: &[Extra], args: &StatusArgs) -> String {
    let mut out = String::new();
    match (&args.id, args.json) {
        (Some(_), true) => {
            let mut one = WorkspaceJson::with(&entries[0], &extra[0]);
            one.schema_version = Some(1);
            out = pretty(&one);
        }
        (None, true) => {
            let workspaces = entries
                .iter()
                .zip(extra)
                .map(|(e, x)| WorkspaceJson::with(e, x))
                .collect();
            out = pretty(&StatusJson {
                schema_version: 1,
                workspaces,
            });
        }
        (Some(_), false) => describe(&entries[0], &extra[0], &mut out),
        (None, false) => {
            let columns = Columns {
                size: args.size,
                changes: true,
                paths: args.paths,
                ..Columns::default()
            };
            status_table::table(entries, extra, columns, &mut out)
        }
    }
    out
}

/// What to do about each workspace with a problem, on stderr.
fn print_hints(ui: &Ui, entries: &[Entry]) {
    let hints: Vec<(&str, String)> = entries
        .iter()
        .filter_map(|e| Some((e.id.as_str(), report::problem_hint(e.problem.as_ref()?, e))))
        .collect();
    let hints = super::status_kept::hints(hints.iter().map(|(id, h)| (*id, Some(h.as_str()))));
    if !hints.is_empty() {
        ui.note(hints.trim_end_matches('\n'));
    }
}

/// `status --json`: every workspace of the namespace.
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(in crate::cli) struct StatusJson<'a> {
    schema_version: u64,
    workspaces: Vec<WorkspaceJson<'a>>,
}

/// One workspace in `status --json` (and `status ID --json` alone).
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(in crate::cli) struct WorkspaceJson<'a> {
    /// `status <ID> --json` alone: the version of this object's schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    schema_version: Option<u64>,
    workspace_id: &'a str,
    status: &'a str,
    #[cfg_attr(test, schemars(extend("enum" = ["idle", "running", "done", "error", "interrupted", null])))]
    recorded_status: Option<&'a str>,
    workflow: Option<&'a str>,
    #[cfg_attr(test, schemars(extend("enum" = ["jj", "git", null])))]
    backend: Option<&'a str>,
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    updated_at: Option<Timestamp>,
    path: &'a std::path::Path,
    #[cfg_attr(
        test,
        schemars(extend("enum" = [null, "crashed", "missing-directory", "unregistered", "corrupt-metadata", "missing-metadata", "newer-schema", "not-a-directory", "tampered-record", "backend-mismatch", "branch-mismatch", "renamed"]))
    )]
    problem: Option<&'static str>,
    hint: Option<String>,
    /// Whether the land the status shows was checked against its target now: `verified`,
    /// `undone` (the status is then the run's), `unchecked`; null when no land is shown.
    #[cfg_attr(test, schemars(extend("enum" = [null, "verified", "undone", "unchecked"])))]
    land_state: Option<&'static str>,
    /// The workspace this one was started from (`run --parent`).
    parent: Option<&'a str>,
    /// Whether that parent is gone.
    orphaned: bool,
    /// The whole record (for a missing directory, the one agent-workspace still keeps), or a
    /// newer schema's raw JSON, or null.
    record: Option<RecordJson<'a>>,
    /// `--size`: allocated bytes, hard links counted once.
    #[serde(skip_serializing_if = "Option::is_none")]
    size_bytes: Option<u64>,
    /// `--size`: the newest modification time of its files.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    newest_mtime: Option<Timestamp>,
    /// Its changes since its base (the numbers of `diff --stat`); absent when there is no
    /// directory and record to compare.
    #[serde(skip_serializing_if = "Option::is_none")]
    changes: Option<&'a ChangeCounts>,
    /// Why its changes could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    changes_error: Option<&'a str>,
    /// `status <ID>`: the newest of its record's update and (with `--size`) its files' times.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    last_activity: Option<&'a Timestamp>,
}

/// The record in `status --json`: this schema's, or a newer one's as read (foreign data this
/// build has no type for, printed as is).
#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(untagged)]
enum RecordJson<'a> {
    Known(&'a Record),
    Newer(&'a serde_json::Value),
}

impl<'a> WorkspaceJson<'a> {
    fn with(entry: &'a Entry, extra: &'a Extra) -> Self {
        let mut json = WorkspaceJson::from(entry);
        json.size_bytes = extra.usage.map(|u| u.allocated);
        json.newest_mtime = extra.usage.and_then(|u| u.newest).map(Timestamp::from_time);
        match &extra.changes {
            Some(Ok(c)) => json.changes = Some(c),
            Some(Err(err)) => json.changes_error = Some(&err.message),
            None => {}
        }
        json.last_activity = extra.last_activity.as_ref();
        json
    }
}

impl<'a> From<&'a Entry> for WorkspaceJson<'a> {
    fn from(entry: &'a Entry) -> Self {
        let record = match (entry.known_record(), &entry.raw) {
            (Some(record), _) => Some(RecordJson::Known(record)),
            (None, Some(raw)) => Some(RecordJson::Newer(raw)),
            _ => None,
        };
        // A newer schema's fields are shown when they are the strings this one knows.
        let newer = |key: &str| entry.raw.as_ref()?.get(key)?.as_str();
        let known = entry.known_record();
        WorkspaceJson {
            schema_version: None,
            workspace_id: &entry.id,
            status: entry.status(),
            recorded_status: known.map(|r| r.status.as_str()).or_else(|| newer("status")),
            workflow: match known {
                Some(r) => r.workflow.as_deref(),
                None => newer("workflow"),
            },
            backend: known
                .map(|r| r.backend.as_str())
                .or_else(|| newer("backend")),
            updated_at: entry.shown_updated_at(),
            path: &entry.path,
            problem: entry.problem.as_ref().map(Problem::code),
            land_state: entry
                .record
                .as_ref()
                .and_then(|r| r.shown_land().map(|_| r.land_check.as_str())),
            hint: entry
                .problem
                .as_ref()
                .map(|p| report::problem_hint(p, entry)),
            parent: status_table::parent(entry).map(|(p, _)| p),
            orphaned: status_table::parent(entry).is_some_and(|(_, gone)| gone),
            record,
            size_bytes: None,
            newest_mtime: None,
            changes: None,
            changes_error: None,
            last_activity: None,
        }
    }
}

fn pretty(value: &impl Serialize) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

fn describe(entry: &Entry, extra: &Extra, out: &mut String) {
    use std::fmt::Write as _;
    let mut field = |name: &str, value: &str| {
        let _ = writeln!(out, "{name:<14}{value}");
    };
    field("workspace", &entry.id);
    field("status", entry.status());
    field("path", &entry.path.display().to_string());
    if let Some(problem) = &entry.problem {
        field("problem", problem.code());
    }
    let Some(r) = entry.known_record() else {
        return;
    };
    if entry.record.is_none() {
        field(
            "record",
            "as agent-workspace keeps it (the directory is gone)",
        );
    }
    if let (Some(ns), "not-started") = (&r.not_started, entry.status()) {
        field("not started", &format!("{} ({})", ns.reason, ns.at));
    }
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    field("workflow", &opt(&r.workflow));
    field("backend", r.backend.as_str());
    if let Some(branch) = &r.branch {
        field("branch", branch);
    }
    if r.parent.is_some() {
        field("parent", &status_table::parent_text(entry));
    }
    field("repo", &r.repo_root.display().to_string());
    field("base", &opt(&r.base_change));
    field("command", &shell_words(&r.command));
    let code = r.exit_code.map_or("-".into(), |c| c.to_string());
    match r.limit_hit {
        Some(hit) => field(
            "exit code",
            &format!("{code} ({})", crate::ui::report::limit_hit_words(hit)),
        ),
        None => field("exit code", &code),
    }
    field("created", &r.created_at.to_string());
    field("updated", &r.updated_at.to_string());
    field(
        "direnv",
        if r.direnv_allowed {
            "allowed"
        } else {
            "not used"
        },
    );
    field("sandbox", &crate::ui::report::sandbox(r.sandbox.as_ref()));
    if !r.refused_hosts.is_empty() {
        field(
            "refused hosts",
            &crate::ui::report::refused_hosts(&r.refused_hosts),
        );
    }
    if let Some(limits) = r.sandbox.as_ref().and_then(|s| s.limits.as_ref()) {
        field("limits", &crate::ui::report::limits(limits));
    }
    if let Some(land) = &r.land {
        field("last land", &land_text(r, land));
    }
    out.push_str(&crate::ui::report::describe_details(
        extra.changes.as_ref(),
        extra.last_activity.as_ref(),
        extra.usage.as_ref(),
    ));
    if r.runs.is_empty() {
        return;
    }
    out.push_str("\nRUNS\n");
    let header = [
        "STARTED",
        "STATUS",
        "EXIT",
        "DURATION",
        "WORKFLOW",
        "CHECKPOINT",
        "COMMAND",
    ]
    .map(String::from);
    let rows = r.runs.iter().rev().map(|run| {
        [
            run.started_at.to_string(),
            run.status.as_str().to_string(),
            run.exit_code.map_or("-".into(), |c| c.to_string()),
            run.duration_ms
                .map_or("-".into(), |ms| format!("{:.1}s", ms as f64 / 1000.0)),
            run.workflow.clone().unwrap_or_else(|| "-".into()),
            run.checkpoint
                .as_ref()
                .map_or("-".into(), |c| c.commit.chars().take(12).collect()),
            shell_words(&run.command),
        ]
    });
    let all = std::iter::once(header).chain(rows);
    // The CHECKPOINT column only where some run made one (`run --checkpoint`).
    match r.runs.iter().any(|run| run.checkpoint.is_some()) {
        true => output::columns(all, out),
        false => output::columns(all.map(|[a, b, c, d, e, _, g]| [a, b, c, d, e, g]), out),
    }
}

/// `landed onto default@ at <time>`, and whether that land is what the status shows:
/// `verified` (still in its target), `undone`, or `before the last run`.
fn land_text(
    record: &crate::store::metadata::Record,
    land: &crate::store::metadata::Land,
) -> String {
    let state = match record.shown_land() {
        Some(_) => record.land_check.as_str(),
        None => "before the last run",
    };
    let recovered = if land.recovered {
        ", recorded after the land was interrupted"
    } else {
        ""
    };
    format!(
        "{} onto {} at {} ({state}{recovered})",
        land.outcome.as_str(),
        land.target,
        land.at
    )
}

fn shell_words(argv: &[String]) -> String {
    if argv.is_empty() {
        return "-".into();
    }
    let words: Vec<String> = argv
        .iter()
        .map(|a| crate::exec::process::quote(a))
        .collect();
    words.join(" ")
}
