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
    dry.assert_ok();
    insta::assert_snapshot!(env.normalize(&dry.stdout), @"Would remove old ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/old): done for 2h, retention.done = 1h; would remove its 1 run log ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.logs/old)");
    assert!(logs.is_dir());
    for id in ["old", "new", "failed"] {
        assert!(env.ws_path(&repo, id).exists(), "--dry-run removed {id}");
    }
    let json = env.aw(&repo, ["gc", "--dry-run", "--json"]);
    let doc = json.assert_ok().json();
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["dry_run"], true);
    assert_eq!(doc["removed"][0]["workspace_id"], "old");
    assert_eq!(doc["removed"][0]["status"], "done");
    assert_eq!(doc["removed"][0]["retention_seconds"], 3600);
    assert!(doc["removed"][0]["age_seconds"].as_u64().unwrap() >= 7200);
    assert_eq!(doc["removed"].as_array().unwrap().len(), 1, "{doc}");
    let out = env.aw(&repo, ["gc"]);
    out.assert_ok();
    assert!(
        out.stderr
            .contains("Expired old: done for 2h, retention.done = 1h"),
        "{}",
        out.report()
    );
    assert!(!env.ws_path(&repo, "old").exists());
    assert!(!logs.exists(), "{}", env.listing());
    assert!(
        out.stdout.contains("; removed its 1 run log ("),
        "{}",
        out.report()
    );
    assert!(env.ws_path(&repo, "new").exists() && env.ws_path(&repo, "failed").exists());
    // Its edits are kept as `clean` keeps them.
    let (keeper, _) = backend.kept(&env, &repo, "old", &out.stdout);
    assert_eq!(
        backend.kept_file(&env, &repo, &keeper, "notes.txt"),
        "unrecorded\n"
    );
    let again = env.aw(&repo, ["gc"]);
    again.assert_ok();
    assert!(
        again.stderr.contains("No workspace is past its retention"),
        "{}",
        again.report()
    );
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
    out.assert_ok();
    assert!(
        env.ws_path(&repo, "w1").join("a.txt").exists(),
        "{}",
        out.report()
    );
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
    let out = env.aw(&repo, ["gc"]);
    out.assert_ok();
    assert!(
        out.stderr.contains("Skipped w1 (done for 1h, retention.done = 1m): another agent-workspace process holds it"),
        "{}",
        out.report()
    );
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
    let out = env.aw(&repo, ["gc"]);
    out.assert_ok();
    assert!(env.ws_path(&repo, "w1").exists(), "{}", out.report());
    // With nothing configured at all, gc says so and removes nothing.
    fs::remove_file(user.join("config.toml")).unwrap();
    fs::remove_file(repo.join("agent-workspace.toml")).unwrap();
    let out = env.aw(&repo, ["gc"]);
    out.assert_ok();
    assert!(
        out.stderr.contains("No retention is configured"),
        "{}",
        out.report()
    );
    assert!(env.ws_path(&repo, "w1").exists());
}

#[test]
fn bad_durations_are_configuration_errors() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    for (text, said) in [
        (
            "done = \"soon\"\n",
            r#"retention.done = "soon" is not a duration"#,
        ),
        ("error = 7\n", "invalid type: integer"),
        ("conflicted = \"1h\"\n", "unknown field `conflicted`"),
    ] {
        configure(&repo, text);
        let out = env.aw(&repo, ["gc", "--dry-run"]);
        out.assert_code(2);
        assert!(
            out.stderr.contains("agent-workspace.toml") && out.stderr.contains(said),
            "{text}: {}",
            out.report()
        );
        assert!(out.stderr.contains("Hint: "), "{}", out.report());
    }
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
    let out = env.aw(&repo, ["gc", "--json"]);
    let doc = out.assert_ok().json();
    assert_eq!(doc["removed"], serde_json::json!([]), "{doc}");
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
    let out = env.aw(&repo, ["gc"]);
    out.assert_ok();
    assert!(
        out.stdout
            .contains(&format!("Purged {} (kept ", old.display())),
        "{}",
        out.report()
    );
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
