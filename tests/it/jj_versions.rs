//! jj as users have it: what differs between the jj releases agent-workspace supports (0.45
//! and 0.46) is decided in one place of the jj backend, and a workspace behaves the same on
//! both. These stories mean most when the suite runs with jj 0.46 first on PATH (the second
//! pass `.ci/run` makes); on 0.45 they hold as they always did.

use std::fs;
use std::path::Path;

use crate::harness::TestEnv;

/// The worktrees git has registered in the repository at `repo`, one path a line.
fn git_worktrees(env: &TestEnv, repo: &Path) -> Vec<String> {
    let out = crate::backends::git_ok(env, repo, &["worktree", "list", "--porcelain"]);
    out.lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .map(str::to_string)
        .collect()
}

/// In a colocated repository (jj 0.46 would make every secondary workspace a git worktree
/// there), a workspace is never registered with git: `clean` leaves nothing behind, and the
/// same id runs again, after a `clean` as after its directory was removed by hand.
#[test]
fn a_colocated_repository_s_workspace_leaves_no_git_worktree_and_runs_again() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    assert!(repo.join(".git").is_dir(), "the repository is colocated");
    let main_only = vec![repo.display().to_string()];
    env.aw(&repo, ["run", "w", "--", "sh", "-c", "echo x > x.txt"])
        .assert_ok();
    let ws = env.ws_path(&repo, "w");
    assert!(!ws.join(".git").exists(), "w is no git worktree");
    assert_eq!(git_worktrees(&env, &repo), main_only);

    env.aw(&repo, ["clean", "w"]).assert_ok();
    assert_eq!(git_worktrees(&env, &repo), main_only);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();

    fs::remove_dir_all(&ws).unwrap();
    let again = env.aw(&repo, ["run", "w", "--", "true"]);
    again.assert_ok();
    assert_eq!(git_worktrees(&env, &repo), main_only);
    // git's own view of the repository is untouched: no branch jj would make for a worktree.
    let branches = crate::backends::git_ok(&env, &repo, &["branch", "--list", "jj-worktree-*"]);
    assert_eq!(branches, "");
}
