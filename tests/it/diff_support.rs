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

/// Rewrites the file `name` of the git worktree `ws` with `bytes` (the same size as before)
/// so that only git's "racy git" rule tells the change: the file keeps the inode, size and
/// mtime its index entry records, and the index file gets that same mtime, which makes the
/// entry racily clean (git compares such an entry's contents instead of trusting its stat
/// data). That is what a same-size rewrite in the second the index was written leaves; the
/// times are set here so it happens every time. A write always moves a file's ctime, which
/// nothing can set back: the repository stops comparing ctimes (`core.trustctime=false`).
pub(crate) fn racily_clean_rewrite(env: &TestEnv, ws: &Path, name: &str, bytes: &[u8]) {
    let then = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_600_000_000);
    let set_mtime = |path: &Path| {
        let file = fs::File::options().write(true).open(path).unwrap();
        file.set_modified(then).unwrap();
    };
    git_ok(env, ws, &["config", "core.trustctime", "false"]);
    let file = ws.join(name);
    assert_eq!(fs::read(&file).unwrap().len(), bytes.len());
    set_mtime(&file);
    // The entry records `then`; the index, written now, holds it as clean.
    git_ok(env, ws, &["update-index", "--refresh"]);
    fs::write(&file, bytes).unwrap();
    set_mtime(&file);
    let index = git_ok(
        env,
        ws,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    );
    set_mtime(Path::new(index.trim_end()));
    // git itself, reading the worktree's index, sees the change.
    let status = git_ok(env, ws, &["--no-optional-locks", "status", "--porcelain"]);
    assert_eq!(status, format!(" M {name}\n"));
}
