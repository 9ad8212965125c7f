//! Records the shell script agent-workspace replaces wrote (at `.agent-tools/.agent-workflow.json`
//! in its later versions, or as the workspace's `.agent-workflow.json`): no `schema_version`,
//! no backend. They are read as records of this schema, every field kept.

use std::path::Path;

use serde_json::Value;

use super::{Loaded, Record};

/// Where the script's later versions kept a workspace's record, relative to the workspace.
pub(crate) const SCRIPT_RECORD: &str = ".agent-tools/.agent-workflow.json";

/// The script's record at [`SCRIPT_RECORD`] in `workspace`.
pub(crate) fn load(workspace: &Path) -> Loaded {
    let file = workspace.join(SCRIPT_RECORD);
    match crate::store::fsutil::read_untrusted(&file, crate::store::fsutil::UNTRUSTED_LIMIT) {
        Ok(text) => convert(&text, workspace, SCRIPT_RECORD).unwrap_or_else(|why| {
            Loaded::Corrupt(format!(
                "{}: {why}",
                workspace.join(SCRIPT_RECORD).display()
            ))
        }),
        Err(_) => Loaded::Missing,
    }
}

/// Reads `text` as a script record of `workspace` found at `from` (relative to it).
pub(crate) fn convert(text: &[u8], workspace: &Path, from: &str) -> Result<Loaded, String> {
    let value: Value = serde_json::from_slice(text).map_err(|e| e.to_string())?;
    let Value::Object(mut map) = value else {
        return Err("not a JSON object".into());
    };
    if map.contains_key("schema_version") || !map.get("status").is_some_and(Value::is_string) {
        return Err("not a record of the shell script (no status)".into());
    }
    let backend = if workspace.join(".jj").exists() {
        "jj"
    } else {
        "git"
    };
    let now = super::now();
    let defaults: [(&str, Value); 8] = [
        ("schema_version", 1.into()),
        ("backend", backend.into()),
        ("workflow", Value::Null),
        ("base_change", Value::Null),
        ("repo_root", "".into()),
        ("workspace_path", "".into()),
        ("created_at", now.to_string().into()),
        ("updated_at", now.to_string().into()),
    ];
    for (key, value) in defaults {
        if map.get(key).is_none_or(Value::is_null) {
            map.insert(key.into(), value);
        }
    }
    map.entry("workspace_id").or_insert("".into());
    map.insert("migrated_from".into(), from.into());
    let record: Record = serde_json::from_value(Value::Object(map)).map_err(|e| e.to_string())?;
    Ok(Loaded::Ok(Box::new(record)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_record_keeps_every_field() {
        let tmp = tempfile::tempdir().unwrap();
        let text = br#"{"workspace_id":"w","repo_root":"/r","workspace_path":"/w","status":"done",
            "direnv_allowed":true,"command":["just","x"],"created_at":"2025-01-01T00:00:00Z",
            "updated_at":"2025-01-02T00:00:00Z","workflow":"consolidate","base_change":"abc",
            "tools_version":"v1"}"#;
        let Ok(Loaded::Ok(record)) = convert(text, tmp.path(), SCRIPT_RECORD) else {
            panic!("not converted");
        };
        assert_eq!(record.status, super::super::Status::Done);
        assert_eq!(record.workflow.as_deref(), Some("consolidate"));
        assert_eq!(record.command, ["just", "x"]);
        assert_eq!(record.base_change.as_deref(), Some("abc"));
        assert_eq!(record.created_at.to_string(), "2025-01-01T00:00:00Z");
        assert_eq!(record.extra["tools_version"], "v1");
        assert_eq!(record.extra["migrated_from"], SCRIPT_RECORD);
        assert!(convert(b"{\"schema_version\":1}", tmp.path(), "x").is_err());
    }
}
