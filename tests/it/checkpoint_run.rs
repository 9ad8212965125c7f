//! Checkpoints and runs: `run --checkpoint` keeps each run's commit in its history; from
//! inside a run it is counted, from outside busy; inside a sandbox only from outside.

use std::fs;

use crate::backends::{git_ok, Backend};
use crate::checkpoint_support::{below_working_copy, checkpoint, description, files_of};
use crate::harness::TestEnv;
use crate::reliability_support::start_long_run;

fn run_checkpoint_keeps_each_runs_commit_in_its_history(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let out = env.aw(
        &repo,
        [
            "run",
            "w1",
            "--checkpoint",
            "--workflow",
            "build",
            "--",
            "sh",
            "-c",
            "echo r > r.txt; exit 3",
        ],
    );
    out.assert_code(3);
    // A run that changes nothing makes no checkpoint.
    env.aw(&repo, ["run", "w1", "--checkpoint", "--", "true"])
        .assert_ok();
    let status = env.aw(&repo, ["status", "w1", "--json"]).json();
    let runs = status["record"]["runs"].as_array().unwrap().clone();
    assert_eq!(runs.len(), 2, "{status:#}");
    let made = &runs[0]["checkpoint"];
    let commit = made["commit_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{status:#}"));
    assert_eq!(runs[1].get("checkpoint"), None, "{status:#}");
    assert_eq!(files_of(backend, &env, &repo, commit), "r.txt\n");
    assert_eq!(
        description(backend, &env, &repo, commit),
        "[workspace w1] checkpoint 1 after run: build `sh -c 'echo r > r.txt; exit 3'` exited 3"
    );
    match backend {
        Backend::Jj => assert_eq!(made["change_id"], env.change_id(&repo, commit)),
        Backend::Git => assert_eq!(made.get("change_id"), None),
    }
    let ws = env.ws_path(&repo, "w1");
    assert_eq!(below_working_copy(backend, &env, &ws), commit);
    let detail = env.aw(&repo, ["status", "w1"]);
    assert!(detail.stdout.contains("CHECKPOINT"), "{}", detail.report());
    assert!(detail.stdout.contains(&commit[..12]), "{}", detail.report());
    // The run's work reverted as the README says.
    assert!(ws.join("r.txt").exists());
    match backend {
        Backend::Jj => drop(env.jj_ok(&ws, ["revert", "-r", commit, "-B", "@"])),
        Backend::Git => drop(git_ok(&env, &ws, &["revert", "--no-edit", commit])),
    }
    assert!(!ws.join("r.txt").exists());
}

fn a_checkpoint_from_inside_the_run_is_counted_and_a_live_run_is_busy(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    // From inside the workspace's own run (nested): allowed, and counted once the run ends.
    let script = "echo n > n.txt; agent-workspace checkpoint w1";
    let out = env.aw(&repo, ["run", "w1", "--", "sh", "-c", script]);
    match backend {
        Backend::Jj => insta::assert_snapshot!(out, @r"
        checkpoint 1 of workspace w1: commit [COMMIT], change [CHANGE]
        1 file changed
          n.txt
        [exit 0]
        "),
        Backend::Git => insta::assert_snapshot!(out, @r"
        checkpoint 1 of workspace w1: commit [COMMIT]
        1 file changed
          n.txt
        [exit 0]
        "),
    }
    let ws = env.ws_path(&repo, "w1");
    assert_eq!(env.metadata(&ws)["checkpoints"], 1);
    // From outside while a run holds it: busy, nothing recorded.
    let running = start_long_run(&env, &repo, "w1", &[]);
    fs::write(ws.join("m.txt"), "m\n").unwrap();
    let busy = env.aw(&repo, ["checkpoint", "w1"]);
    busy.assert_code(1);
    assert!(
        busy.stderr
            .starts_with("Error: workspace \"w1\" is busy: a run holds it (pid "),
        "{}",
        busy.report()
    );
    assert!(busy.stderr.contains("\nHint: "), "{}", busy.report());
    fs::write(env.path().join("w1.release"), "").unwrap();
    running.wait().assert_ok();
    assert_eq!(env.metadata(&ws)["checkpoints"], 1);
    let next = checkpoint(&env, &repo, &["w1"]);
    assert_eq!(next["number"], 2, "{next:#}");
    assert_eq!(next["paths"], serde_json::json!(["m.txt"]));
}

/// Inside a sandboxed run agent-workspace's state is read-only: `checkpoint` refuses clearly
/// and commits nothing; `run --sandbox --checkpoint` checkpoints from outside.
fn a_checkpoint_inside_a_sandbox_is_refused_and_run_checkpoint_works(backend: Backend) {
    crate::sandbox_support::require_sandbox();
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let script = "echo x > x.txt; agent-workspace checkpoint w1; echo rc=$?";
    let out = env.aw(&repo, ["run", "w1", "--sandbox", "--", "sh", "-c", script]);
    out.assert_ok();
    assert_eq!(out.stdout, "rc=1\n", "{}", out.report());
    assert!(
        out.stderr.contains("from inside its sandboxed run") && out.stderr.contains("\nHint: "),
        "{}",
        out.report()
    );
    let ws = env.ws_path(&repo, "w1");
    assert_eq!(backend.changes(&env, &ws), "A x.txt\n");
    let run = ["run", "w1", "--sandbox", "--checkpoint", "--", "true"];
    env.aw(&repo, run).assert_ok();
    let record = env.metadata(&ws);
    let commit = record["runs"][1]["checkpoint"]["commit_id"]
        .as_str()
        .unwrap();
    assert_eq!(files_of(backend, &env, &repo, commit), "x.txt\n");
}

crate::both_backends!(
    a_checkpoint_inside_a_sandbox_is_refused_and_run_checkpoint_works,
    run_checkpoint_keeps_each_runs_commit_in_its_history,
    a_checkpoint_from_inside_the_run_is_counted_and_a_live_run_is_busy,
);
