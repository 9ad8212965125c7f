//! The JSON Schemas under `schema/` are generated from the types each `--json` output (and
//! the record) is serialized from, so a field added to an output changes its schema with it.
//! This test fails when a checked-in schema differs from what the types give;
//! `AGENT_WORKSPACE_WRITE_SCHEMAS=1 cargo test --lib schemas` writes them anew.

use std::path::{Path, PathBuf};

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{json, Value};

use super::commands::{
    checkpoint, clean, create, diff, doctor, gc, land, pool, status, sync_tools,
};
use crate::error::{ErrorJson, FailureJson};
use crate::store::metadata::Record;

/// The variable that makes the test write the schemas instead of comparing them.
const WRITE: &str = "AGENT_WORKSPACE_WRITE_SCHEMAS";

/// Every schema: its file name under `schema/`, its title, and its text.
fn schemas() -> Vec<(&'static str, String)> {
    vec![
        schema::<checkpoint::CheckpointJson>(
            "checkpoint",
            "checkpoint <ID> --json: the checkpoint made (or why none was)",
        ),
        schema::<clean::CleanJson>("clean", "clean --json: what was removed, skipped and failed"),
        schema::<clean::PurgeJson>(
            "clean-purge",
            "clean --purge-kept --json: the kept-aside directories deleted (or that would be, with --dry-run)",
        ),
        schema::<create::CreateJson>(
            "create",
            "create <ID> --json: the workspace made ready (or reattached)",
        ),
        schema::<diff::DiffJson>("diff", "diff <ID> --json: what a workspace changed since its base"),
        schema::<doctor::DoctorJson>("doctor", "doctor --json: each check's finding"),
        schema::<FailureJson>(
            "failure",
            "Any command asked for --json that failed: its error on stdout (also rendered on stderr)",
        ),
        schema::<ErrorJson>("error", "An error in JSON output (clean --json's and gc --json's failed entries)"),
        schema::<gc::GcJson>(
            "gc",
            "gc --json: the workspaces the configured retention let go, those skipped and those that failed",
        ),
        schema::<land::LandJson>("land", "land <ID> --json: what landed (or would, with --dry-run)"),
        schema::<crate::cli::mcp::tools::RunJson>(
            "mcp-run",
            "mcp's workspace_run: how the command ended and the end of its output",
        ),
        schema::<crate::cli::mcp::tools::StatusRowsJson>(
            "mcp-status",
            "mcp's workspace_status without an id: a row per workspace",
        ),
        schema::<pool::DrainJson>("pool-drain", "pool drain --json: the prepared workspaces removed"),
        schema::<pool::FillJson>("pool-fill", "pool fill --json: what a fill prepared and removed"),
        schema::<pool::StatusJson>(
            "pool-status",
            "pool status --json: the prepared workspaces of a repository",
        ),
        schema::<Record>(
            "record",
            "The workspace record (.agent-workflow.json in a workspace, the record in .state/<id>.json, and status <ID> --json --record)",
        ),
        schema::<status::WorkspaceJson>(
            "status-workspace",
            "status <ID> --json: one workspace (also each item of status --json)",
        ),
        schema::<status::StatusJson>("status", "status --json: every workspace of the repository"),
        schema::<sync_tools::SyncJson>(
            "sync-tools",
            "sync-tools <ID> --json: the tools bundle copied into a workspace",
        ),
    ]
}

/// The schema of what `T` serializes to (draft 2020-12), named and titled, as its file holds it.
fn schema<T: JsonSchema>(name: &'static str, title: &str) -> (&'static str, String) {
    let generated = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut doc = generated.to_value();
    let root = doc.as_object_mut().expect("a root schema is an object");
    root.insert(
        "$id".into(),
        json!(format!("urn:agent-workspace:schema:{name}:1")),
    );
    root.insert("title".into(), json!(title));
    // The version of a document's schema is always this one: a newer build writes a new id.
    if let Some(version) = root
        .get_mut("properties")
        .and_then(|p| p.get_mut("schema_version"))
    {
        *version = json!({"const": 1});
    }
    close(&mut doc);
    let mut text = serde_json::to_string_pretty(&doc).expect("a schema serializes");
    text.push('\n');
    (name, text)
}

/// Outputs hold exactly the fields their types declare: every object schema with properties
/// and no word on others refuses others (the record, whose unknown fields are kept, says so).
fn close(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            map.values_mut().for_each(close);
        }
        Value::Array(items) => items.iter_mut().for_each(close),
        _ => {}
    }
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schema")
}

#[test]
fn the_checked_in_schemas_are_the_generated_ones() {
    let write = std::env::var_os(WRITE).is_some_and(|v| !v.is_empty());
    let mut stale = vec![];
    for (name, text) in schemas() {
        let file = dir().join(format!("{name}.schema.json"));
        if write {
            std::fs::write(&file, &text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        } else if std::fs::read_to_string(&file).ok().as_deref() != Some(text.as_str()) {
            stale.push(file.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "out of date with the types they are generated from:\n{}\nrun `{WRITE}=1 cargo test --lib schemas` and check the diff in",
        stale.join("\n")
    );
}

/// Every file under `schema/` is generated: none is left to be kept by hand.
#[test]
fn every_schema_file_is_generated() {
    let mut files: Vec<String> = std::fs::read_dir(dir())
        .expect("schema/ exists")
        .map(|e| {
            e.expect("a directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    files.sort();
    let mut generated: Vec<String> = schemas()
        .into_iter()
        .map(|(name, _)| format!("{name}.schema.json"))
        .collect();
    generated.sort();
    assert_eq!(files, generated);
}

/// The names the one vocabulary (docs/json.md) replaced: none may come back.
const RETIRED: &[&str] = &[
    "commit",
    "file",
    "id",
    "insertions",
    "deletions",
    "files_changed",
    "unlanded_commits",
    "kept_files",
    "disposable_files",
    "discarded_files",
];

/// Every property of `value` (at any depth) with its schema: `(name, schema)`.
fn properties(value: &Value, found: &mut Vec<(String, Value)>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                for (name, schema) in props {
                    found.push((name.clone(), schema.clone()));
                }
            }
            map.values().for_each(|v| properties(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| properties(v, found)),
        _ => {}
    }
}

/// What `schema` (or the `$defs` entry it refers to) says its items are.
fn items<'a>(root: &'a Value, schema: &'a Value) -> Option<&'a Value> {
    let items = schema.get("items")?;
    match items.get("$ref").and_then(Value::as_str) {
        Some(reference) => root.pointer(reference.trim_start_matches('#')),
        None => Some(items),
    }
}

/// Every output and the record speak the one vocabulary: no retired name; `files` is always
/// a list of `{path, status, added, removed}`; a commit object says `commit_id` and
/// `subject`; every timestamp (`*_at`) is RFC 3339 in UTC.
#[test]
fn every_schema_speaks_the_one_vocabulary() {
    let mut wrong = vec![];
    for (name, text) in schemas() {
        let root: Value = serde_json::from_str(&text).expect("a generated schema is JSON");
        let mut found = vec![];
        properties(&root, &mut found);
        for (prop, schema) in &found {
            if RETIRED.contains(&prop.as_str()) {
                wrong.push(format!("{name}: {prop} is a retired name"));
            }
            if prop == "files" {
                let fields = items(&root, schema).and_then(|i| i.get("properties"));
                let has = |f: &str| fields.is_some_and(|p| p.get(f).is_some());
                if !["path", "status", "added", "removed"]
                    .iter()
                    .all(|f| has(f))
                {
                    wrong.push(format!(
                        "{name}: files is not a list of {{path, status, added, removed}}"
                    ));
                }
            }
            if prop.ends_with("_at") && !schema.to_string().contains(TIMESTAMP) {
                wrong.push(format!(
                    "{name}: {prop} is not checked to be RFC 3339 in UTC"
                ));
            }
        }
        let subjects = found.iter().filter(|(p, _)| p == "subject").count();
        let commit_ids = found.iter().filter(|(p, _)| p == "commit_id").count();
        if subjects > commit_ids {
            wrong.push(format!("{name}: a commit with a subject but no commit_id"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The timestamp pattern as it appears in a schema's JSON text.
const TIMESTAMP: &str = r#""pattern":"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$""#;
