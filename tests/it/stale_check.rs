//! The staleness check of a warm run decides from what jj recorded, never by snapshotting:
//! another workspace's unrelated operation costs the run no snapshot (an unrecorded edit stays
//! unrecorded, the operation log gains nothing), while every way jj has of making the working
//! copy really stale (another workspace rewriting its commit, `jj undo`, `jj op restore`, an
//! abandoned commit) still gets the repair.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::harness::TestEnv;

/// A jj repo with workspaces `w1` (whose run committed `agent.txt`) and `w2`, both made by
/// `run`.
fn two_workspaces(env: &TestEnv) -> (PathBuf, PathBuf, PathBuf) {
    let repo = env.jj_repo("repo");
    let script = "echo agent > agent.txt && jj commit -m work";
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", script])
        .assert_ok();
    env.aw(&repo, ["run", "w2", "--", "true"]).assert_ok();
    (
        repo.clone(),
        env.ws_path(&repo, "w1"),
        env.ws_path(&repo, "w2"),
    )
}

/// Every operation id, newest first, read without a snapshot.
fn ops(env: &TestEnv, repo: &Path) -> String {
    let template = r#"id ++ " " ++ description ++ "\n""#;
    env.jj_ok(
        repo,
        [
            "--ignore-working-copy",
            "op",
            "log",
            "--no-graph",
            "-T",
            template,
        ],
    )
}

/// The files w1's working-copy commit changed, as the repository has it (no snapshot).
fn recorded_in_w1(env: &TestEnv, repo: &Path) -> String {
    env.jj_ok(
        repo,
        ["--ignore-working-copy", "diff", "--name-only", "-r", "w1@"],
    )
}

#[test]
fn an_unrelated_operation_elsewhere_costs_a_warm_run_no_snapshot() {
    let env = TestEnv::new();
    let (repo, w1, w2) = two_workspaces(&env);
    fs::write(w1.join("unrecorded.txt"), "not yet recorded\n").unwrap();
    let unrelated: [(&Path, &[&str]); 4] = [
        (&w2, &["commit", "-m", "w2 work"]),
        (&repo, &["commit", "-m", "main work"]),
        (&repo, &["bookmark", "create", "tick", "-r", "@-"]),
        (&w2, &["describe", "-m", "w2 draft"]),
    ];
    for (dir, args) in unrelated {
        fs::write(dir.join("other.txt"), args.join(" ")).unwrap();
        env.jj_ok(dir, args);
        let before = ops(&env, &repo);
        for _ in 0..2 {
            let run = env.aw(&repo, ["run", "w1", "--", "cat", "unrecorded.txt"]);
            run.assert_ok();
            assert_eq!(run.stdout, "not yet recorded\n", "{}", run.report());
            assert!(!run.stderr.contains("stale"), "{}", run.report());
        }
        assert_eq!(ops(&env, &repo), before, "after `jj {}`", args.join(" "));
        assert_eq!(
            recorded_in_w1(&env, &repo),
            "",
            "after `jj {}`",
            args.join(" ")
        );
    }
    // The edit is still there for jj to record when something needs the files.
    env.jj_ok(&w1, ["status"]);
    assert_eq!(recorded_in_w1(&env, &repo), "unrecorded.txt\n");
}

/// An unrecorded edit in w1, then an unrelated operation and a warm run (so the next check
/// starts from a working copy whose operation is behind the repository's).
fn edit_then_unrelated_run(env: &TestEnv, repo: &Path, w1: &Path, w2: &Path) {
    fs::write(w1.join("unrecorded.txt"), "kept\n").unwrap();
    fs::write(w2.join("w2.txt"), "w2\n").unwrap();
    env.jj_ok(w2, ["commit", "-m", "w2 work"]);
    env.aw(repo, ["run", "w1", "--", "true"]).assert_ok();
}

/// The run repaired w1: it said so, the command saw the updated files and the unrecorded edit.
fn assert_repaired(env: &TestEnv, repo: &Path, w1: &Path, present: &str, absent: &str) {
    let script = format!("cat unrecorded.txt && test -e {present} && ! test -e {absent}");
    let run = env.aw(repo, ["run", "w1", "--", "sh", "-c", &script]);
    insta::allow_duplicates! { insta::assert_snapshot!(run, @r#"
    kept
    --- stderr ---
    Note: workspace "w1" was stale; updated it (its edits are kept)
    [exit 0]
    "#) };
    assert_eq!(run.stdout, "kept\n", "{}", run.report());
    assert!(
        env.jj(w1, ["status"]).code() == Some(0),
        "still stale\n{}",
        env.listing()
    );
}

#[test]
fn another_workspace_rewriting_its_commit_is_repaired() {
    let env = TestEnv::new();
    let (repo, w1, w2) = two_workspaces(&env);
    edit_then_unrelated_run(&env, &repo, &w1, &w2);
    fs::write(w2.join("moved.txt"), "moved in\n").unwrap();
    env.jj_ok(
        &w2,
        ["squash", "--from", "w2@", "--into", "w1@", "moved.txt"],
    );
    assert_repaired(&env, &repo, &w1, "moved.txt", "nothing-here");
}

#[test]
fn an_abandoned_commit_below_it_is_repaired() {
    let env = TestEnv::new();
    let (repo, w1, w2) = two_workspaces(&env);
    edit_then_unrelated_run(&env, &repo, &w1, &w2);
    env.jj_ok(&repo, ["abandon", "w1@-"]);
    assert_repaired(&env, &repo, &w1, "a.txt", "agent.txt");
}

#[test]
fn an_abandoned_working_copy_commit_is_repaired() {
    let env = TestEnv::new();
    let (repo, w1, w2) = two_workspaces(&env);
    fs::write(w2.join("moved.txt"), "moved in\n").unwrap();
    env.jj_ok(
        &w2,
        ["squash", "--from", "w2@", "--into", "w1@", "moved.txt"],
    );
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    edit_then_unrelated_run(&env, &repo, &w1, &w2);
    // The commit holding moved.txt goes; w1 gets a new one on its parent. What it recorded
    // is kept aside and named (exit 125); the unrecorded edit is carried.
    env.jj_ok(&repo, ["abandon", "w1@"]);
    let run = env.aw(&repo, ["run", "w1", "--", "echo", "ran"]);
    insta::assert_snapshot!(run, @r#"
    --- stderr ---
    Error: workspace "w1" was stale: an operation elsewhere undid what its working copy had recorded in moved.txt
    Caused by: moved.txt: the workspace's version is kept in [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.kept/w1-[STAMP]/moved.txt
    Hint: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1 now holds the updated version of each file; merge the workspace's version into it by hand (`diff -u [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/moved.txt [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.kept/w1-[STAMP]/moved.txt` shows both), then go on: the next run of w1 works as usual
    [exit 125]
    "#);
    assert_eq!(
        fs::read_to_string(w1.join("unrecorded.txt")).unwrap(),
        "kept\n"
    );
    let next = env.aw(&repo, ["run", "w1", "--", "sh", "-c", "test -e agent.txt"]);
    next.assert_ok();
    assert!(!w1.join("moved.txt").exists(), "{}", env.listing());
    env.jj(&w1, ["status"]).assert_ok();
}

/// `jj undo` or `jj op restore` elsewhere undoing what w1 had recorded: the repair runs and
/// keeps the undone files aside (exit 125, see `stale_repair`), and the next run goes on.
fn undone_elsewhere(undo: &[&str]) {
    let env = TestEnv::new();
    let (repo, w1, w2) = two_workspaces(&env);
    let before = env.jj_ok(&repo, ["op", "log", "--no-graph", "-n1", "-T", "id"]);
    fs::write(w1.join("recorded.txt"), "recorded\n").unwrap();
    env.jj_ok(&w1, ["status"]);
    let mut args: Vec<&str> = undo.to_vec();
    if args == ["op", "restore"] {
        // Some unrelated work and a warm run first: the working copy's operation is behind.
        fs::write(w2.join("w2.txt"), "w2\n").unwrap();
        env.jj_ok(&w2, ["commit", "-m", "w2 work"]);
        env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
        args.push(before.trim());
    }
    env.jj_ok(&repo, &args);
    let run = env.aw(&repo, ["run", "w1", "--", "echo", "ran"]);
    insta::allow_duplicates! { insta::assert_snapshot!(run, @r#"
    --- stderr ---
    Error: workspace "w1" was stale: an operation elsewhere undid what its working copy had recorded in recorded.txt
    Caused by: recorded.txt: the workspace's version is kept in [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.kept/w1-[STAMP]/recorded.txt
    Hint: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1 now holds the updated version of each file; merge the workspace's version into it by hand (`diff -u [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/recorded.txt [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.kept/w1-[STAMP]/recorded.txt` shows both), then go on: the next run of w1 works as usual
    [exit 125]
    "#) };
    assert!(!w1.join("recorded.txt").exists(), "{}", env.listing());
    let next = env.aw(&repo, ["run", "w1", "--", "cat", "agent.txt"]);
    next.assert_ok();
    assert_eq!(next.stdout, "agent\n");
    env.jj(&w1, ["status"]).assert_ok();
}

#[test]
fn an_undo_elsewhere_is_repaired() {
    // jj 0.46 scopes `jj undo` to the workspace it runs in: undoing another workspace's
    // operation from main is asked for by name there.
    let env = TestEnv::new();
    let version = env.jj_ok(env.path(), ["--version"]);
    match version.starts_with("jj 0.45") {
        true => undone_elsewhere(&["undo"]),
        false => undone_elsewhere(&["undo", "--allow-cross-workspace"]),
    }
}

#[test]
fn an_op_restore_elsewhere_is_repaired() {
    undone_elsewhere(&["op", "restore"]);
}

fn op_heads(repo: &Path) -> usize {
    fs::read_dir(repo.join(".jj/repo/op_heads/heads"))
        .unwrap()
        .count()
}

/// Operations that ran at once leave several operation heads until jj's next load merges
/// them: when none of them moved w1's commit the run takes no snapshot; when one did, the
/// repair runs.
#[test]
fn concurrent_operations_are_judged_by_every_head() {
    let env = TestEnv::new();
    let (repo, w1, w2) = two_workspaces(&env);
    fs::write(w1.join("unrecorded.txt"), "kept\n").unwrap();
    env.jj_ok(&w2, ["commit", "-m", "w2 work"]);
    env.jj_ok(
        &repo,
        ["--at-op", "@-", "bookmark", "create", "t1", "-r", "w1@-"],
    );
    assert_eq!(op_heads(&repo), 2);
    let run = env.aw(&repo, ["run", "w1", "--", "cat", "unrecorded.txt"]);
    run.assert_ok();
    assert!(!run.stderr.contains("stale"), "{}", run.report());
    assert_eq!(op_heads(&repo), 2, "jj ran\n{}", run.report());
    assert_eq!(recorded_in_w1(&env, &repo), "");

    env.jj_ok(&w2, ["commit", "-m", "more w2 work"]);
    env.jj_ok(&repo, ["--at-op", "@-", "abandon", "w1@-"]);
    assert_eq!(op_heads(&repo), 2);
    assert_repaired(&env, &repo, &w1, "a.txt", "agent.txt");
}

/// A `jj` on PATH that logs each call's arguments (one line each) to `log` and runs the real
/// jj; returns the PATH to give agent-workspace.
fn logging_jj(env: &TestEnv, log: &Path) -> std::ffi::OsString {
    let bin = env.path().join("logging-bin");
    fs::create_dir_all(&bin).unwrap();
    let real = crate::harness::which("jj").unwrap();
    let script = format!(
        "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
        log.display(),
        real.display()
    );
    let jj = bin.join("jj");
    fs::write(&jj, script).unwrap();
    fs::set_permissions(&jj, fs::Permissions::from_mode(0o755)).unwrap();
    env.path_with_first(&bin)
}

/// The logged jj calls that load a working copy (every call without `--ignore-working-copy`
/// snapshots the workspace it names).
fn snapshotting(log: &Path) -> Vec<String> {
    fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("--") && !l.contains("--ignore-working-copy"))
        .map(str::to_string)
        .collect()
}

/// A checkpoint snapshots the workspace once (its meaning needs the files once), and a warm
/// run after it, and after another workspace's operation, snapshots nothing: the working
/// copy's files are still the tree of the new working-copy commit.
#[test]
fn a_checkpoint_snapshots_once_and_the_runs_after_it_none() {
    let env = TestEnv::new();
    let (repo, w1, w2) = two_workspaces(&env);
    let log = env.path().join("jj-calls.log");
    let path = logging_jj(&env, &log);
    fs::write(w1.join("checkpointed.txt"), "in the checkpoint\n").unwrap();
    env.aw_cmd(&repo)
        .env("PATH", &path)
        .args(["checkpoint", "w1", "-m", "cp"])
        .run()
        .assert_ok();
    let calls = snapshotting(&log);
    assert_eq!(calls.len(), 1, "{calls:#?}");
    assert_eq!(
        env.jj_ok(
            &repo,
            [
                "--ignore-working-copy",
                "log",
                "--no-graph",
                "-r",
                "w1@-",
                "-T",
                "description"
            ]
        ),
        "[workspace w1] cp\n"
    );
    fs::write(w1.join("unrecorded.txt"), "kept\n").unwrap();
    env.jj_ok(&w2, ["describe", "-m", "w2 draft"]);
    fs::remove_file(&log).unwrap();
    for _ in 0..2 {
        env.aw_cmd(&repo)
            .env("PATH", &path)
            .args(["run", "w1", "--", "true"])
            .run()
            .assert_ok();
    }
    assert_eq!(snapshotting(&log), Vec::<String>::new());
    assert_eq!(recorded_in_w1(&env, &repo), "");
    // Another workspace describing w1's commit (a new commit, the same files): still none.
    env.jj_ok(&w2, ["describe", "-r", "w1@", "-m", "described elsewhere"]);
    env.aw_cmd(&repo)
        .env("PATH", &path)
        .args(["run", "w1", "--", "true"])
        .run()
        .assert_ok();
    assert_eq!(snapshotting(&log), Vec::<String>::new());
    assert_eq!(recorded_in_w1(&env, &repo), "");
    env.jj_ok(&w1, ["status"]);
    assert_eq!(recorded_in_w1(&env, &repo), "unrecorded.txt\n");
}
