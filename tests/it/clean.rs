//! `clean`: keep a workspace's edits in a change, forget it, delete its directory; and never
//! touch what is not a workspace.

use std::fs;

use crate::harness::{wait_for_file, TestEnv};

/// The change id at the end of a "kept in change <id>" line.
fn kept_change(line: &str) -> String {
    let (_, change) = line
        .trim_end()
        .rsplit_once("its edits are kept in change ")
        .unwrap_or_else(|| panic!("no kept change in {line:?}"));
    change.to_string()
}

#[test]
fn clean_keeps_unrecorded_edits_in_a_change() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    // Edited by hand after the run: no jj command has seen it yet.
    fs::write(ws.join("notes.txt"), "unrecorded\n").unwrap();
    fs::write(ws.join("a.txt"), "changed\n").unwrap();
    let out = env.aw(&repo, ["clean", "w1"]);
    out.assert_ok();
    insta::assert_snapshot!(env.normalize(&out.stdout), @"Removed w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1); its edits are kept in change [CHANGE]");
    assert!(!ws.exists(), "{}", env.listing());
    assert_eq!(env.workspace_names(&repo), ["default"]);
    let change = kept_change(&out.stdout);
    assert_eq!(env.change_id(&repo, &change), change);
    assert_eq!(
        env.jj_ok(&repo, ["file", "show", "-r", &change, "notes.txt"]),
        "unrecorded\n"
    );
    assert_eq!(
        env.jj_ok(&repo, ["file", "show", "-r", &change, "a.txt"]),
        "changed\n"
    );
    assert_eq!(
        env.jj_ok(&repo, ["file", "list", "-r", &change]),
        ".envrc\na.txt\nnotes.txt\nsub/b.txt\n"
    );
    // The change is visible in the log, on top of the workspace's base.
    let log = env.jj_ok(
        &repo,
        [
            "log",
            "--no-graph",
            "-r",
            &format!("{change}-"),
            "-T",
            "description",
        ],
    );
    assert_eq!(log, "initial\n");
}

#[test]
fn clean_of_a_workspace_without_edits_says_so() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let out = env.aw(&repo, ["clean", "w1"]);
    out.assert_ok();
    insta::assert_snapshot!(env.normalize(&out.stdout), @"Removed w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1); it had no edits to keep");
    assert!(!env.ws_path(&repo, "w1").exists());
    assert_eq!(env.workspace_names(&repo), ["default"]);
    let status = env.aw(&repo, ["status"]);
    assert_eq!(
        status.assert_ok().stdout,
        "WORKSPACE  STATUS  WORKFLOW  UPDATED  BACKEND  PATH\n"
    );
}

#[test]
fn clean_removes_several_workspaces() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    env.aw(&repo, ["run", "w2", "--", "sh", "-c", "echo x > x.txt"])
        .assert_ok();
    env.aw(&repo, ["run", "w3", "--", "true"]).assert_ok();
    let out = env.aw(&repo, ["clean", "w1", "w2"]);
    out.assert_ok();
    insta::assert_snapshot!(env.normalize(&out.stdout), @r"
    Removed w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1); it had no edits to keep
    Removed w2 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w2); its edits are kept in change [CHANGE]
    ");
    assert_eq!(env.workspace_names(&repo), ["default", "w3"]);
}

#[test]
fn clean_of_an_unknown_id_exits_1() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let out = env.aw(&repo, ["clean", "nope"]);
    out.assert_code(1);
    insta::assert_snapshot!(env.normalize(&out.stderr), @r#"
    Error: no workspace "nope" (looked for [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/nope)
    Hint: list workspaces with `agent-workspace status`; create one with `agent-workspace run`
    "#);
    // A known id beside an unknown one is still removed; the exit code reports the failure.
    let out = env.aw(&repo, ["clean", "w1", "nope"]);
    out.assert_code(1);
    assert!(out.stdout.starts_with("Removed w1 "), "{}", out.report());
    assert_eq!(env.workspace_names(&repo), ["default"]);
}

#[test]
fn clean_refuses_a_workspace_replaced_by_a_symlink_to_elsewhere() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let outside = env.path().join("precious");
    fs::create_dir_all(outside.join("dir")).unwrap();
    fs::write(outside.join("keep.txt"), "mine\n").unwrap();
    fs::write(outside.join("dir/also.txt"), "also mine\n").unwrap();
    fs::remove_dir_all(&ws).unwrap();
    std::os::unix::fs::symlink(&outside, &ws).unwrap();

    let out = env.aw(&repo, ["clean", "w1"]);
    out.assert_code(1);
    insta::assert_snapshot!(env.normalize(&out.stderr), @"Skipped w1: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1 is a symlink or file, not a workspace; not touching it");
    assert_eq!(out.stdout, "");
    let run = env.aw(&repo, ["run", "w1", "--", "touch", "ran"]);
    run.assert_code(125);
    insta::assert_snapshot!(env.normalize(&run.stderr), @r"
    Error: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1 is a symlink or file, not a workspace directory; refusing to touch it
    Hint: remove it by hand once you know where it points
    ");
    assert_eq!(
        fs::read_to_string(outside.join("keep.txt")).unwrap(),
        "mine\n"
    );
    assert_eq!(
        fs::read_to_string(outside.join("dir/also.txt")).unwrap(),
        "also mine\n"
    );
    let mut names: Vec<_> = fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["dir", "keep.txt"]);
    assert!(fs::symlink_metadata(&ws).unwrap().file_type().is_symlink());
}

#[test]
fn clean_forgets_a_workspace_whose_directory_was_deleted() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    fs::remove_dir_all(env.ws_path(&repo, "w1")).unwrap();
    let out = env.aw(&repo, ["clean", "w1"]);
    out.assert_ok();
    assert_eq!(env.workspace_names(&repo), ["default"]);
    let status = env.aw(&repo, ["status"]);
    assert_eq!(
        status.assert_ok().stdout,
        "WORKSPACE  STATUS  WORKFLOW  UPDATED  BACKEND  PATH\n"
    );
}

#[test]
fn clean_refuses_a_workspace_with_a_live_run() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let started = env.path().join("started");
    let release = env.path().join("release");
    let script = format!(
        "touch '{}'; while [ ! -e '{}' ]; do sleep 0.02; done",
        started.display(),
        release.display()
    );
    let run = env
        .aw_cmd(&repo)
        .args(["run", "w1", "--", "sh", "-c", &script])
        .spawn();
    wait_for_file(&started);
    let out = env.aw(&repo, ["clean", "w1"]);
    fs::write(&release, "").unwrap();
    run.wait().assert_ok();
    out.assert_code(1);
    insta::assert_snapshot!(env.normalize(&out.stderr), @"Skipped w1: a run is live (pid [PID], since [TIME]); pass --force to stop it first");
    assert!(env.ws_path(&repo, "w1").join("a.txt").is_file());
}
