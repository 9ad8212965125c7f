//! `create` makes a workspace ready without running a command (what `run` does before the
//! command, nothing after) and prints its directory; `path` prints an existing workspace's
//! directory without any jj or git call, and fails with a hint for one there is not.

use std::fs;

use crate::backends::Backend;
use crate::harness::TestEnv;

fn create_makes_a_ready_workspace_and_prints_its_directory(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let count = env.path().join("setups");
    env.user_config(&format!(
        "[setup]\ncommand = \"echo once >> {}\"\n",
        count.display()
    ));
    let out = env.aw(&repo, ["create", "w"]);
    out.assert_ok();
    let ws = env.ws_path(&repo, "w");
    assert_eq!(
        out.stdout,
        format!("{}\n", ws.display()),
        "{}",
        out.report()
    );
    assert!(ws.is_dir());
    // The setup ran, as before a run's first command; no command ran.
    assert_eq!(fs::read_to_string(&count).unwrap(), "once\n");
    let record = env.metadata(&ws);
    assert_eq!(record["status"], "idle", "{record:#}");
    assert_eq!(record["runs"], serde_json::json!([]), "{record:#}");

    // A run afterwards uses it (the setup is not run again), and `create` again reattaches.
    env.aw(&repo, ["run", "w", "--", "touch", "ran"])
        .assert_ok();
    assert!(ws.join("ran").exists());
    let again = env.aw(&repo, ["create", "w", "--json"]);
    again.assert_ok();
    let json = again.json();
    assert_eq!(json["created"], false, "{json:#}");
    assert_eq!(json["status"], "done", "{json:#}");
    assert_eq!(json["path"], ws.display().to_string());
    assert_eq!(fs::read_to_string(&count).unwrap(), "once\n");
}

fn create_json_names_the_new_workspace(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let out = env.aw(&repo, ["create", "w", "--workflow", "fix", "--json"]);
    out.assert_ok();
    let json = out.json();
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["workspace_id"], "w");
    assert_eq!(json["created"], true, "{json:#}");
    assert_eq!(json["backend"], backend.name());
    assert_eq!(json["status"], "idle");
    assert_eq!(json["workflow"], "fix");
    assert_eq!(json["base_commits"].as_array().map(Vec::len), Some(1));
    match backend {
        Backend::Jj => assert!(json["branch"].is_null(), "{json:#}"),
        Backend::Git => assert_eq!(json["branch"], "agent-workspace/w"),
    }
}

fn a_refused_create_leaves_nothing(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let out = env.aw(&repo, ["create", "w", "--base-change", "no-such-revision"]);
    match backend {
        Backend::Jj => insta::assert_snapshot!(out, @r#"
        --- stderr ---
        Error: cannot resolve revision "no-such-revision"
        Caused by: Revision `no-such-revision` doesn't exist
        Hint: pass --base-change a change id, commit id or bookmark that exists
        [exit 1]
        "#),
        Backend::Git => insta::assert_snapshot!(out, @r#"
        --- stderr ---
        Error: cannot resolve revision "no-such-revision"
        Caused by: fatal: Needed a single revision
        Hint: pass --base-change a commit, branch or tag that exists
        [exit 1]
        "#),
    }
    assert!(!env.ws_path(&repo, "w").exists(), "{}", env.listing());
    let path = env.aw(&repo, ["path", "w"]);
    path.assert_code(1);
}

fn path_prints_an_existing_workspace_s_directory_only(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let out = env.aw(&repo, ["path", "w"]);
    out.assert_ok();
    assert_eq!(
        out.stdout,
        format!("{}\n", env.ws_path(&repo, "w").display())
    );
    assert!(out.stderr.is_empty(), "{}", out.report());

    let missing = env.aw(&repo, ["path", "nope"]);
    insta::assert_snapshot!(missing, @r#"
    --- stderr ---
    Error: no workspace "nope" (looked for [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/nope)
    Hint: list workspaces with `agent-workspace status`; make this one with `agent-workspace create nope`
    [exit 1]
    "#);
    assert!(!env.ws_path(&repo, "nope").exists());
}

fn path_runs_no_jj_or_git(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    // Neither tool on PATH: `path` still answers.
    let out = env
        .aw_cmd(&repo)
        .env("PATH", env.path_with_only(&[]))
        .args(["path", "w"])
        .run();
    out.assert_ok();
    assert_eq!(
        out.stdout,
        format!("{}\n", env.ws_path(&repo, "w").display())
    );
}

crate::both_backends!(
    create_makes_a_ready_workspace_and_prints_its_directory,
    create_json_names_the_new_workspace,
    a_refused_create_leaves_nothing,
    path_prints_an_existing_workspace_s_directory_only,
    path_runs_no_jj_or_git,
);

#[test]
fn a_bad_id_is_a_usage_error_for_both() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    for cmd in ["create", "path"] {
        let out = env.aw(&repo, [cmd, ".."]);
        out.assert_code(2);
        assert!(out.stderr.starts_with("Error: "), "{}", out.report());
        assert!(out.stderr.contains("Hint: "), "{}", out.report());
    }
}

#[test]
fn create_inside_the_run_of_the_same_workspace_is_refused() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    let out = env.aw(
        &repo,
        [
            "run",
            "w",
            "--",
            "sh",
            "-c",
            &format!("{} create w; echo \"code $?\"", crate::harness::AW),
        ],
    );
    insta::assert_snapshot!(out, @r#"
    code 2
    --- stderr ---
    Error: workspace "w" is the one this command runs in: it exists already
    Hint: use `agent-workspace path` for its directory, or $AGENT_WORKSPACE_PATH
    [exit 0]
    "#);
}
