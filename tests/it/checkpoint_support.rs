//! Helpers the checkpoint tests share: a commit's description and files on either backend,
//! what the working copy works on, and `checkpoint --json`.

use std::path::Path;

use serde_json::Value;

use crate::backends::{git_ok, Backend};
use crate::harness::TestEnv;

/// The full description of `commit`.
pub(crate) fn description(backend: Backend, env: &TestEnv, repo: &Path, commit: &str) -> String {
    match backend {
        Backend::Jj => env.jj_ok(
            repo,
            ["log", "--no-graph", "-r", commit, "-T", "description"],
        ),
        Backend::Git => git_ok(env, repo, &["log", "-1", "--format=%B", commit]),
    }
    .trim_end()
    .to_string()
}

/// The files `commit` changed, one a line: `jj diff -r`, `git show`.
pub(crate) fn files_of(backend: Backend, env: &TestEnv, repo: &Path, commit: &str) -> String {
    match backend {
        Backend::Jj => env.jj_ok(repo, ["diff", "-r", commit, "--name-only"]),
        Backend::Git => git_ok(env, repo, &["show", "--name-only", "--format=", commit]),
    }
}

/// Where the working copy at `ws` works: on top of `@-` (jj), HEAD (git).
pub(crate) fn below_working_copy(backend: Backend, env: &TestEnv, ws: &Path) -> String {
    backend.base_of(env, ws)
}

pub(crate) fn checkpoint(env: &TestEnv, repo: &Path, args: &[&str]) -> Value {
    let mut all = vec!["checkpoint"];
    all.extend_from_slice(args);
    all.push("--json");
    env.aw(repo, all).json()
}
