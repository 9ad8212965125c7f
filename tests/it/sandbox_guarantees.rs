//! Inside `run --sandbox` every other guarantee holds: commits reach the repository (also
//! a non-colocated jj one), exit codes and SIGTERM are unchanged, a live run holds its lock.

use std::fs;

use crate::backends::{git_ok, Backend};
use crate::harness::{wait_for_file, TestEnv};
use crate::sandbox_support::{require_sandbox, setup};

fn commits_made_in_the_sandbox_reach_the_repository(backend: Backend) {
    let (env, repo) = setup(backend);
    let commit = match backend {
        Backend::Jj => "echo new > made.txt && jj commit -m sandboxed-commit && jj log -r @- --no-graph -T description",
        Backend::Git => "echo new > made.txt && git add made.txt && git commit -q -m sandboxed-commit && git log -1 --format=%s",
    };
    let out = env.aw(&repo, ["run", "--sandbox", "w", "--", "sh", "-c", commit]);
    out.assert_ok();
    assert!(out.stdout.contains("sandboxed-commit"), "{}", out.stdout);
    let seen = match backend {
        Backend::Jj => env.jj_ok(
            &repo,
            ["log", "--no-graph", "-r", "all()", "-T", "description"],
        ),
        Backend::Git => git_ok(&env, &repo, &["log", "--all", "--format=%s"]),
    };
    assert!(seen.contains("sandboxed-commit"), "{seen}");
}

fn exit_codes_and_sigterm_are_unchanged(backend: Backend) {
    let (env, repo) = setup(backend);
    env.aw(&repo, ["run", "--sandbox", "w", "--", "sh", "-c", "exit 7"])
        .assert_code(7);
    let record = env.metadata(&env.ws_path(&repo, "w"));
    assert_eq!(record["status"], "error");
    assert_eq!(record["exit_code"], 7);
    // The test's temp dir is under the host's /tmp, which the sandbox replaces: the command
    // marks its start in its workspace.
    let started = env.ws_path(&repo, "w").join("started");
    let script = "touch started; exec sleep 60";
    let running = env
        .aw_cmd(&repo)
        .args(["run", "--sandbox", "w", "--", "sh", "-c", script])
        .spawn();
    wait_for_file(&started);
    std::thread::sleep(std::time::Duration::from_millis(200));
    running.signal("TERM");
    running.wait().assert_code(143);
    let record = env.metadata(&env.ws_path(&repo, "w"));
    assert_eq!(record["status"], "interrupted", "{record}");
}

/// While a sandboxed run lives, `status` says so and a second run waits with `--wait`.
fn a_live_sandboxed_run_holds_its_workspace(backend: Backend) {
    let (env, repo) = setup(backend);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w");
    let release = ws.join("release");
    let running = env
        .aw_cmd(&repo)
        .args(["run", "--sandbox", "w", "--", "sh", "-c"])
        .arg("touch started; while [ ! -e release ]; do sleep 0.05; done")
        .spawn();
    wait_for_file(&ws.join("started"));
    let status = env.aw(&repo, ["status", "--json", "w"]);
    assert!(status.stdout.contains("\"running\""), "{}", status.stdout);
    let busy = env.aw(&repo, ["run", "w", "--", "true"]);
    busy.assert_code(125);
    assert!(
        busy.stderr
            .starts_with("Error: workspace \"w\" is busy: pid "),
        "{}",
        busy.stderr
    );
    let waiting = env
        .aw_cmd(&repo)
        .args(["run", "--wait", "w", "--", "true"])
        .spawn();
    fs::write(&release, "").unwrap();
    running.wait().assert_ok();
    waiting.wait().assert_ok();
}

crate::both_backends!(
    a_live_sandboxed_run_holds_its_workspace,
    commits_made_in_the_sandbox_reach_the_repository,
    exit_codes_and_sigterm_are_unchanged,
);

#[test]
fn a_non_colocated_jj_repository_commits_from_the_sandbox() {
    require_sandbox();
    let env = TestEnv::new();
    env.jj(env.path(), ["git", "init", "--no-colocate", "plain"])
        .assert_ok();
    let repo = fs::canonicalize(env.path().join("plain")).unwrap();
    fs::write(repo.join("a.txt"), "a\n").unwrap();
    env.jj(&repo, ["commit", "-m", "initial"]).assert_ok();
    assert!(!repo.join(".git").exists());
    let out = env.aw(
        &repo,
        [
            "run",
            "--sandbox",
            "w",
            "--",
            "sh",
            "-c",
            "echo n > n.txt && jj commit -m from-sandbox",
        ],
    );
    out.assert_ok();
    let seen = env.jj_ok(
        &repo,
        ["log", "--no-graph", "-r", "all()", "-T", "description"],
    );
    assert!(seen.contains("from-sandbox"), "{seen}");
}
