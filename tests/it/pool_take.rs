//! Taking a prepared workspace: equivalent to a normal creation, entries are never
//! workspaces, concurrent takes get distinct entries, another base rewrites only what differs.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::backends::{git_ok, Backend};
use crate::harness::TestEnv;
use crate::pool_support::{pool, prepared_repo, ready, setups, wait_filled, workspace_ids};

/// What a workspace holds besides the backend's directory and the record view.
fn files(dir: &Path) -> Vec<String> {
    let mut found = vec![];
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for entry in fs::read_dir(dir.join(&rel)).unwrap() {
            let entry = entry.unwrap();
            let name = rel.join(entry.file_name());
            let text = name.display().to_string();
            if [".jj", ".git", ".agent-workflow.json", ".direnv"].contains(&text.as_str()) {
                continue;
            }
            match entry.file_type().unwrap().is_dir() {
                true => stack.push(name),
                false => found.push(format!(
                    "{text}={}",
                    fs::read_to_string(entry.path()).unwrap_or_default()
                )),
            }
        }
    }
    found.sort();
    found
}

fn a_pooled_creation_is_a_normal_one(backend: Backend) {
    let env = TestEnv::new();
    let repo = prepared_repo(&env, backend, 1);
    let out = env.aw(&repo, ["pool", "fill"]);
    out.assert_ok();
    let entry = ready(&env, &repo).pop().expect("one ready entry");
    assert_eq!(setups(&env, ".pool-"), 1, "the setup ran while preparing");
    // A run takes it: the same files, base, environment and record as a normal creation.
    let show = "echo \"$AGENT_WORKSPACE_ID $AGENT_WORKSPACE_PATH $AW_TEST_VAR $PWD\"";
    let pooled = env.aw(&repo, ["run", "w", "--", "sh", "-c", show]);
    pooled.assert_ok();
    let ws = env.ws_path(&repo, "w");
    assert!(!entry.exists(), "the entry became the workspace");
    assert_eq!(
        setups(&env, "w "),
        0,
        "not set up again:\n{}",
        pooled.report()
    );
    wait_filled(&env, &repo, 1);
    env.aw(&repo, ["pool", "drain"]).assert_ok();
    env.user_config(
        &fs::read_to_string(env.path().join("xdg/config/agent-workspace/config.toml"))
            .unwrap()
            .replace("size = 1", "size = 0"),
    );
    let normal = env.aw(&repo, ["run", "n", "--", "sh", "-c", show]);
    normal.assert_ok();
    assert_eq!(setups(&env, "n "), 1, "a normal creation sets up");
    let n = env.ws_path(&repo, "n");
    for (out, id, path) in [(&pooled, "w", &ws), (&normal, "n", &n)] {
        let real = fs::canonicalize(path).unwrap();
        let expected = format!("{id} {} from-envrc {}\n", path.display(), real.display());
        assert_eq!(out.stdout, expected, "{}", out.report());
    }
    assert_eq!(files(&ws), files(&n));
    let (a, b) = (env.metadata(&ws), env.metadata(&n));
    for key in [
        "base_commits",
        "status",
        "direnv_allowed",
        "base_envrc_sha256",
        "envrc_loads_base",
    ] {
        assert_eq!(a[key], b[key], "{key}: {a:#}\n{b:#}");
    }
    assert_eq!(a["setup"]["status"], "done", "{a:#}");
    assert_eq!(a["tools"]["version"], b["tools"]["version"]);
    assert_eq!(
        a["copied"]["files_count"], b["copied"]["files_count"],
        "{a:#}"
    );
    let log = a["setup"]["log"].as_str().unwrap();
    assert!(
        log.ends_with("/.state/w.setup.log") && Path::new(log).exists(),
        "{log}"
    );
    match backend {
        Backend::Jj => {
            let names = env.workspace_names(&repo);
            assert!(names.contains(&"w".to_string()), "{names:?}");
            assert!(!names.iter().any(|n| n.starts_with(".pool-")), "{names:?}");
        }
        Backend::Git => {
            let head = git_ok(&env, &ws, &["symbolic-ref", "HEAD"]);
            assert_eq!(head.trim(), "refs/heads/agent-workspace/w");
        }
    }
    env.aw(&repo, ["status", "w"]).assert_ok();
    let doctor = env.aw(&repo, ["doctor", "--json"]).json();
    let checks = doctor["checks"].as_array().unwrap();
    let troubled = |name: &str| {
        checks
            .iter()
            .any(|c| c["name"] == name && c["level"] != "ok")
    };
    assert!(
        !troubled("workspaces") && !troubled("leftovers"),
        "{doctor:#}"
    );
    // jj keeps the root recorded when the entry was prepared (its `.pool-` directory, gone
    // since the rename): the taken workspace is still matched as ours, and clean forgets it.
    let one = env.aw(&repo, ["status", "w", "--json"]).assert_ok().json();
    assert!(one["problem"].is_null(), "{one:#}");
    env.aw(&repo, ["clean", "--force", "w"]).assert_ok();
    assert!(!ws.exists());
    if backend == Backend::Jj {
        let names = env.workspace_names(&repo);
        assert!(!names.contains(&"w".to_string()), "{names:?}");
    }
}

fn pool_entries_are_never_workspaces(backend: Backend) {
    let env = TestEnv::new();
    let repo = prepared_repo(&env, backend, 2);
    env.aw(&repo, ["pool", "fill"]).assert_ok();
    assert_eq!(ready(&env, &repo).len(), 2);
    assert!(workspace_ids(&env, &repo).is_empty());
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    wait_filled(&env, &repo, 2);
    assert_eq!(workspace_ids(&env, &repo), ["w"]);
    // `clean --all` leaves them; `pool drain` removes them, registrations included.
    env.aw(&repo, ["clean", "--all"]).assert_ok();
    let entries = ready(&env, &repo);
    assert_eq!(entries.len(), 2);
    let drained = env
        .aw(&repo, ["pool", "drain", "--json"])
        .assert_ok()
        .json();
    assert_eq!(
        drained["removed"].as_array().unwrap().len(),
        2,
        "{drained:#}"
    );
    assert!(entries.iter().all(|e| !e.exists()));
    assert_eq!(pool(&env, &repo)["entries"], serde_json::json!([]));
    match backend {
        Backend::Jj => assert_eq!(env.workspace_names(&repo), ["default"]),
        Backend::Git => {
            let list = git_ok(&env, &repo, &["worktree", "list", "--porcelain"]);
            assert_eq!(list.matches("worktree ").count(), 1, "{list}");
        }
    }
}

/// Concurrent runs each take their own entry.
fn concurrent_takes_get_distinct_entries(backend: Backend) {
    let env = TestEnv::new();
    let repo = prepared_repo(&env, backend, 4);
    env.aw(&repo, ["pool", "fill"]).assert_ok();
    let entries = ready(&env, &repo);
    let runs: Vec<_> = ["a", "b", "c", "d"]
        .iter()
        .map(|id| env.aw_cmd(&repo).args(["run", id, "--", "true"]).spawn())
        .collect();
    for run in runs {
        run.wait().assert_ok();
    }
    assert!(entries.iter().all(|e| !e.exists()), "all four were taken");
    for id in ["a ", "b ", "c ", "d "] {
        assert_eq!(setups(&env, id), 0, "{id}: not set up again");
    }
    wait_filled(&env, &repo, 4);
    let status = env.aw(&repo, ["status", "--json"]).assert_ok().json();
    for w in status["workspaces"].as_array().unwrap() {
        assert!(w["problem"].is_null(), "{status:#}");
    }
    assert_eq!(workspace_ids(&env, &repo), ["a", "b", "c", "d"]);
}

/// On a base other than the entry's, only the files that differ are checked out.
fn another_base_rewrites_only_what_differs(backend: Backend) {
    let env = TestEnv::new();
    let repo = prepared_repo(&env, backend, 1);
    env.aw(&repo, ["pool", "fill"]).assert_ok();
    let entry = ready(&env, &repo).pop().unwrap();
    let inode = fs::metadata(entry.join("sub/b.txt")).unwrap().ino();
    fs::write(repo.join("a.txt"), "moved on\n").unwrap();
    match backend {
        Backend::Jj => {
            env.jj_ok(&repo, ["commit", "-m", "moved"]);
        }
        Backend::Git => {
            git_ok(&env, &repo, &["commit", "-q", "-am", "moved"]);
        }
    }
    let base = backend.base_of(&env, &repo);
    let out = env.aw(&repo, ["run", "w", "--", "cat", "a.txt"]);
    out.assert_ok();
    assert_eq!(out.stdout, "moved on\n");
    let ws = env.ws_path(&repo, "w");
    assert!(!entry.exists());
    assert_eq!(
        fs::metadata(ws.join("sub/b.txt")).unwrap().ino(),
        inode,
        "b.txt untouched"
    );
    assert_eq!(env.metadata(&ws)["base_commits"], serde_json::json!([base]));
    assert_eq!(setups(&env, "w "), 1, "set up again for the other base");
    assert!(
        backend.changes(&env, &ws).is_empty(),
        "{}",
        backend.changes(&env, &ws)
    );
    wait_filled(&env, &repo, 1);
}

crate::both_backends!(
    a_pooled_creation_is_a_normal_one,
    pool_entries_are_never_workspaces,
    concurrent_takes_get_distinct_entries,
    another_base_rewrites_only_what_differs,
);

#[test]
fn git_refuses_a_branch_elsewhere_and_leaves_the_entry() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    env.user_config("[pool]\nsize = 1\n");
    env.aw(&repo, ["pool", "fill"]).assert_ok();
    let entry = ready(&env, &repo).pop().unwrap();
    git_ok(
        &env,
        &repo,
        &["commit", "-q", "--allow-empty", "-m", "second"],
    );
    git_ok(&env, &repo, &["branch", "agent-workspace/w", "HEAD"]);
    let out = env.aw(&repo, ["run", "w", "--base-change", "HEAD~1", "--", "true"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: branch agent-workspace/w already exists at [SHORT], not at the --base-change asked for
    Hint: drop --base-change to reuse the branch, or delete it: git branch -D agent-workspace/w
    [exit 125]
    ");
    assert_eq!(ready(&env, &repo), [entry]);
}
