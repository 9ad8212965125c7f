//! `run --base-change REV`: where a new workspace starts, and that a bad revision leaves
//! nothing behind.

use std::fs;
use std::path::{Path, PathBuf};

use crate::backends::{git_ok, Backend};
use crate::harness::TestEnv;

/// A repo with two commits, "initial" and "second" (which adds c.txt); returns it with a
/// revision naming "initial": its change id (jj) or commit id (git).
fn two_commits(env: &TestEnv, backend: Backend) -> (PathBuf, String) {
    let repo = backend.repo(env);
    let initial = match backend {
        Backend::Jj => env.change_id(&repo, "@-"),
        Backend::Git => backend.base_of(env, &repo),
    };
    fs::write(repo.join("c.txt"), "c\n").unwrap();
    match backend {
        Backend::Jj => {
            env.jj(&repo, ["commit", "-m", "second"]).assert_ok();
        }
        Backend::Git => {
            git_ok(env, &repo, &["add", "c.txt"]);
            git_ok(env, &repo, &["commit", "-q", "-m", "second"]);
        }
    }
    (repo, initial)
}

/// What the user's main working copy is: its working-copy commit and change (jj), or its
/// checked-out branch and commit (git).
fn main_state(env: &TestEnv, backend: Backend, repo: &Path) -> (String, String) {
    match backend {
        Backend::Jj => (env.commit_id(repo, "@"), env.change_id(repo, "@")),
        Backend::Git => (
            git_ok(env, repo, &["symbolic-ref", "HEAD"]),
            git_ok(env, repo, &["rev-parse", "HEAD"]),
        ),
    }
}

fn the_new_working_copy_starts_on_the_base(backend: Backend) {
    let env = TestEnv::new();
    let (repo, initial) = two_commits(&env, backend);
    let main_before = main_state(&env, backend, &repo);
    let initial_commit = match backend {
        Backend::Jj => env.commit_id(&repo, &initial),
        Backend::Git => initial.clone(),
    };
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
    let ws = env.ws_path(&repo, "w1");
    assert_eq!(backend.base_of(&env, &ws), initial_commit);
    // The user's working copy is untouched.
    assert_eq!(main_state(&env, backend, &repo), main_before);
    let record = env.metadata(&ws);
    assert_eq!(record["base_change"], initial.as_str());
    assert_eq!(record["base_commits"], serde_json::json!([initial_commit]));
}

fn without_base_change_the_workspace_starts_beside_the_main_working_copy(backend: Backend) {
    let env = TestEnv::new();
    let (repo, _) = two_commits(&env, backend);
    let parent = backend.base_of(&env, &repo);
    let out = env.aw(&repo, ["run", "w1", "--", "sh", "-c", "cat c.txt"]);
    assert_eq!(out.assert_ok().stdout, "c\n");
    assert_eq!(backend.base_of(&env, &env.ws_path(&repo, "w1")), parent);
}

fn a_bookmark_commit_id_or_expression_works_as_base(backend: Backend) {
    let env = TestEnv::new();
    let (repo, initial) = two_commits(&env, backend);
    let (initial_commit, expression) = match backend {
        Backend::Jj => {
            env.jj(&repo, ["bookmark", "create", "start", "-r", &initial])
                .assert_ok();
            (env.commit_id(&repo, &initial), "@--")
        }
        Backend::Git => {
            git_ok(&env, &repo, &["branch", "start", &initial]);
            (initial.clone(), "main~1")
        }
    };
    let cases = [
        ("by-bookmark", "start"),
        ("by-commit", initial_commit.as_str()),
        ("by-expression", expression),
    ];
    for (id, rev) in cases {
        env.aw(&repo, ["run", id, "--base-change", rev, "--", "true"])
            .assert_ok();
        assert_eq!(
            backend.base_of(&env, &env.ws_path(&repo, id)),
            initial_commit,
            "{id}"
        );
    }
}

fn reattaching_with_another_base_change_fails(backend: Backend) {
    let env = TestEnv::new();
    let (repo, initial) = two_commits(&env, backend);
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
    let other = match backend {
        Backend::Jj => "root()",
        Backend::Git => "HEAD",
    };
    let out = env.aw(
        &repo,
        ["run", "w1", "--base-change", other, "--", "touch", "ran"],
    );
    out.assert_code(125);
    assert!(!env.ws_path(&repo, "w1").join("ran").exists());
    let said = env.normalize(&out.stderr);
    match backend {
        Backend::Jj => insta::assert_snapshot!(said, @r#"
        Error: workspace "w1" already exists on base [CHANGE]; --base-change root() differs
        Hint: drop --base-change to reattach, or use a new id
        "#),
        Backend::Git => insta::assert_snapshot!(said, @r#"
        Error: workspace "w1" already exists on base [COMMIT]; --base-change HEAD differs
        Hint: drop --base-change to reattach, or use a new id
        "#),
    }
    let record = env.metadata(&env.ws_path(&repo, "w1"));
    assert_eq!(record["status"], "done", "{record:#}");
}

/// Asserts that no trace of workspace `id` exists: no directory, no registration, no record,
/// and (git) no branch.
fn assert_nothing_left(env: &TestEnv, backend: Backend, repo: &Path, id: &str) {
    let ws = env.ws_path(repo, id);
    assert!(!ws.exists(), "{}", env.listing());
    assert_eq!(backend.registered(env, repo), ["default"]);
    if backend == Backend::Git {
        let branches = git_ok(env, repo, &["branch", "--format=%(refname:short)"]);
        assert_eq!(branches, "main\n");
    }
    let leftovers: Vec<_> = fs::read_dir(env.namespace_dir(repo))
        .map(|dir| {
            dir.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| name != ".locks" && name != ".cache")
                .collect()
        })
        .unwrap_or_default();
    assert!(leftovers.is_empty(), "{leftovers:?}\n{}", env.listing());
    let status = env.aw(repo, ["status", id]);
    status.assert_code(1);
}

fn an_unknown_revision_exits_125_and_leaves_nothing_behind(backend: Backend) {
    let env = TestEnv::new();
    let (repo, _) = two_commits(&env, backend);
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
    match backend {
        Backend::Jj => insta::assert_snapshot!(out, @r#"
        --- stderr ---
        Error: cannot resolve revision "no-such-revision"
        Caused by: Revision `no-such-revision` doesn't exist
        Hint: pass --base-change a change id, commit id or bookmark that exists
        [exit 125]
        "#),
        Backend::Git => insta::assert_snapshot!(out, @r#"
        --- stderr ---
        Error: cannot resolve revision "no-such-revision"
        Caused by: fatal: Needed a single revision
        Hint: pass --base-change a commit, branch or tag that exists
        [exit 125]
        "#),
    }
    assert_nothing_left(&env, backend, &repo, "w1");
}

/// jj only: a revset can name several commits or none; a git commit-ish names one or fails.
#[test]
fn a_revset_naming_several_commits_exits_125_and_leaves_nothing_behind() {
    let env = TestEnv::new();
    let (repo, _) = two_commits(&env, Backend::Jj);
    let mut said = String::new();
    for rev in ["all()", "root() | @"] {
        let out = env.aw(
            &repo,
            ["run", "w1", "--base-change", rev, "--", "touch", "ran"],
        );
        out.assert_code(125);
        said.push_str(&env.normalize(&out.stderr));
        assert_nothing_left(&env, Backend::Jj, &repo, "w1");
    }
    insta::assert_snapshot!(said, @r#"
    Error: revision "all()" names more than one commit
    Hint: pass --base-change a single revision
    Error: revision "root() | @" names more than one commit
    Hint: pass --base-change a single revision
    "#);
}

/// jj only, as above.
#[test]
fn a_revset_naming_no_commit_exits_125_and_leaves_nothing_behind() {
    let env = TestEnv::new();
    let (repo, _) = two_commits(&env, Backend::Jj);
    let out = env.aw(
        &repo,
        ["run", "w1", "--base-change", "none()", "--", "touch", "ran"],
    );
    out.assert_code(125);
    insta::assert_snapshot!(env.normalize(&out.stderr), @r#"
    Error: revision "none()" names no commit
    Hint: pass --base-change a revision that names one commit
    "#);
    assert_nothing_left(&env, Backend::Jj, &repo, "w1");
}

/// git only: a workspace's branch outlives it (`clean` keeps it), and the next run of that id
/// is made on it; an explicit base other than its tip is refused and changes nothing.
#[test]
fn a_kept_branch_is_reused_and_an_explicit_base_must_be_its_tip() {
    let env = TestEnv::new();
    let (repo, initial) = two_commits(&env, Backend::Git);
    let branch = "agent-workspace/w1";
    env.aw(
        &repo,
        [
            "run",
            "w1",
            "--base-change",
            &initial,
            "--",
            "sh",
            "-c",
            "echo e > e.txt",
        ],
    )
    .assert_ok();
    env.aw(&repo, ["clean", "w1"]).assert_ok();
    let tip = git_ok(&env, &repo, &["rev-parse", branch]);
    assert_ne!(tip.trim(), initial);
    let out = env.aw(
        &repo,
        ["run", "w1", "--base-change", &initial, "--", "touch", "ran"],
    );
    out.assert_code(125);
    let said = env.normalize(&out.stderr);
    assert!(
        said.starts_with(&format!(
            "Error: branch {branch} already exists at {}, not at the --base-change asked for\n",
            &tip[..12]
        )),
        "{}",
        out.report()
    );
    assert!(
        said.contains(&format!("git branch -D {branch}")),
        "{}",
        out.report()
    );
    assert!(!env.ws_path(&repo, "w1").exists(), "{}", env.listing());
    assert_eq!(Backend::Git.registered(&env, &repo), ["default"]);
    assert_eq!(git_ok(&env, &repo, &["rev-parse", branch]), tip);
    // Without --base-change (or with its tip) the worktree is made on the branch.
    let again = env.aw(&repo, ["run", "w1", "--", "cat", "e.txt"]);
    assert_eq!(again.assert_ok().stdout, "e\n");
    let ws = env.ws_path(&repo, "w1");
    assert_eq!(git_ok(&env, &ws, &["rev-parse", "HEAD"]), tip);
}

crate::both_backends!(
    the_new_working_copy_starts_on_the_base,
    without_base_change_the_workspace_starts_beside_the_main_working_copy,
    a_bookmark_commit_id_or_expression_works_as_base,
    reattaching_with_another_base_change_fails,
    an_unknown_revision_exits_125_and_leaves_nothing_behind,
);
