//! Helpers the `diff` tests share: commits on either backend, a base with files to delete,
//! rename and change in binary, a workspace with every kind of change, `diff --json`.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::backends::{git_ok, Backend};
use crate::harness::TestEnv;

/// Commits `message` with every change of the working copy at `dir`.
pub(crate) fn commit_all(backend: Backend, env: &TestEnv, dir: &Path, message: &str) {
    match backend {
        Backend::Jj => {
            env.jj_ok(dir, ["commit", "-m", message]);
        }
        Backend::Git => {
            git_ok(env, dir, &["add", "-A"]);
            git_ok(env, dir, &["commit", "-q", "-m", message]);
        }
    }
}

/// Adds files to delete, rename and change in binary to the repository's base commit.
pub(crate) fn more_base_files(backend: Backend, env: &TestEnv, repo: &Path) {
    fs::write(repo.join("del.txt"), "x\n").unwrap();
    let lines: String = (1..=40).map(|n| format!("line {n}\n")).collect();
    fs::write(repo.join("ren.txt"), lines).unwrap();
    fs::write(repo.join("bin.dat"), b"\0\x01binary").unwrap();
    commit_all(backend, env, repo, "more files");
}

/// A workspace `id` with a committed change (`a.txt`) and unrecorded ones: a deletion, a
/// rename, a binary change, a new file (untracked in git) and a modification.
pub(crate) fn workspace_with_every_change(
    backend: Backend,
    env: &TestEnv,
    repo: &Path,
    id: &str,
) -> PathBuf {
    env.aw(repo, ["run", id, "--", "true"]).assert_ok();
    let ws = env.ws_path(repo, id);
    fs::write(ws.join("a.txt"), "hello\nc\n").unwrap();
    commit_all(backend, env, &ws, "edit a\n\nwith a body");
    fs::remove_file(ws.join("del.txt")).unwrap();
    fs::create_dir(ws.join("moved")).unwrap();
    fs::rename(ws.join("ren.txt"), ws.join("moved/ren.txt")).unwrap();
    fs::write(ws.join("bin.dat"), b"\0\x02binary").unwrap();
    fs::write(ws.join("new.txt"), "new\n").unwrap();
    fs::write(ws.join("sub/b.txt"), "b\nmore\n").unwrap();
    ws
}

pub(crate) fn diff_json(env: &TestEnv, repo: &Path, id: &str) -> Value {
    let out = env.aw(repo, ["diff", id, "--json"]);
    out.assert_ok();
    out.json()
}
