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
