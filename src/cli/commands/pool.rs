//! `pool fill|status|drain`: the pool of prepared workspaces new runs take (`pool.size`).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde::Serialize;

use crate::cli::invocation::Invocation;
use crate::config::MAX_POOL;
use crate::error::{CliError, Result};
use crate::store::timestamp::Timestamp;
use crate::ui::output;
use crate::ui::Ui;
use crate::workspace::context::Context;
use crate::workspace::pool::{self, fill, State};

/// Prepare workspaces ahead of time, so a new run takes one instead of checking out.
#[derive(Debug, Args)]
pub struct PoolArgs {
    #[command(subcommand)]
    pub action: PoolAction,
}

#[derive(Debug, Subcommand)]
pub enum PoolAction {
    /// Prepare workspaces until N are ready (default: pool.size), waiting for a fill under way
    #[command(after_long_help = crate::cli::help::POOL_FILL)]
    Fill(FillArgs),
    /// List the prepared workspaces and whether a fill is under way
    #[command(after_long_help = crate::cli::help::POOL_STATUS)]
    Status(JsonArg),
    /// Remove every prepared workspace (a fill under way is waited for)
    #[command(after_long_help = crate::cli::help::POOL_DRAIN)]
    Drain(JsonArg),
    /// Fill to pool.size in the background, unless a fill is under way (started by `run`)
    #[command(hide = true)]
    Refill,
}

#[derive(Debug, Args)]
pub struct FillArgs {
    /// How many prepared workspaces to have ready (at most 64)
    pub count: Option<usize>,
    /// Run the setup command of the repository's configuration file even if that file
    /// differs from the one at the default base revision
    #[arg(long)]
    pub trust_config: bool,
    #[command(flatten)]
    pub json: JsonArg,
}

#[derive(Debug, Args)]
pub struct JsonArg {
    /// Print JSON (schema_version 1) instead of text
    #[arg(long)]
    pub json: bool,
}

pub(in crate::cli) fn cmd_pool(inv: &Invocation, args: &PoolArgs) -> Result<i32> {
    let ui = inv.ui;
    crate::exec::signals::install();
    let mut ctx = inv.context()?;
    ctx.layout.ensure(&ctx.repo)?;
    match &args.action {
        PoolAction::Fill(fill) => {
            let progress = ui.progress("pool");
            ctx.progress = progress.progress();
            cmd_fill(ui, &ctx, fill)
        }
        PoolAction::Status(json) => cmd_status(ui, &ctx, json.json),
        PoolAction::Drain(json) => cmd_drain(ui, &ctx, json.json),
        PoolAction::Refill => cmd_refill(ui, &ctx),
    }
}

fn cmd_fill(ui: &Ui, ctx: &Context, args: &FillArgs) -> Result<i32> {
    let opts = fill::Options {
        target: fill_target(args.count, ctx.config.pool_size)?,
        wait: true,
        trust: args.trust_config,
    };
    let mut notes = vec![];
    let filled = fill::fill(ctx, &opts, &mut notes);
    ctx.progress.idle();
    ui.notes(&notes);
    let filled = filled?;
    let text = match args.json.json {
        true => json(&FillJson {
            schema_version: 1,
            prepared: &filled.prepared,
            removed: &filled.removed,
            ready: filled.ready,
        })?,
        false => fill_text(&filled),
    };
    ui.data(&text)?;
    Ok(0)
}

/// How many prepared workspaces `pool fill [COUNT]` aims for: the count, else pool.size.
fn fill_target(count: Option<usize>, size: usize) -> Result<usize> {
    match (count, size) {
        (Some(n), _) if n > MAX_POOL => Err(CliError::usage(format!(
            "cannot prepare {n} workspaces: the pool holds at most {MAX_POOL}"
        ))
        .hint(format!("pass a count of 1 to {MAX_POOL}"))),
        (Some(n), _) => Ok(n),
        (None, 0) => Err(CliError::usage("no pool size: pool.size is not configured").hint(
            "pass a count (`agent-workspace pool fill 2`), or set pool.size in agent-workspace.toml",
        )),
        (None, size) => Ok(size),
    }
}

fn fill_text(filled: &fill::Filled) -> String {
    let mut text = String::new();
    for path in &filled.removed {
        text.push_str(&format!("removed {}\n", path.display()));
    }
    for path in &filled.prepared {
        text.push_str(&format!("prepared {}\n", path.display()));
    }
    text.push_str(&format!(
        "{} ready\n",
        crate::ui::report::count(filled.ready, "prepared workspace")
    ));
    text
}

fn cmd_status(ui: &Ui, ctx: &Context, json_out: bool) -> Result<i32> {
    let (entries, filling) = pool::entries(ctx);
    let ready = entries.iter().filter(|e| e.state == State::Ready).count();
    let text = match json_out {
        true => json(&StatusJson {
            schema_version: 1,
            size: ctx.config.pool_size,
            ready,
            filling,
            entries: entries
                .iter()
                .map(|e| EntryJson {
                    path: &e.path,
                    state: e.state,
                    base_commits: e.ready.as_ref().map(|r| r.base_commits.as_slice()),
                    prepared_at: e.ready.as_ref().map(|r| &r.prepared_at),
                })
                .collect(),
        })?,
        false => status_text(&entries, ready, ctx.config.pool_size, filling),
    };
    ui.data(&text)?;
    Ok(0)
}

/// `pool status`'s text: a summary line, then one row per entry.
fn status_text(entries: &[pool::Entry], ready: usize, size: usize, filling: bool) -> String {
    let mut text = format!(
        "{ready} of pool.size {} ready{}\n",
        crate::ui::report::count(size, "prepared workspace"),
        if filling { "; a fill is under way" } else { "" }
    );
    let rows = entries.iter().map(|e| {
        let ready = e.ready.as_ref();
        [
            state_word(e.state).to_string(),
            e.path.display().to_string(),
            ready
                .and_then(|r| r.base_commits.first())
                .map_or("-".into(), |c| c.chars().take(12).collect()),
            ready.map_or("-".into(), |r| r.prepared_at.to_string()),
        ]
    });
    output::columns(rows, &mut text);
    text
}

fn cmd_drain(ui: &Ui, ctx: &Context, json_out: bool) -> Result<i32> {
    let removed = pool::drain(ctx)?;
    let text = match json_out {
        true => json(&DrainJson {
            schema_version: 1,
            removed: &removed,
        })?,
        false if removed.is_empty() => "no prepared workspaces to remove\n".to_string(),
        false => removed
            .iter()
            .map(|p| format!("removed {}\n", p.display()))
            .collect(),
    };
    ui.data(&text)?;
    Ok(0)
}

/// The background fill `run` starts after taking a prepared workspace: quiet, never waiting.
fn cmd_refill(ui: &Ui, ctx: &Context) -> Result<i32> {
    let opts = fill::Options {
        target: ctx.config.pool_size,
        wait: false,
        trust: false,
    };
    let mut notes = vec![];
    let filled = fill::fill(ctx, &opts, &mut notes)?;
    if filled.busy {
        ui.note("another fill is under way; leaving the pool to it");
    }
    Ok(0)
}

fn state_word(state: State) -> &'static str {
    match state {
        State::Ready => "ready",
        State::Stale => "stale",
        State::Preparing => "preparing",
        State::Incomplete => "incomplete",
    }
}

fn json<T: Serialize>(value: &T) -> Result<String> {
    serde_json::to_string_pretty(value)
        .map(|t| t + "\n")
        .map_err(|e| CliError::failure(format!("cannot print JSON: {e}")))
}

#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(in crate::cli) struct FillJson<'a> {
    schema_version: u32,
    prepared: &'a [PathBuf],
    removed: &'a [PathBuf],
    ready: usize,
}

#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(in crate::cli) struct StatusJson<'a> {
    schema_version: u32,
    size: usize,
    ready: usize,
    filling: bool,
    entries: Vec<EntryJson<'a>>,
}

#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
struct EntryJson<'a> {
    path: &'a std::path::Path,
    state: State,
    base_commits: Option<&'a [String]>,
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    prepared_at: Option<&'a Timestamp>,
}

#[derive(Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(in crate::cli) struct DrainJson<'a> {
    schema_version: u32,
    removed: &'a [PathBuf],
}
