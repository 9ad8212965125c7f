//! `land` on git: the workspace's branch merged into the branch checked out in the main
//! worktree (or `--onto BRANCH`), computed with `git merge-tree` first so that a conflict,
//! a dirty worktree or a dry run changes no ref, index or file.

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

#[test]
fn a_land_fast_forwards_the_main_branch_and_its_worktree() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    fs::write(repo.join("mine.txt"), "untracked, untouched\n").unwrap();
    let out = env.aw(&repo, ["land", "w1", "--json"]);
    let doc = out.json();
    assert_eq!(doc["outcome"], "landed");
    assert_eq!(doc["target"], "main");
    assert_eq!(doc["recorded_edits"], true);
    assert_eq!(doc["paths"], serde_json::json!(["a.txt", "new.txt"]));
    let tip = git_ok(&env, &repo, &["rev-parse", "agent-workspace/w1"]);
    assert_eq!(git_ok(&env, &repo, &["rev-parse", "main"]), tip);
    assert_eq!(doc["merge_commit"], tip.trim());
    assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), "from w1\n");
    assert_eq!(fs::read_to_string(repo.join("new.txt")).unwrap(), "new\n");
    assert_eq!(
        fs::read_to_string(repo.join("mine.txt")).unwrap(),
        "untracked, untouched\n"
    );
    assert_eq!(
        git_ok(&env, &repo, &["status", "--porcelain"]),
        "?? mine.txt\n"
    );
    let land = &env.metadata(&env.ws_path(&repo, "w1"))["land"];
    assert_eq!(land["outcome"], "landed");
    assert_eq!(land["target"], "main");
    // The workspace's changes were committed to its branch: nothing left to commit there.
    let ws = env.ws_path(&repo, "w1");
    assert_eq!(git_ok(&env, &ws, &["status", "--porcelain"]), "");
    let subject = git_ok(&env, &ws, &["log", "-1", "--format=%s"]);
    assert_eq!(
        subject,
        "agent-workspace: uncommitted changes of workspace w1\n"
    );
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
    out.assert_ok();
    let parents = git_ok(&env, &repo, &["log", "-1", "--format=%P %s", "main"]);
    assert!(
        parents.ends_with(" Merge workspace w1 into main\n"),
        "{parents}"
    );
    assert_eq!(parents.split(' ').count(), 7, "two parents: {parents}");
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
    out.assert_code(1);
    assert!(
        out.stdout
            .starts_with("Did not land 1 commit of w1 onto main\n"),
        "{}",
        out.report()
    );
    assert!(
        out.stdout.contains("Conflict in a.txt ("),
        "{}",
        out.report()
    );
    assert!(out.stderr.starts_with("Error: merging workspace w1 into main conflicts in 1 file; nothing was changed\nHint: "), "{}", out.report());
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
    let out = env.aw(&repo, ["land", "w1", "--dry-run"]);
    out.assert_ok();
    assert!(
        out.stdout
            .starts_with("Would land 1 commit of w1 onto main\n"),
        "{}",
        out.report()
    );
    assert!(
        out.stdout.contains("\n2 files changed\n"),
        "{}",
        out.report()
    );
    assert_eq!(state(&env, &repo), before);
    main_commits_a(&env, &repo, "from main\n");
    let before = state(&env, &repo);
    let out = env.aw(&repo, ["land", "w1", "--dry-run", "--json"]);
    out.assert_code(1);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["outcome"], "would_conflict");
    assert_eq!(doc["conflicts"][0]["path"], "a.txt");
    assert_eq!(state(&env, &repo), before);
    assert!(env
        .metadata(&env.ws_path(&repo, "w1"))
        .get("land")
        .is_none());
}

#[test]
fn onto_merges_into_another_branch_and_refuses_a_commit() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    git_ok(&env, &repo, &["branch", "release"]);
    let main_before = git_ok(&env, &repo, &["rev-parse", "main"]);
    let head = main_before.trim().to_string();
    let out = env.aw(&repo, ["land", "w1", "--onto", &head]);
    out.assert_code(1);
    assert!(
        out.stderr
            .contains("no local branch has that name\nHint: git lands by merging into a branch"),
        "{}",
        out.report()
    );
    env.aw(&repo, ["land", "w1", "--onto", "release"])
        .assert_ok();
    let release = git_ok(&env, &repo, &["show", "release:a.txt"]);
    assert_eq!(release, "from w1\n");
    assert_eq!(git_ok(&env, &repo, &["rev-parse", "main"]), main_before);
    assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), "hello\n");
}
