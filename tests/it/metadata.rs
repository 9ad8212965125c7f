//! The `.agent-workflow.json` record: its fields during and after a run, and that neither it
//! nor direnv's cache ever reaches jj or git.

use serde_json::Value;

use crate::backends::{git_ok, Backend};
use crate::harness::TestEnv;

/// Whether `value` is an RFC 3339 UTC timestamp such as `2026-01-02T03:04:05Z`.
fn is_utc_timestamp(value: &Value) -> bool {
    let Some(text) = value.as_str() else {
        return false;
    };
    let b = text.as_bytes();
    let shape = b"dddd-dd-ddTdd:dd:dd";
    b.len() > shape.len()
        && text.ends_with('Z')
        && b.iter().zip(shape).all(|(c, s)| {
            if *s == b'd' {
                c.is_ascii_digit()
            } else {
                c == s
            }
        })
}

fn during_the_run_the_record_says_running_with_the_command(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let out = env.aw(
        &repo,
        [
            "run",
            "w1",
            "--workflow",
            "wf",
            "--",
            "sh",
            "-c",
            "cat \"$AGENT_WORKSPACE_METADATA\"",
            "arg with spaces",
        ],
    );
    out.assert_ok();
    let during = out.json();
    let ws = env.ws_path(&repo, "w1");
    assert_eq!(during["schema_version"], 1);
    assert_eq!(during["status"], "running");
    assert_eq!(during["workspace_id"], "w1");
    assert_eq!(during["workflow"], "wf");
    assert_eq!(
        during["command"],
        serde_json::json!([
            "sh",
            "-c",
            "cat \"$AGENT_WORKSPACE_METADATA\"",
            "arg with spaces"
        ])
    );
    assert_eq!(during["workspace_path"], ws.to_str().unwrap());
    assert_eq!(during["repo_root"], repo.to_str().unwrap());
    assert_eq!(during["backend"], backend.name());
    assert!(during["pid"].as_u64().is_some_and(|p| p > 0), "{during:#}");
    assert!(is_utc_timestamp(&during["started_at"]), "{during:#}");
    assert_eq!(during["finished_at"], Value::Null);
    assert_eq!(during["exit_code"], Value::Null);
    assert_eq!(during["runs"], serde_json::json!([]));
}

fn after_a_successful_run_the_record_says_done(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let record = env.metadata(&env.ws_path(&repo, "w1"));
    for key in ["created_at", "updated_at", "started_at", "finished_at"] {
        assert!(is_utc_timestamp(&record[key]), "{key}: {record:#}");
    }
    let run = &record["runs"][0];
    assert!(is_utc_timestamp(&run["started_at"]), "{record:#}");
    assert!(is_utc_timestamp(&run["finished_at"]), "{record:#}");
    assert!(run["duration_ms"].is_u64(), "{record:#}");
    // Both backends record the commit the workspace started on (jj's default: the parent of
    // the main working copy, resolved at creation).
    assert_eq!(
        record["base_commits"],
        serde_json::json!([backend.base_of(&env, &repo)])
    );
    assert_eq!(
        record["base_envrc_sha256"].as_str().map(str::len),
        Some(64),
        "{record:#}"
    );

    // The whole record, with what varies replaced.
    insta::assert_snapshot!(
        backend.snapshot("after_a_successful_run_the_record_says_done"),
        env.normalize_json(&record)
    );
}

fn after_a_failed_run_the_record_says_error_with_the_code(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", "exit 9"])
        .assert_code(9);
    let ws = env.ws_path(&repo, "w1");
    let record = env.metadata(&ws);
    assert_eq!(record["status"], "error", "{record:#}");
    assert_eq!(record["exit_code"], 9, "{record:#}");
    assert_eq!(record["signal"], Value::Null, "{record:#}");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let record = env.metadata(&ws);
    assert_eq!(record["status"], "done", "{record:#}");
    assert_eq!(record["exit_code"], 0, "{record:#}");
    let history: Vec<_> = record["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["status"].clone(), r["exit_code"].clone()))
        .collect();
    assert_eq!(
        history,
        [
            (Value::from("error"), Value::from(9)),
            (Value::from("done"), Value::from(0))
        ]
    );
}

/// The files in the commit at `rev` of the working copy at `ws` (`@-`, `@` for jj; git only
/// has `HEAD`).
fn files_at(env: &TestEnv, backend: Backend, ws: &std::path::Path, rev: &str) -> String {
    match backend {
        Backend::Jj => env.jj_ok(ws, ["file", "list", "-r", rev]),
        Backend::Git => git_ok(env, ws, &["ls-tree", "-r", "--name-only", "HEAD"]),
    }
}

fn neither_the_record_nor_direnv_s_cache_reaches_a_commit(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let script = "echo work > work.txt; mkdir -p .direnv && echo cache > .direnv/cache";
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", script])
        .assert_ok();
    let ws = env.ws_path(&repo, "w1");
    assert!(ws.join(".agent-workflow.json").is_file());
    assert!(ws.join(".direnv/cache").is_file());
    // `jj diff` / `git status` show the command's edit and nothing else.
    assert_eq!(backend.changes(&env, &ws), "A work.txt\n");
    // Committing everything there is commits the edit alone.
    match backend {
        Backend::Jj => {
            let status = env.jj_ok(&ws, ["status"]);
            assert!(status.contains("work.txt"), "{status}");
            env.jj(&ws, ["commit", "-m", "work"]).assert_ok();
        }
        Backend::Git => {
            git_ok(&env, &ws, &["add", "--all"]);
            git_ok(&env, &ws, &["commit", "-q", "-m", "work"]);
        }
    }
    let committed = ".envrc\na.txt\nsub/b.txt\nwork.txt\n";
    assert_eq!(files_at(&env, backend, &ws, "@-"), committed);
    // Another run afterwards still sees a clean working copy apart from its own edits.
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    assert_eq!(backend.changes(&env, &ws), "");
    assert_eq!(files_at(&env, backend, &ws, "@"), committed);
}

crate::both_backends!(
    during_the_run_the_record_says_running_with_the_command,
    after_a_successful_run_the_record_says_done,
    after_a_failed_run_the_record_says_error_with_the_code,
    neither_the_record_nor_direnv_s_cache_reaches_a_commit,
);
