//! `land` on jj: the work rebased below the main working copy, in operations the printed
//! undo reverts; edits recorded first; conflicts; `--onto`. `--prefer` and a dirty main
//! refused are told for both backends in `land.rs`.

use std::fs;

use crate::harness::TestEnv;
use crate::land_support::{
    main_commits, main_commits_a, op_ids, repo_with_work, shape, snapshot, subjects, undo_of,
};

#[test]
fn a_land_puts_the_work_below_the_main_working_copy_and_its_undo_reverts_it() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    fs::write(repo.join("mine.txt"), "main's own edit\n").unwrap();
    snapshot(&env, &repo);
    let (ops, before) = (op_ids(&env, &repo), shape(&env, &repo));
    let out = env.aw(&repo, ["land", "w1"]);
    out.assert_ok();
    assert!(
        out.stdout
            .starts_with("Landed 1 commit of w1 onto default@\n"),
        "{}",
        out.report()
    );
    assert!(
        out.stdout.contains(" work\n2 files changed\n"),
        "{}",
        out.report()
    );
    // The main working copy has the work, and keeps its own edit on top.
    assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), "from w1\n");
    assert_eq!(fs::read_to_string(repo.join("new.txt")).unwrap(), "new\n");
    assert_eq!(
        fs::read_to_string(repo.join("mine.txt")).unwrap(),
        "main's own edit\n"
    );
    let parent = |rev: &str| subjects(&env, &repo, rev);
    assert_eq!(parent("@-"), "work");
    assert_eq!(parent("@--"), "initial");
    // The workspace goes on above its landed commit, its files current.
    assert_eq!(parent("w1@-"), "work");
    let ws = env.ws_path(&repo, "w1");
    // Not stale: jj works there without `workspace update-stale`.
    env.jj_ok(&ws, ["status"]);
    assert_eq!(fs::read_to_string(ws.join("a.txt")).unwrap(), "from w1\n");
    // The land's operations come after those before it (the rebase, the workspace's working
    // copy put on top; in a colocated repository jj adds one resetting git's HEAD as the
    // main working copy is updated). The printed undo takes the work back out of the main
    // working copy, which keeps its own edit, and the workspace keeps it.
    let after = op_ids(&env, &repo);
    assert!(
        after.len() >= ops.len() + 2,
        "{}",
        env.jj_ok(&repo, ["op", "log"])
    );
    assert_eq!(after[after.len() - ops.len()..], ops[..]);
    let undo = undo_of(&out);
    assert!(!undo.contains("jj op "), "{undo}");
    env.cmd("sh", &repo).args(["-c", &undo]).run().assert_ok();
    assert_eq!(shape(&env, &repo), before);
    assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), "hello\n");
    assert!(!repo.join("new.txt").exists());
    assert_eq!(
        fs::read_to_string(repo.join("mine.txt")).unwrap(),
        "main's own edit\n"
    );
    assert_eq!(parent("w1@-"), "work");
    let record = env.metadata(&ws);
    assert_eq!(record["land"]["outcome"], "landed");
    assert_eq!(record["land"]["target"], "default@");
    assert_eq!(record["land"]["operation_before"], ops[0].as_str());
}

#[test]
fn unrecorded_edits_are_recorded_first_and_land_too() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(
        &repo,
        ["run", "w1", "--", "sh", "-c", "echo edited > a.txt"],
    )
    .assert_ok();
    let out = env.aw(&repo, ["land", "w1", "--json"]);
    let doc = out.json();
    assert_eq!(doc["outcome"], "landed");
    assert_eq!(doc["recorded_edits"], true);
    assert_eq!(
        doc["commits"][0]["subject"],
        "[workspace w1] edits recorded by land"
    );
    assert_eq!(doc["paths"], serde_json::json!(["a.txt"]));
    assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), "edited\n");
    // The workspace's working copy is a new empty commit on top of the landed one.
    let ws = env.ws_path(&repo, "w1");
    let empty = env.jj_ok(&ws, ["log", "--no-graph", "-r", "@", "-T", "empty"]);
    assert_eq!(empty, "true");
    // Landing again finds nothing left.
    let again = env.aw(&repo, ["land", "w1"]);
    again.assert_ok();
    assert_eq!(
        again.stdout,
        "Nothing to land: workspace w1 has no commits outside default@\n"
    );
}

#[test]
fn an_allowed_conflicted_land_is_recorded_listed_exits_1_and_its_undo_reverts_it() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    main_commits_a(&env, &repo, "from main\n");
    snapshot(&env, &repo);
    let (ops, before) = (op_ids(&env, &repo), shape(&env, &repo));
    let out = env.aw(&repo, ["land", "w1", "--allow-conflicts"]);
    out.assert_code(1);
    assert!(
        out.stdout
            .starts_with("Landed with conflicts 1 commit of w1 onto default@\n"),
        "{}",
        out.report()
    );
    assert!(
        out.stdout.contains("Conflict in a.txt ("),
        "{}",
        out.report()
    );
    assert!(
        out.stderr
            .starts_with("Error: the land left 1 conflicted file"),
        "{}",
        out.report()
    );
    assert!(out.stderr.contains("\nHint: "), "{}", out.report());
    let conflicted = subjects(&env, &repo, "conflicts() & ::@-");
    assert_eq!(conflicted, "work");
    let record = env.metadata(&env.ws_path(&repo, "w1"));
    assert_eq!(record["land"]["outcome"], "conflicted");
    assert_eq!(record["land"]["conflicts"][0]["path"], "a.txt");
    let landed = record["land"]["commits"][0].as_str().unwrap();
    assert_eq!(record["land"]["conflicts"][0]["commit_id"], landed);
    let status = env.aw(&repo, ["status"]);
    assert!(
        status.stdout.contains("w1         conflicted"),
        "{}",
        status.report()
    );
    let after = op_ids(&env, &repo);
    assert_eq!(after[after.len() - ops.len()..], ops[..]);
    let undo = undo_of(&out);
    env.cmd("sh", &repo).args(["-c", &undo]).run().assert_ok();
    assert_eq!(shape(&env, &repo), before);
    assert_eq!(
        fs::read_to_string(repo.join("a.txt")).unwrap(),
        "from main\n"
    );
}

#[test]
fn onto_lands_on_top_of_a_given_revision_and_the_workspace_follows() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    main_commits(&env, &repo, "sub/b.txt", "from main\n");
    env.jj_ok(&repo, ["bookmark", "create", "side", "-r", "@-"]);
    let out = env.aw(&repo, ["land", "w1", "--onto", "side"]);
    out.assert_ok();
    let desc = |rev: &str| subjects(&env, &repo, rev);
    assert_eq!(desc("w1@-"), "work");
    assert_eq!(desc("w1@--"), "main edit");
    // The main working copy was not the target: untouched.
    assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), "hello\n");
    let land = &env.metadata(&env.ws_path(&repo, "w1"))["land"];
    assert_eq!(land["target"], env.commit_id(&repo, "side").as_str());
    // Again: the commits already sit there, and nothing changes.
    let graph_now = crate::land_support::graph(&env, &repo);
    env.aw(&repo, ["land", "w1", "--onto", "side"]).assert_ok();
    assert_eq!(crate::land_support::graph(&env, &repo), graph_now);
}
