//! Running the same test against both backends: jj workspaces and git worktrees.

use std::fs;
use std::path::{Path, PathBuf};

use crate::harness::TestEnv;

/// The backend a parameterised test runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Jj,
    Git,
}

/// A plain git repository (no jj) at `<tmp>/<name>` with the same files as
/// [`TestEnv::jj_repo`], committed on `main`. Returns its canonical path.
pub fn git_repo(env: &TestEnv, name: &str) -> PathBuf {
    fs::write(
        env.home().join(".gitconfig"),
        "[user]\n\tname = Test User\n\temail = test.user@example.com\n[init]\n\tdefaultBranch = main\n",
    )
    .unwrap();
    let repo = env.path().join(name);
    fs::create_dir_all(repo.join("sub")).unwrap();
    fs::write(repo.join("a.txt"), "hello\n").unwrap();
    fs::write(repo.join("sub/b.txt"), "b\n").unwrap();
    fs::write(repo.join(".envrc"), "export AW_TEST_VAR=from-envrc\n").unwrap();
    env.cmd("git", &repo).args(["init", "-q"]).run().assert_ok();
    env.cmd("git", &repo).args(["add", "-A"]).run().assert_ok();
    env.cmd("git", &repo)
        .args(["commit", "-q", "-m", "initial"])
        .run()
        .assert_ok();
    fs::canonicalize(repo).unwrap()
}

/// `git` in `dir`, asserting success; its stdout.
pub fn git_ok(env: &TestEnv, dir: &Path, args: &[&str]) -> String {
    env.cmd("git", dir)
        .args(args)
        .run()
        .assert_ok()
        .stdout
        .clone()
}

impl Backend {
    /// A fresh repository of this backend with the standard test files.
    pub fn repo(self, env: &TestEnv) -> PathBuf {
        match self {
            Backend::Jj => env.jj_repo("repo"),
            Backend::Git => git_repo(env, "repo"),
        }
    }

    /// Asserts the main workspace (or worktree) is healthy: `jj status` / `git status` work.
    pub fn assert_healthy(self, env: &TestEnv, repo: &Path) {
        match self {
            Backend::Jj => env.jj(repo, ["status"]).assert_ok(),
            Backend::Git => env.cmd("git", repo).args(["status"]).run().assert_ok(),
        };
    }

    /// The workspaces the backend has registered: jj's workspace names, or for git
    /// `default` plus the ids of worktrees on `agent-workspace/<id>` branches.
    pub fn registered(self, env: &TestEnv, repo: &Path) -> Vec<String> {
        match self {
            Backend::Jj => env.workspace_names(repo),
            Backend::Git => {
                let out = git_ok(env, repo, &["worktree", "list", "--porcelain"]);
                let mut names = vec!["default".to_string()];
                let mut ids: Vec<String> = out
                    .lines()
                    .filter_map(|l| l.strip_prefix("branch refs/heads/agent-workspace/"))
                    .map(str::to_string)
                    .collect();
                ids.sort();
                names.extend(ids);
                names
            }
        }
    }
}

/// Expands to a `jj` and a `git` module, each with a `#[test]` per listed function calling it
/// with that backend.
#[macro_export]
macro_rules! both_backends {
    ($($name:ident),+ $(,)?) => {
        mod jj {
            $(#[test]
            fn $name() {
                super::$name($crate::backends::Backend::Jj);
            })+
        }
        mod git {
            $(#[test]
            fn $name() {
                super::$name($crate::backends::Backend::Git);
            })+
        }
    };
}
