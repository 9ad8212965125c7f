//! Recovery and hostile states: drift between directories, records and the backend, stale
//! working copies, bulk clean-up, the .envrc trust policy, unreadable and newer records.

use std::fs;

use serde_json::Value;

use crate::backends::Backend;
use crate::harness::TestEnv;
use crate::hostile_records::write_record;
use crate::reliability_support::{start_long_run, status_of};

#[test]
fn a_deleted_directory_is_named_by_status_and_recreated_with_its_edits() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    // An id that needs quoting in a revset.
    let id = "1.fix-a_b";
    env.aw(
        &repo,
        [
            "run",
            id,
            "--",
            "sh",
            "-c",
            "echo kept > edit.txt && jj status >/dev/null",
        ],
    )
    .assert_ok();
    let ws = env.ws_path(&repo, id);
    fs::remove_dir_all(&ws).unwrap();
    let status = env.aw(&repo, ["status"]);
    assert!(
        status.stdout.contains("missing-directory"),
        "{}",
        status.report()
    );
    assert!(
        status.stderr.contains(&format!("agent-workspace run {id}")),
        "{}",
        status.report()
    );
    let out = env.aw(&repo, ["run", id, "--", "cat", "edit.txt"]);
    out.assert_ok();
    assert_eq!(out.stdout, "kept\n");
    assert!(out.stderr.contains("was deleted"), "{}", out.report());
    assert_eq!(status_of(&env, &repo, id), "done");
}

#[test]
fn a_directory_jj_no_longer_knows_is_never_adopted_or_deleted_silently() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(
        &repo,
        ["run", "w1", "--", "sh", "-c", "echo precious > p.txt"],
    )
    .assert_ok();
    // status keeps jj's workspace list between calls; forgetting is a new operation, which
    // must show at once.
    assert_eq!(status_of(&env, &repo, "w1"), "done");
    env.jj(&repo, ["workspace", "forget", "w1"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    assert_eq!(status_of(&env, &repo, "w1"), "unregistered");
    let run = env.aw(&repo, ["run", "w1", "--", "true"]);
    insta::assert_snapshot!(run, @r#"
    --- stderr ---
    Error: the backend no longer knows workspace "w1", so its files may hold edits no commit has
    Hint: inspect [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1, then `agent-workspace clean --force w1` removes it, keeping its files aside
    [exit 125]
    "#);
    let clean = env.aw(&repo, ["clean", "w1"]);
    insta::assert_snapshot!(clean, @r#"
    --- stderr ---
    Error: the backend no longer knows workspace "w1", so its files may hold edits no commit has
    Hint: inspect [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1, then `agent-workspace clean --force w1` removes it, keeping its files aside
    [exit 1]
    "#);
    insta::assert_snapshot!(run, @r#"
    --- stderr ---
    Error: the backend no longer knows workspace "w1", so its files may hold edits no commit has
    Hint: inspect [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1, then `agent-workspace clean --force w1` removes it, keeping its files aside
    [exit 125]
    "#);
    insta::assert_snapshot!(clean, @r#"
    --- stderr ---
    Error: the backend no longer knows workspace "w1", so its files may hold edits no commit has
    Hint: inspect [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1, then `agent-workspace clean --force w1` removes it, keeping its files aside
    [exit 1]
    "#);
    assert_eq!(fs::read_to_string(ws.join("p.txt")).unwrap(), "precious\n");
    // --force removes it, but no commit holds its files: they are kept aside and named.
    let forced = env.aw(&repo, ["clean", "--force", "w1"]);
    forced.assert_ok();
    assert!(!ws.exists());
    let kept = env.namespace_dir(&repo).join(".kept");
    let dir = fs::read_dir(&kept).unwrap().next().unwrap().unwrap().path();
    assert_eq!(fs::read_to_string(dir.join("p.txt")).unwrap(), "precious\n");
    assert!(
        forced
            .stdout
            .contains(&format!("no commit holds in {}", dir.display())),
        "{}",
        forced.report()
    );
}

#[test]
fn a_stale_working_copy_is_updated_and_keeps_its_edits() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    // Snapshot an edit in the workspace, then rewrite its commit from the main workspace
    // (rebased onto a new upstream commit): the workspace's working copy is now stale. The
    // recorded edit is in the rewritten commit; the edit jj never recorded is carried across.
    fs::write(ws.join("first.txt"), "first\n").unwrap();
    env.jj(&ws, ["status"]).assert_ok();
    fs::write(repo.join("upstream.txt"), "upstream\n").unwrap();
    env.jj_ok(&repo, ["commit", "-m", "upstream"]);
    env.jj_ok(&repo, ["rebase", "-b", "w1@", "-o", "@-"]);
    fs::write(ws.join("second.txt"), "second\n").unwrap();
    let stale = env.jj(&ws, ["status"]);
    assert_ne!(
        stale.code(),
        Some(0),
        "the working copy should be stale\n{}",
        stale.report()
    );
    let out = env.aw(
        &repo,
        [
            "run",
            "w1",
            "--",
            "sh",
            "-c",
            "cat upstream.txt first.txt second.txt && jj diff --summary",
        ],
    );
    insta::assert_snapshot!(out, @r#"
    upstream
    first
    second
    A first.txt
    A second.txt
    --- stderr ---
    Note: workspace "w1" was stale; updated it (its edits are kept)
    [exit 0]
    "#);
}

fn bulk_clean_selects_by_status_and_age_and_never_removes_a_live_run(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "ok", "--", "true"]).assert_ok();
    env.aw(&repo, ["run", "bad", "--", "false"]).assert_code(1);
    env.aw(&repo, ["run", "old", "--", "true"]).assert_ok();
    let old = env.ws_path(&repo, "old");
    let mut record = env.metadata(&old);
    record["updated_at"] = "2020-01-01T00:00:00Z".into();
    write_record(&env, &repo, "old", &record.to_string());
    let live = start_long_run(&env, &repo, "live", &[]);

    let dry = env.aw(&repo, ["clean", "--status", "done", "--dry-run"]);
    dry.assert_ok();
    assert!(
        dry.stdout.contains("Would remove ok") && dry.stdout.contains("Would remove old"),
        "{}",
        dry.report()
    );
    assert!(env.ws_path(&repo, "ok").exists());

    let aged = env.aw(&repo, ["clean", "--older-than", "7d", "--json"]);
    aged.assert_ok();
    let doc: Value = serde_json::from_str(&aged.stdout).unwrap();
    let removed: Vec<&str> = doc["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["workspace_id"].as_str().unwrap())
        .collect();
    assert_eq!(removed, ["old"]);
    assert!(!old.exists());

    let errors = env.aw(&repo, ["clean", "--status", "error"]);
    errors.assert_ok();
    assert!(!env.ws_path(&repo, "bad").exists());

    let all = env.aw(&repo, ["clean", "--all"]);
    all.assert_ok();
    assert!(all.stderr.contains("Skipped live"), "{}", all.report());
    assert!(env.ws_path(&repo, "live").exists());
    assert!(!env.ws_path(&repo, "ok").exists());
    assert_eq!(status_of(&env, &repo, "live"), "running");

    let forced = env.aw(&repo, ["clean", "--all", "--force"]);
    forced.assert_ok();
    let stopped = live.wait();
    assert_eq!(stopped.code(), Some(143), "{}", stopped.report());
    assert!(!env.ws_path(&repo, "live").exists());
    assert_eq!(backend.registered(&env, &repo), ["default"]);
}

fn an_envrc_changed_inside_the_workspace_is_not_loaded_without_trust(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(
        &repo,
        [
            "run",
            "w1",
            "--",
            "sh",
            "-c",
            "echo 'export HIJACK=1' >> .envrc",
        ],
    )
    .assert_ok();
    let refused = env.aw(
        &repo,
        [
            "run",
            "w1",
            "--",
            "sh",
            "-c",
            "echo ran; echo ${HIJACK-unset}",
        ],
    );
    refused.assert_code(125);
    assert_eq!(refused.stdout, "");
    assert!(
        refused.stderr.contains(".envrc differs"),
        "{}",
        refused.report()
    );
    insta::assert_snapshot!(refused, @r"
    --- stderr ---
    Error: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/.envrc differs from the .envrc of the workspace's base revision; not loading it
    Hint: review it, then pass --trust-envrc to allow it (or --no-direnv to skip it)
    [exit 125]
    ");
    assert!(
        refused.stderr.contains("--trust-envrc"),
        "{}",
        refused.report()
    );
    let trusted = env.aw(
        &repo,
        [
            "run",
            "w1",
            "--trust-envrc",
            "--",
            "sh",
            "-c",
            "echo ${HIJACK-unset}",
        ],
    );
    trusted.assert_ok();
    assert_eq!(trusted.stdout, "1\n");
    // An .envrc put back to the base revision's content is allowed again without the flag.
    let ws = env.ws_path(&repo, "w1");
    fs::copy(repo.join(".envrc"), ws.join(".envrc")).unwrap();
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
}

fn records_from_a_newer_schema_are_shown_and_never_overwritten(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let file = env.ws_path(&repo, "w1").join(".agent-workflow.json");
    let newer = r#"{"schema_version": 9, "workspace_id": "w1", "status": "quantum", "updated_at": "2030-01-01T00:00:00Z"}"#;
    write_record(&env, &repo, "w1", newer);
    let status = env.aw(&repo, ["status", "w1", "--json"]);
    status.assert_ok();
    let doc: Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(doc["problem"], "newer-schema");
    assert_eq!(doc["record"]["status"], "quantum");
    let run = env.aw(&repo, ["run", "w1", "--", "true"]);
    insta::assert_snapshot!(run, @r"
    --- stderr ---
    Error: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/.agent-workflow.json was written by a newer agent-workspace (schema 9); not overwriting it
    Hint: upgrade agent-workspace
    [exit 125]
    ");
    assert_eq!(fs::read_to_string(&file).unwrap(), newer);
    let clean = env.aw(&repo, ["clean", "w1"]);
    clean.assert_code(1);
    insta::assert_snapshot!(run, @r"
    --- stderr ---
    Error: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/.agent-workflow.json was written by a newer agent-workspace (schema 9); not overwriting it
    Hint: upgrade agent-workspace
    [exit 125]
    ");
    insta::assert_snapshot!(clean, @r"
    --- stderr ---
    Skipped w1: its record is schema 9, from a newer agent-workspace
    [exit 1]
    ");
    assert_eq!(fs::read_to_string(&file).unwrap(), newer);
}

fn a_corrupt_record_is_kept_aside_and_the_workspace_runs_again(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    write_record(&env, &repo, "w1", "{\"schema_version\": 1, torn");
    assert_eq!(status_of(&env, &repo, "w1"), "corrupt-metadata");
    let out = env.aw(&repo, ["run", "w1", "--", "true"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Warning: the record of [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1 was unreadable (key must be a string at line 1 column 23 in [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.state/w1.json); kept it as [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.state/w1.json.corrupt.[N] and [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/.agent-workflow.json.corrupt.[N] and started a new record
    [exit 0]
    ");
    let kept: Vec<_> = fs::read_dir(&ws)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".agent-workflow.json.corrupt.")
        })
        .collect();
    assert_eq!(kept.len(), 1);
    assert_eq!(
        fs::read_to_string(kept[0].path()).unwrap(),
        "{\"schema_version\": 1, torn"
    );
    assert_eq!(env.metadata(&ws)["status"], "done");
}

#[test]
fn a_jj_workspace_of_the_same_name_made_elsewhere_is_refused() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let elsewhere = env.path().join("mine");
    env.jj(
        &repo,
        [
            "workspace",
            "add",
            "--name",
            "w1",
            &elsewhere.display().to_string(),
        ],
    )
    .assert_ok();
    let out = env.aw(&repo, ["run", "w1", "--", "true"]);
    insta::assert_snapshot!(out, @r#"
    --- stderr ---
    Error: a workspace named "w1" already exists at [TMP]/mine, not created by agent-workspace
    Hint: pick another id, or forget that workspace first
    [exit 125]
    "#);
    insta::assert_snapshot!(out, @r#"
    --- stderr ---
    Error: a workspace named "w1" already exists at [TMP]/mine, not created by agent-workspace
    Hint: pick another id, or forget that workspace first
    [exit 125]
    "#);
    assert!(!env.ws_path(&repo, "w1").exists());
    assert!(elsewhere.join(".jj").exists());
    assert_eq!(env.workspace_names(&repo), ["default", "w1"]);
}

crate::both_backends!(
    bulk_clean_selects_by_status_and_age_and_never_removes_a_live_run,
    an_envrc_changed_inside_the_workspace_is_not_loaded_without_trust,
    records_from_a_newer_schema_are_shown_and_never_overwritten,
    a_corrupt_record_is_kept_aside_and_the_workspace_runs_again,
);
