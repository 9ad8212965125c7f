//! A checkpoint: the workspace's current state recorded as a commit of its own, numbered and
//! described after the workspace, with the working copy continuing on top of it.

use crate::error::Result;
use crate::store::layout::WorkspaceId;
use crate::store::metadata::{Checkpoint, Record};
use crate::vcs::Recorded;
use crate::workspace::context::Context;

/// What a checkpoint did.
pub(crate) struct Checkpointed {
    /// Its number in the workspace (the next one when nothing was recorded).
    pub number: u64,
    pub description: String,
    pub recorded: Recorded,
}

impl Checkpointed {
    /// The commit made, as a run's history keeps it; `None` when nothing was recorded.
    pub(crate) fn commit(&self) -> Option<Checkpoint> {
        Some(Checkpoint {
            commit: self.recorded.commit.clone()?,
            change_id: self.recorded.change_id.clone(),
        })
    }
}

/// Records the state of workspace `id`, whose record is `record`, as checkpoint N (the count
/// of its checkpoints so far, plus one), described `[workspace <id>] <message>`, by default
/// `checkpoint N`. Counts it in `record` (which the caller saves) when a commit was made.
pub(crate) fn checkpoint(
    ctx: &Context,
    id: &WorkspaceId,
    record: &mut Record,
    message: Option<&str>,
) -> Result<Checkpointed> {
    let number = record.checkpoints + 1;
    let message = match message {
        Some(m) => m.to_string(),
        None => format!("checkpoint {number}"),
    };
    let description = format!("[workspace {id}] {message}");
    // What jj would fail on and git would leave out without a word: refused, said plainly.
    if let Some(first) = crate::store::deep::too_deep(&record.workspace_path)
        .unwrap_or_default()
        .first()
    {
        return Err(crate::workspace::error::WorkspaceError::NestedTooDeep {
            id: id.clone(),
            first: crate::store::deep::words(first),
        }
        .into());
    }
    reserve(record, number, number)?;
    let recorded = ctx.vcs.checkpoint(id, &record.workspace_path, &description);
    if !matches!(&recorded, Ok(r) if r.commit.is_some()) {
        // Nothing was committed: the number is free again.
        reserve(record, number, number - 1)?;
    }
    let recorded = recorded?;
    if recorded.commit.is_some() {
        record.checkpoints = number;
    }
    Ok(Checkpointed {
        number,
        description,
        recorded,
    })
}

/// The journal of a checkpoint's number: the saved record counts checkpoint `number` as
/// `count` (`number` before the commit is made, `number - 1` again when none was), so a
/// checkpoint SIGKILLed between its commit and the caller's save of the record leaves its
/// number taken and the next checkpoint never repeats it (a kill before the commit leaves
/// a number unused, never a number twice). Only the count of the record as saved changes;
/// a record that cannot be read as one is left to the caller.
fn reserve(record: &Record, number: u64, count: u64) -> Result<()> {
    let crate::store::metadata::Loaded::Ok(mut saved) =
        crate::store::metadata::load(&record.workspace_path)
    else {
        return Ok(());
    };
    let want = match count == number {
        true => saved.checkpoints.max(number),
        // Given back only while it is still this checkpoint's.
        false if saved.checkpoints == number => count,
        false => return Ok(()),
    };
    if want != saved.checkpoints {
        saved.checkpoints = want;
        crate::store::metadata::save(&saved)?;
    }
    Ok(())
}

/// The message of the checkpoint `run --checkpoint` makes after a run that ended with `code`:
/// `checkpoint N after run: <workflow or -> `<command>` exited <code>`.
pub(crate) fn run_message(record: &Record, code: i32) -> String {
    let command: Vec<String> = record
        .command
        .iter()
        .map(|a| crate::exec::process::quote(a))
        .collect();
    let mut command = command.join(" ").replace(['\n', '\r'], " ");
    if command.chars().count() > 200 {
        command = command.chars().take(199).collect::<String>() + "…";
    }
    format!(
        "checkpoint {} after run: {} `{command}` exited {code}",
        record.checkpoints + 1,
        record.workflow.as_deref().unwrap_or("-"),
    )
}
