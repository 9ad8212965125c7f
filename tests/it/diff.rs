//! `diff`: a workspace's commits and changed files against its base, each kind of change,
//! its patch applied at the base, and what it must leave alone.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::backends::{git_ok, Backend};
use crate::harness::{wait_for_file, TestEnv};

/// Commits `message` with every change of the working copy at `dir`.
fn commit_all(backend: Backend, env: &TestEnv, dir: &Path, message: &str) {
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
fn more_base_files(backend: Backend, env: &TestEnv, repo: &Path) {
    fs::write(repo.join("del.txt"), "x\n").unwrap();
    let lines: String = (1..=40).map(|n| format!("line {n}\n")).collect();
    fs::write(repo.join("ren.txt"), lines).unwrap();
    fs::write(repo.join("bin.dat"), b"\0\x01binary").unwrap();
    commit_all(backend, env, repo, "more files");
}

/// A workspace `id` with a committed change (`a.txt`) and unrecorded ones: a deletion, a
/// rename, a binary change, a new file (untracked in git) and a modification.
fn workspace_with_every_change(backend: Backend, env: &TestEnv, repo: &Path, id: &str) -> PathBuf {
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

fn diff_json(env: &TestEnv, repo: &Path, id: &str) -> Value {
    let out = env.aw(repo, ["diff", id, "--json"]);
    out.assert_ok();
    out.json()
}

fn every_kind_of_change_is_listed(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    more_base_files(backend, &env, &repo);
    let base = backend.base_of(&env, &repo);
    workspace_with_every_change(backend, &env, &repo, "w1");
    let json = diff_json(&env, &repo, "w1");
    assert_eq!(json["schema_version"], 1);
    assert_eq!(json["workspace_id"], "w1");
    assert_eq!(json["backend"], backend.name());
    assert_eq!(json["base_commits"], serde_json::json!([base]));
    assert_eq!(json["against"], base.as_str());
    assert!(
        json["latest"].as_str().is_some_and(|l| l.len() == 40),
        "{json:#}"
    );
    let commits = json["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 1, "{json:#}");
    assert_eq!(commits[0]["description"], "edit a\n\nwith a body");
    assert!(commits[0]["commit_id"]
        .as_str()
        .is_some_and(|c| c.len() == 40));
    match backend {
        Backend::Jj => assert_eq!(commits[0]["change_id"].as_str().map(str::len), Some(32)),
        Backend::Git => assert!(commits[0].get("change_id").is_none(), "{json:#}"),
    }
    let files: BTreeMap<String, String> = json["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let line = format!(
                "{} +{} -{} binary={} from={}",
                f["kind"].as_str().unwrap(),
                f["insertions"],
                f["deletions"],
                f["binary"],
                f.get("old_path").and_then(Value::as_str).unwrap_or("-")
            );
            (f["path"].as_str().unwrap().to_string(), line)
        })
        .collect();
    let expected: BTreeMap<String, String> = [
        ("a.txt", "modified +1 -0 binary=false from=-"),
        ("bin.dat", "modified +0 -0 binary=true from=-"),
        ("del.txt", "deleted +0 -1 binary=false from=-"),
        ("moved/ren.txt", "renamed +0 -0 binary=false from=ren.txt"),
        ("new.txt", "created +1 -0 binary=false from=-"),
        ("sub/b.txt", "modified +1 -0 binary=false from=-"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(files, expected, "{json:#}");
    assert_eq!(
        json["totals"],
        serde_json::json!({"files": 6, "insertions": 3, "deletions": 1, "binary": 1})
    );
}

fn the_summary_gives_commits_files_and_totals(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    more_base_files(backend, &env, &repo);
    workspace_with_every_change(backend, &env, &repo, "w1");
    let default = env.aw(&repo, ["diff", "w1"]);
    let stat = env.aw(&repo, ["diff", "w1", "--stat"]);
    assert_eq!(default.assert_ok().stdout, stat.assert_ok().stdout);
    let text = env.normalize(&stat.stdout);
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(
            format!(
                "workspace w1 ({}): 1 commit on top of {}, latest edits included",
                backend.name(),
                &backend.base_of(&env, &repo)[..12]
            )
            .as_str()
        )
    );
    let commit = lines.next().unwrap();
    assert!(commit.ends_with("  edit a"), "{text}");
    let rest: Vec<&str> = lines.collect();
    assert_eq!(
        rest,
        [
            "",
            "modified  +1   -0   a.txt",
            "modified  bin  bin  bin.dat",
            "deleted   +0   -1   del.txt",
            "renamed   +0   -0   ren.txt -> moved/ren.txt",
            "created   +1   -0   new.txt",
            "modified  +1   -0   sub/b.txt",
            "6 files changed, 3 insertions(+), 1 deletion(-)",
        ],
        "{text}"
    );
}

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

/// What git says about the worktree at `ws` and the repository's refs.
fn git_state(env: &TestEnv, repo: &Path, ws: &Path) -> String {
    [
        git_ok(env, ws, &["status", "--porcelain", "--untracked-files=all"]),
        git_ok(env, ws, &["ls-files", "--stage"]),
        git_ok(env, ws, &["rev-parse", "HEAD"]),
        git_ok(env, repo, &["for-each-ref"]),
        git_ok(env, repo, &["stash", "list"]),
    ]
    .join("\n")
}

#[test]
fn git_diff_leaves_the_index_and_every_branch_alone() {
    let env = TestEnv::new();
    let backend = Backend::Git;
    let repo = backend.repo(&env);
    more_base_files(backend, &env, &repo);
    let ws = workspace_with_every_change(backend, &env, &repo, "w1");
    git_ok(&env, &ws, &["add", "sub/b.txt"]);
    let before = git_state(&env, &repo, &ws);
    assert!(before.contains("?? new.txt"), "{before}");
    for flags in [&[][..], &["--json"], &["--patch"]] {
        env.aw(&repo, ["diff", "w1"].iter().chain(flags))
            .assert_ok();
    }
    assert_eq!(git_state(&env, &repo, &ws), before);
}

#[test]
fn jj_diff_makes_no_commit_beyond_the_snapshot() {
    let env = TestEnv::new();
    let backend = Backend::Jj;
    let repo = backend.repo(&env);
    more_base_files(backend, &env, &repo);
    let ws = workspace_with_every_change(backend, &env, &repo, "w1");
    let all = [
        "log",
        "--no-graph",
        "-r",
        "all()",
        "-T",
        "commit_id ++ \"\\n\"",
    ];
    env.jj_ok(&ws, ["status"]);
    let before = env.jj_ok(&repo, all);
    env.aw(&repo, ["diff", "w1", "--json"]).assert_ok();
    env.aw(&repo, ["diff", "w1", "--patch"]).assert_ok();
    assert_eq!(env.jj_ok(&repo, all), before);
}

fn a_workspace_without_changes_has_an_empty_diff(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let json = diff_json(&env, &repo, "w1");
    assert_eq!(json["files"], serde_json::json!([]));
    assert_eq!(json["commits"], serde_json::json!([]));
    let patch = env.aw(&repo, ["diff", "w1", "--patch"]);
    assert_eq!(patch.assert_ok().stdout, "");
}

fn bad_input_is_refused_with_a_hint(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let unknown = env.aw(&repo, ["diff", "nope"]);
    unknown.assert_code(1);
    assert!(
        unknown.stderr.starts_with("Error: no workspace \"nope\""),
        "{}",
        unknown.stderr
    );
    assert!(unknown.stderr.contains("\nHint: "), "{}", unknown.stderr);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    for args in [
        &["diff", "w1", "--patch", "--json"][..],
        &["diff", "w1", "--stat", "--patch"],
        &["diff", "w1", "--stat", "--json"],
        &["diff"],
        &["diff", "../w1"],
    ] {
        let out = env.aw(&repo, args);
        out.assert_code(2);
        assert!(
            out.stderr.starts_with("Error: "),
            "{args:?}: {}",
            out.stderr
        );
        assert!(out.stderr.contains("\nHint: "), "{args:?}: {}", out.stderr);
        assert_eq!(out.stdout, "");
    }
}

fn a_live_run_is_busy_unless_diff_runs_inside_it(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let started = env.path().join("started");
    let release = env.path().join("release");
    let inner = env.path().join("inner.json");
    let script = format!(
        "echo edit > new.txt; agent-workspace diff w1 --json > '{}' || exit 9; touch '{}'; while [ ! -e '{}' ]; do sleep 0.02; done",
        inner.display(),
        started.display(),
        release.display()
    );
    let run = env
        .aw_cmd(&repo)
        .args(["run", "w1", "--", "sh", "-c", &script])
        .spawn();
    wait_for_file(&started);
    let out = env.aw(&repo, ["diff", "w1"]);
    fs::write(&release, "").unwrap();
    run.wait().assert_ok();
    out.assert_code(1);
    assert!(
        env.normalize(&out.stderr)
            .starts_with("Error: workspace \"w1\" is busy: a run holds it (pid [PID], workflow -)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("\nHint: "), "{}", out.stderr);
    let inner: Value = serde_json::from_slice(&fs::read(&inner).unwrap()).unwrap();
    assert_eq!(inner["files"][0]["path"], "new.txt", "{inner:#}");
}

crate::both_backends!(
    every_kind_of_change_is_listed,
    the_summary_gives_commits_files_and_totals,
    the_patch_applies_with_git_apply_at_the_base,
    the_patch_applies_with_patch_p1_at_the_base,
    a_workspace_without_changes_has_an_empty_diff,
    bad_input_is_refused_with_a_hint,
    a_live_run_is_busy_unless_diff_runs_inside_it,
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
    assert_eq!(json.assert_ok().json()["totals"]["files"], 1);
}

#[test]
fn jj_diff_of_a_workspace_on_a_merge_compares_with_the_merged_parents() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    let initial = env.commit_id(&repo, "@-");
    fs::write(repo.join("left.txt"), "left\n").unwrap();
    env.jj_ok(&repo, ["commit", "-m", "left"]);
    let left = env.commit_id(&repo, "@-");
    env.jj_ok(&repo, ["new", &initial]);
    fs::write(repo.join("right.txt"), "right\n").unwrap();
    env.jj_ok(&repo, ["commit", "-m", "right"]);
    let right = env.commit_id(&repo, "@-");
    env.jj_ok(&repo, ["new", &left, &right]);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    fs::write(ws.join("new.txt"), "new\n").unwrap();
    let json = diff_json(&env, &repo, "w1");
    let mut bases: Vec<&str> = json["base_commits"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    bases.sort();
    let mut expected = [left.as_str(), right.as_str()];
    expected.sort();
    assert_eq!(bases, expected, "{json:#}");
    let paths: Vec<&str> = json["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert_eq!(paths, ["new.txt"], "{json:#}");
    assert_eq!(json["commits"], serde_json::json!([]), "{json:#}");
}

#[test]
fn jj_diff_of_a_stale_working_copy_says_how_to_update_it() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let before = env.jj_ok(&repo, ["op", "log", "--no-graph", "-n1", "-T", "id"]);
    fs::write(ws.join("first.txt"), "first\n").unwrap();
    env.jj(&ws, ["status"]).assert_ok();
    env.jj(&repo, ["op", "restore", &before]).assert_ok();
    fs::write(ws.join("second.txt"), "second\n").unwrap();
    let out = env.aw(&repo, ["diff", "w1"]);
    out.assert_code(1);
    assert!(
        out.stderr
            .starts_with("Error: the working copy of workspace \"w1\" is stale\nHint: `agent-workspace run w1 -- true` updates it"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "");
    // The hint works: after it, the edit shows.
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let json = diff_json(&env, &repo, "w1");
    assert_eq!(json["files"][0]["path"], "first.txt", "{json:#}");
    assert_eq!(json["files"][1]["path"], "second.txt", "{json:#}");
}

/// In a jj repository with no commit yet, a workspace starts on jj's root commit, which git
/// does not have: its diff compares with the empty tree, and a land's dry run predicts from
/// there too.
#[test]
fn a_workspace_on_jjs_root_commit_has_a_diff_and_a_dry_run() {
    let env = TestEnv::new();
    env.jj(env.path(), ["git", "init", "fresh"]).assert_ok();
    let repo = fs::canonicalize(env.path().join("fresh")).unwrap();
    env.aw(&repo, ["run", "w", "--", "sh", "-c", "echo hi > f.txt"])
        .assert_ok();
    let doc = diff_json(&env, &repo, "w");
    assert_eq!(doc["files"][0]["path"], "f.txt", "{doc}");
    assert_eq!(doc["files"][0]["kind"], "created", "{doc}");
    let status = env.aw(&repo, ["status", "w"]);
    status.assert_ok();
    assert!(status.stdout.contains("1 changed"), "{}", status.stdout);
    let dry = env.aw(&repo, ["land", "w", "--dry-run", "--json"]);
    dry.assert_ok();
    assert_eq!(dry.json()["conflicts"], serde_json::json!([]));
    env.aw(&repo, ["land", "w"]).assert_ok();
    assert_eq!(fs::read_to_string(repo.join("f.txt")).unwrap(), "hi\n");
}
