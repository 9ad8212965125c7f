//! `diff --patch`: the patch applies at the base with `git apply` and `patch -p1` and gives
//! the workspace's files; the `workspace-diff` recipe prints it.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::backends::{git_ok, Backend};
use crate::diff_support::{commit_all, more_base_files, workspace_with_every_change};
use crate::harness::TestEnv;

/// The files of `dir`, relative, with their contents, leaving out what only a workspace or
/// a repository has.
fn tree_of(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if [".jj", ".git", ".direnv"].contains(&name.as_str())
                || name.starts_with(".agent-workflow.json")
            {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .to_string();
                out.insert(rel, fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// A fresh git repository at `<tmp>/<name>` holding the files of `commit` of `repo`.
fn checkout_at(env: &TestEnv, repo: &Path, commit: &str, name: &str) -> PathBuf {
    let dir = env.path().join(name);
    fs::create_dir(&dir).unwrap();
    let tar = env.path().join(format!("{name}.tar"));
    let tar_arg = format!("--output={}", tar.display());
    git_ok(env, repo, &["archive", "--format=tar", &tar_arg, commit]);
    env.cmd("tar", &dir).arg("-xf").arg(&tar).run().assert_ok();
    git_ok(env, &dir, &["init", "-q"]);
    dir
}

fn the_patch_applies_with_git_apply_at_the_base(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    more_base_files(backend, &env, &repo);
    let ws = workspace_with_every_change(backend, &env, &repo, "w1");
    let out = env.aw(&repo, ["diff", "w1", "--patch"]);
    let patch = env.path().join("w1.patch");
    fs::write(&patch, &out.assert_ok().stdout).unwrap();
    assert!(out.stdout.contains("GIT binary patch"), "{}", out.stdout);
    let base = backend.base_of(&env, &repo);
    let clone = checkout_at(&env, &repo, &base, "clone");
    env.cmd("git", &clone)
        .arg("apply")
        .arg(&patch)
        .run()
        .assert_ok();
    assert_eq!(tree_of(&clone), tree_of(&ws));
}

fn the_patch_applies_with_patch_p1_at_the_base(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    more_base_files(backend, &env, &repo);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    fs::write(ws.join("a.txt"), "hello\nworld\n").unwrap();
    commit_all(backend, &env, &ws, "edit a");
    fs::remove_file(ws.join("del.txt")).unwrap();
    let mut renamed = fs::read_to_string(ws.join("ren.txt")).unwrap();
    renamed.push_str("line 41\n");
    fs::remove_file(ws.join("ren.txt")).unwrap();
    fs::write(ws.join("ren2.txt"), renamed).unwrap();
    fs::write(ws.join("sub/new.txt"), "new\n").unwrap();
    let out = env.aw(&repo, ["diff", "w1", "--patch"]);
    let patch = env.path().join("w1.patch");
    fs::write(&patch, &out.assert_ok().stdout).unwrap();
    assert!(out.stdout.contains("rename from ren.txt"), "{}", out.stdout);
    let clone = checkout_at(&env, &repo, &backend.base_of(&env, &repo), "clone");
    env.cmd("patch", &clone)
        .args(["-p1", "--quiet", "-i"])
        .arg(&patch)
        .run()
        .assert_ok();
    assert_eq!(tree_of(&clone), tree_of(&ws));
}

crate::both_backends!(
    the_patch_applies_with_git_apply_at_the_base,
    the_patch_applies_with_patch_p1_at_the_base,
);

#[test]
fn the_workspace_diff_recipe_prints_the_patch() {
    let env = TestEnv::new();
    let repo = env.recipes_repo();
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    fs::write(env.ws_path(&repo, "w1").join("c.txt"), "new\n").unwrap();
    let out = env.recipe(&repo, "workspace-diff", &["w1", "--patch"]);
    assert!(
        out.assert_ok()
            .stdout
            .contains("+++ b/c.txt\n@@ -0,0 +1 @@\n+new\n"),
        "{}",
        out.stdout
    );
    let json = env
        .cmd("just", &repo)
        .env("AGENT_WORKSPACE_BIN", crate::harness::AW)
        .args(["agents::workspace-diff", "w1", "--json"])
        .run();
    assert_eq!(json.assert_ok().json()["totals"]["files_count"], 1);
}
