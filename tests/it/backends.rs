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
    /// `jj` or `git`: the backend's name as the tool prints it, and its program.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Jj => "jj",
            Backend::Git => "git",
        }
    }

    /// A fresh repository of this backend with the standard test files.
    pub fn repo(self, env: &TestEnv) -> PathBuf {
        self.repo_named(env, "repo")
    }

    /// [`Backend::repo`] at `<tmp>/<name>`.
    pub fn repo_named(self, env: &TestEnv, name: &str) -> PathBuf {
        match self {
            Backend::Jj => env.jj_repo(name),
            Backend::Git => git_repo(env, name),
        }
    }

    /// A file snapshot name of its own per backend (`jj__<name>`, `git__<name>`), for a
    /// parameterised test whose output differs between them: the snapshot's module path is
    /// the shared function's, so without this both backends would compare against one file.
    pub fn snapshot(self, name: &str) -> String {
        format!("{}__{name}", self.name())
    }

    /// The commit the working copy at `dir` is on top of: `@-` (jj), `HEAD` (git). In the
    /// main workspace, that is where a new workspace starts by default.
    pub fn base_of(self, env: &TestEnv, dir: &Path) -> String {
        match self {
            Backend::Jj => env.commit_id(dir, "@-"),
            Backend::Git => git_ok(env, dir, &["rev-parse", "HEAD"]).trim().to_string(),
        }
    }

    /// The uncommitted changes of the working copy at `ws`, one `<status> <file>` a line:
    /// `jj diff --summary`, or `git status --porcelain` with untracked files listed one by
    /// one (`??` shown as `A`, so both read alike).
    pub fn changes(self, env: &TestEnv, ws: &Path) -> String {
        match self {
            Backend::Jj => env.jj_ok(ws, ["diff", "--summary"]),
            Backend::Git => {
                let out = git_ok(env, ws, &["status", "--porcelain", "--untracked-files=all"]);
                out.lines()
                    .map(|l| match l.strip_prefix("?? ") {
                        Some(file) => format!("A {file}\n"),
                        None => format!("{}\n", l.trim_start()),
                    })
                    .collect()
            }
        }
    }

    /// Checks that `message` (from `clean` or `run --cleanup`) says the edits of workspace `id`
    /// were kept: "kept in change <change>" (jj), or "committed to branch
    /// agent-workspace/<id>" (git). Returns that change or branch, and the files it holds.
    #[track_caller]
    pub fn kept(self, env: &TestEnv, repo: &Path, id: &str, message: &str) -> (String, String) {
        match self {
            Backend::Jj => {
                let change = message
                    .lines()
                    .find(|l| l.starts_with(&format!("Removed {id} ")))
                    .and_then(|l| l.split_once("; its edits are kept in change "))
                    // The change id, up to what the line says next (such as its run logs).
                    .map(|(_, rest)| rest.split(';').next().unwrap_or(rest).trim().to_string())
                    .unwrap_or_else(|| panic!("edits of {id} not kept in a change: {message}"));
                let files = env.jj_ok(repo, ["file", "list", "-r", &change]);
                (change, files)
            }
            Backend::Git => {
                let branch = format!("agent-workspace/{id}");
                let said = format!("its uncommitted changes were committed to branch {branch} (");
                assert!(
                    message
                        .lines()
                        .any(|l| l.starts_with(&format!("Removed {id} ")) && l.contains(&said)),
                    "edits of {id} not committed to {branch}: {message}"
                );
                let files = git_ok(env, repo, &["ls-tree", "-r", "--name-only", &branch]);
                (branch, files)
            }
        }
    }

    /// The content of `file` in what [`Backend::kept`] returned (a change or a branch).
    pub fn kept_file(self, env: &TestEnv, repo: &Path, keeper: &str, file: &str) -> String {
        match self {
            Backend::Jj => env.jj_ok(repo, ["file", "show", "-r", keeper, file]),
            Backend::Git => git_ok(env, repo, &["show", &format!("{keeper}:{file}")]),
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
///
/// The call runs inside `insta::allow_duplicates!`: insta keys its snapshots by the function
/// that asserts them, here the shared one, and would otherwise refuse an inline snapshot the
/// other backend's test already asserted ("inline snapshot assertions in loops") and give an
/// unnamed file snapshot a `-2` name the second time. A file snapshot whose content differs
/// per backend takes its name from [`Backend::snapshot`].
#[macro_export]
macro_rules! both_backends {
    ($($name:ident),+ $(,)?) => {
        mod jj {
            $(#[test]
            fn $name() {
                insta::allow_duplicates! {
                    super::$name($crate::backends::Backend::Jj);
                }
            })+
        }
        mod git {
            $(#[test]
            fn $name() {
                insta::allow_duplicates! {
                    super::$name($crate::backends::Backend::Git);
                }
            })+
        }
    };
}
