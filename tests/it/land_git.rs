//! `land` on git, what only git does: the workspace's branch merged into the branch checked
//! out in the main worktree, computed with `git merge-tree` first so that a conflict, a dirty
//! worktree or a dry run changes no ref, index or file. The stories both backends tell (the
//! fast-forward, edits recorded first, `--onto`) are in `land.rs`.

use std::fs;
use std::path::{Path, PathBuf};

use crate::backends::{git_ok, git_repo, Backend};
use crate::diff_support::{more_base_files, racily_clean_rewrite};
use crate::harness::TestEnv;

/// Everything a land must leave as it was when it changes nothing: every ref, the main
/// worktree's index and status, and the workspace's status.
pub(crate) fn state(env: &TestEnv, repo: &Path) -> String {
    let ws = env.ws_path(repo, "w1");
    [
        git_ok(
            env,
            repo,
            &["for-each-ref", "--format=%(refname) %(objectname)"],
        ),
        git_ok(env, repo, &["ls-files", "-s"]),
        git_ok(
            env,
            repo,
            &["status", "--porcelain", "--untracked-files=all"],
        ),
        git_ok(
            env,
            &ws,
            &["status", "--porcelain", "--untracked-files=all"],
        ),
        git_ok(env, &ws, &["rev-parse", "HEAD"]),
    ]
    .join("--\n")
}

/// A git repo whose workspace `w1` changed `a.txt` to `text` and created `new.txt`, both
/// left uncommitted.
pub(crate) fn repo_with_work(env: &TestEnv, text: &str) -> PathBuf {
    let repo = git_repo(env, "repo");
    let script = format!("printf '{text}' > a.txt && echo new > new.txt");
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", &script])
        .assert_ok();
    repo
}

pub(crate) fn main_commits_a(env: &TestEnv, repo: &Path, text: &str) {
    fs::write(repo.join("a.txt"), text).unwrap();
    git_ok(env, repo, &["commit", "-q", "-am", "main edit"]);
}

/// A same-size rewrite that only git's racy-git rule tells (see [`racily_clean_rewrite`]) is
/// landed, and the workspace's index is left telling the truth, even when git may not write
/// that index (with `GIT_OPTIONAL_LOCKS=0`, which a user or a tool may export, no `status`
/// records what it found): the copy of the index the land commits through keeps the real
/// one's mtime.
#[test]
fn a_land_takes_a_same_size_rewrite_that_only_the_racy_git_rule_tells() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    more_base_files(Backend::Git, &env, &repo);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    racily_clean_rewrite(&env, &ws, "bin.dat", b"\0\x02binary");
    let out = env
        .aw_cmd(&repo)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .args(["land", "w1", "--json"])
        .run();
    assert_eq!(
        out.json()["paths"],
        serde_json::json!(["bin.dat"]),
        "{}",
        out.report()
    );
    assert_eq!(fs::read(repo.join("bin.dat")).unwrap(), b"\0\x02binary");
    let landed = env.cmd("git", &repo).args(["show", "main:bin.dat"]).run();
    assert_eq!(landed.assert_ok().stdout.as_bytes(), b"\0\x02binary");
    assert_eq!(git_ok(&env, &ws, &["diff", "HEAD", "--stat"]), "");
}

#[test]
fn a_land_onto_a_branch_that_moved_makes_a_merge_commit() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    fs::write(repo.join("sub/b.txt"), "from main\n").unwrap();
    git_ok(&env, &repo, &["commit", "-q", "-am", "main edit"]);
    let out = env.aw(&repo, ["land", "w1"]);
    insta::assert_snapshot!(out, @r#"
    Landed 1 commit of w1 onto main
      [SHORT] agent-workspace: uncommitted changes of workspace w1
    2 files changed
    Undo: if test "$(git -C [TMP]/repo symbolic-ref -q HEAD)@$(git -C [TMP]/repo rev-parse -q --verify HEAD)" = refs/heads/main@[COMMIT]; then git -C [TMP]/repo reset --quiet --keep [COMMIT]; else echo 'not undone: main is no longer at [SHORT] in [TMP]/repo' >&2; false; fi
    [exit 0]
    "#);
    // Two parents, main's and the workspace's: the ids are the same in every run, as the
    // harness fixes git's clock.
    let parents = git_ok(&env, &repo, &["log", "-1", "--format=%P%n%s", "main"]);
    insta::assert_snapshot!(parents, @r"
    19e7f1ba41083e221b573afcc681522539988bee dd5ab1036f518e68dfe481bddb834f2c3a55725f
    Merge workspace w1 into main
    ");
    assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), "from w1\n");
    assert_eq!(
        fs::read_to_string(repo.join("sub/b.txt")).unwrap(),
        "from main\n"
    );
    assert_eq!(git_ok(&env, &repo, &["status", "--porcelain"]), "");
}

#[test]
fn a_conflicted_land_changes_nothing_lists_the_files_and_exits_1() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    main_commits_a(&env, &repo, "from main\n");
    let before = state(&env, &repo);
    let out = env.aw(&repo, ["land", "w1"]);
    insta::assert_snapshot!(out, @r"
    Did not land 1 commit of w1 onto main
      [SHORT] agent-workspace: uncommitted changes of workspace w1
    0 files changed
    Conflict in a.txt ([SHORT])
    --- stderr ---
    Error: merging workspace w1 into main conflicts in 1 file; nothing was changed
    Hint: retry with `agent-workspace land w1 --prefer workspace|target`, or merge by hand: git merge [COMMIT]
    [exit 1]
    ");
    assert_eq!(state(&env, &repo), before);
    assert_eq!(
        fs::read_to_string(repo.join("a.txt")).unwrap(),
        "from main\n"
    );
    let land = &env.metadata(&env.ws_path(&repo, "w1"))["land"];
    assert_eq!(land["outcome"], "conflicted");
    assert_eq!(land["conflicts"][0]["path"], "a.txt");
    let status = env.aw(&repo, ["status", "w1", "--json"]).json();
    assert_eq!(status["status"], "conflicted");
}

#[test]
fn a_dry_run_reports_and_changes_nothing() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    let before = state(&env, &repo);
    insta::assert_snapshot!(env.aw(&repo, ["land", "w1", "--dry-run"]), @r"
    Would land 1 commit of w1 onto main
      [SHORT] agent-workspace: uncommitted changes of workspace w1
    2 files changed
    [exit 0]
    ");
    assert_eq!(state(&env, &repo), before);
    main_commits_a(&env, &repo, "from main\n");
    let before = state(&env, &repo);
    insta::assert_snapshot!(env.aw(&repo, ["land", "w1", "--dry-run", "--json"]), @r#"
    {
      "schema_version": 1,
      "workspace_id": "w1",
      "dry_run": true,
      "outcome": "would_conflict",
      "target": "main",
      "commits": [
        {
          "commit_id": "[COMMIT]",
          "subject": "agent-workspace: uncommitted changes of workspace w1"
        }
      ],
      "paths": [],
      "conflicts": [
        {
          "commit_id": "[COMMIT]",
          "path": "a.txt"
        }
      ],
      "resolved": [],
      "recorded_edits": false,
      "applied": false,
      "operation_before": null,
      "merge_commit": null,
      "target_before": "[COMMIT]",
      "undo": null,
      "reattached_head": null,
      "operations": [],
      "not_landed": [],
      "run_live": false
    }
    [exit 1]
    "#);
    assert_eq!(state(&env, &repo), before);
    assert!(env
        .metadata(&env.ws_path(&repo, "w1"))
        .get("land")
        .is_none());
}
