//! Nested runs, sibling workspaces, and one namespace however the repository is reached.

use std::fs;
use std::path::Path;

use crate::backends::Backend;
use crate::harness::TestEnv;

fn a_nested_run_with_the_same_id_shares_the_working_copy(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let script = r#"
        echo "outer=$AGENT_WORKSPACE_PATH"
        agent-workspace run w1 -- sh -c 'echo "inner=$AGENT_WORKSPACE_PATH"; echo "cwd=$(pwd -P)"; echo "var=$AW_TEST_VAR"; echo nested > nested.txt; exit 5'
        echo "inner exit=$?"
        cat nested.txt
    "#;
    let out = env.aw(&repo, ["run", "w1", "--", "sh", "-c", script]);
    out.assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let expected = format!(
        "outer={ws}\ninner={ws}\ncwd={ws}\nvar=from-envrc\ninner exit=5\nnested\n",
        ws = ws.display()
    );
    assert_eq!(out.stdout, expected, "{}", out.report());
    assert_eq!(backend.registered(&env, &repo), ["default", "w1"]);
    let dirs: Vec<_> = fs::read_dir(env.namespace_dir(&repo))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with('.'))
        .collect();
    assert_eq!(dirs, ["w1"]);
    let record = env.metadata(&ws);
    assert_eq!(record["status"], "done", "{record:#}");
}

fn a_nested_run_from_a_subdirectory_of_the_workspace_finds_it(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let script =
        r#"cd sub && agent-workspace run w1 -- sh -c 'echo "$AGENT_WORKSPACE_PATH $(pwd -P)"'"#;
    let out = env.aw(&repo, ["run", "w1", "--", "sh", "-c", script]);
    let ws = env.ws_path(&repo, "w1");
    assert_eq!(
        out.assert_ok().stdout,
        format!("{ws} {ws}\n", ws = ws.display())
    );
}

fn another_id_from_inside_a_workspace_creates_a_sibling(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let script = r#"agent-workspace run w2 -- sh -c 'echo "$AGENT_WORKSPACE_ID"; echo "$AGENT_WORKSPACE_REPO_ROOT"; echo "$AGENT_WORKSPACE_PATH"; echo "$AGENT_WORKSPACE_NAMESPACE"'"#;
    let out = env.aw(&repo, ["run", "w1", "--", "sh", "-c", script]);
    let expected = format!(
        "w2\n{}\n{}\n{}\n",
        repo.display(),
        env.ws_path(&repo, "w2").display(),
        env.namespace(&repo)
    );
    assert_eq!(out.assert_ok().stdout, expected, "{}", out.report());
    assert_eq!(backend.registered(&env, &repo), ["default", "w1", "w2"]);
    assert_eq!(env.metadata(&env.ws_path(&repo, "w2"))["status"], "done");
}

fn the_namespace_is_the_same_however_the_repository_is_reached(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let link = env.path().join("link-to-repo");
    std::os::unix::fs::symlink(&repo, &link).unwrap();
    let elsewhere = env.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let script =
        r#"echo "$AGENT_WORKSPACE_NAMESPACE|$AGENT_WORKSPACE_REPO_ROOT|$AGENT_WORKSPACE_PATH""#;
    let expected = format!(
        "{}|{}|{}\n",
        env.namespace(&repo),
        repo.display(),
        env.ws_path(&repo, "probe").display()
    );
    let sub = repo.join("sub");
    let link_sub = link.join("sub");
    let ws_sub = ws.join("sub");
    let starts: [(&str, &Path, Option<&Path>); 9] = [
        ("repo root", &repo, None),
        ("subdirectory", &sub, None),
        ("symlink", &link, None),
        ("subdirectory through the symlink", &link_sub, None),
        ("--repo", &elsewhere, Some(&repo)),
        ("--repo subdirectory", &elsewhere, Some(&sub)),
        ("--repo symlink", &elsewhere, Some(&link)),
        ("agent workspace", &ws, None),
        ("agent workspace subdirectory", &ws_sub, None),
    ];
    for (what, cwd, repo_flag) in starts {
        let mut cmd = env.aw_cmd(cwd);
        if let Some(path) = repo_flag {
            cmd = cmd.arg("--repo").arg(path);
        }
        let out = cmd
            .args(["run", "probe", "--no-direnv", "--", "sh", "-c", script])
            .run();
        assert_eq!(out.assert_ok().stdout, expected, "from the {what}");
    }
    assert_eq!(backend.registered(&env, &repo), ["default", "probe", "w1"]);
    // status sees the same workspaces from inside one.
    let from_repo = env.aw(&repo, ["status"]);
    let from_ws = env.aw(&ws, ["status"]);
    assert_eq!(from_ws.assert_ok().stdout, from_repo.assert_ok().stdout);
}

fn the_namespace_hashes_the_canonical_path_of_the_main_workspace(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo_named(&env, "My Repo.x");
    let out = env.aw(
        &repo,
        [
            "run",
            "w1",
            "--",
            "sh",
            "-c",
            "echo \"$AGENT_WORKSPACE_NAMESPACE\"",
        ],
    );
    let hash = &crate::sha256::hex(repo.as_os_str().as_encoded_bytes())[..10];
    assert_eq!(out.assert_ok().stdout, format!("My Repo.x-{hash}\n"));
    assert!(env
        .ws_root()
        .join(format!("My Repo.x-{hash}"))
        .join("w1")
        .is_dir());
}

crate::both_backends!(
    a_nested_run_with_the_same_id_shares_the_working_copy,
    a_nested_run_from_a_subdirectory_of_the_workspace_finds_it,
    another_id_from_inside_a_workspace_creates_a_sibling,
    the_namespace_is_the_same_however_the_repository_is_reached,
    the_namespace_hashes_the_canonical_path_of_the_main_workspace,
);
