//! `run --base-change REV`: where a new workspace starts, and that a bad revision leaves
//! nothing behind.

use std::fs;
use std::path::PathBuf;

use crate::harness::TestEnv;

/// A repo with two commits, "initial" and "second" (which adds c.txt); returns it with the
/// change id of "initial".
fn two_commits(env: &TestEnv) -> (PathBuf, String) {
    let repo = env.jj_repo("repo");
    let initial = env.change_id(&repo, "@-");
    fs::write(repo.join("c.txt"), "c\n").unwrap();
    env.jj(&repo, ["commit", "-m", "second"]).assert_ok();
    (repo, initial)
}

#[test]
fn the_new_working_copy_is_a_new_commit_on_the_base() {
    let env = TestEnv::new();
    let (repo, initial) = two_commits(&env);
    let main_commit = env.commit_id(&repo, "@");
    let main_change = env.change_id(&repo, "@");
    let initial_commit = env.commit_id(&repo, &initial);
    let out = env.aw(
        &repo,
        [
            "run",
            "w1",
            "--base-change",
            &initial,
            "--",
            "sh",
            "-c",
            "ls",
        ],
    );
    // c.txt only exists in "second", which is not an ancestor of the base.
    assert_eq!(out.assert_ok().stdout, "a.txt\nsub\n");
    assert_eq!(env.commit_id(&repo, r#""w1"@-"#), initial_commit);
    // The user's working-copy commit is untouched.
    assert_eq!(env.commit_id(&repo, "@"), main_commit);
    assert_eq!(env.change_id(&repo, "@"), main_change);
    let record = env.metadata(&env.ws_path(&repo, "w1"));
    assert_eq!(record["base_change"], initial.as_str());
    assert_eq!(record["base_commits"], serde_json::json!([initial_commit]));
}

#[test]
fn without_base_change_the_workspace_starts_beside_the_main_working_copy() {
    let env = TestEnv::new();
    let (repo, _) = two_commits(&env);
    let parent = env.commit_id(&repo, "@-");
    let out = env.aw(&repo, ["run", "w1", "--", "sh", "-c", "cat c.txt"]);
    assert_eq!(out.assert_ok().stdout, "c\n");
    assert_eq!(env.commit_id(&repo, r#""w1"@-"#), parent);
}

#[test]
fn a_bookmark_or_commit_id_works_as_base() {
    let env = TestEnv::new();
    let (repo, initial) = two_commits(&env);
    let initial_commit = env.commit_id(&repo, &initial);
    env.jj(&repo, ["bookmark", "create", "start", "-r", &initial])
        .assert_ok();
    env.aw(
        &repo,
        ["run", "by-bookmark", "--base-change", "start", "--", "true"],
    )
    .assert_ok();
    env.aw(
        &repo,
        [
            "run",
            "by-commit",
            "--base-change",
            &initial_commit,
            "--",
            "true",
        ],
    )
    .assert_ok();
    for id in ["by-bookmark", "by-commit"] {
        assert_eq!(
            env.commit_id(&repo, &format!("{id:?}@-")),
            initial_commit,
            "{id}"
        );
    }
}

#[test]
fn reattaching_with_another_base_change_fails() {
    let env = TestEnv::new();
    let (repo, initial) = two_commits(&env);
    env.aw(
        &repo,
        ["run", "w1", "--base-change", &initial, "--", "true"],
    )
    .assert_ok();
    // The same base, or none, reattaches.
    env.aw(
        &repo,
        ["run", "w1", "--base-change", &initial, "--", "true"],
    )
    .assert_ok();
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let out = env.aw(
        &repo,
        ["run", "w1", "--base-change", "root()", "--", "touch", "ran"],
    );
    out.assert_code(125);
    assert!(!env.ws_path(&repo, "w1").join("ran").exists());
    insta::assert_snapshot!(env.normalize(&out.stderr), @r#"
    Error: workspace "w1" already exists on base [CHANGE]; --base-change root() differs
    Hint: drop --base-change to reattach, or use a new id
    "#);
    let record = env.metadata(&env.ws_path(&repo, "w1"));
    assert_eq!(record["status"], "done", "{record:#}");
}

/// Asserts that no trace of workspace `id` exists: no directory, no registration, no record.
fn assert_nothing_left(env: &TestEnv, repo: &std::path::Path, id: &str) {
    let ws = env.ws_path(repo, id);
    assert!(!ws.exists(), "{}", env.listing());
    assert_eq!(env.workspace_names(repo), ["default"]);
    let leftovers: Vec<_> = fs::read_dir(env.namespace_dir(repo))
        .map(|dir| {
            dir.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| name != ".locks")
                .collect()
        })
        .unwrap_or_default();
    assert!(leftovers.is_empty(), "{leftovers:?}\n{}", env.listing());
    let status = env.aw(repo, ["status", id]);
    status.assert_code(1);
}

#[test]
fn an_unknown_revision_exits_125_and_leaves_nothing_behind() {
    let env = TestEnv::new();
    let (repo, _) = two_commits(&env);
    let out = env.aw(
        &repo,
        [
            "run",
            "w1",
            "--base-change",
            "no-such-revision",
            "--",
            "touch",
            "ran",
        ],
    );
    out.assert_code(125);
    insta::assert_snapshot!(env.normalize(&out.stderr));
    assert_nothing_left(&env, &repo, "w1");
}

#[test]
fn a_revset_naming_several_commits_exits_125_and_leaves_nothing_behind() {
    let env = TestEnv::new();
    let (repo, _) = two_commits(&env);
    let out = env.aw(
        &repo,
        ["run", "w1", "--base-change", "all()", "--", "touch", "ran"],
    );
    out.assert_code(125);
    insta::assert_snapshot!(env.normalize(&out.stderr), @r#"
    Error: revision "all()" names more than one commit
    Hint: pass --base-change a single revision
    "#);
    assert_nothing_left(&env, &repo, "w1");
}

#[test]
fn a_revset_naming_no_commit_exits_125_and_leaves_nothing_behind() {
    let env = TestEnv::new();
    let (repo, _) = two_commits(&env);
    let out = env.aw(
        &repo,
        ["run", "w1", "--base-change", "none()", "--", "touch", "ran"],
    );
    out.assert_code(125);
    insta::assert_snapshot!(env.normalize(&out.stderr), @r#"Error: revision "none()" names no commit"#);
    assert_nothing_left(&env, &repo, "w1");
}
