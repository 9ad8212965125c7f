//! Failures of agent-workspace itself: one clear `Error:` line (with `Caused by:` and `Hint:`
//! lines), exit 125 for `run` and `shell`, 1 for `status` and `clean`, 2 for bad usage.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::backends::Backend;
use crate::harness::{Outcome, TestEnv};

/// Tools a PATH without jj (or without direnv) still offers.
const BASICS: &[&str] = &["sh", "env", "true", "cat", "git"];

/// A backend whose tool is missing from PATH: `run` (exit 125) and `clean` (exit 1) name it
/// and create nothing, `status` still lists the directories with a warning. Returns the
/// outcomes of `run`, `status` and `clean`.
fn backend_tool_missing_from_path(backend: Backend, tool: &str) -> [Outcome; 3] {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let mut tools: Vec<&str> = BASICS.iter().copied().filter(|t| *t != tool).collect();
    tools.push("direnv");
    let path = env.path_with_only(&tools);
    let run = env
        .aw_cmd(&repo)
        .env("PATH", &path)
        .args(["run", "w1", "--", "touch", "ran"])
        .run();
    assert!(!env.ws_path(&repo, "w1").exists(), "{}", env.listing());
    let status = env.aw_cmd(&repo).env("PATH", &path).arg("status").run();
    let clean = env
        .aw_cmd(&repo)
        .env("PATH", &path)
        .args(["clean", "w1"])
        .run();
    [run, status, clean]
}

#[test]
fn jj_missing_from_path() {
    let [run, status, clean] = backend_tool_missing_from_path(Backend::Jj, "jj");
    insta::assert_snapshot!(run, @r"
    --- stderr ---
    Error: jj was not found on PATH
    Hint: install jj 0.45.1 with `cargo install --locked jj-cli@0.45.1`
    [exit 125]
    ");
    insta::assert_snapshot!(status, @r"
    WORKSPACE  STATUS  WORKFLOW  CHANGES  UNLANDED  UPDATED
    --- stderr ---
    Warning: could not ask the backend which workspaces it knows: jj was not found on PATH
    Hint: install jj 0.45.1 with `cargo install --locked jj-cli@0.45.1`
    [exit 0]
    ");
    insta::assert_snapshot!(clean, @r"
    --- stderr ---
    Error: jj was not found on PATH
    Hint: install jj 0.45.1 with `cargo install --locked jj-cli@0.45.1`
    [exit 1]
    ");
}

#[test]
fn git_missing_from_path() {
    let [run, status, clean] = backend_tool_missing_from_path(Backend::Git, "git");
    insta::assert_snapshot!(run, @r"
    --- stderr ---
    Error: git was not found on PATH
    Hint: install git with your package manager
    [exit 125]
    ");
    insta::assert_snapshot!(status, @r"
    WORKSPACE  STATUS  WORKFLOW  CHANGES  UNLANDED  UPDATED
    --- stderr ---
    Warning: could not ask the backend which workspaces it knows: git was not found on PATH
    Hint: install git with your package manager
    [exit 0]
    ");
    insta::assert_snapshot!(clean, @r"
    --- stderr ---
    Error: git was not found on PATH
    Hint: install git with your package manager
    [exit 1]
    ");
}

/// jj only: agent-workspace checks jj's version; it asks nothing of git's.
#[test]
fn jj_older_than_0_38_is_refused() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    // The only fake jj of the suite: it can do nothing but tell its version.
    let bin = env.path().join("old-jj");
    fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("jj");
    fs::write(
        &fake,
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'jj 0.30.0'; exit 0; fi\necho 'fake jj' >&2; exit 1\n",
    )
    .unwrap();
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
    let out = env
        .aw_cmd(&repo)
        .env("PATH", env.path_with_first(&bin))
        .args(["run", "w1", "--", "touch", "ran"])
        .run();
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: [TMP]/old-jj/jj is jj 0.30.0; agent-workspace needs jj 0.38 or newer
    Hint: install jj 0.45.1 with `cargo install --locked jj-cli@0.45.1`
    [exit 125]
    ");
    assert!(!env.ws_path(&repo, "w1").exists(), "{}", env.listing());
}

#[test]
fn outside_any_repository() {
    let env = TestEnv::new();
    let outside = env.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    let run = env.aw(&outside, ["run", "w1", "--", "touch", "ran"]);
    insta::assert_snapshot!(run, @r"
    --- stderr ---
    Error: [TMP]/outside is not inside a jj or git repository
    Hint: run from inside the repository or pass --repo PATH
    [exit 125]
    ");
    assert!(!outside.join("ran").exists());
    insta::assert_snapshot!(env.aw(&outside, ["status"]), @r"
    --- stderr ---
    Error: [TMP]/outside is not inside a jj or git repository
    Hint: run from inside the repository or pass --repo PATH
    [exit 1]
    ");
    insta::assert_snapshot!(env.aw(&outside, ["shell", "w1"]), @r"
    --- stderr ---
    Error: [TMP]/outside is not inside a jj or git repository
    Hint: run from inside the repository or pass --repo PATH
    [exit 125]
    ");
    insta::assert_snapshot!(env.aw(&outside, ["clean", "w1"]), @r"
    --- stderr ---
    Error: [TMP]/outside is not inside a jj or git repository
    Hint: run from inside the repository or pass --repo PATH
    [exit 1]
    ");
    // --repo pointing outside any repository fails the same way.
    let repo_flag = env.aw(env.path(), ["--repo", outside.to_str().unwrap(), "status"]);
    insta::assert_snapshot!(repo_flag, @r"
    --- stderr ---
    Error: [TMP]/outside is not inside a jj or git repository
    Hint: run from inside the repository or pass --repo PATH
    [exit 1]
    ");
    assert!(!env.ws_root().exists(), "{}", env.listing());
}

fn an_envrc_without_direnv_on_path_needs_no_direnv(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let mut tools = BASICS.to_vec();
    if !tools.contains(&backend.name()) {
        tools.push(backend.name());
    }
    let path = env.path_with_only(&tools);
    let out = env
        .aw_cmd(&repo)
        .env("PATH", &path)
        .args(["run", "w1", "--", "touch", "ran"])
        .run();
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/.envrc exists but direnv is not installed
    Hint: install direnv, or pass --no-direnv to run without the workspace's environment
    [exit 125]
    ");
    assert!(!env.ws_path(&repo, "w1").join("ran").exists());
    let out = env
        .aw_cmd(&repo)
        .env("PATH", &path)
        .args([
            "run",
            "w1",
            "--no-direnv",
            "--",
            "sh",
            "-c",
            "echo \"${AW_TEST_VAR-unset}\"",
        ])
        .run();
    insta::assert_snapshot!(out, @r"
    unset
    [exit 0]
    ");
}

fn a_root_that_is_a_regular_file_is_unusable(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let file = env.path().join("root-file");
    fs::write(&file, "not a directory\n").unwrap();
    let out = run_in_root(&env, &repo, &file);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: workspace root [TMP]/root-file is not a directory
    Hint: pass --root DIR or set AI_WORKSPACES_ROOT to a directory
    [exit 125]
    ");
    assert_eq!(fs::read_to_string(&file).unwrap(), "not a directory\n");
    assert_eq!(backend.registered(&env, &repo), ["default"]);
    // The same through the environment variable.
    let out = env
        .aw_cmd(&repo)
        .env("AI_WORKSPACES_ROOT", &file)
        .args(["run", "w1", "--", "touch", "ran"])
        .run();
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: workspace root [TMP]/root-file is not a directory
    Hint: pass --root DIR or set AI_WORKSPACES_ROOT to a directory
    [exit 125]
    ");
}

fn a_root_below_a_regular_file_is_unusable(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let file = env.path().join("root-file");
    fs::write(&file, "").unwrap();
    let root = file.join("below");
    let out = run_in_root(&env, &repo, &root);
    // Nothing reached the backend yet: one snapshot serves both.
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: could not create the workspace directory [TMP]/root-file/below
    Caused by: Not a directory (os error 20)
    Hint: pass --root DIR or set AI_WORKSPACES_ROOT to a writable directory
    [exit 125]
    ");
    assert_eq!(backend.registered(&env, &repo), ["default"]);
}

/// Run as an unprivileged user where the tests run as root: permissions do not stop root.
fn a_read_only_root_is_unusable(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let root = env.path().join("read-only");
    fs::create_dir_all(&root).unwrap();
    fs::set_permissions(&root, fs::Permissions::from_mode(0o555)).unwrap();
    let out = env.aw_cmd(&repo).args(in_root(&root)).run_unprivileged();
    fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
    // Nothing reached the backend yet: one snapshot serves both.
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: could not create the workspace directory [TMP]/read-only/repo-[HASH]
    Caused by: Permission denied (os error 13)
    Hint: pass --root DIR or set AI_WORKSPACES_ROOT to a writable directory
    [exit 125]
    ");
    assert_eq!(backend.registered(&env, &repo), ["default"]);
}

fn a_root_inside_the_repository_is_refused_and_leaves_nothing_there(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let root = repo.join("roots");
    let out = run_in_root(&env, &repo, &root);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: workspace root [TMP]/repo/roots is inside the repository [TMP]/repo
    Hint: choose a root outside the repository
    [exit 125]
    ");
    assert_eq!(backend.registered(&env, &repo), ["default"]);
    assert!(!root.exists(), "left behind: {}", root.display());
}

/// `agent-workspace --root <root> run w1 -- touch ran` in `repo`.
fn run_in_root(env: &TestEnv, repo: &Path, root: &Path) -> Outcome {
    env.aw(repo, in_root(root))
}

/// The arguments of [`run_in_root`].
fn in_root(root: &Path) -> [&OsStr; 7] {
    ["--root".as_ref(), root.as_os_str()]
        .into_iter()
        .chain(["run", "w1", "--", "touch", "ran"].map(OsStr::new))
        .collect::<Vec<_>>()
        .try_into()
        .unwrap()
}

crate::both_backends!(
    an_envrc_without_direnv_on_path_needs_no_direnv,
    a_root_that_is_a_regular_file_is_unusable,
    a_root_below_a_regular_file_is_unusable,
    a_read_only_root_is_unusable,
    a_root_inside_the_repository_is_refused_and_leaves_nothing_there,
);
