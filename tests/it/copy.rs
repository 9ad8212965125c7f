//! `copy.include`: ignored or untracked files of the main workspace copied into a new one,
//! each a file of its own (never a hard link), never through a symlink, never over a checked
//! out file; a failed copy removes the new workspace.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::backends::{git_ok, Backend};
use crate::harness::TestEnv;

/// Commits what the main workspace holds, so new workspaces start from it.
fn commit_base(backend: Backend, env: &TestEnv, repo: &Path) {
    match backend {
        Backend::Jj => {
            env.jj_ok(repo, ["commit", "-m", "base"]);
        }
        Backend::Git => {
            git_ok(env, repo, &["add", "-A"]);
            git_ok(env, repo, &["commit", "-q", "-m", "base"]);
        }
    }
}

/// A repository ignoring `target/`, `.env` and `agent-workspace.toml`, which copies `include`.
fn repo_copying(backend: Backend, env: &TestEnv, include: &str) -> std::path::PathBuf {
    let repo = backend.repo(env);
    fs::write(
        repo.join(".gitignore"),
        "target/\n.env\n*.local\nagent-workspace.toml\n",
    )
    .unwrap();
    commit_base(backend, env, &repo);
    fs::write(
        repo.join("agent-workspace.toml"),
        format!("[copy]\ninclude = {include}\n"),
    )
    .unwrap();
    repo
}

fn target_and_env_are_copied_as_separate_files(backend: Backend) {
    let env = TestEnv::new();
    let repo = repo_copying(backend, &env, r#"["target/", ".env", "*.local"]"#);
    fs::create_dir_all(repo.join("target/debug")).unwrap();
    fs::write(repo.join("target/debug/app"), "built\n").unwrap();
    fs::write(repo.join(".env"), "SECRET=1\n").unwrap();
    fs::write(repo.join("db.local"), "local\n").unwrap();
    let out = env.aw(
        &repo,
        [
            "run",
            "w1",
            "--",
            "cat",
            ".env",
            "target/debug/app",
            "db.local",
        ],
    );
    out.assert_ok();
    assert_eq!(out.stdout, "SECRET=1\nbuilt\nlocal\n", "{}", out.report());
    // Not a terminal: the copy's sizes and time are not printed.
    assert!(!out.stderr.contains("Copied"), "{}", out.report());
    let ws = env.ws_path(&repo, "w1");
    let record = env.metadata(&ws);
    assert_eq!(record["copied"]["files_count"], 3, "{record}");
    assert_eq!(record["copied"]["bytes"], 21, "{record}");
    let cloned = record["copied"]["reflinked_count"].as_u64().unwrap();
    assert_eq!(
        cloned + record["copied"]["copied_count"].as_u64().unwrap(),
        3
    );
    for file in [".env", "target/debug/app", "db.local"] {
        let (a, b) = (
            fs::metadata(repo.join(file)).unwrap(),
            fs::metadata(ws.join(file)).unwrap(),
        );
        assert_ne!(a.ino(), b.ino(), "{file} shares an inode");
        assert_eq!(b.nlink(), 1, "{file} is hard-linked");
    }
    // A write on either side never reaches the other.
    fs::write(ws.join("target/debug/app"), "rebuilt in w1\n").unwrap();
    assert_eq!(
        fs::read_to_string(repo.join("target/debug/app")).unwrap(),
        "built\n"
    );
    fs::write(repo.join(".env"), "SECRET=2\n").unwrap();
    assert_eq!(fs::read_to_string(ws.join(".env")).unwrap(), "SECRET=1\n");
    // Only a new workspace gets copies: the next run copies nothing again.
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    assert_eq!(fs::read_to_string(ws.join(".env")).unwrap(), "SECRET=1\n");
}

fn checked_out_files_are_never_overwritten(backend: Backend) {
    let env = TestEnv::new();
    let repo = repo_copying(backend, &env, r#"["sub/", "a.txt"]"#);
    // Edited in the main workspace, not committed: the new workspace keeps the base's.
    fs::write(repo.join("a.txt"), "main's edit\n").unwrap();
    fs::write(repo.join("sub/b.txt"), "main's edit\n").unwrap();
    fs::write(repo.join("sub/new.txt"), "untracked\n").unwrap();
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    assert_eq!(fs::read_to_string(ws.join("a.txt")).unwrap(), "hello\n");
    assert_eq!(fs::read_to_string(ws.join("sub/b.txt")).unwrap(), "b\n");
    assert_eq!(
        fs::read_to_string(ws.join("sub/new.txt")).unwrap(),
        "untracked\n"
    );
    let record = env.metadata(&ws);
    assert_eq!(record["copied"]["files_count"], 1, "{record}");
    assert_eq!(record["copied"]["existing_count"], 2, "{record}");
}

fn symlinks_out_of_the_main_workspace_are_not_followed(backend: Backend) {
    let env = TestEnv::new();
    let repo = repo_copying(backend, &env, r#"["target/", ".env"]"#);
    let outside = env.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("secret"), "outside\n").unwrap();
    fs::create_dir_all(repo.join("target/debug")).unwrap();
    fs::write(repo.join("target/debug/app"), "built\n").unwrap();
    let link = |to: &Path, at: &Path| std::os::unix::fs::symlink(to, at);
    link(&outside, &repo.join("target/absolute")).unwrap();
    link(
        Path::new("../../outside/secret"),
        &repo.join("target/escaping"),
    )
    .unwrap();
    link(Path::new("debug/app"), &repo.join("target/inside")).unwrap();
    link(&outside.join("secret"), &repo.join(".env")).unwrap();
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    for gone in ["target/absolute", "target/escaping", ".env"] {
        assert!(
            fs::symlink_metadata(ws.join(gone)).is_err(),
            "{gone} was copied"
        );
    }
    assert_eq!(
        fs::read_link(ws.join("target/inside")).unwrap(),
        Path::new("debug/app")
    );
    assert_eq!(
        fs::read_to_string(ws.join("target/inside")).unwrap(),
        "built\n"
    );
    assert_eq!(env.metadata(&ws)["copied"]["outside_symlinks_count"], 3);
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 1);
}

fn a_failed_copy_removes_the_new_workspace(backend: Backend) {
    let env = TestEnv::new();
    let repo = repo_copying(backend, &env, r#"["target/"]"#);
    // A path the main workspace can hold but the (deeper) new workspace cannot: the copy
    // fails half way, with files already copied.
    fs::create_dir_all(repo.join("target")).unwrap();
    fs::write(repo.join("target/first"), "x").unwrap();
    let mut deep = repo.join("target/deep");
    while deep.as_os_str().len() < 4000 {
        deep.push("d".repeat(200));
    }
    let room = 4080 - deep.as_os_str().len();
    deep.push("e".repeat(room));
    fs::create_dir_all(&deep).unwrap();
    let out = env.aw(&repo, ["run", "w1", "--", "true"]);
    out.assert_code(125);
    assert!(
        out.stderr
            .contains("Error: could not copy copy.include's files into")
            && out.stderr.contains("removed the new workspace again")
            && out.stderr.contains("Hint: "),
        "{}",
        out.report()
    );
    assert!(!env.ws_path(&repo, "w1").exists(), "{}", env.listing());
    assert_eq!(backend.registered(&env, &repo), ["default"]);
    let status = env.aw(&repo, ["status"]);
    assert!(!status.stdout.contains("w1"), "{}", status.report());
    // Once the problem is gone, the same run works.
    fs::remove_dir_all(repo.join("target/deep")).unwrap();
    env.aw(&repo, ["run", "w1", "--", "cat", "target/first"])
        .assert_ok();
}

fn copied_files_the_envrc_loads_are_trusted(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    fs::write(repo.join(".envrc"), "dotenv_if_exists\n").unwrap();
    fs::write(repo.join(".gitignore"), ".env\nagent-workspace.toml\n").unwrap();
    commit_base(backend, &env, &repo);
    fs::write(
        repo.join("agent-workspace.toml"),
        "[copy]\ninclude = [\".env\"]\n",
    )
    .unwrap();
    fs::write(repo.join(".env"), "FROM_DOTENV=yes\n").unwrap();
    let out = env.aw(&repo, ["run", "w1", "--", "sh", "-c", "echo $FROM_DOTENV"]);
    assert_eq!(out.assert_ok().stdout, "yes\n", "{}", out.report());
}

fn sizes_and_time_are_reported_on_a_terminal(backend: Backend) {
    let env = TestEnv::new();
    let repo = repo_copying(backend, &env, r#"[".env"]"#);
    fs::write(repo.join(".env"), "SECRET=1\n").unwrap();
    let run = format!("{} run w1 -- true", crate::harness::AW);
    // script(1) gives the run a terminal; what it printed comes back on script's stdout.
    let out = env
        .cmd("script", &repo)
        .args(["-qec", &run, "/dev/null"])
        .run();
    out.assert_ok();
    // On a slow machine the progress line shows first, erased (`\r`, clear to the end of
    // the line) before the report, which then starts where the erased line began.
    let said = out
        .stdout
        .lines()
        .filter_map(|l| l.rsplit(crate::progress::ERASE).next())
        .find(|l| l.starts_with("Copied "))
        .unwrap_or_else(|| panic!("{}", out.report()));
    assert!(
        said.starts_with("Copied 1 file (")
            && said.contains(") and 0 symlinks into workspace \"w1\" in "),
        "{said}"
    );
}

crate::both_backends!(
    copied_files_the_envrc_loads_are_trusted,
    sizes_and_time_are_reported_on_a_terminal,
    target_and_env_are_copied_as_separate_files,
    checked_out_files_are_never_overwritten,
    symlinks_out_of_the_main_workspace_are_not_followed,
    a_failed_copy_removes_the_new_workspace,
);

#[test]
fn bad_patterns_are_configuration_errors() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    for (value, said) in [
        (
            r#"["../x"]"#,
            r#"copy.include: "../x" has an empty, . or .. component"#,
        ),
        (r#"["a/**/b"]"#, "uses **"),
        (r#"["!x"]"#, "negation (!) is not supported"),
        (
            r#"[".jj/"]"#,
            "names the backend's or agent-workspace's own files",
        ),
        (r#""target/""#, "invalid type: string"),
    ] {
        fs::write(
            repo.join("agent-workspace.toml"),
            format!("[copy]\ninclude = {value}\n"),
        )
        .unwrap();
        let out = env.aw(&repo, ["run", "w1", "--", "true"]);
        out.assert_code(2);
        assert!(
            out.stderr.contains("agent-workspace.toml") && out.stderr.contains(said),
            "{value}: {}",
            out.report()
        );
        assert!(out.stderr.contains("Hint: "), "{}", out.report());
        assert!(!env.ws_path(&repo, "w1").exists());
    }
}
