//! `run`: how the command's end comes back (exit status, signals, 126 and 127, the record)
//! and what `--cleanup` does with the workspace after a success or a failure.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use crate::backends::Backend;
use crate::harness::{wait_for_file, TestEnv};

fn the_command_s_exit_status_is_passed_through(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let mut said = String::new();
    for (id, loader) in [("via-direnv", None), ("direct", Some("--no-direnv"))] {
        let run = |command: &[&str]| {
            env.aw_cmd(&repo)
                .args(["run", id])
                .args(loader)
                .arg("--")
                .args(command)
                .run()
        };
        run(&["true"]).assert_code(0);
        run(&["sh", "-c", "exit 3"]).assert_code(3);
        run(&["sh", "-c", "exit 255"]).assert_code(255);
        // Died of a signal: 128 + N.
        run(&["sh", "-c", "kill -SEGV $$"]).assert_code(139);
        let record = env.metadata(&env.ws_path(&repo, id));
        assert_eq!(record["status"], "error", "{id}: {record:#}");
        assert_eq!(record["exit_code"], 139, "{id}: {record:#}");
        assert_eq!(record["signal"], 11, "{id}: {record:#}");
        // Death by a signal that stops programs (KILL, TERM, INT, ...) is recorded as
        // interrupted, even when the command sent it to itself.
        run(&["sh", "-c", "kill -KILL $$"]).assert_code(137);
        let record = env.metadata(&env.ws_path(&repo, id));
        assert_eq!(record["status"], "interrupted", "{id}: {record:#}");
        assert_eq!(record["exit_code"], 137, "{id}: {record:#}");
        assert_eq!(record["signal"], 9, "{id}: {record:#}");
        run(&["sh", "-c", "kill -TERM $$"]).assert_code(143);
        // Not found: 127; found but not executable: 126.
        let out = run(&["no-such-command-for-agent-workspace"]);
        out.assert_code(127);
        assert!(
            out.stderr.contains("no-such-command-for-agent-workspace"),
            "{}",
            out.report()
        );
        let not_executable = run(&["./a.txt"]);
        not_executable.assert_code(126);
        said.push_str(&env.transcript(&[&out, &not_executable]));
        let record = env.metadata(&env.ws_path(&repo, id));
        assert_eq!(record["status"], "error", "{id}: {record:#}");
        assert_eq!(record["exit_code"], 126, "{id}: {record:#}");
    }
    // Said before the command could run: one snapshot serves both backends.
    insta::assert_snapshot!(said, @r"
    $ run via-direnv -- no-such-command-for-agent-workspace
    [exit 127]
    Error: no-such-command-for-agent-workspace: command not found
    Hint: check its name and the PATH the workspace's environment sets
    $ run via-direnv -- ./a.txt
    [exit 126]
    Error: ./a.txt: permission denied
    Hint: make it executable (chmod +x) or run it through its interpreter
    $ run direct --no-direnv -- no-such-command-for-agent-workspace
    [exit 127]
    Error: no-such-command-for-agent-workspace: command not found
    Hint: check its name and the PATH the workspace's environment sets
    $ run direct --no-direnv -- ./a.txt
    [exit 126]
    Error: ./a.txt: permission denied
    Hint: make it executable (chmod +x) or run it through its interpreter
    ");
}

fn cleanup_removes_the_workspace_after_a_success(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let out = env.aw(&repo, ["run", "w1", "--cleanup", "--", "true"]);
    let ws = env.ws_path(&repo, "w1");
    assert!(!ws.exists(), "{}", out.report());
    assert_eq!(backend.registered(&env, &repo), ["default"]);
    match backend {
        Backend::Jj => insta::assert_snapshot!(out, @r"
        --- stderr ---
        Removed w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1); it had no edits to keep
        [exit 0]
        "),
        // The branch is kept, so its commits stay reachable.
        Backend::Git => insta::assert_snapshot!(out, @r"
        --- stderr ---
        Removed w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1); branch agent-workspace/w1 ([SHORT]) keeps its commits
        [exit 0]
        "),
    }
}

fn cleanup_keeps_edits_of_a_successful_run(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let out = env.aw(
        &repo,
        [
            "run",
            "w1",
            "--cleanup",
            "--",
            "sh",
            "-c",
            "echo result > out.txt",
        ],
    );
    out.assert_ok();
    assert!(!env.ws_path(&repo, "w1").exists());
    // In a change (jj) or committed to the workspace's branch (git).
    let (keeper, _) = backend.kept(&env, &repo, "w1", &out.stderr);
    assert_eq!(
        backend.kept_file(&env, &repo, &keeper, "out.txt"),
        "result\n"
    );
}

fn cleanup_keeps_the_workspace_after_a_failure(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let out = env.aw(
        &repo,
        ["run", "w1", "--cleanup", "--", "sh", "-c", "exit 4"],
    );
    out.assert_code(4);
    let ws = env.ws_path(&repo, "w1");
    assert!(ws.join("a.txt").is_file(), "{}", out.report());
    assert_eq!(backend.registered(&env, &repo), ["default", "w1"]);
    let record = env.metadata(&ws);
    assert_eq!(record["status"], "error");
    assert_eq!(record["exit_code"], 4);
    let status = env.aw(&repo, ["status"]);
    assert!(
        status.assert_ok().stdout.contains("w1         error"),
        "{}",
        status.report()
    );
}

fn a_terminated_run_forwards_the_signal_and_is_recorded_as_interrupted(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let started = env.path().join("started");
    let script = format!("touch '{}'; exec sleep 30", started.display());
    let run = env
        .aw_cmd(&repo)
        .args(["run", "w1", "--", "sh", "-c", &script])
        .spawn();
    wait_for_file(&started);
    run.signal("TERM");
    let out = run.wait();
    out.assert_code(143);
    let record = env.metadata(&env.ws_path(&repo, "w1"));
    assert_eq!(record["status"], "interrupted", "{record:#}");
    assert_eq!(record["signal"], 15, "{record:#}");
    assert_eq!(record["exit_code"], 143, "{record:#}");
}

fn a_non_executable_file_in_the_workspace_gives_126(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let script = env.ws_path(&repo, "w1").join("tool.sh");
    fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o644)).unwrap();
    let out = env.aw(&repo, ["run", "w1", "--", "./tool.sh"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: ./tool.sh: permission denied
    Hint: make it executable (chmod +x) or run it through its interpreter
    [exit 126]
    ");
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    env.aw(&repo, ["run", "w1", "--", "./tool.sh"])
        .assert_code(0);
}

crate::both_backends!(
    the_command_s_exit_status_is_passed_through,
    cleanup_removes_the_workspace_after_a_success,
    cleanup_keeps_edits_of_a_successful_run,
    cleanup_keeps_the_workspace_after_a_failure,
    a_terminated_run_forwards_the_signal_and_is_recorded_as_interrupted,
    a_non_executable_file_in_the_workspace_gives_126,
);
