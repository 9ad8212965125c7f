//! `status`: a table of the namespace's workspaces, or one workspace's record.

use std::io::Write;

use clap::Args;
use serde_json::json;

use crate::cli::GlobalArgs;
use crate::context::Context;
use crate::error::Result;
use crate::inventory::{self, Entry};
use crate::layout::validate_id;
use crate::output;

/// Show the workspaces of this repository, or one workspace's record and history.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Show only this workspace, with its run history
    pub id: Option<String>,
    /// Print JSON (schema_version 1) instead of text
    #[arg(long)]
    pub json: bool,
}

pub fn cmd_status(global: &GlobalArgs, args: &StatusArgs) -> Result<i32> {
    if let Some(id) = &args.id {
        validate_id(id)?;
    }
    let ctx = Context::open(global)?;
    let (entries, warning) = match &args.id {
        Some(id) => {
            let (entry, warning) = inventory::one(&ctx, id);
            let entry =
                entry.ok_or_else(|| crate::workspace::unknown(id, &ctx.layout.workspace(id)))?;
            (vec![entry], warning)
        }
        None => inventory::all(&ctx),
    };
    if let Some(warning) = warning {
        eprintln!(
            "Warning: could not ask the backend which workspaces it knows: {}",
            warning.message
        );
        if let Some(hint) = &warning.hint {
            eprintln!("Hint: {hint}");
        }
    }
    let mut out = String::new();
    match (&args.id, args.json) {
        (Some(_), true) => out = pretty(&entries[0].to_json()),
        (None, true) => {
            let list: Vec<_> = entries.iter().map(Entry::to_json).collect();
            out = pretty(&json!({ "schema_version": 1, "workspaces": list }));
        }
        (Some(_), false) => describe(&entries[0], &mut out),
        (None, false) => table(&entries, &mut out),
    }
    output::print(&out)?;
    if !args.json {
        let mut hints = String::new();
        for entry in &entries {
            if let Some(problem) = &entry.problem {
                hints += &format!("{}: {}\n", entry.id, problem.hint(&entry.id));
            }
        }
        let _ = std::io::stderr().write_all(hints.as_bytes());
    }
    Ok(0)
}

fn pretty(value: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

fn table(entries: &[Entry], out: &mut String) {
    let rows: Vec<[String; 6]> = entries
        .iter()
        .map(|e| {
            let record = e.record.as_ref();
            [
                e.id.clone(),
                e.status().to_string(),
                record
                    .and_then(|r| r.workflow.clone())
                    .unwrap_or_else(|| "-".into()),
                e.updated_at().unwrap_or("-").to_string(),
                record.map_or("-", |r| r.backend.as_str()).to_string(),
                e.path.display().to_string(),
            ]
        })
        .collect();
    let header = [
        "WORKSPACE",
        "STATUS",
        "WORKFLOW",
        "UPDATED",
        "BACKEND",
        "PATH",
    ]
    .map(String::from);
    output::columns(std::iter::once(header).chain(rows), out);
}

fn describe(entry: &Entry, out: &mut String) {
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
    let Some(r) = &entry.record else {
        return;
    };
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    field("workflow", &opt(&r.workflow));
    field("backend", r.backend.as_str());
    if let Some(branch) = &r.branch {
        field("branch", branch);
    }
    field("repo", &r.repo_root.display().to_string());
    field("base", &opt(&r.base_change));
    field("command", &shell_words(&r.command));
    field(
        "exit code",
        &r.exit_code.map_or("-".into(), |c| c.to_string()),
    );
    field("created", &r.created_at);
    field("updated", &r.updated_at);
    field(
        "direnv",
        if r.direnv_allowed {
            "allowed"
        } else {
            "not used"
        },
    );
    if r.runs.is_empty() {
        return;
    }
    out.push_str("\nRUNS\n");
    let header = [
        "STARTED", "STATUS", "EXIT", "DURATION", "WORKFLOW", "COMMAND",
    ]
    .map(String::from);
    let rows = r.runs.iter().rev().map(|run| {
        [
            run.started_at.clone(),
            run.status.as_str().to_string(),
            run.exit_code.map_or("-".into(), |c| c.to_string()),
            run.duration_ms
                .map_or("-".into(), |ms| format!("{:.1}s", ms as f64 / 1000.0)),
            run.workflow.clone().unwrap_or_else(|| "-".into()),
            shell_words(&run.command),
        ]
    });
    output::columns(std::iter::once(header).chain(rows), out);
}

fn shell_words(argv: &[String]) -> String {
    if argv.is_empty() {
        return "-".into();
    }
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
