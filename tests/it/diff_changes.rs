//! `diff --json` and `--stat`: a workspace's commits and changed files against its base,
//! each kind of change, an empty diff, a base that is a merge or jj's root commit.

use std::collections::BTreeMap;
use std::fs;

use serde_json::Value;

use crate::backends::Backend;
use crate::diff_support::{
    diff_json, more_base_files, racily_clean_rewrite, workspace_with_every_change,
};
use crate::harness::TestEnv;

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
                f["status"].as_str().unwrap(),
                f["added"],
                f["removed"],
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
        serde_json::json!({"files_count": 6, "added": 3, "removed": 1, "binary_count": 1})
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

crate::both_backends!(
    every_kind_of_change_is_listed,
    the_summary_gives_commits_files_and_totals,
    a_workspace_without_changes_has_an_empty_diff,
);

/// A same-size rewrite in the second git last wrote the worktree's index (a racily clean
/// entry) is in the diff: the temporary index the diff builds on keeps the real one's mtime,
/// so git still compares that file's contents instead of trusting its stat data.
#[test]
fn git_diff_lists_a_same_size_rewrite_that_only_the_racy_git_rule_tells() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    more_base_files(Backend::Git, &env, &repo);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    racily_clean_rewrite(&env, &ws, "bin.dat", b"\0\x02binary");
    let json = diff_json(&env, &repo, "w1");
    let files: Vec<(&str, &str)> = json["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["status"].as_str().unwrap()))
        .collect();
    assert_eq!(files, [("bin.dat", "modified")], "{json:#}");
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
    assert_eq!(doc["files"][0]["status"], "created", "{doc}");
    let status = env.aw(&repo, ["status", "w"]);
    insta::assert_snapshot!(status, @r"
    workspace     w
    status        done
    path          [TMP]/xdg/cache/ai-workspaces/fresh-[HASH]/w
    workflow      -
    backend       jj
    repo          [TMP]/fresh
    base          -
    command       sh -c 'echo hi > f.txt'
    exit code     0
    created       [TIME]
    updated       [TIME]
    direnv        not used
    sandbox       no
    commits       0
    files         1 changed, +1 -0
    last activity [TIME]

    RUNS
    STARTED               STATUS  EXIT  DURATION  WORKFLOW  COMMAND
    [TIME]  done    0     [DUR]      -         sh -c 'echo hi > f.txt'
    [exit 0]
    ");
    let dry = env.aw(&repo, ["land", "w", "--dry-run", "--json"]);
    dry.assert_ok();
    assert_eq!(dry.json()["conflicts"], serde_json::json!([]));
    env.aw(&repo, ["land", "w"]).assert_ok();
    assert_eq!(fs::read_to_string(repo.join("f.txt")).unwrap(), "hi\n");
}

/// git's summary (and the status table) writes no tree: nothing it shows names one. The
/// JSON and the patch, which do, still write it.
#[test]
fn git_diff_summary_writes_no_tree_and_its_json_names_the_latest_tree() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    fs::write(ws.join("new.txt"), "one\ntwo\n").unwrap();
    let log = env.path().join("git-calls.log");
    let bin = crate::status_details::logging_wrapper(&env, "git", &log);
    let logged = |args: &[&str]| {
        let _ = fs::remove_file(&log);
        let out = env
            .aw_cmd(&repo)
            .env("PATH", env.path_with_first(&bin))
            .args(args)
            .run();
        out.assert_ok();
        (
            out.stdout.clone(),
            fs::read_to_string(&log).unwrap_or_default(),
        )
    };
    let (summary, asked) = logged(&["diff", "w1"]);
    assert!(summary.contains("new.txt"), "{summary}");
    assert!(!asked.contains("write-tree"), "{asked}");
    let (json, asked) = logged(&["diff", "w1", "--json"]);
    assert!(asked.contains("write-tree"), "{asked}");
    let json: Value = serde_json::from_str(&json).unwrap();
    let latest = json["latest"].as_str().unwrap();
    assert_eq!(
        crate::backends::git_ok(&env, &repo, &["cat-file", "-t", latest]).trim(),
        "tree",
        "{json:#}"
    );
    let (patch, _) = logged(&["diff", "w1", "--patch"]);
    assert!(patch.contains("+two"), "{patch}");
}
