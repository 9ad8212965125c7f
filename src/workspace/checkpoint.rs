//! A checkpoint: the workspace's current state recorded as a commit of its own, numbered and
//! described after the workspace, with the working copy continuing on top of it.

use crate::error::Result;
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

/// Records the state of the workspace of `record` as checkpoint N (the count of its
/// checkpoints so far, plus one), described `[workspace <id>] <message>`, by default
/// `checkpoint N`. Counts it in `record` (which the caller saves) when a commit was made.
pub(crate) fn checkpoint(
    ctx: &Context,
    record: &mut Record,
    message: Option<&str>,
) -> Result<Checkpointed> {
    let number = record.checkpoints + 1;
    let message = match message {
        Some(m) => m.to_string(),
        None => format!("checkpoint {number}"),
    };
    let id = record.workspace_id.clone();
    let description = format!("[workspace {id}] {message}");
    let recorded = ctx
        .vcs
        .checkpoint(&id, &record.workspace_path, &description)?;
    if recorded.commit.is_some() {
        record.checkpoints = number;
    }
    Ok(Checkpointed {
        number,
        description,
        recorded,
    })
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
