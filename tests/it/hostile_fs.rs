//! Hostile file systems and ids: symlinks planted in agent-workspace's own directories, jj's
//! main workspace, and ids git cannot take as branch names.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use crate::backends::{git_ok, git_repo, Backend};
use crate::both_backends;
use crate::harness::{Outcome, TestEnv};

/// A directory outside the workspace root holding one file and one directory that looks
/// like a workspace.
fn outside(env: &TestEnv) -> PathBuf {
    let dir = env.path().join("outside");
    fs::create_dir_all(dir.join("w1")).unwrap();
    fs::write(dir.join("keep.txt"), "mine\n").unwrap();
    fs::write(dir.join("w1/precious.txt"), "mine\n").unwrap();
    dir
}

/// Every path under `dir`, recursively, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut found = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in fs::read_dir(&at).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            found.push(path.strip_prefix(dir).unwrap().display().to_string());
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Asserts `out` failed with `code`, an error naming `path` as a symlink, and a hint.
#[track_caller]
fn refused(out: &Outcome, code: i32, path: &Path) {
    out.assert_code(code);
    let said = format!(
        "Error: {} is a symlink; refusing to follow it",
        path.display()
    );
    assert!(out.stderr.contains(&said), "{}", out.report());
    assert!(out.stderr.contains("\nHint: "), "{}", out.report());
}

/// `run`, `clean --all --force`, a named `clean --force` and `status` on a namespace whose
/// `planted` path is a symlink to `outside`: each refused, nothing outside touched.
fn all_refused(env: &TestEnv, repo: &Path, planted: &Path, outside: &Path) {
    let before = tree(outside);
    refused(
        &env.aw(repo, ["run", "w2", "--", "touch", "ran"]),
        125,
        planted,
    );
    refused(
        &env.aw(repo, ["run", "w1", "--", "touch", "ran"]),
        125,
        planted,
    );
    refused(&env.aw(repo, ["clean", "--all", "--force"]), 1, planted);
    refused(&env.aw(repo, ["clean", "--force", "w1"]), 1, planted);
    refused(&env.aw(repo, ["status"]), 1, planted);
    assert_eq!(tree(outside), before);
    assert!(!repo.join("ran").exists());
}

fn a_symlinked_namespace_directory_is_never_followed(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let outside = outside(&env);
    let ns = env.namespace_dir(&repo);
    fs::create_dir_all(env.ws_root()).unwrap();
    symlink(&outside, &ns).unwrap();
    let out = env.aw(&repo, ["run", "w1", "--", "true"]);
    insta::assert_snapshot!(env.normalize(&out.stderr), @r"
    Error: [TMP]/xdg/cache/ai-workspaces/repo-[HASH] is a symlink; refusing to follow it
    Hint: agent-workspace never follows symlinks in its own directories; remove [TMP]/xdg/cache/ai-workspaces/repo-[HASH] (after checking where it points) and try again
    ");
    all_refused(&env, &repo, &ns, &outside);
    assert_eq!(backend.registered(&env, &repo), ["default"]);
}

fn a_symlinked_locks_directory_is_never_followed(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let outside = outside(&env);
    let locks = env.namespace_dir(&repo).join(".locks");
    fs::remove_dir_all(&locks).unwrap();
    symlink(&outside, &locks).unwrap();
    all_refused(&env, &repo, &locks, &outside);
    assert!(env.ws_path(&repo, "w1").is_dir());
}

fn a_symlinked_cache_directory_is_never_followed(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let outside = outside(&env);
    let cache = env.namespace_dir(&repo).join(".cache");
    let _ = fs::remove_dir_all(&cache);
    symlink(&outside, &cache).unwrap();
    all_refused(&env, &repo, &cache, &outside);
}

fn symlinked_lease_files_are_never_followed(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let outside = outside(&env);
    let locks = env.namespace_dir(&repo).join(".locks");
    // A lease pointing at a file that does not exist yet: following it would create it.
    let lease = locks.join("w1.lock");
    fs::remove_file(&lease).unwrap();
    symlink(outside.join("created-by-lease"), &lease).unwrap();
    let before = tree(&outside);
    refused(
        &env.aw(&repo, ["run", "w1", "--", "touch", "ran"]),
        125,
        &lease,
    );
    refused(&env.aw(&repo, ["clean", "--force", "w1"]), 1, &lease);
    assert_eq!(tree(&outside), before);
    assert!(env.ws_path(&repo, "w1").is_dir());
    // The repository lock, taken to create or remove any workspace.
    fs::remove_file(&lease).unwrap();
    let repo_lock = locks.join(".repo.lock");
    let _ = fs::remove_file(&repo_lock);
    symlink(outside.join("created-by-repo-lock"), &repo_lock).unwrap();
    refused(&env.aw(&repo, ["run", "w2", "--", "true"]), 125, &repo_lock);
    refused(&env.aw(&repo, ["clean", "w1"]), 1, &repo_lock);
    assert_eq!(tree(&outside), before);
    assert!(env.ws_path(&repo, "w1").is_dir());
    assert!(!env.ws_path(&repo, "w2").exists(), "{}", env.listing());
}

both_backends!(
    a_symlinked_namespace_directory_is_never_followed,
    a_symlinked_locks_directory_is_never_followed,
    a_symlinked_cache_directory_is_never_followed,
    symlinked_lease_files_are_never_followed,
);

#[test]
fn jj_list_caches_live_in_the_cache_directory() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    env.aw(&repo, ["status"]).assert_ok();
    let ns = env.namespace_dir(&repo);
    let cached: Vec<_> = tree(&ns.join(".cache"));
    // The workspace list is read from jj's files (nothing kept); w1's changes are kept.
    assert!(
        cached.iter().any(|f| f.contains("changes-w1.")),
        "{cached:?}\n{}",
        env.listing()
    );
    let locks = tree(&ns.join(".locks"));
    assert!(locks.iter().all(|f| f.ends_with(".lock")), "{locks:?}");
    // A namespace from before: caches in `.locks/`, no `.cache/`. The next run drops them.
    fs::remove_dir_all(ns.join(".cache")).unwrap();
    fs::write(ns.join(".locks/jj-workspaces.cache"), "stale\n").unwrap();
    fs::write(ns.join(".locks/jj-workspace-names.cache"), "stale\n").unwrap();
    env.aw(&repo, ["run", "w2", "--", "true"]).assert_ok();
    let locks = tree(&ns.join(".locks"));
    assert!(locks.iter().all(|f| f.ends_with(".lock")), "{locks:?}");
    assert!(ns.join(".cache").is_dir());
}

#[test]
fn jj_default_workspace_is_never_managed() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let attempts = [
        env.aw(&repo, ["run", "default", "--", "touch", "ran"]),
        env.aw(&repo, ["clean", "default"]),
        env.aw(&repo, ["clean", "--force", "default"]),
        env.aw(&repo, ["shell", "default"]),
    ];
    for out in &attempts {
        out.assert_code(2);
        assert_eq!(out.stderr, attempts[0].stderr, "{}", out.report());
    }
    insta::assert_snapshot!(attempts[0].stderr, @r#"
    Error: workspace id "default" is jj's main workspace, which agent-workspace never manages
    Hint: pick another id; the main workspace is the repository itself
    "#);
    let ns = env.namespace_dir(&repo);
    assert!(
        !ns.join(".locks/default.lock").exists(),
        "{}",
        env.listing()
    );
    assert!(!ns.join("default").exists());
    assert!(!repo.join("ran").exists());
    // A bulk clean leaves it too.
    env.aw(&repo, ["clean", "--all", "--force"]).assert_ok();
    assert_eq!(env.workspace_names(&repo), ["default"]);
    env.jj(&repo, ["status"]).assert_ok();
}

/// Ids that pass the id check but make no valid git branch name under the default prefix.
const GIT_BAD_IDS: [&str; 6] = ["x.lock", "a..b", "a.", "w.lock", "a...b", "1."];

#[test]
fn ids_git_cannot_take_as_branches_are_refused_up_front() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    let mut messages = String::new();
    for id in GIT_BAD_IDS {
        let attempts = [
            env.aw(&repo, ["run", id, "--", "touch", "ran"]),
            env.aw(&repo, ["clean", id]),
            env.aw(&repo, ["shell", id]),
        ];
        for out in &attempts {
            out.assert_code(2);
            assert_eq!(out.stderr, attempts[0].stderr, "{}", out.report());
        }
        messages.push_str(&attempts[0].stderr);
    }
    insta::assert_snapshot!(messages, @r#"
    Error: workspace id "x.lock" makes the git branch "agent-workspace/x.lock", which git refuses: no component of a branch name can end with '.lock'
    Hint: pick an id that makes a valid git branch name (no '..', no trailing '.' or '.lock'); check AGENT_WORKSPACE_BRANCH_PREFIX too
    Error: workspace id "a..b" makes the git branch "agent-workspace/a..b", which git refuses: a branch name cannot contain '..'
    Hint: pick an id that makes a valid git branch name (no '..', no trailing '.' or '.lock'); check AGENT_WORKSPACE_BRANCH_PREFIX too
    Error: workspace id "a." makes the git branch "agent-workspace/a.", which git refuses: a branch name cannot end with '.'
    Hint: pick an id that makes a valid git branch name (no '..', no trailing '.' or '.lock'); check AGENT_WORKSPACE_BRANCH_PREFIX too
    Error: workspace id "w.lock" makes the git branch "agent-workspace/w.lock", which git refuses: no component of a branch name can end with '.lock'
    Hint: pick an id that makes a valid git branch name (no '..', no trailing '.' or '.lock'); check AGENT_WORKSPACE_BRANCH_PREFIX too
    Error: workspace id "a...b" makes the git branch "agent-workspace/a...b", which git refuses: a branch name cannot contain '..'
    Hint: pick an id that makes a valid git branch name (no '..', no trailing '.' or '.lock'); check AGENT_WORKSPACE_BRANCH_PREFIX too
    Error: workspace id "1." makes the git branch "agent-workspace/1.", which git refuses: a branch name cannot end with '.'
    Hint: pick an id that makes a valid git branch name (no '..', no trailing '.' or '.lock'); check AGENT_WORKSPACE_BRANCH_PREFIX too
    "#);
    // Nothing made: no namespace (so no lease file), no branch, no worktree.
    assert!(!env.ws_root().exists(), "{}", env.listing());
    assert_eq!(
        git_ok(&env, &repo, &["branch", "--format=%(refname:short)"]),
        "main\n"
    );
    assert!(!repo.join("ran").exists());
}

#[test]
fn the_git_id_check_agrees_with_git_check_ref_format() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    let ids = [
        "a",
        "x.lock",
        "x.locks",
        "a.lock.b",
        "a..b",
        "a.",
        "a-.lock",
        "A.b_c-9",
        "1.",
        "a...b",
        "x.lock.lock",
        "lock",
        "a.b.c",
        "0",
    ];
    let prefixes = [
        "agent-workspace/",
        "p.lock/",
        "p..q/",
        "HEAD",
        "p@{x/",
        "-p/",
        "@",
        "p/",
    ];
    for prefix in prefixes {
        for id in ids {
            let branch = format!("{prefix}{id}");
            let git = env
                .cmd("git", &repo)
                .args(["check-ref-format", "--branch", &branch])
                .run();
            // `shell` on a workspace that does not exist: exit 125 for a valid id, 2 for one
            // refused; no workspace is made either way.
            let ours = env
                .aw_cmd(&repo)
                .env("AGENT_WORKSPACE_BRANCH_PREFIX", prefix)
                .args(["shell", id])
                .run();
            let expected = if git.status.success() { 125 } else { 2 };
            assert_eq!(
                ours.code(),
                Some(expected),
                "branch {branch:?}: git said {}\n{}",
                git.stderr,
                ours.report()
            );
        }
    }
}

#[test]
fn the_main_worktree_is_never_a_workspace() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    // The main worktree on a branch that looks like a workspace's.
    git_ok(&env, &repo, &["checkout", "-q", "-b", "agent-workspace/w1"]);
    // The namespace holds a lease for w1 (a workspace of that name existed once).
    env.aw(&repo, ["run", "w2", "--", "true"]).assert_ok();
    let ns = env.namespace_dir(&repo);
    fs::write(ns.join(".locks/w1.lock"), "").unwrap();
    let status = env.aw(&repo, ["status", "--json"]).json();
    let ids: Vec<&str> = status["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["workspace_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["w2"], "{status}");
    env.aw(&repo, ["clean", "--all", "--force"]).assert_ok();
    env.aw(&repo, ["clean", "--force", "w1"]).assert_code(1);
    assert_eq!(
        git_ok(&env, &repo, &["branch", "--show-current"]),
        "agent-workspace/w1\n"
    );
    assert!(repo.join("a.txt").is_file());
    let worktrees = git_ok(&env, &repo, &["worktree", "list", "--porcelain"]);
    assert!(worktrees.starts_with(&format!("worktree {}\n", repo.display())));
}
