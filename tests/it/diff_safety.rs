//! What `diff` leaves alone (git's index and refs, jj's commits) and what it refuses: bad
//! input, a workspace a live run holds (unless asked from inside it), a stale working copy.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::backends::{git_ok, Backend};
use crate::diff_support::{diff_json, more_base_files, workspace_with_every_change};
use crate::harness::{wait_for_file, TestEnv};

/// What git says about the worktree at `ws` and the repository's refs.
fn git_state(env: &TestEnv, repo: &Path, ws: &Path) -> String {
    [
        git_ok(env, ws, &["status", "--porcelain", "--untracked-files=all"]),
        git_ok(env, ws, &["ls-files", "--stage"]),
        git_ok(env, ws, &["rev-parse", "HEAD"]),
        git_ok(env, repo, &["for-each-ref"]),
        git_ok(env, repo, &["stash", "list"]),
    ]
    .join("\n")
}

#[test]
fn git_diff_leaves_the_index_and_every_branch_alone() {
    let env = TestEnv::new();
    let backend = Backend::Git;
    let repo = backend.repo(&env);
    more_base_files(backend, &env, &repo);
    let ws = workspace_with_every_change(backend, &env, &repo, "w1");
    git_ok(&env, &ws, &["add", "sub/b.txt"]);
    let before = git_state(&env, &repo, &ws);
    assert!(before.contains("?? new.txt"), "{before}");
    for flags in [&[][..], &["--json"], &["--patch"]] {
        env.aw(&repo, ["diff", "w1"].iter().chain(flags))
            .assert_ok();
    }
    assert_eq!(git_state(&env, &repo, &ws), before);
}

#[test]
fn jj_diff_makes_no_commit_beyond_the_snapshot() {
    let env = TestEnv::new();
    let backend = Backend::Jj;
    let repo = backend.repo(&env);
    more_base_files(backend, &env, &repo);
    let ws = workspace_with_every_change(backend, &env, &repo, "w1");
    let all = [
        "log",
        "--no-graph",
        "-r",
        "all()",
        "-T",
        "commit_id ++ \"\\n\"",
    ];
    env.jj_ok(&ws, ["status"]);
    let before = env.jj_ok(&repo, all);
    env.aw(&repo, ["diff", "w1", "--json"]).assert_ok();
    env.aw(&repo, ["diff", "w1", "--patch"]).assert_ok();
    assert_eq!(env.jj_ok(&repo, all), before);
}

fn bad_input_is_refused_with_a_hint(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let unknown = env.aw(&repo, ["diff", "nope"]);
    insta::assert_snapshot!(unknown, @r#"
    --- stderr ---
    Error: no workspace "nope" (looked for [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/nope)
    Hint: list workspaces with `agent-workspace status`; create one with `agent-workspace run`
    [exit 1]
    "#);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    for args in [
        &["diff", "w1", "--patch", "--json"][..],
        &["diff", "w1", "--stat", "--patch"],
        &["diff", "w1", "--stat", "--json"],
        &["diff"],
        &["diff", "../w1"],
    ] {
        let out = env.aw(&repo, args);
        out.assert_code(2);
        assert!(
            out.stderr.starts_with("Error: "),
            "{args:?}: {}",
            out.stderr
        );
        assert!(out.stderr.contains("\nHint: "), "{args:?}: {}", out.stderr);
        assert_eq!(out.stdout, "");
    }
}

fn a_live_run_is_looked_at_from_outside_and_read_from_inside(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let started = env.path().join("started");
    let release = env.path().join("release");
    let inner = env.path().join("inner.json");
    let script = format!(
        "echo edit > new.txt; agent-workspace diff w1 --json > '{}' || exit 9; touch '{}'; while [ ! -e '{}' ]; do sleep 0.02; done",
        inner.display(),
        started.display(),
        release.display()
    );
    let run = env
        .aw_cmd(&repo)
        .args(["run", "w1", "--", "sh", "-c", &script])
        .spawn();
    wait_for_file(&started);
    let out = env.aw(&repo, ["diff", "w1", "--json"]);
    fs::write(&release, "").unwrap();
    run.wait().assert_ok();
    // From outside, the run is only looked at (see live_look.rs); from inside, diff reads
    // the workspace as its own.
    out.assert_ok();
    let outside: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(outside["run_live"], true, "{outside:#}");
    let inner: Value = serde_json::from_slice(&fs::read(&inner).unwrap()).unwrap();
    assert_eq!(inner["files"][0]["path"], "new.txt", "{inner:#}");
    assert_eq!(inner["run_live"], false, "{inner:#}");
}

crate::both_backends!(
    bad_input_is_refused_with_a_hint,
    a_live_run_is_looked_at_from_outside_and_read_from_inside,
);

#[test]
fn jj_diff_of_a_stale_working_copy_says_how_to_update_it() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let before = env.jj_ok(&repo, ["op", "log", "--no-graph", "-n1", "-T", "id"]);
    fs::write(ws.join("first.txt"), "first\n").unwrap();
    env.jj(&ws, ["status"]).assert_ok();
    env.jj(&repo, ["op", "restore", &before]).assert_ok();
    fs::write(ws.join("second.txt"), "second\n").unwrap();
    let out = env.aw(&repo, ["diff", "w1"]);
    insta::assert_snapshot!(out, @r#"
    --- stderr ---
    Error: the working copy of workspace "w1" is stale
    Hint: `agent-workspace run w1 -- true` updates it, keeping its edits; then diff again
    [exit 1]
    "#);
    assert_eq!(out.stdout, "");
    // The hint works: the recorded edit the restore undid is kept aside and named (the run
    // fails once, as the repair says), then the unrecorded edit shows.
    let undone = env.aw(&repo, ["run", "w1", "--", "true"]);
    insta::assert_snapshot!(undone, @r#"
    --- stderr ---
    Error: workspace "w1" was stale: an operation elsewhere undid what its working copy had recorded in first.txt
    Caused by: first.txt: the workspace's version is kept in [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.kept/w1-[STAMP]/first.txt
    Hint: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1 now holds the updated version of each file; merge the workspace's version into it by hand (`diff -u [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/first.txt [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.kept/w1-[STAMP]/first.txt` shows both), then go on: the next run of w1 works as usual
    [exit 125]
    "#);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let json = diff_json(&env, &repo, "w1");
    assert_eq!(json["files"][0]["path"], "second.txt", "{json:#}");
    assert_eq!(json["files"].as_array().map(Vec::len), Some(1), "{json:#}");
}
