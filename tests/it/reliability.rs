//! Runs you can trust: liveness, leases, concurrency, signals and history.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::backends::Backend;
use crate::harness::{wait_for_file, TestEnv};
use crate::hostile_records::write_record;

/// `status --json` of `repo`, as (id, status) pairs.
pub(crate) fn statuses(env: &TestEnv, repo: &Path) -> Vec<(String, String)> {
    let out = env.aw(repo, ["status", "--json"]);
    out.assert_ok();
    let doc: Value = serde_json::from_str(&out.stdout).expect("status --json is JSON");
    doc["workspaces"]
        .as_array()
        .expect("a workspaces array")
        .iter()
        .map(|w| {
            let field = |k: &str| w[k].as_str().unwrap_or_default().to_string();
            (field("workspace_id"), field("status"))
        })
        .collect()
}

pub(crate) fn status_of(env: &TestEnv, repo: &Path, id: &str) -> String {
    statuses(env, repo)
        .into_iter()
        .find(|(w, _)| w == id)
        .map(|(_, s)| s)
        .unwrap_or_else(|| panic!("{id} not listed\n{}", env.listing()))
}

/// Whether `pid` is still a live (non-zombie) process.
fn alive(pid: &str) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

fn wait_until_dead(pid: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) {
        assert!(Instant::now() < deadline, "process {pid} is still alive");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits (at most 10 s) until the guard of a run whose supervisor was killed has ended the
/// processes the run left and released the lease: until then the run still shows as running.
pub(crate) fn wait_until_released(env: &TestEnv, repo: &Path, id: &str) {
    let lease = env.namespace_dir(repo).join(format!(".locks/{id}.lock"));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let free = std::process::Command::new("flock")
            .args(["-n", "-E", "99"])
            .arg(&lease)
            .arg("true")
            .status()
            .expect("run flock");
        if free.success() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{} is still held",
            lease.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Starts a long run in `id` that touches `<tmp>/<id>.started` and then waits for
/// `<tmp>/<id>.release`.
pub(crate) fn start_long_run(
    env: &TestEnv,
    repo: &Path,
    id: &str,
    extra: &[&str],
) -> crate::harness::Running {
    let tmp = env.path().display().to_string();
    let script =
        format!("touch {tmp}/{id}.started; while [ ! -e {tmp}/{id}.release ]; do sleep 0.02; done");
    let mut args = vec!["run", id];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "sh", "-c", &script]);
    let running = env.aw_cmd(repo).args(&args).spawn();
    wait_for_file(&env.path().join(format!("{id}.started")));
    running
}

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

fn a_second_run_fails_fast_naming_the_holder_and_wait_queues_behind_it(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let first = start_long_run(&env, &repo, "w1", &["--workflow", "holder"]);
    // Fails fast: a second run that waited would never return (the first ends only once the
    // test writes its release file, below), and the harness would fail it on its timeout.
    let second = env.aw(&repo, ["run", "w1", "--", "true"]);
    second.assert_code(125);
    assert_eq!(status_of(&env, &repo, "w1"), "running");
    let release = env.path().join("w1.release");
    let pid = first.pid().to_string();
    assert!(second.stderr.contains("is busy"), "{}", second.report());
    assert!(
        second.stderr.contains(&format!("pid {pid}")),
        "{}",
        second.report()
    );
    assert!(
        second.stderr.contains("workflow holder"),
        "{}",
        second.report()
    );
    assert!(second.stderr.contains("--wait"), "{}", second.report());
    insta::assert_snapshot!(env.transcript(&[&second]));
    let waiter = env
        .aw_cmd(&repo)
        .args([
            "run",
            "w1",
            "--wait",
            "--workflow",
            "queued",
            "--",
            "sh",
            "-c",
            // Runs only after the first run was released.
            &format!("test -e {} && echo queued-ran", release.display()),
        ])
        .spawn();
    // Gives a waiter that wrongly jumps the queue the time to do so.
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(status_of(&env, &repo, "w1"), "running");
    let record = env.metadata(&env.ws_path(&repo, "w1"));
    assert_eq!(record["status"], "running", "{record:#}");
    assert_eq!(record["workflow"], "holder", "{record:#}");
    fs::write(&release, "").unwrap();
    first.wait().assert_ok();
    let waited = waiter.wait();
    waited.assert_ok();
    assert_eq!(waited.stdout, "queued-ran\n");
    let record = env.metadata(&env.ws_path(&repo, "w1"));
    let runs = record["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["workflow"], "holder");
    assert_eq!(runs[1]["workflow"], "queued");
}

fn concurrent_runs_with_distinct_ids_all_succeed_round_after_round(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    for round in 0..2 {
        let ids: Vec<String> = (0..16).map(|i| format!("r{round}-{i}")).collect();
        let runs: Vec<_> = ids
            .iter()
            .map(|id| {
                env.aw_cmd(&repo)
                    .args(["run", id, "--", "sh", "-c", "echo $AGENT_WORKSPACE_ID"])
                    .spawn()
            })
            .collect();
        for (id, run) in ids.iter().zip(runs) {
            let out = run.wait();
            out.assert_ok();
            assert_eq!(out.stdout.trim(), id);
        }
        let names = backend.registered(&env, &repo);
        for id in &ids {
            assert!(names.contains(id), "{id} not registered: {names:?}");
            let record = env.metadata(&env.ws_path(&repo, id));
            assert_eq!(record["status"], "done", "{id}");
        }
        backend.assert_healthy(&env, &repo);
        env.aw(&repo, ["clean", "--all"]).assert_ok();
        assert_eq!(backend.registered(&env, &repo), ["default"]);
    }
}

/// Sends `signal` to a supervisor whose command runs a background child, and checks the
/// record, the exit code and that the command's whole process group is gone. (A
/// non-interactive shell starts background jobs with SIGINT ignored, so for SIGINT the
/// child is a foreground one.)
fn signal_reaches_the_command(backend: Backend, signal: &str, number: i32) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let tmp = env.path().display().to_string();
    let script = if signal == "INT" {
        format!("echo $$ > {tmp}/child; touch {tmp}/started; exec sleep 60")
    } else {
        format!("sleep 60 & echo $! > {tmp}/child; touch {tmp}/started; wait")
    };
    let running = env
        .aw_cmd(&repo)
        .args(["run", "w1", "--", "sh", "-c", &script])
        .spawn();
    wait_for_file(&env.path().join("started"));
    let child = fs::read_to_string(env.path().join("child"))
        .unwrap()
        .trim()
        .to_string();
    // Signal only once the child runs `sleep`: a shell that receives SIGINT between forking
    // and exec'ing its foreground command defers it until that command ends.
    let deadline = Instant::now() + Duration::from_secs(10);
    while fs::read_to_string(format!("/proc/{child}/comm"))
        .unwrap_or_default()
        .trim()
        != "sleep"
    {
        assert!(Instant::now() < deadline, "the command never started sleep");
        std::thread::sleep(Duration::from_millis(5));
    }
    running.signal(signal);
    let out = running.wait();
    out.assert_code(128 + number);
    wait_until_dead(&child);
    let record = env.metadata(&env.ws_path(&repo, "w1"));
    assert_eq!(record["status"], "interrupted", "{record}");
    assert_eq!(record["signal"], number);
    assert_eq!(record["exit_code"], 128 + number);
    assert_eq!(record["runs"][0]["status"], "interrupted");
}

fn sigint_reaches_the_command_group(backend: Backend) {
    signal_reaches_the_command(backend, "INT", 2);
}

fn sigterm_reaches_the_command_group(backend: Backend) {
    signal_reaches_the_command(backend, "TERM", 15);
}

fn sighup_reaches_the_command_group(backend: Backend) {
    signal_reaches_the_command(backend, "HUP", 1);
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
    a_second_run_fails_fast_naming_the_holder_and_wait_queues_behind_it,
    concurrent_runs_with_distinct_ids_all_succeed_round_after_round,
    history_is_kept_bounded_and_shown,
    sigint_reaches_the_command_group,
    sigterm_reaches_the_command_group,
    sighup_reaches_the_command_group,
);

#[test]
fn a_signal_while_the_workspace_is_created_rolls_the_creation_back() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    // The real jj, reached through a wrapper that says when `workspace add` starts and gives
    // the test time to signal the supervisor meanwhile.
    let bin = env.path().join("slow-bin");
    fs::create_dir_all(&bin).unwrap();
    let real = crate::harness::which("jj").unwrap();
    let marker = env.path().join("adding");
    let wrapper = bin.join("jj");
    fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ncase \" $* \" in *\" workspace add \"*) touch '{}'; sleep 1;; esac\nexec '{}' \"$@\"\n",
            marker.display(),
            real.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&wrapper, PermissionsExt::from_mode(0o755)).unwrap();
    let running = env
        .aw_cmd(&repo)
        .env("PATH", env.path_with_first(&bin))
        .args(["run", "w1", "--", "touch", "ran"])
        .spawn();
    wait_for_file(&marker);
    running.signal("TERM");
    let out = running.wait();
    out.assert_code(143);
    assert!(
        out.stderr.contains("interrupted by signal 15"),
        "{}",
        out.report()
    );
    assert!(!env.ws_path(&repo, "w1").exists(), "{}", env.listing());
    assert_eq!(env.workspace_names(&repo), ["default"]);
}

#[test]
fn a_workspace_named_like_a_lock_file_does_not_block_other_creations() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let live = start_long_run(&env, &repo, "repo", &[]);
    let started = Instant::now();
    env.aw(&repo, ["run", "other", "--", "true"]).assert_ok();
    assert!(started.elapsed() < Duration::from_secs(30));
    fs::write(env.path().join("repo.release"), "").unwrap();
    live.wait().assert_ok();
    // clean removes the lease with the workspace; status then lists nothing for it.
    env.aw(&repo, ["clean", "repo", "other"]).assert_ok();
    let locks = env.namespace_dir(&repo).join(".locks");
    assert!(!locks.join("repo.lock").exists());
    assert!(!locks.join("other.lock").exists());
    assert_eq!(statuses(&env, &repo), vec![]);
}
