//! Hostile file systems: symlinks planted in agent-workspace's own directories.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use crate::backends::Backend;
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
    assert!(
        cached.iter().any(|f| f.ends_with(".cache")),
        "{cached:?}\n{}",
        env.listing()
    );
    let locks = tree(&ns.join(".locks"));
    assert!(locks.iter().all(|f| f.ends_with(".lock")), "{locks:?}");
}
