//! `shell`: $SHELL (else /bin/sh) in a workspace, with the environment `run` gives.

use crate::backends::Backend;
use crate::harness::TestEnv;

const SCRIPT: &str = "echo \"$AGENT_WORKSPACE_ID ${AW_TEST_VAR-unset}\"; pwd -P; exit 7\n";

fn shell_runs_the_shell_in_the_workspace_and_exits_with_its_code(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let before = env.metadata(&ws);
    let out = env
        .aw_cmd(&repo)
        .args(["shell", "w1"])
        .env("SHELL", "/bin/sh")
        .stdin(SCRIPT)
        .run();
    out.assert_code(7);
    assert_eq!(out.stdout, format!("w1 from-envrc\n{}\n", ws.display()));
    // A shell is not a run: the record is left alone.
    assert_eq!(env.metadata(&ws), before);
}

fn shell_falls_back_to_bin_sh_without_shell(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let out = env
        .aw_cmd(&repo)
        .args(["shell", "w1"])
        .env_remove("SHELL")
        .stdin(SCRIPT)
        .run();
    out.assert_code(7);
    let ws = env.ws_path(&repo, "w1");
    assert_eq!(out.stdout, format!("w1 from-envrc\n{}\n", ws.display()));
}

fn shell_without_direnv_skips_the_envrc(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let out = env
        .aw_cmd(&repo)
        .args(["shell", "w1", "--no-direnv"])
        .env("SHELL", "/bin/sh")
        .stdin(SCRIPT)
        .run();
    insta::assert_snapshot!(out, @r"
    w1 unset
    [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1
    [exit 7]
    ");
}

fn shell_exports_the_workspace_variables(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--workflow", "wf", "--", "true"])
        .assert_ok();
    let out = env
        .aw_cmd(&repo)
        .args(["shell", "w1"])
        .env("SHELL", "/bin/sh")
        .stdin("echo \"$AGENT_WORKSPACE_PATH|$AGENT_WORKSPACE_REPO_ROOT|$AGENT_WORKSPACE_NAMESPACE|$AGENT_WORKSPACE_WORKFLOW|$AGENT_WORKSPACE_BACKEND\"")
        .run();
    out.assert_ok();
    assert_eq!(
        out.stdout,
        format!(
            "{}|{}|{}|wf|{}\n",
            env.ws_path(&repo, "w1").display(),
            repo.display(),
            env.namespace(&repo),
            backend.name()
        )
    );
}

fn shell_in_an_unknown_workspace_exits_125_and_creates_nothing(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let out = env
        .aw_cmd(&repo)
        .args(["shell", "nope"])
        .env("SHELL", "/bin/sh")
        .stdin("touch ran")
        .run();
    out.assert_code(125);
    insta::assert_snapshot!(env.normalize(&out.stderr), @r#"
    Error: no workspace "nope" (looked for [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/nope)
    Hint: list workspaces with `agent-workspace status`; create one with `agent-workspace run`
    "#);
    assert!(!env.ws_path(&repo, "nope").exists());
    assert_eq!(backend.registered(&env, &repo), ["default"]);
}

crate::both_backends!(
    shell_runs_the_shell_in_the_workspace_and_exits_with_its_code,
    shell_falls_back_to_bin_sh_without_shell,
    shell_without_direnv_skips_the_envrc,
    shell_exports_the_workspace_variables,
    shell_in_an_unknown_workspace_exits_125_and_creates_nothing,
);
