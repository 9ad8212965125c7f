//! Helpers the pool tests share: the user config, `pool status --json` and its ready
//! entries, the workspace ids, and a repository whose creations copy, set up and count.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::backends::{git_ok, Backend};
use crate::harness::{eventually, TestEnv};

/// `pool status --json`.
pub(crate) fn pool(env: &TestEnv, repo: &Path) -> Value {
    env.aw(repo, ["pool", "status", "--json"])
        .assert_ok()
        .json()
}

pub(crate) fn ready(env: &TestEnv, repo: &Path) -> Vec<PathBuf> {
    let status = pool(env, repo);
    status["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["state"] == "ready")
        .map(|e| PathBuf::from(e["path"].as_str().unwrap()))
        .collect()
}

/// Waits until no fill runs and `size` entries are ready (a background refill finished).
pub(crate) fn wait_filled(env: &TestEnv, repo: &Path, size: usize) {
    eventually("the pool to refill", Duration::from_secs(90), || {
        let status = pool(env, repo);
        if status["filling"] == false && status["ready"] == size {
            return Ok(());
        }
        let log = fs::read_to_string(env.namespace_dir(repo).join(".pool/refill.log"));
        Err(format!("{status:#}\nrefill.log: {log:?}"))
    })
}

/// The workspace ids `status --json` lists.
pub(crate) fn workspace_ids(env: &TestEnv, repo: &Path) -> Vec<String> {
    let out = env.aw(repo, ["status", "--json"]).assert_ok().json();
    out["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["workspace_id"].as_str().unwrap().to_string())
        .collect()
}

/// A repository whose new workspaces get a copied `.env`, a tools bundle and a setup that
/// counts its runs in `<tmp>/setups`.
pub(crate) fn prepared_repo(env: &TestEnv, backend: Backend, size: usize) -> PathBuf {
    let repo = backend.repo(env);
    fs::write(repo.join(".gitignore"), ".env\n").unwrap();
    fs::write(repo.join("agents.just"), "hello:\n\techo hello\n").unwrap();
    match backend {
        Backend::Jj => {
            env.jj_ok(&repo, ["commit", "-m", "tools"]);
        }
        Backend::Git => {
            git_ok(env, &repo, &["add", "-A"]);
            git_ok(env, &repo, &["commit", "-q", "-m", "tools"]);
        }
    }
    fs::write(repo.join(".env"), "SECRET=1\n").unwrap();
    let setups = env.path().join("setups");
    env.user_config(&format!(
            "[pool]\nsize = {size}\n[copy]\ninclude = [\".env\"]\n[setup]\ncommand = \"echo \\\"$AGENT_WORKSPACE_ID $AW_TEST_VAR\\\" >> {}\"\n",
            setups.display()
        ),
    );
    repo
}

/// How many setups ran in workspaces whose id starts with `id` (`.pool-`: prepared ones),
/// each with the environment its `.envrc` gives.
pub(crate) fn setups(env: &TestEnv, id: &str) -> usize {
    let text = fs::read_to_string(env.path().join("setups")).unwrap_or_default();
    assert!(text.lines().all(|l| l.ends_with(" from-envrc")), "{text}");
    text.lines().filter(|l| l.starts_with(id)).count()
}
