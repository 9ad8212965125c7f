//! Verdicts that decide deletions: a workspace's own state (backend, branch) and an exact
//! parse of the backend's list decide whether it is ours and registered, never the flags.

use std::fs;
use std::path::Path;

use crate::backends::Backend;
use crate::harness::TestEnv;

/// Runs a command in `id` that leaves an uncommitted edit, and returns the workspace path.
fn workspace_with_an_edit(env: &TestEnv, repo: &Path, id: &str) -> std::path::PathBuf {
    env.aw(repo, ["run", id, "--", "sh", "-c", "echo mine >edit.txt"])
        .assert_ok();
    env.ws_path(repo, id)
}

#[track_caller]
fn assert_intact(ws: &Path) {
    assert_eq!(
        fs::read_to_string(ws.join("edit.txt")).ok().as_deref(),
        Some("mine\n"),
        "the edit in {} is gone",
        ws.display()
    );
}

#[test]
fn another_backend_flag_on_a_jj_workspace_is_an_error_never_a_deletion() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let ws = workspace_with_an_edit(&env, &repo, "w1");
    for args in [
        vec!["clean", "--force", "w1"],
        vec!["clean", "--all", "--force"],
        vec!["run", "w1", "--", "true"],
    ] {
        let out = env
            .aw_cmd(&repo)
            .args(&args)
            .env("AGENT_WORKSPACE_BACKEND", "git")
            .run();
        assert_ne!(out.code(), Some(0), "{}", out.report());
        assert!(
            out.stdout.contains("made with the jj backend")
                || out.stderr.contains("made with the jj backend"),
            "{}",
            out.report()
        );
        assert!(
            out.stderr.contains("uses git") || out.stdout.contains("uses git"),
            "{}",
            out.report()
        );
        assert_intact(&ws);
    }
    let out = env.aw(&repo, ["--backend", "git", "clean", "--force", "w1"]);
    insta::assert_snapshot!(out, @r#"
    --- stderr ---
    Error: workspace "w1" was made with the jj backend, but this command uses git (from --backend or AGENT_WORKSPACE_BACKEND)
    Hint: run it with the backend it was made with (drop --backend or AGENT_WORKSPACE_BACKEND)
    [exit 1]
    "#);
    assert_intact(&ws);
    let status = env.aw(&repo, ["--backend", "git", "status", "w1", "--json"]);
    assert_eq!(
        status.assert_ok().json()["problem"],
        "backend-mismatch",
        "{}",
        status.report()
    );
    assert!(env.workspace_names(&repo).contains(&"w1".to_string()));
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
}

#[test]
fn a_changed_branch_prefix_is_an_error_never_a_deletion() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    let ws = workspace_with_an_edit(&env, &repo, "w1");
    for args in [
        vec!["clean", "--force", "w1"],
        vec!["clean", "--all", "--force"],
        vec!["run", "w1", "--", "true"],
    ] {
        let out = env
            .aw_cmd(&repo)
            .args(&args)
            .env("AGENT_WORKSPACE_BRANCH_PREFIX", "other/")
            .run();
        assert_ne!(out.code(), Some(0), "{}", out.report());
        let text = format!("{}{}", out.stdout, out.stderr);
        assert!(
            text.contains("agent-workspace/w1") && text.contains("other/w1"),
            "{}",
            out.report()
        );
        assert_intact(&ws);
    }
    let status = env
        .aw_cmd(&repo)
        .args(["status", "--json"])
        .env("AGENT_WORKSPACE_BRANCH_PREFIX", "other/")
        .run();
    let doc = status.assert_ok().json();
    assert_eq!(
        doc["workspaces"][0]["problem"], "branch-mismatch",
        "{doc:#}"
    );
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    assert_intact(&ws);
}

/// jj prints each workspace's root; a newline in it must not split one entry in two. (git's
/// list is NUL-separated and parsed field by field: see the unit test of its parser.)
#[test]
fn a_newline_in_the_root_path_does_not_confuse_the_verdicts() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let root = env.path().join("ro\not\tx");
    let root_arg = root.to_str().unwrap();
    let aw = |args: &[&str]| {
        let mut all = vec!["--root", root_arg];
        all.extend_from_slice(args);
        env.aw(&repo, all)
    };
    aw(&["run", "w1", "--", "sh", "-c", "echo mine >edit.txt"]).assert_ok();
    // A directory deleted by hand makes status read the roots jj recorded.
    aw(&["run", "gone", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let ws = root
        .join(ws.parent().unwrap().file_name().unwrap())
        .join("w1");
    fs::remove_dir_all(ws.parent().unwrap().join("gone")).unwrap();
    let status = aw(&["status", "--json"]);
    let doc = status.assert_ok().json();
    let entry = &doc["workspaces"][1];
    assert_eq!(entry["workspace_id"], "w1", "{doc:#}");
    assert_eq!(entry["status"], "done", "{doc:#}");
    assert_eq!(entry["problem"], serde_json::Value::Null, "{doc:#}");
    let clean = aw(&["clean", "--all", "--force"]);
    clean.assert_ok();
    // The message holds the path and its newline, so it is read from its end.
    let (_, change) = clean
        .stdout
        .rsplit_once("kept in change ")
        .unwrap_or_else(|| panic!("{}", clean.report()));
    let files = env.jj_ok(&repo, ["file", "list", "-r", change.trim()]);
    assert!(files.contains("edit.txt"), "{files}\n{}", clean.report());
    assert_eq!(env.workspace_names(&repo), ["default"]);
    assert!(!ws.exists());
}

#[test]
fn a_workspace_renamed_in_jj_is_recognised_and_its_name_forgotten() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let ws = workspace_with_an_edit(&env, &repo, "w1");
    env.jj_ok(&ws, ["workspace", "rename", "renamed"]);
    let status = env.aw(&repo, ["status", "--json"]);
    let doc = status.assert_ok().json();
    let entry = &doc["workspaces"][0];
    assert_eq!(entry["problem"], "renamed", "{doc:#}");
    assert!(
        entry["hint"].as_str().unwrap().contains("\"renamed\""),
        "{doc:#}"
    );
    let one = env.aw(&repo, ["status", "w1", "--json"]);
    assert_eq!(
        one.assert_ok().json()["problem"],
        "renamed",
        "{}",
        one.report()
    );
    // It still runs in its own directory.
    let out = env.aw(&repo, ["run", "w1", "--", "cat", "edit.txt"]);
    assert_eq!(out.assert_ok().stdout, "mine\n", "{}", out.report());
    let clean = env.aw(&repo, ["clean", "w1"]);
    clean.assert_ok();
    let (_, files) = Backend::Jj.kept(&env, &repo, "w1", &clean.stdout);
    assert!(files.contains("edit.txt"), "{files}");
    assert_eq!(env.workspace_names(&repo), ["default"]);
    assert!(!ws.exists());
}

#[test]
fn a_workspace_renamed_in_jj_to_no_id_is_cleaned_once_renamed_back() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let ws = workspace_with_an_edit(&env, &repo, "w1");
    env.jj_ok(&ws, ["workspace", "rename", "my work"]);
    let status = env.aw(&repo, ["status", "--json"]);
    let doc = status.assert_ok().json();
    assert_eq!(doc["workspaces"][0]["problem"], "renamed", "{doc:#}");
    // A name that is no id is never handed to jj as one: nothing is changed.
    let clean = env.aw(&repo, ["clean", "w1"]);
    clean.assert_code(1);
    assert!(
        clean
            .stderr
            .contains(r#"as "my work", which is no workspace id"#)
            && clean.stderr.contains("jj workspace rename w1"),
        "{}",
        clean.report()
    );
    assert_intact(&ws);
    // Still registered under that name (jj lists it quoted).
    assert_eq!(env.workspace_names(&repo).len(), 2);
    env.jj_ok(&ws, ["workspace", "rename", "w1"]);
    let clean = env.aw(&repo, ["clean", "w1"]);
    clean.assert_ok();
    assert_eq!(env.workspace_names(&repo), ["default"]);
    assert!(!ws.exists());
}
