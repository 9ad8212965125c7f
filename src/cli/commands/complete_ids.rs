//! `__complete-ids` (hidden): the workspace ids of the current repository, one a line, for
//! the completion scripts. Reads only the namespace directory: no backend call.

use crate::cli::global::GlobalArgs;
use crate::error::Result;
use crate::ui::Ui;
use crate::workspace::context::Context;
use crate::workspace::inventory;

pub(crate) fn cmd_complete_ids(ui: &Ui, global: &GlobalArgs) -> Result<i32> {
    let ctx = Context::open(global)?;
    let ids: String = inventory::directories(&ctx.layout.dir)
        .into_iter()
        .map(|(id, _, _)| id + "\n")
        .collect();
    ui.data(&ids)?;
    Ok(0)
}
