//! A run that never starts its command (its `.envrc` refused, its setup failed) is recorded
//! one way: `status` shows `not-started` with the reason, until a run starts its command.

use std::fs;

use crate::backends::Backend;
use crate::harness::TestEnv;

fn status_of(env: &TestEnv, repo: &std::path::Path, id: &str) -> serde_json::Value {
    env.aw(repo, ["status", id, "--json"]).json()
}

fn a_refused_envrc_is_shown_as_not_started_until_a_run_starts(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w");
    fs::write(ws.join(".envrc"), "export CHANGED=1\n").unwrap();
    let out = env.aw(&repo, ["run", "w", "--", "touch", "ran"]);
    out.assert_code(125);
    assert!(!ws.join("ran").exists());
    let doc = status_of(&env, &repo, "w");
    assert_eq!(doc["status"], "not-started", "{doc:#}");
    let reason = doc["record"]["not_started"]["reason"].as_str().unwrap();
    assert!(reason.contains(".envrc"), "{doc:#}");
    crate::schemas::assert_valid("status-workspace", &doc);
    let text = env.aw(&repo, ["status", "w"]);
    assert!(text.stdout.contains("not started   "), "{}", text.report());
    let table = env.aw(&repo, ["status"]);
    assert!(table.stdout.contains("not-started"), "{}", table.report());

    env.aw(&repo, ["run", "w", "--trust-envrc", "--", "touch", "ran"])
        .assert_ok();
    let doc = status_of(&env, &repo, "w");
    assert_eq!(doc["status"], "done", "{doc:#}");
    assert!(doc["record"].get("not_started").is_none(), "{doc:#}");
}

fn a_failed_setup_is_shown_as_not_started(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.user_config("[setup]\ncommand = \"exit 3\"\n");
    env.aw(&repo, ["run", "w", "--", "true"]).assert_code(125);
    let doc = status_of(&env, &repo, "w");
    assert_eq!(doc["status"], "not-started", "{doc:#}");
    let reason = doc["record"]["not_started"]["reason"].as_str().unwrap();
    assert!(reason.contains("setup"), "{doc:#}");
}

crate::both_backends!(
    a_refused_envrc_is_shown_as_not_started_until_a_run_starts,
    a_failed_setup_is_shown_as_not_started,
);
