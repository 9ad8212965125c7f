//! `gc`: workspaces past the retention configured for their status are removed the way
//! `clean` removes them; `--dry-run` says what would go and why; live ones, `never` and
//! younger ones stay.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::backends::Backend;
use crate::harness::{wait_for_file, TestEnv};
use crate::hostile_records::write_record;

/// Moves workspace `id`'s record `ago` into the past (its last run's end and last update),
/// editing the state agent-workspace keeps and the view sealed by it.
pub fn age(env: &TestEnv, repo: &Path, id: &str, ago: Duration) {
    let view = env.ws_path(repo, id).join(".agent-workflow.json");
    let mut record: Value = serde_json::from_slice(&fs::read(&view).unwrap()).unwrap();
    let then = humantime::format_rfc3339_seconds(SystemTime::now() - ago).to_string();
    for key in ["finished_at", "updated_at"] {
        record[key] = Value::String(then.clone());
    }
    if record["land"].is_object() {
        record["land"]["at"] = Value::String(then.clone());
    }
    let text = serde_json::to_string_pretty(&record).unwrap();
    write_record(env, repo, id, &text);
}

const HOUR: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(86_400);

fn configure(repo: &Path, retention: &str) {
    fs::write(
        repo.join("agent-workspace.toml"),
        format!("[retention]\n{retention}"),
    )
    .unwrap();
}

fn gc_removes_only_what_retention_lets_go(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    configure(&repo, "done = \"1h\"\nerror = \"7d\"\n");
    for id in ["old", "new"] {
        env.aw(&repo, ["run", id, "--", "true"]).assert_ok();
    }
    env.aw(&repo, ["run", "failed", "--", "false"])
        .assert_code(1);
    fs::write(env.ws_path(&repo, "old").join("notes.txt"), "unrecorded\n").unwrap();
    age(&env, &repo, "old", 2 * HOUR);
    age(&env, &repo, "failed", 2 * DAY);
    // A run log the MCP server wrote for it goes with it, as with `clean`.
    let logs = env.namespace_dir(&repo).join(".logs/old");
    fs::create_dir_all(&logs).unwrap();
    fs::write(logs.join("2000-01-01T000000Z.000000000.log"), "output\n").unwrap();
    let dry = env.aw(&repo, ["gc", "--dry-run"]);
    insta::assert_snapshot!(dry, @r"
    Would remove old ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/old): done for 2h, retention.done = 1h; would remove its 1 run log ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.logs/old)
    [exit 0]
    ");
    assert!(logs.is_dir());
    for id in ["old", "new", "failed"] {
        assert!(env.ws_path(&repo, id).exists(), "--dry-run removed {id}");
    }
    let json = env.aw(&repo, ["gc", "--dry-run", "--json"]);
    let doc = json.json();
    assert!(doc["removed"][0]["age_seconds"].as_u64().unwrap() >= 7200);
    insta::with_settings!({filters => vec![(r#"("age_seconds": )[0-9]+"#, "${1}[AGE]")]}, {
        insta::assert_snapshot!(json, @r#"
        {
          "schema_version": 1,
          "dry_run": true,
          "removed": [
            {
              "workspace_id": "old",
              "path": "[TMP]/xdg/cache/ai-workspaces/repo-[HASH]/old",
              "status": "done",
              "age_seconds": [AGE],
              "retention_seconds": 3600,
              "removal": {
                "branch_deleted": null,
                "commits": null,
                "committed_uncommitted_changes": false,
                "gitlinks": null,
                "head": null,
                "kept_branch": null,
                "kept_change_id": null,
                "kept_commit_id": null,
                "own_store_kept": null,
                "path": "[TMP]/xdg/cache/ai-workspaces/repo-[HASH]/old",
                "run_logs": {
                  "files_count": 1,
                  "left": null,
                  "path": "[TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.logs/old"
                },
                "untracked": {
                  "discarded_bytes": 0,
                  "discarded_files_count": 0,
                  "disposable_bytes": 0,
                  "disposable_files_count": 0,
                  "disposable_patterns": [],
                  "kept_bytes": 0,
                  "kept_dir": null,
                  "kept_files_count": 0
                },
                "workspace_id": "old"
              }
            }
          ],
          "skipped": [],
          "failed": [],
          "purged_kept": []
        }
        [exit 0]
        "#);
    });
    let out = env.aw(&repo, ["gc"]);
    let said = out.to_string();
    match backend {
        Backend::Jj => insta::assert_snapshot!(said, @r"
        Removed old ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/old); its edits are kept in change [CHANGE]; removed its 1 run log ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.logs/old)
        --- stderr ---
        Expired old: done for 2h, retention.done = 1h
        [exit 0]
        "),
        Backend::Git => insta::assert_snapshot!(said, @r"
        Removed old ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/old); its uncommitted changes were committed to branch agent-workspace/old ([SHORT]); removed its 1 run log ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.logs/old)
        --- stderr ---
        Expired old: done for 2h, retention.done = 1h
        [exit 0]
        "),
    }
    assert!(!env.ws_path(&repo, "old").exists());
    assert!(!logs.exists(), "{}", env.listing());
    assert!(env.ws_path(&repo, "new").exists() && env.ws_path(&repo, "failed").exists());
    // Its edits are kept as `clean` keeps them.
    let (keeper, _) = backend.kept(&env, &repo, "old", &out.stdout);
    assert_eq!(
        backend.kept_file(&env, &repo, &keeper, "notes.txt"),
        "unrecorded\n"
    );
    insta::assert_snapshot!(env.aw(&repo, ["gc"]), @r"
    --- stderr ---
    No workspace is past its retention
    [exit 0]
    ");
}

fn a_live_workspace_is_never_removed(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let statuses = ["done", "landed", "error", "crashed", "interrupted", "idle"];
    let all: String = statuses.iter().map(|s| format!("{s} = \"1s\"\n")).collect();
    configure(&repo, &all);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    age(&env, &repo, "w1", DAY);
    let ready = env.path().join("ready");
    let script = format!("touch {}; sleep 30", ready.display());
    let live = env
        .aw_cmd(&repo)
        .args(["run", "w1", "--", "sh", "-c", &script])
        .spawn();
    wait_for_file(&ready);
    let out = env.aw(&repo, ["gc"]);
    assert!(
        env.ws_path(&repo, "w1").join("a.txt").exists(),
        "{}",
        out.report()
    );
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    No workspace is past its retention
    [exit 0]
    ");
    live.signal("TERM");
    live.wait();
}

crate::both_backends!(
    gc_removes_only_what_retention_lets_go,
    a_live_workspace_is_never_removed,
);

#[test]
fn a_workspace_another_process_holds_is_skipped() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    configure(&repo, "done = \"1m\"\n");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    age(&env, &repo, "w1", HOUR);
    let lease = env.namespace_dir(&repo).join(".locks/w1.lock");
    let ready = env.path().join("ready");
    let script = format!("touch {}; sleep 30", ready.display());
    let holder = env
        .cmd("flock", &repo)
        .args([lease.to_str().unwrap(), "sh", "-c", &script])
        .spawn();
    wait_for_file(&ready);
    insta::assert_snapshot!(env.aw(&repo, ["gc"]), @r"
    --- stderr ---
    Skipped w1 (done for 1h, retention.done = 1m): another agent-workspace process holds it (creating, running or cleaning it)
    [exit 0]
    ");
    assert!(env.ws_path(&repo, "w1").exists());
    holder.signal("TERM");
    holder.wait();
}

#[test]
fn never_keeps_and_the_user_file_wins() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    configure(&repo, "done = \"1h\"\n");
    let user = env.path().join("xdg/config/agent-workspace");
    fs::create_dir_all(&user).unwrap();
    fs::write(user.join("config.toml"), "[retention]\ndone = \"never\"\n").unwrap();
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    age(&env, &repo, "w1", 30 * DAY);
    insta::assert_snapshot!(env.aw(&repo, ["gc"]), @r"
    --- stderr ---
    No retention is configured for workspaces (retention.<status> in agent-workspace.toml): gc removes no workspace
    No workspace is past its retention
    [exit 0]
    ");
    assert!(env.ws_path(&repo, "w1").exists());
    // With nothing configured at all, gc says so and removes nothing.
    fs::remove_file(user.join("config.toml")).unwrap();
    fs::remove_file(repo.join("agent-workspace.toml")).unwrap();
    insta::assert_snapshot!(env.aw(&repo, ["gc"]), @r"
    --- stderr ---
    No retention is configured for workspaces (retention.<status> in agent-workspace.toml): gc removes no workspace
    No workspace is past its retention
    [exit 0]
    ");
    assert!(env.ws_path(&repo, "w1").exists());
}

#[test]
fn bad_durations_are_configuration_errors() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let refused = ["done = \"soon\"\n", "error = 7\n", "conflicted = \"1h\"\n"].map(|text| {
        configure(&repo, text);
        env.aw(&repo, ["gc", "--dry-run"])
    });
    insta::assert_snapshot!(refused[0], @r#"
    --- stderr ---
    Error: invalid configuration in [TMP]/repo/agent-workspace.toml: retention.done = "soon" is not a duration (e.g. "30m", "1h", "7d") or "never"
    Hint: fix the key or value named above; docs/configuration.md lists every key
    [exit 2]
    "#);
    insta::assert_snapshot!(refused[1], @r"
    --- stderr ---
    Error: invalid configuration in [TMP]/repo/agent-workspace.toml: invalid type: integer `7`, expected a string, at line 2: error = 7
    Hint: fix the key or value named above; docs/configuration.md lists every key
    [exit 2]
    ");
    insta::assert_snapshot!(refused[2], @r#"
    --- stderr ---
    Error: invalid configuration in [TMP]/repo/agent-workspace.toml: unknown field `conflicted`, expected one of `done`, `landed`, `error`, `crashed`, `interrupted`, `idle`, `kept`, at line 2: conflicted = "1h"
    Hint: fix the key or value named above; docs/configuration.md lists every key
    [exit 2]
    "#);
    assert!(env.ws_path(&repo, "w1").exists());
}

#[test]
fn landed_workspaces_go_after_retention_landed() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    configure(&repo, "landed = \"1h\"\n");
    for id in ["landed", "done"] {
        let script = format!("echo {id} > {id}.txt");
        env.aw(&repo, ["run", id, "--", "sh", "-c", &script])
            .assert_ok();
        age(&env, &repo, id, DAY);
    }
    env.aw(&repo, ["land", "landed"]).assert_ok();
    // Landed just now: not yet past its retention, whatever its last run's age.
    let out = env.aw(&repo, ["gc", "--dry-run"]);
    assert_eq!(out.assert_ok().stdout, "", "{}", out.report());
    age(&env, &repo, "landed", 2 * HOUR);
    let out = env.aw(&repo, ["gc", "--json"]);
    let doc = out.assert_ok().json();
    assert_eq!(doc["removed"][0]["workspace_id"], "landed", "{doc}");
    assert_eq!(doc["removed"][0]["status"], "landed", "{doc}");
    assert_eq!(doc["removed"].as_array().unwrap().len(), 1, "{doc}");
    assert!(!env.ws_path(&repo, "landed").exists());
    assert!(env.ws_path(&repo, "done").exists());
    assert_eq!(
        fs::read_to_string(repo.join("landed.txt")).unwrap(),
        "landed\n"
    );
}

#[test]
fn the_workspace_gc_recipe_runs_gc() {
    let env = TestEnv::new();
    let repo = env.recipes_repo();
    configure(&repo, "done = \"1h\"\n");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    age(&env, &repo, "w1", DAY);
    let recipe = |args: &[&str]| env.recipe(&repo, "workspace-gc", args);
    let dry = recipe(&["--dry-run", "--json"]);
    assert_eq!(dry.assert_ok().json()["removed"][0]["workspace_id"], "w1");
    assert!(env.ws_path(&repo, "w1").exists());
    recipe(&[]).assert_ok();
    assert!(!env.ws_path(&repo, "w1").exists());
}

#[test]
fn workspaces_with_a_problem_are_left_to_clean() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    let statuses = ["done", "landed", "error", "crashed", "interrupted", "idle"];
    let all: String = statuses.iter().map(|s| format!("{s} = \"1s\"\n")).collect();
    configure(&repo, &all);
    for id in ["forgotten", "deleted"] {
        env.aw(&repo, ["run", id, "--", "true"]).assert_ok();
        age(&env, &repo, id, HOUR);
    }
    // Unregistered behind agent-workspace's back, and deleted by hand: their status is the
    // problem, which no retention names.
    env.jj_ok(&repo, ["workspace", "forget", "forgotten"]);
    fs::remove_dir_all(env.ws_path(&repo, "deleted")).unwrap();
    insta::assert_snapshot!(env.aw(&repo, ["gc", "--json"]), @r#"
    {
      "schema_version": 1,
      "dry_run": false,
      "removed": [],
      "skipped": [],
      "failed": [],
      "purged_kept": []
    }
    [exit 0]
    "#);
    assert!(env.ws_path(&repo, "forgotten").join("a.txt").exists());
    assert_eq!(Backend::Jj.registered(&env, &repo), ["default", "deleted"]);
}

/// `gc` purges the directories removals kept aside once they are older than `retention.kept`
/// (default 30 days), lists them in its dry run first, keeps younger ones, and keeps them all
/// with `retention.kept = "never"`.
#[test]
fn kept_aside_directories_go_after_retention_kept() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    let kept = env.namespace_dir(&repo).join(".kept");
    let old = kept.join("w1-20200101T000000Z");
    let young = kept.join(format!(
        "w2-{}",
        humantime::format_rfc3339_seconds(SystemTime::now())
            .to_string()
            .replace(['-', ':'], "")
    ));
    for dir in [&old, &young] {
        fs::create_dir_all(dir.join("sub")).unwrap();
        fs::write(dir.join("sub/notes.txt"), "kept\n").unwrap();
    }
    set_mtime(
        &old,
        humantime::parse_rfc3339("2020-01-01T00:00:00Z").unwrap(),
    );
    let dry = env.aw(&repo, ["gc", "--dry-run", "--json"]);
    dry.assert_ok();
    let doc = dry.json();
    crate::schemas::assert_valid("gc", &doc);
    let listed: Vec<&str> = doc["purged_kept"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["path"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [old.to_str().unwrap()], "{doc:#}");
    assert!(old.exists(), "a dry run purges nothing");

    configure(&repo, "kept = \"never\"\n");
    env.aw(&repo, ["gc"]).assert_ok();
    assert!(old.exists(), "retention.kept = never keeps it");

    fs::remove_file(repo.join("agent-workspace.toml")).unwrap();
    insta::assert_snapshot!(env.aw(&repo, ["gc"]), @r"
    Purged [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.kept/w1-[STAMP] (kept for 2532d, retention.kept = 30d)
    --- stderr ---
    No retention is configured for workspaces (retention.<status> in agent-workspace.toml): gc removes no workspace
    No workspace is past its retention
    [exit 0]
    ");
    assert!(!old.exists(), "{}", env.listing());
    assert!(young.join("sub/notes.txt").exists(), "a young one stays");
}

/// Sets directory `dir`'s modification time to `at`.
fn set_mtime(dir: &Path, at: SystemTime) {
    fs::File::open(dir).unwrap().set_modified(at).unwrap();
}

/// A kept-aside directory is judged by the later of the time in its name and its own
/// modification time, and a time ahead of the clock counts as new: one made seconds ago whose
/// name says 2020 (the clock was set back when it was named) and one whose name lies ahead
/// (made by a clock set back since) both stay, while one whose name and directory are old goes.
#[test]
fn gc_keeps_kept_aside_directories_a_set_back_clock_named() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    let kept = env.namespace_dir(&repo).join(".kept");
    let back = kept.join("w1-20200101T000000Z");
    let ahead = kept.join("w2-20991231T235959Z");
    let old = kept.join("w3-20200101T000000Z");
    for dir in [&back, &ahead, &old] {
        fs::create_dir_all(dir.join("sub")).unwrap();
        fs::write(dir.join("sub/notes.txt"), "kept\n").unwrap();
    }
    let long_ago = humantime::parse_rfc3339("2020-01-01T00:00:00Z").unwrap();
    set_mtime(&ahead, long_ago);
    set_mtime(&old, long_ago);
    let dry = env
        .aw(&repo, ["gc", "--dry-run", "--json"])
        .assert_ok()
        .json();
    let listed: Vec<&str> = dry["purged_kept"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["path"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [old.to_str().unwrap()], "{dry:#}");
    let out = env.aw(&repo, ["gc"]);
    out.assert_ok();
    assert!(!old.exists(), "{}", out.report());
    for dir in [&back, &ahead] {
        assert!(
            dir.join("sub/notes.txt").exists(),
            "{} purged\n{}",
            dir.display(),
            out.report()
        );
    }
}
