//! The git-worktree backend: branches, what `clean` keeps, and failures that leave nothing.

use std::fs;

use serde_json::Value;

use crate::backends::{git_ok, git_repo};
use crate::harness::TestEnv;

fn branches(env: &TestEnv, repo: &std::path::Path) -> Vec<String> {
    git_ok(env, repo, &["branch", "--format=%(refname:short)"])
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn run_creates_a_worktree_on_its_branch_and_keeps_git_status_clean() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    let out = env.aw(
        &repo,
        ["run", "w1", "--", "sh", "-c", "echo $AGENT_WORKSPACE_BACKEND $AW_TEST_VAR $AGENT_WORKSPACE_REPO_ROOT; git branch --show-current"],
    );
    out.assert_ok();
    assert_eq!(
        out.stdout,
        format!("git from-envrc {}\nagent-workspace/w1\n", repo.display())
    );
    let ws = env.ws_path(&repo, "w1");
    assert!(ws.join(".agent-workflow.json").is_file());
    // The record (and direnv's cache) never show up as changes.
    fs::create_dir_all(ws.join(".direnv")).unwrap();
    fs::write(ws.join(".direnv/cache"), "x").unwrap();
    assert_eq!(
        git_ok(
            &env,
            &ws,
            &["status", "--porcelain", "--untracked-files=all"]
        ),
        ""
    );
    assert_eq!(env.metadata(&ws)["backend"], "git");
    assert_eq!(env.metadata(&ws)["branch"], "agent-workspace/w1");
    let table = env.aw(&repo, ["status", "--json"]);
    assert_eq!(
        table.json()["workspaces"][0]["backend"],
        "git",
        "{}",
        table.report()
    );
}

#[test]
fn nested_runs_from_inside_a_worktree_share_the_namespace() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    let out = env.aw(
        &repo,
        [
            "run", "outer", "--", "sh", "-c",
            "cd sub && agent-workspace run outer -- sh -c 'echo $AGENT_WORKSPACE_PATH' && \
             agent-workspace run sibling -- sh -c 'echo $AGENT_WORKSPACE_PATH $AGENT_WORKSPACE_REPO_ROOT'",
        ],
    );
    out.assert_ok();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], env.ws_path(&repo, "outer").display().to_string());
    assert_eq!(
        lines[1],
        format!(
            "{} {}",
            env.ws_path(&repo, "sibling").display(),
            repo.display()
        )
    );
}

#[test]
fn failed_creations_leave_no_worktree_branch_or_directory() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    let unknown = env.aw(
        &repo,
        ["run", "w1", "--base-change", "no-such-ref", "--", "true"],
    );
    insta::assert_snapshot!(unknown, @r#"
    --- stderr ---
    Error: cannot resolve revision "no-such-ref"
    Caused by: fatal: Needed a single revision
    Hint: pass --base-change a commit, branch or tag that exists
    [exit 125]
    "#);
    // A branch of the workspace's name checked out in a worktree elsewhere.
    let elsewhere = env.path().join("elsewhere");
    git_ok(
        &env,
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "agent-workspace/w2",
            &elsewhere.display().to_string(),
        ],
    );
    let taken = env.aw(&repo, ["run", "w2", "--", "true"]);
    insta::assert_snapshot!(unknown, @r#"
    --- stderr ---
    Error: cannot resolve revision "no-such-ref"
    Caused by: fatal: Needed a single revision
    Hint: pass --base-change a commit, branch or tag that exists
    [exit 125]
    "#);
    insta::assert_snapshot!(taken, @r#"
    --- stderr ---
    Error: a workspace named "w2" already exists at [TMP]/elsewhere, not created by agent-workspace
    Hint: pick another id, or forget that workspace first
    [exit 125]
    "#);
    assert!(elsewhere.join("a.txt").is_file());
    let ns = env.namespace_dir(&repo);
    let dirs: Vec<_> = fs::read_dir(&ns)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name())
                .filter(|n| n != ".locks" && n != ".cache" && n != ".state")
                .collect()
        })
        .unwrap_or_default();
    assert!(dirs.is_empty(), "left behind: {dirs:?}");
    // The tool's own state directory may stay (creations journal there), empty.
    let state: Vec<_> = fs::read_dir(ns.join(".state"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(state.is_empty(), "left behind in .state: {state:?}");
    assert_eq!(branches(&env, &repo), ["agent-workspace/w2", "main"]);
    let worktrees = git_ok(&env, &repo, &["worktree", "list", "--porcelain"]);
    assert_eq!(worktrees.matches("worktree ").count(), 2, "{worktrees}");
}

#[test]
fn clean_commits_uncommitted_changes_to_the_branch_and_keeps_it() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    env.aw(
        &repo,
        [
            "run",
            "w1",
            "--",
            "sh",
            "-c",
            "echo work > new.txt && echo more >> a.txt",
        ],
    )
    .assert_ok();
    let out = env.aw(&repo, ["clean", "w1"]);
    insta::assert_snapshot!(out, @r"
    Removed w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1); its uncommitted changes were committed to branch agent-workspace/w1 ([SHORT])
    [exit 0]
    ");
    assert!(!env.ws_path(&repo, "w1").exists());
    assert_eq!(
        git_ok(&env, &repo, &["show", "agent-workspace/w1:new.txt"]),
        "work\n"
    );
    assert_eq!(
        git_ok(&env, &repo, &["show", "agent-workspace/w1:a.txt"]),
        "hello\nmore\n"
    );
    let worktrees = git_ok(&env, &repo, &["worktree", "list", "--porcelain"]);
    assert_eq!(worktrees.matches("worktree ").count(), 1, "{worktrees}");
}

#[test]
fn delete_branch_removes_merged_branches_and_keeps_unmerged_ones_without_force() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    env.aw(&repo, ["run", "merged", "--", "true"]).assert_ok();
    let out = env.aw(&repo, ["clean", "--delete-branch", "merged"]);
    insta::assert_snapshot!(out, @r"
    Removed merged ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/merged); deleted branch agent-workspace/merged ([SHORT]) as --delete-branch asked; `git branch agent-workspace/merged [COMMIT]` restores it
    [exit 0]
    ");

    env.aw(
        &repo,
        ["run", "unmerged", "--", "sh", "-c", "echo x > x.txt"],
    )
    .assert_ok();
    let kept = env.aw(&repo, ["clean", "--delete-branch", "unmerged"]);
    insta::assert_snapshot!(kept, @r"
    Removed unmerged ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/unmerged); its uncommitted changes were committed to branch agent-workspace/unmerged ([SHORT]); kept branch agent-workspace/unmerged: branch agent-workspace/unmerged is not fully merged; pass --force to delete it anyway
    [exit 0]
    ");
    assert_eq!(branches(&env, &repo), ["agent-workspace/unmerged", "main"]);

    env.aw(&repo, ["run", "unmerged", "--", "true"]).assert_ok();
    env.aw(&repo, ["clean", "--delete-branch", "--force", "unmerged"])
        .assert_ok();
    assert_eq!(branches(&env, &repo), ["main"]);
}

#[test]
fn a_worktree_deleted_by_hand_is_recreated_on_its_branch_or_pruned() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    env.aw(
        &repo,
        [
            "run",
            "w1",
            "--",
            "sh",
            "-c",
            "echo c > c.txt && git add c.txt && git commit -qm work",
        ],
    )
    .assert_ok();
    fs::remove_dir_all(env.ws_path(&repo, "w1")).unwrap();
    let status = env.aw(&repo, ["status"]);
    assert!(
        status.stdout.contains("missing-directory"),
        "{}",
        status.report()
    );
    let again = env.aw(&repo, ["run", "w1", "--", "cat", "c.txt"]);
    again.assert_ok();
    assert_eq!(again.stdout, "c\n");
    fs::remove_dir_all(env.ws_path(&repo, "w1")).unwrap();
    env.aw(&repo, ["clean", "w1"]).assert_ok();
    let worktrees = git_ok(&env, &repo, &["worktree", "list", "--porcelain"]);
    assert!(!worktrees.contains("prunable"), "{worktrees}");
    assert_eq!(worktrees.matches("worktree ").count(), 1, "{worktrees}");
    assert_eq!(branches(&env, &repo), ["agent-workspace/w1", "main"]);
}

#[test]
fn colocated_repositories_default_to_jj_and_take_git_on_request() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["run", "viajj", "--", "true"]).assert_ok();
    env.aw(&repo, ["run", "viagit", "--backend", "git", "--", "true"])
        .assert_ok();
    env.aw_cmd(&repo)
        .args(["run", "viaenv", "--", "true"])
        .env("AGENT_WORKSPACE_BACKEND", "git")
        .run()
        .assert_ok();
    let doc: Value = serde_json::from_str(&env.aw(&repo, ["status", "--json"]).stdout).unwrap();
    let backends: Vec<(String, String)> = doc["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["workspace_id"].as_str().unwrap().into(),
                w["backend"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(
        backends.contains(&("viajj".into(), "jj".into())),
        "{backends:?}"
    );
    assert!(
        backends.contains(&("viagit".into(), "git".into())),
        "{backends:?}"
    );
    assert!(
        backends.contains(&("viaenv".into(), "git".into())),
        "{backends:?}"
    );
    let bogus = env
        .aw_cmd(&repo)
        .args(["status"])
        .env("AGENT_WORKSPACE_BACKEND", "svn")
        .run();
    insta::assert_snapshot!(bogus, @r#"
    --- stderr ---
    Error: AGENT_WORKSPACE_BACKEND="svn" is not a backend
    Hint: use jj or git
    [exit 2]
    "#);
}

#[test]
fn the_branch_prefix_is_configurable_and_jj_is_refused_on_plain_git() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    env.aw_cmd(&repo)
        .args(["run", "w1", "--", "true"])
        .env("AGENT_WORKSPACE_BRANCH_PREFIX", "bots/")
        .run()
        .assert_ok();
    assert_eq!(branches(&env, &repo), ["bots/w1", "main"]);
    let jj = env.aw(&repo, ["run", "w2", "--backend", "jj", "--", "true"]);
    insta::assert_snapshot!(jj, @r"
    --- stderr ---
    Error: [TMP]/repo is a git repository without jj
    Hint: use --backend git, or run `jj git init --colocate` there
    [exit 125]
    ");
}

#[test]
fn a_branch_that_cannot_be_deleted_is_not_called_unmerged() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    env.aw(&repo, ["run", "locked", "--", "true"]).assert_ok();
    // A stale ref lock makes the deletion fail for another reason than merging.
    let lock = repo.join(".git/refs/heads/agent-workspace/locked.lock");
    fs::write(&lock, "").unwrap();
    let out = env.aw(&repo, ["clean", "--delete-branch", "locked"]);
    insta::assert_snapshot!(out, @r"
    Removed locked ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/locked); branch agent-workspace/locked ([SHORT]) keeps its commits; kept branch agent-workspace/locked: `git -C [TMP]/repo branch --quiet -d --end-of-options agent-workspace/locked` failed (exit status: 1); delete it by hand: git branch -D agent-workspace/locked
    [exit 0]
    ");
    assert_eq!(branches(&env, &repo), ["agent-workspace/locked", "main"]);
}
