//! One run per workspace: a second run fails fast naming the holder or queues with `--wait`;
//! runs of distinct ids proceed concurrently; a workspace named like a lock file blocks none.

use std::fs;
use std::time::{Duration, Instant};

use crate::backends::Backend;
use crate::harness::TestEnv;
use crate::reliability_support::{start_long_run, status_of, statuses};

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
    insta::assert_snapshot!(second, @r#"
    --- stderr ---
    Error: workspace "w1" is busy: pid [PID], workflow holder, since [TIME]
    Hint: pass --wait to queue behind it, or use another id
    [exit 125]
    "#);
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

crate::both_backends!(
    a_second_run_fails_fast_naming_the_holder_and_wait_queues_behind_it,
    concurrent_runs_with_distinct_ids_all_succeed_round_after_round,
);

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
