//! `run`: where the command runs (the workspace it creates or reattaches to, the root it
//! picks) and with which environment (exported variables, direnv, stdin, the caller's).

use std::fs;

use crate::backends::Backend;
use crate::harness::TestEnv;

/// A shell script printing the variables a run exports, one `NAME=value` per line.
const PRINT_ENV: &str = r#"
echo "cwd=$(pwd -P)"
for v in AGENT_WORKSPACE_ID AGENT_WORKSPACE_PATH AGENT_WORKSPACE_METADATA \
         AGENT_WORKSPACE_REPO_ROOT AGENT_WORKSPACE_NAMESPACE AGENT_WORKSPACE_BACKEND \
         AGENT_WORKSPACE_WORKFLOW AI_WORKSPACES_ROOT AW_TEST_VAR; do
    eval "echo \"$v=\${$v-(unset)}\""
done
"#;

fn run_creates_a_workspace_and_gives_the_command_its_environment(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let out = env.aw(&repo, ["run", "w1", "--", "sh", "-c", PRINT_ENV]);
    out.assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let ns = env.namespace(&repo);
    let expected = format!(
        "cwd={ws}\nAGENT_WORKSPACE_ID=w1\nAGENT_WORKSPACE_PATH={ws}\n\
         AGENT_WORKSPACE_METADATA={ws}/.agent-workflow.json\nAGENT_WORKSPACE_REPO_ROOT={repo}\n\
         AGENT_WORKSPACE_NAMESPACE={ns}\nAGENT_WORKSPACE_BACKEND={backend}\nAGENT_WORKSPACE_WORKFLOW=\n\
         AI_WORKSPACES_ROOT={root}\nAW_TEST_VAR=from-envrc\n",
        ws = ws.display(),
        repo = repo.display(),
        root = env.ws_root().display(),
        backend = backend.name(),
    );
    assert_eq!(out.stdout, expected, "{}", out.report());
    // Creating the workspace and loading the .envrc print nothing.
    assert_eq!(out.stderr, "", "{}", out.report());
    // The backend's name was checked above; the snapshot is the same for both.
    let shown = env.normalize(&out.stdout).replace(
        &format!("BACKEND={}\n", backend.name()),
        "BACKEND=[BACKEND]\n",
    );
    insta::assert_snapshot!(shown, @r"
    cwd=[TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1
    AGENT_WORKSPACE_ID=w1
    AGENT_WORKSPACE_PATH=[TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1
    AGENT_WORKSPACE_METADATA=[TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/.agent-workflow.json
    AGENT_WORKSPACE_REPO_ROOT=[TMP]/repo
    AGENT_WORKSPACE_NAMESPACE=repo-[HASH]
    AGENT_WORKSPACE_BACKEND=[BACKEND]
    AGENT_WORKSPACE_WORKFLOW=
    AI_WORKSPACES_ROOT=[TMP]/xdg/cache/ai-workspaces
    AW_TEST_VAR=from-envrc
    ");
    // A real jj workspace (or git worktree) holding the files of the base commit.
    assert_eq!(backend.registered(&env, &repo), ["default", "w1"]);
    assert_eq!(fs::read_to_string(ws.join("a.txt")).unwrap(), "hello\n");
    assert_eq!(fs::read_to_string(ws.join("sub/b.txt")).unwrap(), "b\n");
    match backend {
        Backend::Jj => assert!(ws.join(".jj").is_dir()),
        // A linked worktree's `.git` is a file naming the repository's git directory.
        Backend::Git => assert!(ws.join(".git").is_file()),
    }
    // Lock files live beside the workspaces, never inside one.
    let locks = env.namespace_dir(&repo).join(".locks");
    let lock_files: Vec<_> = fs::read_dir(&locks)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        lock_files.iter().any(|name| name.ends_with(".lock")),
        "{lock_files:?}"
    );
    let in_ws: Vec<_> = fs::read_dir(&ws)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".lock"))
        .collect();
    assert!(in_ws.is_empty(), "{in_ws:?}");
}

fn no_direnv_runs_the_command_without_the_envrc(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let out = env.aw(
        &repo,
        ["run", "w1", "--no-direnv", "--", "sh", "-c", PRINT_ENV],
    );
    out.assert_ok();
    let text = env.normalize(&out.stdout);
    assert!(text.contains("AW_TEST_VAR=(unset)\n"), "{}", out.report());
    assert!(text.contains("AGENT_WORKSPACE_ID=w1\n"), "{}", out.report());
    // The same workspace through direnv does see it.
    let out = env.aw(
        &repo,
        ["run", "w1", "--", "sh", "-c", "echo \"$AW_TEST_VAR\""],
    );
    assert_eq!(out.assert_ok().stdout, "from-envrc\n");
}

fn a_second_run_reattaches_to_the_same_working_copy(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(
        &repo,
        ["run", "w1", "--", "sh", "-c", "echo draft > notes.txt"],
    )
    .assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let first = env.metadata(&ws);
    let out = env.aw(&repo, ["run", "w1", "--", "cat", "notes.txt"]);
    assert_eq!(out.assert_ok().stdout, "draft\n");
    assert_eq!(backend.registered(&env, &repo), ["default", "w1"]);
    let second = env.metadata(&ws);
    assert_eq!(second["created_at"], first["created_at"]);
    assert_eq!(second["runs"].as_array().unwrap().len(), 2, "{second:#}");
    assert_eq!(second["command"], serde_json::json!(["cat", "notes.txt"]));
}

fn workflow_name_is_exported_and_recorded(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let out = env.aw(
        &repo,
        [
            "run",
            "w1",
            "--workflow",
            "review",
            "--",
            "sh",
            "-c",
            "echo \"$AGENT_WORKSPACE_WORKFLOW\"",
        ],
    );
    assert_eq!(out.assert_ok().stdout, "review\n");
    let record = env.metadata(&env.ws_path(&repo, "w1"));
    assert_eq!(record["workflow"], "review");
    assert_eq!(record["runs"][0]["workflow"], "review");
    // A later run that names no workflow keeps the workspace's; one that names another
    // takes it.
    let later = env.aw(
        &repo,
        [
            "run",
            "w1",
            "--",
            "sh",
            "-c",
            "echo \"$AGENT_WORKSPACE_WORKFLOW\"",
        ],
    );
    assert_eq!(later.assert_ok().stdout, "review\n");
    let record = env.metadata(&env.ws_path(&repo, "w1"));
    assert_eq!(record["workflow"], "review", "{record:#}");
    assert_eq!(record["runs"][1]["workflow"], "review");
    env.aw(&repo, ["run", "w1", "--workflow", "fix", "--", "true"])
        .assert_ok();
    assert_eq!(env.metadata(&env.ws_path(&repo, "w1"))["workflow"], "fix");
}

fn the_root_is_the_flag_then_the_env_var_then_xdg_cache_then_home(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let ns = env.namespace(&repo);
    let flag_root = env.path().join("flag-root");
    let env_root = env.path().join("env-root");
    let home_root = env.home().join(".cache/ai-workspaces");
    let script = "echo \"$AGENT_WORKSPACE_PATH|$AI_WORKSPACES_ROOT\"";
    let cases = [
        ("a", Some(&flag_root), Some(&env_root), None, &flag_root),
        ("b", None, Some(&env_root), None, &env_root),
        ("c", None, None, None, &env.ws_root()),
        // A relative XDG_CACHE_HOME is ignored.
        ("d", None, None, Some("relative/cache"), &home_root),
        ("e", None, None, Some(""), &home_root),
    ];
    for (id, flag, env_var, xdg, expected_root) in cases {
        let mut cmd = env.aw_cmd(&repo);
        if let Some(root) = flag {
            cmd = cmd.arg("--root").arg(root);
        }
        if let Some(root) = env_var {
            cmd = cmd.env("AI_WORKSPACES_ROOT", root);
        }
        match xdg {
            Some("") => cmd = cmd.env_remove("XDG_CACHE_HOME"),
            Some(value) => cmd = cmd.env("XDG_CACHE_HOME", value),
            None => {}
        }
        let out = cmd.args(["run", id, "--", "sh", "-c", script]).run();
        let ws = expected_root.join(&ns).join(id);
        assert_eq!(
            out.assert_ok().stdout,
            format!("{}|{}\n", ws.display(), expected_root.display()),
            "{id}"
        );
        assert!(ws.join("a.txt").is_file(), "{}", out.report());
    }
}

fn stdin_and_the_caller_s_environment_reach_the_command(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    for loader in [None, Some("--no-direnv")] {
        let out = env
            .aw_cmd(&repo)
            .args(["run", "w1"])
            .args(loader)
            .args(["--", "sh", "-c", "cat; echo \"$AW_CALLER_VAR\""])
            .env("AW_CALLER_VAR", "from the caller")
            .stdin("piped input\n")
            .run();
        assert_eq!(out.assert_ok().stdout, "piped input\nfrom the caller\n");
    }
}

fn empty_environment_variables_count_as_unset(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let out = env
        .aw_cmd(&repo)
        .env("AI_WORKSPACES_ROOT", "")
        .env("AGENT_WORKSPACE_BACKEND", "")
        .args([
            "run",
            "w1",
            "--",
            "sh",
            "-c",
            "echo \"$AGENT_WORKSPACE_PATH\"",
        ])
        .run();
    assert_eq!(
        out.assert_ok().stdout,
        format!("{}\n", env.ws_path(&repo, "w1").display())
    );
    let bad = env
        .aw_cmd(&repo)
        .env("AGENT_WORKSPACE_BACKEND", "svn")
        .arg("status")
        .run();
    bad.assert_code(2);
    insta::assert_snapshot!(bad.stderr, @r#"
    Error: AGENT_WORKSPACE_BACKEND="svn" is not a backend
    Hint: use jj or git
    "#);
}

/// jj only: `default` is the name jj gives the main workspace; a git main worktree has no
/// such name, so there `default` is an ordinary id.
#[test]
fn the_id_default_names_the_main_workspace_and_is_refused() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let main_commit = env.commit_id(&repo, "@");
    let out = env.aw(&repo, ["run", "default", "--", "touch", "ran"]);
    out.assert_code(2);
    insta::assert_snapshot!(env.normalize(&out.stderr), @r#"
    Error: workspace id "default" is jj's main workspace, which agent-workspace never manages
    Hint: pick another id; the main workspace is the repository itself
    "#);
    assert!(!repo.join("ran").exists());
    assert!(!env.ws_path(&repo, "default").exists(), "{}", env.listing());
    assert_eq!(env.workspace_names(&repo), ["default"]);
    assert_eq!(env.commit_id(&repo, "@"), main_commit);
}

fn a_nested_run_finds_the_root_the_outer_run_was_given(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let root = env.path().join("custom-root");
    let script = r#"echo "$AGENT_WORKSPACE_PATH"; agent-workspace run w1 -- sh -c 'echo "$AGENT_WORKSPACE_PATH"'"#;
    let out = env.aw(
        &repo,
        [
            "--root",
            root.to_str().unwrap(),
            "run",
            "w1",
            "--",
            "sh",
            "-c",
            script,
        ],
    );
    let ws = root.join(env.namespace(&repo)).join("w1");
    assert_eq!(
        out.assert_ok().stdout,
        format!("{ws}\n{ws}\n", ws = ws.display())
    );
    assert!(!env.ws_root().exists(), "{}", env.listing());
}

crate::both_backends!(
    run_creates_a_workspace_and_gives_the_command_its_environment,
    no_direnv_runs_the_command_without_the_envrc,
    a_second_run_reattaches_to_the_same_working_copy,
    workflow_name_is_exported_and_recorded,
    the_root_is_the_flag_then_the_env_var_then_xdg_cache_then_home,
    stdin_and_the_caller_s_environment_reach_the_command,
    empty_environment_variables_count_as_unset,
    a_nested_run_finds_the_root_the_outer_run_was_given,
);
