//! The tools bundle never carries the checkout itself: an entry that is or contains the
//! repository's root, `.git` or `.jj` (also through a symlink such as `scripts/up -> ..`)
//! is refused; `tools.paths` from a repository file is trusted like its `setup.command`.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use crate::backends::{git_ok, Backend};
use crate::harness::TestEnv;

fn commit_all(env: &TestEnv, backend: Backend, repo: &Path, message: &str) {
    match backend {
        Backend::Jj => {
            env.jj(repo, ["commit", "-m", message]).assert_ok();
        }
        Backend::Git => {
            git_ok(env, repo, &["add", "-A"]);
            git_ok(env, repo, &["commit", "-q", "-m", message]);
        }
    }
}

fn a_symlink_to_the_checkout_is_refused(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    fs::create_dir_all(repo.join("scripts")).unwrap();
    fs::write(repo.join("scripts/up.sh"), "echo up\n").unwrap();
    symlink("..", repo.join("scripts/up")).unwrap();
    fs::write(repo.join(".env"), "DB_PASSWORD=secret\n").unwrap();
    commit_all(&env, backend, &repo, "scripts");
    let out = env.aw(&repo, ["run", "w", "--", "echo", "ran"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: tools.paths entry scripts: scripts/up leads to the repository's root, .git or .jj ([TMP]/repo)
    Hint: remove that symlink or the entry from tools.paths: the tools bundle never copies the checkout, its .git or its .jj
    [exit 125]
    ");
    let bundle = env.ws_path(&repo, "w").join(".agent-tools");
    assert!(
        !bundle.join("scripts/up").exists(),
        "the checkout was copied"
    );
    // The same through a symlink to .git (or .jj) and a plain entry naming it.
    fs::remove_file(repo.join("scripts/up")).unwrap();
    let store = match backend {
        Backend::Jj => "../.jj",
        Backend::Git => "../.git",
    };
    symlink(store, repo.join("scripts/store")).unwrap();
    let out = env.aw(&repo, ["run", "w", "--", "echo", "ran"]);
    // The store's name is the backend's: the snapshot calls it `.jj`.
    let out = out
        .to_string()
        .replace("[TMP]/repo/.git)", "[TMP]/repo/.jj)");
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: tools.paths entry scripts: scripts/store leads to the repository's root, .git or .jj ([TMP]/repo/.jj)
    Hint: remove that symlink or the entry from tools.paths: the tools bundle never copies the checkout, its .git or its .jj
    [exit 125]
    ");
    fs::remove_file(repo.join("scripts/store")).unwrap();
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    assert!(bundle.join("scripts/up.sh").is_file());
}

fn tools_paths_of_a_repository_file_need_trust(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    fs::write(
        repo.join("agent-workspace.toml"),
        "[tools]\npaths = [\"AGENTS.md\"]\n",
    )
    .unwrap();
    fs::write(repo.join("AGENTS.md"), "# agents\n").unwrap();
    commit_all(&env, backend, &repo, "config");
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    // Changed in the checkout, not at the base: like setup.command, not trusted.
    fs::write(repo.join(".env"), "DB_PASSWORD=secret\n").unwrap();
    fs::write(
        repo.join("agent-workspace.toml"),
        "[tools]\npaths = [\".env\"]\n",
    )
    .unwrap();
    let out = env.aw(&repo, ["run", "w2", "--", "echo", "ran"]);
    insta::assert_snapshot!(out, @r#"
    --- stderr ---
    Error: tools.paths comes from [TMP]/repo/agent-workspace.toml, which differs from that file at workspace "w2"'s base revision; not copying the tools bundle
    Hint: review the file, then pass --trust-config to copy what it names (tools.paths in your own configuration file is always trusted); the workspace is kept
    [exit 125]
    "#);
    assert!(
        out.stderr.starts_with(&format!(
            "Error: tools.paths comes from {}, which differs from that file at workspace \"w2\"'s base revision; not copying the tools bundle",
            repo.join("agent-workspace.toml").display()
        )),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("\nHint: "), "{}", out.stderr);
    let bundle = env.ws_path(&repo, "w2").join(".agent-tools");
    assert!(!bundle.join(".env").exists());
    env.aw(&repo, ["run", "--trust-config", "w2", "--", "true"])
        .assert_ok();
    assert!(bundle.join(".env").is_file());
    // A plain entry naming the store is invalid configuration.
    fs::write(
        repo.join("agent-workspace.toml"),
        "[tools]\npaths = [\".git/config\"]\n",
    )
    .unwrap();
    let out = env.aw(&repo, ["run", "w3", "--", "true"]);
    insta::assert_snapshot!(out, @r#"
    --- stderr ---
    Error: invalid configuration in [TMP]/repo/agent-workspace.toml: tools.paths entry ".git/config" names the repository's store (.git or .jj)
    Hint: fix the key or value named above; docs/configuration.md lists every key
    [exit 2]
    "#);
}

crate::both_backends!(
    a_symlink_to_the_checkout_is_refused,
    tools_paths_of_a_repository_file_need_trust,
);
