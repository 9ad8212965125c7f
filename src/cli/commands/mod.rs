//! One module per subcommand.

pub(in crate::cli) mod checkpoint;
pub(in crate::cli) mod clean;
pub(in crate::cli) mod completions;
pub(in crate::cli) mod create;
pub(in crate::cli) mod diff;
pub(in crate::cli) mod doctor;
pub(in crate::cli) mod exec;
pub(in crate::cli) mod gc;
pub(in crate::cli) mod hook;
pub(in crate::cli) mod integrate;
pub(in crate::cli) mod land;
pub(in crate::cli) mod man;
pub(in crate::cli) mod mcp;
pub(in crate::cli) mod path;
pub(in crate::cli) mod pool;
pub(in crate::cli) mod run;
pub(in crate::cli) mod shell;
pub(in crate::cli) mod skill;
pub(in crate::cli) mod status;
mod status_kept;
pub(in crate::cli) mod status_watch;
pub(in crate::cli) mod sync_tools;

/// Finishes what interrupted commands left (a removal, a stale working copy's repair) and
/// says what it finished, before a command reads the workspaces.
pub(in crate::cli) fn settle(
    ui: &crate::ui::Ui,
    ctx: &crate::workspace::context::Context,
) -> crate::error::Result<()> {
    // Nothing a killed command leaves is there: no directory of thousands to list.
    if crate::workspace::settled::nothing_left(ctx) {
        return Ok(());
    }
    let finished = crate::workspace::remove::settle_interrupted(ctx)?;
    for line in crate::ui::report::settled(&finished) {
        ui.note(line);
    }
    finish_repairs(ui, ctx);
    Ok(())
}

/// Finishes the repairs of stale working copies that killed commands left, and says so.
pub(in crate::cli) fn finish_repairs(ui: &crate::ui::Ui, ctx: &crate::workspace::context::Context) {
    let repaired = crate::workspace::finish_interrupted_repairs(ctx);
    for line in crate::ui::report::repaired(&repaired) {
        ui.note(line);
    }
}
