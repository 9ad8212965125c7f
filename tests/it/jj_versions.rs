//! jj as users have it: what differs between the jj releases agent-workspace supports (0.45
//! and 0.46) is decided in one place of the jj backend, and a workspace behaves the same on
//! both. jj 0.46 makes a workspace of a colocated repository a git worktree of its own
//! (`jj.colocate = "auto"` follows the main workspace); 0.45 never does. Each story states
//! what the jj on PATH must do, so it holds on both passes of the suite (the second,
//! `scripts/test-jj-0.46.sh`, puts jj 0.46 first on PATH).

use std::fs;
use std::path::{Path, PathBuf};

use crate::harness::TestEnv;

/// Whether the jj on PATH makes colocated workspaces (0.46 and later).
fn colocating(env: &TestEnv) -> bool {
    let out = env.jj_ok(env.path(), ["--version"]);
    let version: Vec<u32> = out
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .split('.')
        .take(2)
        .map(|n| n.parse().unwrap_or(0))
        .collect();
    version >= vec![0, 46]
}

/// The worktrees git has registered in the repository whose git directory is `git_dir`
/// (a bare one itself left out), each followed by ` (prunable)` when git would prune it.
fn git_worktrees(env: &TestEnv, git_dir: &Path) -> Vec<String> {
    let dir = format!("--git-dir={}", git_dir.display());
    let out = crate::backends::git_ok(env, env.path(), &[&dir, "worktree", "list", "--porcelain"]);
    let mut listed = vec![];
    for block in out.split("\n\n").filter(|b| !b.trim().is_empty()) {
        let lines: Vec<&str> = block.lines().collect();
        let Some(path) = lines.iter().find_map(|l| l.strip_prefix("worktree ")) else {
            continue;
        };
        if lines.contains(&"bare") {
            continue;
        }
        match lines
            .iter()
            .any(|l| l.split(' ').next() == Some("prunable"))
        {
            true => listed.push(format!("{path} (prunable)")),
            false => listed.push(path.to_string()),
        }
    }
    listed
}

/// The git worktrees a colocated repository at `repo` lists besides its main one.
fn secondary_worktrees(env: &TestEnv, repo: &Path) -> Vec<String> {
    let main = repo.display().to_string();
    git_worktrees(env, &repo.join(".git"))
        .into_iter()
        .filter(|w| *w != main)
        .collect()
}

/// The branches jj makes for a worktree while it creates it.
fn worktree_branches(env: &TestEnv, repo: &Path) -> String {
    crate::backends::git_ok(env, repo, &["branch", "--list", "jj-worktree-*"])
}

/// Asserts that the workspace at `ws` is the git worktree jj 0.46 makes (git answers there,
/// for the workspace and no other), or, before 0.46, no git worktree at all.
fn assert_worktree_as_jj_makes_it(env: &TestEnv, repo: &Path, ws: &Path) {
    if colocating(env) {
        assert!(
            ws.join(".git").is_file(),
            "{} is a git worktree",
            ws.display()
        );
        let top = crate::backends::git_ok(env, ws, &["rev-parse", "--show-toplevel"]);
        assert_eq!(PathBuf::from(top.trim()), ws);
        assert_eq!(
            secondary_worktrees(env, repo),
            vec![ws.display().to_string()]
        );
    } else {
        assert!(
            !ws.join(".git").exists(),
            "jj before 0.46 makes no git worktree"
        );
        assert_eq!(secondary_worktrees(env, repo), Vec::<String>::new());
    }
}

/// Asserts that nothing of a removed workspace is left in git: no worktree registered (not
/// even a prunable one), no admin directory, no `jj-worktree-*` branch.
fn assert_nothing_left_in_git(env: &TestEnv, repo: &Path) {
    assert_eq!(secondary_worktrees(env, repo), Vec::<String>::new());
    let admin: Vec<_> = fs::read_dir(repo.join(".git/worktrees"))
        .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert_eq!(
        admin,
        Vec::<PathBuf>::new(),
        "git's worktree admin directories"
    );
    assert_eq!(worktree_branches(env, repo), "");
}

/// run, clean, and run the same id again in a colocated repository: on 0.46 each run makes
/// the workspace a git worktree and each clean leaves nothing of it registered in git.
#[test]
fn a_colocated_workspace_is_cleaned_without_a_trace_and_made_again() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    assert!(repo.join(".git").is_dir(), "the repository is colocated");
    env.aw(&repo, ["run", "w", "--", "sh", "-c", "echo x > x.txt"])
        .assert_ok();
    let ws = env.ws_path(&repo, "w");
    assert_worktree_as_jj_makes_it(&env, &repo, &ws);

    env.aw(&repo, ["clean", "w"]).assert_ok();
    assert_nothing_left_in_git(&env, &repo);

    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    assert_worktree_as_jj_makes_it(&env, &repo, &ws);
    env.aw(&repo, ["run", "--cleanup", "w", "--", "true"])
        .assert_ok();
    assert_nothing_left_in_git(&env, &repo);
}

/// A workspace directory deleted by hand is made again by the next run of its id, its git
/// worktree with it; `gc` of a workspace whose directory is gone leaves nothing either.
#[test]
fn a_workspace_deleted_by_hand_runs_again_as_a_worktree() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["run", "w", "--", "sh", "-c", "echo x > x.txt"])
        .assert_ok();
    let ws = env.ws_path(&repo, "w");
    fs::remove_dir_all(&ws).unwrap();

    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    assert_worktree_as_jj_makes_it(&env, &repo, &ws);

    fs::remove_dir_all(&ws).unwrap();
    env.aw(&repo, ["clean", "w"]).assert_ok();
    assert_nothing_left_in_git(&env, &repo);
}

/// Prepared workspaces are worktrees where they are made, stay right when a run takes one
/// under its id (its directory moved), and leave nothing registered when drained or cleaned.
#[test]
fn a_pool_fills_hands_over_and_drains_colocated_workspaces() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.user_config("[pool]\nsize = 2\n");
    env.aw(&repo, ["pool", "fill"]).assert_ok();
    let prepared = crate::pool_support::ready(&env, &repo);
    assert_eq!(prepared.len(), 2);
    let expected: Vec<String> = match colocating(&env) {
        true => {
            let mut paths: Vec<String> = prepared.iter().map(|p| p.display().to_string()).collect();
            paths.sort();
            paths
        }
        false => vec![],
    };
    let mut listed = secondary_worktrees(&env, &repo);
    listed.sort();
    assert_eq!(listed, expected);

    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w");
    assert!(
        prepared.iter().any(|p| !p.exists()),
        "the run took a prepared workspace"
    );
    // The refill the take started in the background makes a new one.
    crate::pool_support::wait_filled(&env, &repo, 2);
    let mut expected: Vec<String> = crate::pool_support::ready(&env, &repo)
        .iter()
        .chain([&ws])
        .map(|p| p.display().to_string())
        .collect();
    expected.sort();
    let mut listed = secondary_worktrees(&env, &repo);
    listed.sort();
    match colocating(&env) {
        // The taken one is a worktree at its new place (git answers there); none is prunable.
        true => {
            assert_eq!(listed, expected);
            let top = crate::backends::git_ok(&env, &ws, &["rev-parse", "--show-toplevel"]);
            assert_eq!(PathBuf::from(top.trim()), ws);
        }
        false => assert_eq!(listed, Vec::<String>::new()),
    }

    env.aw(&repo, ["pool", "drain"]).assert_ok();
    env.aw(&repo, ["clean", "w"]).assert_ok();
    assert_nothing_left_in_git(&env, &repo);
}

/// A sandboxed agent cannot point the workspace's `.git` at a git directory of its own (with
/// a `core.fsmonitor`), nor plant one where jj made none: after the run, neither the user's
/// `git status` in the workspace nor agent-workspace's own commands run its program, and a
/// `.git` that is not the one agent-workspace made is moved aside and named.
#[test]
fn a_sandboxed_agent_s_git_file_never_runs_anything_outside() {
    let (env, repo) = crate::sandbox_support::setup(crate::backends::Backend::Jj);
    let ws = env.ws_path(&repo, "w");
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let made = fs::read(ws.join(".git")).ok();
    let ran = env.path().join("agent-program-ran");
    // The agent's git directory, with a program git runs on `status` (core.fsmonitor).
    let agent = format!(
        "git init -q --bare {ws}/.own && git config --file {ws}/.own/config core.fsmonitor 'touch {ran}; false' && \
         git config --file {ws}/.own/config core.bare false && \
         (printf 'gitdir: {ws}/.own\\n' > {ws}/.git || rm -f {ws}/.git; printf 'gitdir: {ws}/.own\\n' > {ws}/.git); true",
        ws = ws.display(),
        ran = ran.display()
    );
    let run = env.aw(&repo, ["run", "--sandbox", "w", "--", "sh", "-c", &agent]);
    run.assert_ok();
    // What is at `.git` now is what agent-workspace made (jj 0.46's gitlink, or nothing).
    assert_eq!(fs::read(ws.join(".git")).ok(), made, "{}", run.stderr);
    if made.is_none() {
        assert!(
            run.stderr.contains(".git"),
            "the moved .git is named: {}",
            run.stderr
        );
    }
    // The user's git in the workspace, and agent-workspace's commands.
    let _ = env.cmd("git", &ws).args(["status", "--short"]).run();
    env.aw(&repo, ["status"]).assert_ok();
    env.aw(&repo, ["diff", "w"]).assert_ok();
    env.aw(&repo, ["clean", "w"]).assert_ok();
    assert!(!ran.exists(), "the agent's program ran outside its sandbox");
    assert_nothing_left_in_git(&env, &repo);
}

/// `jj.colocate` chooses: `false` makes no git worktree even in a colocated repository,
/// `true` makes one even in a repository that is not colocated (0.46), and asks for what jj
/// before 0.46 cannot do with an error that names the version, creating nothing.
#[test]
fn jj_colocate_chooses_and_a_jj_that_cannot_is_named() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.user_config("[jj]\ncolocate = false\n");
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    assert!(!env.ws_path(&repo, "w").join(".git").exists());
    assert_eq!(secondary_worktrees(&env, &repo), Vec::<String>::new());

    env.jj_ok(env.path(), ["git", "init", "--no-colocate", "plain"]);
    let plain = fs::canonicalize(env.path().join("plain")).unwrap();
    env.user_config("[jj]\ncolocate = true\n");
    let run = env.aw(&plain, ["run", "c", "--", "true"]);
    let ws = env.ws_path(&plain, "c");
    if colocating(&env) {
        run.assert_ok();
        assert!(ws.join(".git").is_file());
        let top = crate::backends::git_ok(&env, &ws, &["rev-parse", "--show-toplevel"]);
        assert_eq!(PathBuf::from(top.trim()), ws);
        env.aw(&plain, ["clean", "c"]).assert_ok();
        let git_dir = plain.join(".jj/repo/store/git");
        assert_eq!(
            git_worktrees(&env, &git_dir),
            Vec::<String>::new(),
            "nothing registered"
        );
    } else {
        // run's own failures before the command starts exit 125.
        run.assert_code(125);
        assert!(run.stderr.starts_with("Error: "), "{}", run.stderr);
        assert!(run.stderr.contains("jj.colocate"), "{}", run.stderr);
        assert!(run.stderr.contains("Hint: "), "{}", run.stderr);
        assert!(!ws.exists(), "nothing is created");
        assert_eq!(env.workspace_names(&plain), vec!["default".to_string()]);
    }

    env.user_config("[jj]\ncolocate = \"sometimes\"\n");
    let bad = env.aw(&repo, ["run", "x", "--", "true"]);
    insta::assert_snapshot!(bad, @r#"
    --- stderr ---
    Error: invalid configuration in [TMP]/xdg/config/agent-workspace/config.toml: jj.colocate = "sometimes" is not "auto", true or false
    Hint: fix the key or value named above; docs/configuration.md lists every key
    [exit 2]
    "#);
}
