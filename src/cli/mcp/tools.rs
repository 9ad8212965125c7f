//! The server's tools: what each takes (its input type, whose schema is derived from it) and
//! what it returns (an outline of the schema of the CLI's `--json` output for the same
//! action, read from `schema/`), and the documents only the server gives.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

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
    /// Most bytes of output to give, stdout and stderr together, their ends kept (default
    /// 16384, at most 262144; the log holds it all)
    pub max_output_bytes: Option<usize>,
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
    /// Stop a live run first; keep aside whole a workspace the backend no longer knows
    pub force: Option<bool>,
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
    /// The end of the command's standard output (lossy UTF-8), within `max_output_bytes`
    /// with `stderr`.
    pub stdout: String,
    /// The end of its standard error (lossy UTF-8).
    pub stderr: String,
    /// Whether either stream was longer than what is given here.
    pub truncated: bool,
    /// How many bytes were cut from the start of the standard output.
    pub stdout_cut_bytes: u64,
    /// How many bytes were cut from the start of the standard error.
    pub stderr_cut_bytes: u64,
    /// The file holding both streams whole, as they came.
    pub log: Option<String>,
}

/// `workspace_status`'s answer without an id: a row per workspace, what picking one needs
/// (`status <ID> --json`'s document, which `workspace_status` gives with an id, has the rest).
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(in crate::cli) struct StatusRowsJson {
    pub schema_version: u64,
    pub workspaces: Vec<StatusRow>,
}

/// One workspace in `workspace_status`'s list.
#[derive(Debug, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(in crate::cli) struct StatusRow {
    pub workspace_id: String,
    /// As `status` shows it: `idle`, `running`, `done`, `error`, `interrupted`, `landed`, or a
    /// problem's name.
    pub status: String,
    /// Its changes since its base, as `N files +ADDED -REMOVED` (and `, N commits` when it
    /// made commits, ` (may be behind)` when read from jj's snapshot taken before its last
    /// run ended); absent when they could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<String>,
    /// When its record last changed.
    #[cfg_attr(test, schemars(regex(pattern = crate::store::metadata::TIMESTAMP_PATTERN)))]
    pub updated_at: Option<String>,
    /// The workspace it was started from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Whether the land its status shows was checked: `verified`, `undone`, `unchecked`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub land_state: Option<String>,
    /// What is wrong with it, and what to do (a tool to call).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// Marks changes read from a jj snapshot older than the workspace's last run.
pub(in crate::cli) const BEHIND: &str = " (may be behind)";

impl StatusRow {
    /// The row of one workspace of `status --json`'s document.
    pub(in crate::cli) fn of(ws: &serde_json::Value) -> StatusRow {
        let text = |key: &str| ws[key].as_str().map(str::to_string);
        let changes = ws.get("changes").map(|c| {
            let count = |key: &str| c[key].as_u64().unwrap_or(0);
            let files = count("files_count");
            let mut text = format!(
                "{files} file{} +{} -{}",
                if files == 1 { "" } else { "s" },
                count("added"),
                count("removed")
            );
            match c["commits"].as_array().map_or(0, Vec::len) {
                0 => {}
                1 => text.push_str(", 1 commit"),
                n => text.push_str(&format!(", {n} commits")),
            }
            if c["may_be_behind"] == true {
                text.push_str(BEHIND);
            }
            text
        });
        StatusRow {
            workspace_id: text("workspace_id").unwrap_or_default(),
            status: text("status").unwrap_or_default(),
            changes,
            updated_at: text("updated_at"),
            parent: text("parent"),
            land_state: text("land_state"),
            problem: text("problem"),
            hint: text("hint"),
        }
    }
}

/// The tools, in the order they are listed.
pub(in crate::cli) fn all() -> Vec<Tool> {
    vec![
        tool::<CreateInput>(
            "workspace_create",
            "Make a workspace (its own working copy of this repository) ready without running anything",
            &[("create", CREATE)],
        ),
        tool::<RunInput>(
            "workspace_run",
            "Run a command in a workspace, creating it when missing: its exit code and the end of its output (all of it in a log); cancelling interrupts it",
            &[("mcp-run", RUN)],
        ),
        tool::<StatusInput>(
            "workspace_status",
            "List the workspaces, a row each; with id, that workspace's record and run history",
            &[("mcp-status", STATUS_ROWS), ("status-workspace", STATUS_ONE)],
        )
        .annotate(ToolAnnotations::new().read_only(true)),
        tool::<DiffInput>(
            "workspace_diff",
            "What a workspace changed since it was made: its commits and files",
            &[("diff", DIFF)],
        )
        .annotate(ToolAnnotations::new().read_only(true)),
        tool::<CheckpointInput>(
            "workspace_checkpoint",
            "Record a workspace's current state as a commit and keep working on top of it",
            &[("checkpoint", CHECKPOINT)],
        ),
        tool::<LandInput>(
            "workspace_land",
            "Bring a workspace's work onto the main working copy (or onto); needs a server started with --allow-land, except a dry run",
            &[("land", LAND)],
        )
        .annotate(ToolAnnotations::new().destructive(true)),
        tool::<CleanInput>(
            "workspace_clean",
            "Remove a workspace, keeping its edits in the repository",
            &[("clean", CLEAN)],
        )
        .annotate(ToolAnnotations::new().destructive(true)),
    ]
}

// The CLI's `--json` schemas, generated from its report types (src/cli/schemas.rs).
const CREATE: &str = include_str!("../../../schema/create.schema.json");
const RUN: &str = include_str!("../../../schema/mcp-run.schema.json");
const STATUS_ROWS: &str = include_str!("../../../schema/mcp-status.schema.json");
const STATUS_ONE: &str = include_str!("../../../schema/status-workspace.schema.json");
const DIFF: &str = include_str!("../../../schema/diff.schema.json");
const CHECKPOINT: &str = include_str!("../../../schema/checkpoint.schema.json");
const LAND: &str = include_str!("../../../schema/land.schema.json");
const CLEAN: &str = include_str!("../../../schema/clean.schema.json");

fn tool<T: JsonSchema + 'static>(
    name: &'static str,
    description: &'static str,
    outputs: &[(&str, &str)],
) -> Tool {
    // What only a Rust reader needs (the dialect, the type's name and doc) is left out.
    let mut input = (*rmcp::handler::server::common::schema_for_type::<T>()).clone();
    for key in ["$schema", "title", "description"] {
        input.remove(key);
    }
    Tool::new(name, description, Arc::new(input))
        .with_raw_output_schema(Arc::new(output_schema(outputs)))
}

/// A tool's output schema, kept small (every client puts the list in a model's context): the
/// top-level fields of its documents and their types, naming the whole schema under
/// `schema/` by file. `workspace_status` gives either of two documents: the fields of both.
fn output_schema(outputs: &[(&str, &str)]) -> JsonObject {
    let mut properties = JsonObject::new();
    for (_, text) in outputs {
        // The schemas are checked in and tested to be JSON (src/cli/schemas.rs).
        let full: Value = serde_json::from_str(text).unwrap_or_default();
        let Some(Value::Object(fields)) = full.get("properties") else {
            continue;
        };
        for (name, field) in fields {
            let brief = match field.get("const") {
                Some(value) => json!({"const": value}),
                None => match types(&full, field) {
                    Some(types) => json!({"type": types}),
                    None => json!({}),
                },
            };
            properties.entry(name.clone()).or_insert(brief);
        }
    }
    let files: Vec<String> = outputs
        .iter()
        .map(|(name, _)| format!("schema/{name}.schema.json"))
        .collect();
    let mut schema = JsonObject::new();
    schema.insert("type".into(), "object".into());
    schema.insert(
        "description".into(),
        format!("Whole schema: {}", files.join(" or ")).into(),
    );
    schema.insert("properties".into(), Value::Object(properties));
    schema
}

/// The JSON types `field` may have (following a local `$ref` and the branches of an `anyOf`
/// or `oneOf`); None when that is not said simply.
fn types(root: &Value, field: &Value) -> Option<Value> {
    if let Some(types) = field.get("type") {
        return Some(types.clone());
    }
    if let Some(target) = field.get("$ref").and_then(Value::as_str) {
        let path = target.strip_prefix('#')?;
        return types(root, root.pointer(path)?);
    }
    let branches = field
        .get("anyOf")
        .or_else(|| field.get("oneOf"))?
        .as_array()?;
    let mut all: Vec<Value> = vec![];
    for branch in branches {
        let some = match types(root, branch)? {
            Value::Array(some) => some,
            one => vec![one],
        };
        for one in some {
            if !all.contains(&one) {
                all.push(one);
            }
        }
    }
    Some(match all.len() {
        1 => all.remove(0),
        _ => Value::Array(all),
    })
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
