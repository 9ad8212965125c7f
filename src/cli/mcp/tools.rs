//! The server's tools: what each takes (its input type, whose schema is derived from it),
//! what it returns (the schema of the CLI's `--json` output for the same action, read from
//! `schema/`), and the command line it becomes.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `workspace_create`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(in crate::cli) struct CreateInput {
    /// Workspace id: 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit
    pub id: String,
    /// Start the new workspace on a new commit on top of this revision
    pub base_change: Option<String>,
    /// Start the new workspace from this workspace's exact current state
    pub parent: Option<String>,
    /// Workflow name recorded with the workspace and its runs
    pub workflow: Option<String>,
}

/// `workspace_run`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(in crate::cli) struct RunInput {
    /// Workspace id (created when missing, like `agent-workspace run`)
    pub id: String,
    /// The command and its arguments, run directly (no shell)
    pub command: Vec<String>,
    /// Workflow name recorded with the workspace and its runs
    pub workflow: Option<String>,
    /// Interrupt the command after this many seconds (recorded interrupted)
    pub timeout_s: Option<u64>,
    /// Confine the command with bubblewrap (always on when the server was started with
    /// --sandbox or the configuration sets sandbox.enabled; false cannot turn it off)
    pub sandbox: Option<bool>,
    /// With the sandbox: remove the network (only loopback remains)
    pub no_network: Option<bool>,
}

/// `workspace_status`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(in crate::cli) struct StatusInput {
    /// One workspace's record and history; every workspace when absent
    pub id: Option<String>,
}

/// `workspace_diff`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(in crate::cli) struct DiffInput {
    /// Workspace id
    pub id: String,
    /// Also give the patch (in the text content)
    pub patch: Option<bool>,
}

/// `workspace_checkpoint`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(in crate::cli) struct CheckpointInput {
    /// Workspace id
    pub id: String,
    /// The checkpoint's description
    pub message: Option<String>,
}

/// Which side wins a conflicting hunk in a land.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(in crate::cli) enum Prefer {
    Workspace,
    Target,
}

/// `workspace_land`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(in crate::cli) struct LandInput {
    /// Workspace id
    pub id: String,
    /// Say what would land where, changing nothing (allowed without --allow-land)
    pub dry_run: Option<bool>,
    /// Resolve conflicting hunks with this side
    pub prefer: Option<Prefer>,
    /// Land onto this revision (jj) or branch (git) instead of the main working copy
    pub onto: Option<String>,
}

/// `workspace_clean`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(in crate::cli) struct CleanInput {
    /// Workspace id
    pub id: String,
    /// Say what would be removed, changing nothing
    pub dry_run: Option<bool>,
}

/// `workspace_run`'s result: how the command ended and the end of its output.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(in crate::cli) struct RunJson {
    pub schema_version: u64,
    pub workspace_id: String,
    /// The command's exit code (128 + N when signal N ended it).
    pub exit_code: i32,
    /// The run's status as recorded: `done`, `error` or `interrupted` (cancelled, timed out).
    pub status: String,
    /// Whether the call's `timeout_s` ended it.
    pub timed_out: bool,
    /// The last 64 KiB of the command's standard output (lossy UTF-8).
    pub stdout: String,
    /// The last 64 KiB of its standard error (lossy UTF-8).
    pub stderr: String,
    /// Whether either stream was longer than what is given here.
    pub truncated: bool,
    /// The file holding both streams whole, as they came.
    pub log: Option<String>,
}

/// The tools, in the order they are listed.
pub(in crate::cli) fn all() -> Vec<Tool> {
    vec![
        tool::<CreateInput>(
            "workspace_create",
            "Make a workspace ready (or reattach it) without running a command: its own working copy of this repository, on its own commit",
            CREATE,
        ),
        tool::<RunInput>(
            "workspace_run",
            "Run a command in a workspace, creating it when missing; gives its exit code, its status and the end of its output (the whole output in a log file); progress is reported while it runs and cancelling the call interrupts it",
            RUN,
        ),
        tool::<StatusInput>(
            "workspace_status",
            "Show this repository's workspaces, or one workspace's record and run history",
            STATUS,
        )
        .annotate(ToolAnnotations::new().read_only(true)),
        tool::<DiffInput>(
            "workspace_diff",
            "Show what a workspace changed since it was created: its commits and its files, latest edits included",
            DIFF,
        )
        .annotate(ToolAnnotations::new().read_only(true)),
        tool::<CheckpointInput>(
            "workspace_checkpoint",
            "Record a workspace's current state as a commit of its own and keep working on top of it",
            CHECKPOINT,
        ),
        tool::<LandInput>(
            "workspace_land",
            "Bring a workspace's commits onto the main working copy (or --onto's target), its unrecorded edits recorded first; refused unless the server allows landing, except a dry run",
            LAND,
        )
        .annotate(ToolAnnotations::new().destructive(true)),
        tool::<CleanInput>(
            "workspace_clean",
            "Remove a workspace, keeping its edits in the repository",
            CLEAN,
        )
        .annotate(ToolAnnotations::new().destructive(true)),
    ]
}

// The CLI's `--json` schemas, generated from its report types (src/cli/schemas.rs).
const CREATE: &str = include_str!("../../../schema/create.schema.json");
const RUN: &str = include_str!("../../../schema/mcp-run.schema.json");
const STATUS_ALL: &str = include_str!("../../../schema/status.schema.json");
const STATUS_ONE: &str = include_str!("../../../schema/status-workspace.schema.json");
const STATUS: &str = "status";
const DIFF: &str = include_str!("../../../schema/diff.schema.json");
const CHECKPOINT: &str = include_str!("../../../schema/checkpoint.schema.json");
const LAND: &str = include_str!("../../../schema/land.schema.json");
const CLEAN: &str = include_str!("../../../schema/clean.schema.json");

fn tool<T: JsonSchema + 'static>(
    name: &'static str,
    description: &'static str,
    output: &str,
) -> Tool {
    let input = rmcp::handler::server::common::schema_for_type::<T>();
    Tool::new(name, description, input).with_raw_output_schema(Arc::new(output_schema(output)))
}

/// A tool's output schema: the CLI's schema as its file holds it; `workspace_status` gives
/// either of two documents, so its schema is one or the other, each kept whole (their
/// `$id`s keep each one's `$ref`s inside it).
fn output_schema(text: &str) -> JsonObject {
    let parse = |text: &str| -> serde_json::Value {
        // The schemas are checked in and tested to be JSON (src/cli/schemas.rs).
        serde_json::from_str(text).unwrap_or_default()
    };
    if text == STATUS {
        let mut schema = JsonObject::new();
        schema.insert("type".into(), "object".into());
        schema.insert(
            "anyOf".into(),
            serde_json::Value::Array(vec![parse(STATUS_ALL), parse(STATUS_ONE)]),
        );
        return schema;
    }
    match parse(text) {
        serde_json::Value::Object(schema) => schema,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    /// Every tool's input and output schema is an object schema, as MCP requires, and the
    /// output schemas read from `schema/` parsed.
    #[test]
    fn every_tool_has_object_schemas() {
        for tool in super::all() {
            assert_eq!(
                tool.input_schema.get("type"),
                Some(&"object".into()),
                "{}",
                tool.name
            );
            let output = tool.output_schema.expect("an output schema");
            assert_eq!(output.get("type"), Some(&"object".into()), "{}", tool.name);
            assert!(output.len() > 1, "{}: {output:?}", tool.name);
        }
    }
}
