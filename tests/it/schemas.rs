//! The JSON Schemas under `schema/` validate the real `--json` outputs and records, so the
//! two cannot drift apart: a field added to an output without its schema fails here.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::backends::Backend;
use crate::harness::TestEnv;

const SCHEMAS: &[&str] = &[
    "checkpoint",
    "clean",
    "clean-purge",
    "create",
    "diff",
    "doctor",
    "error",
    "failure",
    "gc",
    "land",
    "mcp-run",
    "mcp-status",
    "pool-drain",
    "pool-fill",
    "pool-status",
    "record",
    "status",
    "status-workspace",
    "sync-tools",
];

fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schema")
}

fn load(name: &str) -> Value {
    let file = schema_dir().join(format!("{name}.schema.json"));
    let text = fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// The errors of `doc` against schema `name`, the other schemas available to its `$ref`s.
fn errors(name: &str, doc: &Value) -> Vec<String> {
    let all: Vec<(String, Value)> = SCHEMAS
        .iter()
        .map(|s| {
            let schema = load(s);
            (schema["$id"].as_str().unwrap().to_string(), schema)
        })
        .collect();
    let registry = jsonschema::Registry::new()
        .extend(
            all.iter()
                .map(|(id, s)| (id.as_str(), jsonschema::Resource::from_contents(s.clone()))),
        )
        .expect("schema ids are URIs")
        .prepare()
        .expect("schemas resolve");
    let validator = jsonschema::options()
        .with_registry(&registry)
        .build(&load(name))
        .unwrap_or_else(|e| panic!("schema {name} is invalid: {e}"));
    validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

#[track_caller]
pub(crate) fn assert_valid(name: &str, doc: &Value) {
    let found = errors(name, doc);
    assert!(found.is_empty(), "{name}: {found:#?}\n{doc:#}");
}

#[test]
fn every_schema_is_listed_versioned_and_valid() {
    let mut files: Vec<String> = fs::read_dir(schema_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    let mut expected: Vec<String> = SCHEMAS.iter().map(|s| format!("{s}.schema.json")).collect();
    expected.sort();
    assert_eq!(files, expected, "a new schema needs a test here");
    for name in SCHEMAS {
        let schema = load(name);
        assert_eq!(
            schema["$id"],
            format!("urn:agent-workspace:schema:{name}:1")
        );
        assert!(
            jsonschema::meta::is_valid(&schema),
            "{name} is not a valid JSON Schema"
        );
        if !["error", "status-workspace"].contains(name) {
            assert_eq!(schema["properties"]["schema_version"]["const"], 1, "{name}");
        }
    }
}

fn status_records_and_clean_match(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--workflow", "wf", "--", "true"])
        .assert_ok();
    env.aw(&repo, ["run", "w2", "--parent", "w1", "--", "false"]);
    fs::write(env.ws_path(&repo, "w1").join("new.txt"), "new\n").unwrap();
    fs::create_dir(env.namespace_dir(&repo).join("stray")).unwrap();
    assert_valid("status", &env.aw(&repo, ["status", "--json"]).json());
    assert_valid(
        "status",
        &env.aw(&repo, ["status", "--json", "--size"]).json(),
    );
    let one = env.aw(&repo, ["status", "w1", "--json", "--size"]).json();
    assert!(one.get("changes").is_some(), "{one:#}");
    assert_eq!(one["schema_version"], 1, "{one:#}");
    assert_valid("status-workspace", &one);
    let record = env.aw(&repo, ["status", "w1", "--json", "--record"]);
    assert_valid("record", &record.assert_ok().json());
    for id in ["w1", "w2"] {
        let ws = env.ws_path(&repo, id);
        assert_valid("record", &env.metadata(&ws));
        let state = env
            .namespace_dir(&repo)
            .join(".state")
            .join(format!("{id}.json"));
        let state: Value = serde_json::from_str(&fs::read_to_string(state).unwrap()).unwrap();
        assert_valid("record", &state["record"]);
    }
    assert_valid(
        "clean",
        &env.aw(&repo, ["clean", "--json", "--dry-run", "--all"])
            .json(),
    );
    let out = env.aw(&repo, ["clean", "--json", "w1", "nope"]);
    assert_valid("clean", &serde_json::from_str(&out.stdout).unwrap());
    // An ignored file no commit keeps: clean keeps it aside, --purge-kept deletes it.
    env.aw(&repo, ["run", "w3", "--", "true"]).assert_ok();
    let w3 = env.ws_path(&repo, "w3");
    fs::write(w3.join(".gitignore"), "*.log\n").unwrap();
    fs::write(w3.join("debug.log"), "kept aside\n").unwrap();
    let out = env.aw(&repo, ["clean", "--json", "--force", "--all"]);
    let doc = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{}", out.report()));
    assert_valid("clean", &doc);
    for dry in [true, false] {
        let mut args = vec!["clean", "--purge-kept", "--all", "--json"];
        if dry {
            args.push("--dry-run");
        }
        let purged = env.aw(&repo, args).assert_ok().json();
        assert_eq!(purged["dry_run"], dry, "{purged:#}");
        assert_eq!(purged["purged"].as_array().unwrap().len(), 1, "{purged:#}");
        assert_valid("clean-purge", &purged);
    }
}

#[test]
fn status_records_and_clean_match_jj() {
    status_records_and_clean_match(Backend::Jj);
}

#[test]
fn status_records_and_clean_match_git() {
    status_records_and_clean_match(Backend::Git);
}

fn diff_and_checkpoint_match(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    assert_valid(
        "checkpoint",
        &env.aw(&repo, ["checkpoint", "w1", "--json"]).json(),
    );
    fs::write(ws.join("new.txt"), "new\n").unwrap();
    fs::write(ws.join("a.txt"), "changed\n").unwrap();
    assert_valid("diff", &env.aw(&repo, ["diff", "w1", "--json"]).json());
    let made = env
        .aw(&repo, ["checkpoint", "w1", "--json", "-m", "first"])
        .json();
    assert_eq!(made["created"], true, "{made:#}");
    assert_valid("checkpoint", &made);
    assert_valid("diff", &env.aw(&repo, ["diff", "w1", "--json"]).json());
    assert_valid("record", &env.metadata(&ws));
}

#[test]
fn diff_and_checkpoint_match_jj() {
    diff_and_checkpoint_match(Backend::Jj);
}

#[test]
fn diff_and_checkpoint_match_git() {
    diff_and_checkpoint_match(Backend::Git);
}

#[test]
fn doctor_matches_healthy_and_not() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    assert_valid("doctor", &env.aw(&repo, ["doctor", "--json"]).json());
    fs::write(env.namespace_dir(&repo).join(".locks/ghost.lock"), "").unwrap();
    let out = env
        .aw_cmd(env.path())
        .env("PATH", env.path_with_only(&["git"]))
        .args(["doctor", "--json"])
        .run();
    out.assert_code(1);
    assert_valid("doctor", &serde_json::from_str(&out.stdout).unwrap());
}

#[test]
fn a_field_the_schema_does_not_know_is_caught() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let mut doc = env.aw(&repo, ["status", "--json"]).json();
    doc["workspaces"][0]["surprise"] = Value::Bool(true);
    assert_eq!(errors("status", &doc).len(), 1, "{doc:#}");
    let mut record = env.metadata(&env.ws_path(&repo, "w1"));
    record["status"] = Value::String("sleeping".into());
    assert!(!errors("record", &record).is_empty());
}

fn land_and_sync_tools_match(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    assert_valid("create", &env.aw(&repo, ["create", "w1", "--json"]).json());
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    assert_valid("create", &env.aw(&repo, ["create", "w1", "--json"]).json());
    let ws = env.ws_path(&repo, "w1");
    assert_valid("land", &env.aw(&repo, ["land", "w1", "--json"]).json());
    fs::write(ws.join("new.txt"), "new\n").unwrap();
    assert_valid(
        "land",
        &env.aw(&repo, ["land", "w1", "--json", "--dry-run"]).json(),
    );
    let landed = env.aw(&repo, ["land", "w1", "--json"]).json();
    assert_eq!(landed["outcome"], "landed", "{landed:#}");
    assert_valid("land", &landed);
    let record = env.metadata(&ws);
    assert!(record.get("land").is_some(), "{record:#}");
    assert_valid("record", &record);
    assert_valid(
        "sync-tools",
        &env.aw(&repo, ["sync-tools", "w1", "--json"]).json(),
    );
    fs::write(repo.join("agents.just"), "x:\n    true\n").unwrap();
    assert_valid(
        "sync-tools",
        &env.aw(&repo, ["sync-tools", "w1", "--json"]).json(),
    );
    assert_valid("record", &env.metadata(&ws));
}

#[test]
fn land_and_sync_tools_match_jj() {
    land_and_sync_tools_match(Backend::Jj);
}

#[test]
fn land_and_sync_tools_match_git() {
    land_and_sync_tools_match(Backend::Git);
}

/// `gc --json`, a dry run and a real one, with a workspace the retention lets go and a live
/// one skipped.
#[test]
fn gc_matches() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    std::fs::write(
        repo.join("agent-workspace.toml"),
        "[retention]\ndone = \"1h\"\n",
    )
    .unwrap();
    env.aw(&repo, ["run", "old", "--", "true"]).assert_ok();
    crate::gc::age(&env, &repo, "old", std::time::Duration::from_secs(7200));
    for args in [vec!["gc", "--dry-run", "--json"], vec!["gc", "--json"]] {
        let out = env.aw(&repo, args);
        out.assert_ok();
        let doc = out.json();
        assert_eq!(doc["removed"][0]["workspace_id"], "old", "{doc}");
        assert_valid("gc", &doc);
    }
}

/// `pool fill|status|drain --json`, with ready and incomplete entries.
#[test]
fn pool_matches() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let fill = env.aw(&repo, ["pool", "fill", "2", "--json"]);
    assert_valid("pool-fill", &fill.assert_ok().json());
    fs::create_dir(env.namespace_dir(&repo).join(".pool-0incomplete")).unwrap();
    let status = env
        .aw(&repo, ["pool", "status", "--json"])
        .assert_ok()
        .json();
    assert_eq!(status["entries"].as_array().unwrap().len(), 3, "{status:#}");
    assert_valid("pool-status", &status);
    let drain = env.aw(&repo, ["pool", "drain", "--json"]);
    assert_valid("pool-drain", &drain.assert_ok().json());
}

/// The land's journal in the record (left by a killed land), the recovered land, and the
/// status's `land_state` (verified, undone) match their schemas.
fn land_journal_and_land_state_match(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", "echo x > x.txt"])
        .assert_ok();
    let ws = env.ws_path(&repo, "w1");
    crate::land_record::killed_land(&env, backend, &repo, false);
    let record = env.metadata(&ws);
    assert!(record.get("land_intent").is_some(), "{record:#}");
    assert_valid("record", &record);
    let status = env.aw(&repo, ["status", "--json"]).json();
    assert_eq!(
        status["workspaces"][0]["land_state"], "verified",
        "{status:#}"
    );
    assert_valid("status", &status);
    let record = env.metadata(&ws);
    assert_eq!(record["land"]["recovered"], true, "{record:#}");
    assert_valid("record", &record);
    let one = env.aw(&repo, ["status", "w1", "--json"]).json();
    assert_valid("status-workspace", &one);
}

#[test]
fn land_journal_and_land_state_match_jj() {
    land_journal_and_land_state_match(Backend::Jj);
}

#[test]
fn land_journal_and_land_state_match_git() {
    land_journal_and_land_state_match(Backend::Git);
}

/// A command asked for `--json` that fails prints its error on stdout as a document of
/// `failure.schema.json` (the exit code inside is the process's), and still renders it on
/// stderr; status, diff and land printed nothing on stdout before. (`clean` and `gc` report
/// each workspace's failure inside their own document.)
#[test]
fn a_failure_under_json_is_a_document_on_stdout() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    for args in [
        &["status", "nope", "--json"][..],
        &["diff", "nope", "--json"],
        &["land", "nope", "--json"],
        &["checkpoint", "nope", "--json"],
        &["sync-tools", "nope", "--json"],
    ] {
        let out = env.aw(&repo, args);
        assert_eq!(out.code(), Some(1), "{}", out.report());
        assert!(out.stderr.starts_with("Error: "), "{}", out.report());
        let doc: Value = serde_json::from_str(&out.stdout).expect("a JSON document on stdout");
        assert_valid("failure", &doc);
        assert_eq!(doc["exit_code"], 1, "{args:?}: {doc:#}");
        assert_eq!(doc["error"]["kind"], "failure", "{args:?}: {doc:#}");
        assert!(doc["error"]["hint"].is_string(), "{args:?}: {doc:#}");
    }
    // Outside a repository, and without --json nothing goes to stdout.
    let outside = env.aw(env.path(), ["status", "--json"]);
    let doc: Value = serde_json::from_str(&outside.stdout).expect("a JSON document on stdout");
    assert_valid("failure", &doc);
    let plain = env.aw(&repo, ["status", "nope"]);
    assert_eq!(plain.code(), Some(1));
    assert!(plain.stdout.is_empty(), "{}", plain.report());
}
