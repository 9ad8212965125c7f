//! Runs `status` can trust: a killed supervisor shows as crashed and the workspace runs
//! again, a reused pid is no live run, and each workspace's run history stays bounded.

use std::fs;

use serde_json::Value;

use crate::backends::Backend;
use crate::harness::{wait_for_file, TestEnv};
use crate::hostile_records::write_record;
use crate::reliability_support::{status_of, wait_until_dead, wait_until_released};

fn a_killed_supervisor_shows_as_crashed_and_the_workspace_runs_again(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let tmp = env.path().display().to_string();
    let script =
        format!("echo $$ > {tmp}/shell; touch {tmp}/started; while :; do sleep 0.05; done");
    let running = env
        .aw_cmd(&repo)
        .args(["run", "w1", "--workflow", "long", "--", "sh", "-c", &script])
        .spawn();
    wait_for_file(&env.path().join("started"));
    assert_eq!(status_of(&env, &repo, "w1"), "running");
    let shell = fs::read_to_string(env.path().join("shell"))
        .unwrap()
        .trim()
        .to_string();
    running.signal("KILL");
    running.wait();
    // The command does not outlive its supervisor (parent-death signal).
    wait_until_dead(&shell);
    wait_until_released(&env, &repo, "w1");
    let out = env.aw(&repo, ["status"]);
    out.assert_ok();
    assert!(out.stdout.contains("crashed"), "{}", out.report());
    assert!(out.stderr.contains("its run died"), "{}", out.report());
    let one: Value =
        serde_json::from_str(&env.aw(&repo, ["status", "w1", "--json"]).stdout).unwrap();
    assert_eq!(one["status"], "crashed");
    assert_eq!(one["recorded_status"], "running");
    assert_eq!(one["problem"], "crashed");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    assert_eq!(status_of(&env, &repo, "w1"), "done");
}

fn liveness_checks_the_process_start_time_not_just_the_pid(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let me = std::process::id();
    let stat = fs::read_to_string(format!("/proc/{me}/stat")).unwrap();
    let start: u64 = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .nth(19)
        .unwrap()
        .parse()
        .unwrap();
    let mut record = env.metadata(&ws);
    record["status"] = "running".into();
    record["pid"] = me.into();
    // A live pid whose start time differs is a reused pid: the run is gone.
    record["pid_start"] = (start + 1).into();
    write_record(&env, &repo, "w1", &record.to_string());
    assert_eq!(status_of(&env, &repo, "w1"), "crashed");
    record["pid_start"] = start.into();
    write_record(&env, &repo, "w1", &record.to_string());
    assert_eq!(status_of(&env, &repo, "w1"), "running");
}

fn history_is_kept_bounded_and_shown(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    for i in 0..52 {
        let code = if i == 51 { "exit 3" } else { "true" };
        let out = env.aw(
            &repo,
            [
                "run",
                "w1",
                "--no-direnv",
                "--workflow",
                &format!("step{i}"),
                "--",
                "sh",
                "-c",
                code,
            ],
        );
        out.assert_code(if i == 51 { 3 } else { 0 });
    }
    let record = env.metadata(&env.ws_path(&repo, "w1"));
    let runs = record["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 50);
    assert_eq!(runs[0]["workflow"], "step2");
    let last = &runs[49];
    assert_eq!(last["workflow"], "step51");
    assert_eq!(last["exit_code"], 3);
    assert_eq!(last["status"], "error");
    assert!(last["duration_ms"].is_u64());
    assert_eq!(last["command"], serde_json::json!(["sh", "-c", "exit 3"]));
    let shown = env.aw(&repo, ["status", "w1"]);
    shown.assert_ok();
    assert!(shown.stdout.contains("RUNS"), "{}", shown.report());
    assert!(shown.stdout.contains("step51"), "{}", shown.report());
    let json: Value =
        serde_json::from_str(&env.aw(&repo, ["status", "w1", "--json"]).stdout).unwrap();
    assert_eq!(json["record"]["runs"].as_array().unwrap().len(), 50);
}

crate::both_backends!(
    a_killed_supervisor_shows_as_crashed_and_the_workspace_runs_again,
    liveness_checks_the_process_start_time_not_just_the_pid,
    history_is_kept_bounded_and_shown,
);
