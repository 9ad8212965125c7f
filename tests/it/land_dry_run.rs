//! `land --dry-run` on jj: it predicts commits, files and conflicts and changes nothing, not
//! even the operation log; onto a merge working copy it says it cannot predict.

use std::fs;

use crate::harness::TestEnv;
use crate::land_support::{graph, main_commits_a, op_ids, repo_with_work, snapshot};

#[test]
fn a_dry_run_reports_commits_files_and_conflicts_and_changes_nothing() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    main_commits_a(&env, &repo, "from main\n");
    snapshot(&env, &repo);
    let (ops, before) = (op_ids(&env, &repo), graph(&env, &repo));
    let out = env.aw(&repo, ["land", "w1", "--dry-run", "--json"]);
    out.assert_code(1);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["dry_run"], true);
    assert_eq!(doc["outcome"], "conflicted");
    assert_eq!(doc["commits"][0]["subject"], "work");
    assert_eq!(doc["files"], serde_json::json!(["a.txt", "new.txt"]));
    assert_eq!(doc["conflicts"][0]["file"], "a.txt");
    // Commits, working copies, files and the operation log as before.
    assert_eq!(graph(&env, &repo), before);
    assert_eq!(
        fs::read_to_string(repo.join("a.txt")).unwrap(),
        "from main\n"
    );
    assert!(!repo.join("new.txt").exists());
    assert_eq!(op_ids(&env, &repo), ops);
    assert!(env
        .metadata(&env.ws_path(&repo, "w1"))
        .get("land")
        .is_none());
    // So `jj undo` right after undoes the user's own last operation, never lands the work.
    env.jj_ok(&repo, ["undo"]);
    assert!(!repo.join("new.txt").exists());
}

#[test]
fn a_clean_dry_run_predicts_no_conflict_and_records_no_operation() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    snapshot(&env, &repo);
    let ops = op_ids(&env, &repo);
    let out = env.aw(&repo, ["land", "w1", "--dry-run", "--json"]);
    out.assert_ok();
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["outcome"], "landed", "{doc}");
    assert_eq!(doc["conflicts"], serde_json::json!([]), "{doc}");
    assert_eq!(op_ids(&env, &repo), ops);
    // The prediction agrees with the land itself.
    let real = env.aw(&repo, ["land", "w1", "--json"]);
    real.assert_ok();
    assert!(repo.join("new.txt").exists());
}

/// A dry run onto a working-copy commit that is a merge cannot be predicted without landing:
/// it says so and changes nothing.
#[test]
fn a_dry_run_onto_a_merge_working_copy_says_it_cannot_predict() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    env.jj_ok(&repo, ["new", "root()", "-m", "side"]);
    // The main working copy is itself a merge of the initial commit and a side branch.
    env.jj_ok(
        &repo,
        [
            "new",
            "description(exact:\"initial\\n\")",
            "@",
            "-m",
            "merged",
        ],
    );
    let (ops, before) = (op_ids(&env, &repo), graph(&env, &repo));
    let out = env.aw(&repo, ["land", "w1", "--dry-run"]);
    out.assert_code(1);
    assert!(
        out.stderr.starts_with(
            "Error: cannot predict this land without doing it: the target working-copy commit is a merge"
        ),
        "{}",
        out.report()
    );
    assert!(
        out.stderr.contains("\nHint: land without --dry-run"),
        "{}",
        out.report()
    );
    assert_eq!((op_ids(&env, &repo), graph(&env, &repo)), (ops, before));
}
