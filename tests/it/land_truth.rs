//! jj: what `land`, `status` and `diff` say after the repository moved under a workspace: a
//! divergent change of the workspace is refused by the land and its dry run alike, naming
//! it; after a land onto a main that moved, or whose landed commit the user reworded, the
//! user's commits are not the workspace's work and the landed ones stay landed.

use std::fs;

use crate::harness::TestEnv;
use crate::land_support::{op_ids, snapshot};

/// The change ids of the divergent changes `repo` sees.
fn divergent(env: &TestEnv, repo: &std::path::Path) -> String {
    env.jj_ok(
        repo,
        [
            "log",
            "--no-graph",
            "-r",
            "divergent()",
            "-T",
            r#"change_id.short() ++ "\n""#,
        ],
    )
}

/// Workspace `w1` with commits `work` and `work2`, then `work2`'s change described again
/// at the operation before `jj commit` finished it: two visible commits of that change,
/// one in the workspace's history and one beside it. Returns the repository and the
/// change's short id.
fn divergent_workspace(env: &TestEnv) -> (std::path::PathBuf, String) {
    let repo = env.jj_repo("repo");
    let script = "echo x > x.txt && jj commit -m work && echo y > y.txt && jj commit -m work2";
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", script])
        .assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let ops = op_ids(env, &ws);
    let change = env.jj_ok(
        &ws,
        ["log", "--no-graph", "-r", "@-", "-T", "change_id.short()"],
    );
    env.jj_ok(
        &ws,
        [
            "--at-op",
            &ops[1],
            "describe",
            "-r",
            &change,
            "-m",
            "work2 again",
        ],
    );
    snapshot(env, &repo);
    assert_eq!(divergent(env, &repo), format!("{change}\n{change}\n"));
    (repo, change)
}

#[test]
fn a_divergent_workspace_change_is_refused_by_the_land_and_its_dry_run_alike() {
    let env = TestEnv::new();
    let (repo, change) = divergent_workspace(&env);
    let ops = op_ids(&env, &repo);
    for args in [&["land", "w1", "--dry-run"][..], &["land", "w1"]] {
        let out = env.aw(&repo, args);
        out.assert_code(1);
        assert!(
            out.stderr
                .starts_with("Error: workspace \"w1\" has a divergent change"),
            "{}",
            out.report()
        );
        assert!(out.stderr.contains(&change), "{}", out.report());
        assert!(
            out.stderr.contains("nothing was landed"),
            "{}",
            out.report()
        );
        assert!(
            out.stderr.contains("\nHint: ") && out.stderr.contains("abandon"),
            "{}",
            out.report()
        );
        assert_eq!(out.stdout, "", "{}", out.report());
    }
    // Nothing changed: no operation, no file in main, no land recorded, status as before.
    assert_eq!(op_ids(&env, &repo), ops);
    assert!(!repo.join("x.txt").exists());
    assert!(!repo.join("y.txt").exists());
    let status = env.aw(&repo, ["status", "w1", "--json"]).json();
    assert_eq!(status["status"], "done");
    assert!(status["record"].get("land").is_none(), "{status:#}");
    // The hint's way out works: once the copy beside the workspace's history is abandoned,
    // the land lands the two commits the dry run names.
    let ws = env.ws_path(&repo, "w1");
    env.jj_ok(
        &ws,
        ["abandon", "-r", &format!("change_id({change}) ~ ::@")],
    );
    let dry = env.aw(&repo, ["land", "w1", "--dry-run", "--json"]).json();
    assert_eq!(dry["commits"].as_array().map(Vec::len), Some(2), "{dry:#}");
    let out = env.aw(&repo, ["land", "w1", "--json"]);
    out.assert_ok();
    let subjects = |v: &serde_json::Value| -> Vec<String> {
        v["commits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["subject"].to_string())
            .collect()
    };
    assert_eq!(subjects(&out.json()), subjects(&dry));
    assert_eq!(fs::read_to_string(repo.join("y.txt")).unwrap(), "y\n");
    assert_eq!(divergent(&env, &repo), "");
}

/// The commits `diff --json` of `w1` lists, by subject, and the paths of its files.
fn diff_of(env: &TestEnv, repo: &std::path::Path) -> (Vec<String>, Vec<String>) {
    let json = env.aw(repo, ["diff", "w1", "--json"]).json();
    let list = |key: &str, field: &str| -> Vec<String> {
        json[key]
            .as_array()
            .unwrap_or_else(|| panic!("{json:#}"))
            .iter()
            .map(|c| c[field].as_str().unwrap_or_default().to_string())
            .collect()
    };
    (list("commits", "subject"), list("files", "path"))
}

/// `status w1 --json`: its status, its commits' subjects and how many are not landed.
fn status_of(env: &TestEnv, repo: &std::path::Path) -> (String, Vec<String>, u64) {
    let json = env.aw(repo, ["status", "w1", "--json"]).json();
    let changes = &json["changes"];
    let subjects = changes["commits"]
        .as_array()
        .unwrap_or_else(|| panic!("{json:#}"))
        .iter()
        .map(|c| c["subject"].as_str().unwrap_or_default().to_string())
        .collect();
    let unlanded = changes["unlanded_commits_count"].as_u64().unwrap();
    (
        json["status"].as_str().unwrap().to_string(),
        subjects,
        unlanded,
    )
}

#[test]
fn after_a_land_onto_a_main_that_moved_the_user_s_commits_are_not_the_workspace_s_work() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(
        &repo,
        [
            "run",
            "w1",
            "--",
            "sh",
            "-c",
            "echo x > x.txt && jj commit -m work",
        ],
    )
    .assert_ok();
    // The user commits in main after the workspace started, then lands it.
    fs::write(repo.join("mine.txt"), "mine\n").unwrap();
    env.jj_ok(&repo, ["commit", "-m", "mine"]);
    env.aw(&repo, ["land", "w1"]).assert_ok();
    let landed_only = (vec!["work".to_string()], vec!["x.txt".to_string()]);
    assert_eq!(diff_of(&env, &repo), landed_only);
    assert_eq!(
        status_of(&env, &repo),
        ("landed".to_string(), vec!["work".to_string()], 0)
    );
    let table = env.aw(&repo, ["status"]);
    assert!(
        table
            .stdout
            .contains("w1         landed  -         1 file +1 -0"),
        "{}",
        table.report()
    );
    // The user commits more in main, and rewords the landed commit there: it is still the
    // workspace's own, and still landed.
    fs::write(repo.join("later.txt"), "later\n").unwrap();
    env.jj_ok(&repo, ["commit", "-m", "later"]);
    env.jj_ok(&repo, ["describe", "-r", "w1@-", "-m", "work, reworded"]);
    // That rewrote the workspace's working copy: jj there brings it up to date.
    let ws = env.ws_path(&repo, "w1");
    env.jj_ok(&ws, ["workspace", "update-stale"]);
    assert_eq!(
        diff_of(&env, &repo),
        (
            vec!["work, reworded".to_string()],
            vec!["x.txt".to_string()]
        )
    );
    assert_eq!(
        status_of(&env, &repo),
        ("landed".to_string(), vec!["work, reworded".to_string()], 0)
    );
    // The user moves the landed commit after their later commit (`rebase -r`): the
    // workspace, left on what it sat on, holds no work of its own now, and nothing of the
    // user's is taken for its work.
    env.jj_ok(
        &repo,
        [
            "rebase",
            "-r",
            "w1@-",
            "-A",
            "description(exact:\"later\\n\")",
        ],
    );
    env.jj_ok(&ws, ["workspace", "update-stale"]);
    assert_eq!(diff_of(&env, &repo), (vec![], vec![]));
    assert_eq!(status_of(&env, &repo), ("landed".to_string(), vec![], 0));
    // The workspace's work since is unlanded, and nothing of the user's is listed.
    env.aw(
        &repo,
        [
            "run",
            "w1",
            "--",
            "sh",
            "-c",
            "echo z > z.txt && jj commit -m more",
        ],
    )
    .assert_ok();
    assert_eq!(
        diff_of(&env, &repo),
        (vec!["more".to_string()], vec!["z.txt".to_string()])
    );
    let (_, subjects, unlanded) = status_of(&env, &repo);
    assert_eq!((subjects.len(), unlanded), (1, 1));
}
