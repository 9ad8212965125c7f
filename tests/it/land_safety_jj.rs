//! `land` on jj that cannot corrupt: a conflict changes nothing unless allowed, `--prefer`
//! takes a side in the conflicting hunks only, the printed undo reverts the land alone, a
//! child lands only its own commits, other workspaces are never moved, the main working
//! copy's own conflicts are refused (its edits to a file the workspace renamed: `land.rs`),
//! the dry run says what the land does, and an allowed conflicted land is recorded and
//! undone.

use std::fs;
use std::path::{Path, PathBuf};

use crate::harness::TestEnv;
use crate::land_support::{
    graph, main_commits, main_commits_a, op_ids, repo_with_work, shape, snapshot, subjects, undo_of,
};

fn read(path: PathBuf) -> String {
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The JSON document of an outcome, whatever its exit code.
fn json(out: &crate::harness::Outcome) -> serde_json::Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.report()))
}

/// No file under `dir` (outside `.jj`) holds a conflict marker.
fn assert_no_markers(dir: &Path) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().is_some_and(|n| n == ".jj" || n == ".git") {
            continue;
        }
        if path.is_dir() {
            assert_no_markers(&path);
        } else if let Ok(text) = fs::read_to_string(&path) {
            assert!(
                !text.contains("<<<<<<<") && !text.contains(">>>>>>>"),
                "{}: {text}",
                path.display()
            );
        }
    }
}

#[test]
fn a_conflict_changes_nothing_unless_allowed() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    main_commits_a(&env, &repo, "from main\n");
    let ws = env.ws_path(&repo, "w1");
    // Unrecorded edits in the workspace too: recording them is part of what is put back.
    fs::write(ws.join("more.txt"), "more\n").unwrap();
    snapshot(&env, &repo);
    let before = graph(&env, &repo);
    let out = env.aw(&repo, ["land", "w1", "--json"]);
    out.assert_code(1);
    let doc = json(&out);
    assert_eq!(doc["outcome"], "conflicted", "{doc:#}");
    assert_eq!(doc["applied"], false, "{doc:#}");
    assert_eq!(doc["recorded_edits"], false, "{doc:#}");
    assert_eq!(doc["undo"], serde_json::Value::Null, "{doc:#}");
    assert_eq!(doc["conflicts"][0]["path"], "a.txt", "{doc:#}");
    // The conflict is named by the commit as it is (the trial's copy is gone).
    let work = env.commit_id(&repo, "description(exact:\"work\\n\")");
    assert_eq!(doc["conflicts"][0]["commit_id"], work.as_str(), "{doc:#}");
    // Every commit and both working copies as they were; nothing stale, no marker anywhere.
    assert_eq!(graph(&env, &repo), before);
    assert_eq!(read(repo.join("a.txt")), "from main\n");
    assert!(!repo.join("new.txt").exists());
    assert_eq!(read(ws.join("a.txt")), "from w1\n");
    assert_eq!(read(ws.join("more.txt")), "more\n");
    env.jj_ok(&repo, ["status"]);
    env.jj_ok(&ws, ["status"]);
    assert_eq!(graph(&env, &repo), before);
    assert_no_markers(&repo);
    assert_no_markers(&ws);
    // The text says so and exits 1 with a hint naming both ways on.
    let text = env.aw(&repo, ["land", "w1"]);
    insta::assert_snapshot!(text, @r"
    Did not land 2 commits of w1 onto default@
      [SHORT] work
      [SHORT] 
    3 files changed
    Conflict in a.txt ([SHORT])
    Conflict in a.txt ([SHORT])
    --- stderr ---
    Error: landing workspace w1 onto default@ conflicts in 1 file; nothing was changed
    Hint: retry with `agent-workspace land w1 --prefer workspace|target` (taking that side in the conflicting hunks), or with --allow-conflicts to land them as jj conflicts to resolve
    [exit 1]
    ");
    assert_eq!(graph(&env, &repo), before);
    // --allow-conflicts lands them as jj conflicts, and says how to revert exactly that.
    let allowed = env.aw(&repo, ["land", "w1", "--allow-conflicts", "--json"]);
    allowed.assert_code(1);
    let doc = json(&allowed);
    assert_eq!(doc["applied"], true, "{doc:#}");
    assert_eq!(doc["recorded_edits"], true, "{doc:#}");
    assert_eq!(
        subjects(
            &env,
            &repo,
            "conflicts() & ::@- & description(exact:\"work\\n\")"
        ),
        "work"
    );
    assert!(read(repo.join("a.txt")).contains("<<<<<<<"));
    assert_eq!(read(repo.join("more.txt")), "more\n");
    let undo = doc["undo"].as_str().unwrap().to_string();
    assert!(undo.contains(" && jj rebase -r "), "{undo}");
    assert!(!undo.contains("jj op "), "{undo}");
    env.cmd("sh", &repo).args(["-c", &undo]).run().assert_ok();
    assert_eq!(read(repo.join("a.txt")), "from main\n");
    assert!(!repo.join("more.txt").exists());
}

/// A repo whose `a.txt` has five lines; workspace `w1` changed lines 1 and 5 (committed),
/// the main workspace lines 1 and 3 (committed): line 1 conflicts, the others do not.
fn hunks(env: &TestEnv) -> PathBuf {
    let repo = env.jj_repo("repo");
    fs::write(repo.join("a.txt"), "1\n2\n3\n4\n5\n").unwrap();
    env.jj_ok(&repo, ["commit", "-m", "five lines"]);
    let script = "printf 'w1\\n2\\n3\\n4\\nw5\\n' > a.txt && jj commit -m work";
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", script])
        .assert_ok();
    main_commits_a(env, &repo, "m1\n2\nm3\n4\n5\n");
    snapshot(env, &repo);
    repo
}

fn prefer_takes_a_side_in_the_conflicting_hunks_only(side: &str, expected: &str) {
    let env = TestEnv::new();
    let repo = hunks(&env);
    let out = env.aw(&repo, ["land", "w1", "--prefer", side, "--json"]);
    out.assert_ok();
    let doc = out.json();
    assert_eq!(doc["outcome"], "landed", "{doc:#}");
    assert_eq!(
        doc["resolved"],
        serde_json::json!([{"path": "a.txt", "side": side}])
    );
    assert_eq!(read(repo.join("a.txt")), expected);
    assert_eq!(
        env.jj_ok(
            &repo,
            ["log", "--no-graph", "-r", "conflicts()", "-T", "commit_id"]
        ),
        ""
    );
    // What landed is what the landed commit changes now.
    assert_eq!(doc["paths"], serde_json::json!(["a.txt"]), "{doc:#}");
    // The printed undo reverts the rebase and the resolution together.
    let undo = doc["undo"].as_str().unwrap().to_string();
    env.cmd("sh", &repo).args(["-c", &undo]).run().assert_ok();
    assert_eq!(read(repo.join("a.txt")), "m1\n2\nm3\n4\n5\n");
}

#[test]
fn prefer_workspace_keeps_the_target_s_other_hunks() {
    prefer_takes_a_side_in_the_conflicting_hunks_only("workspace", "w1\n2\nm3\n4\nw5\n");
}

#[test]
fn prefer_target_keeps_the_workspace_s_other_hunks() {
    prefer_takes_a_side_in_the_conflicting_hunks_only("target", "m1\n2\nm3\n4\nw5\n");
}

#[test]
fn the_printed_undo_reverts_the_land_and_keeps_later_work() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    let out = env.aw(&repo, ["land", "w1"]);
    out.assert_ok();
    let undo = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("Undo: "))
        .unwrap_or_else(|| panic!("{}", out.report()))
        .to_string();
    assert!(!undo.contains("jj op "), "{undo}");
    // The user goes on in main: a commit of their own after the land.
    fs::write(repo.join("later.txt"), "later\n").unwrap();
    env.jj_ok(&repo, ["commit", "-m", "later"]);
    env.cmd("sh", &repo).args(["-c", &undo]).run().assert_ok();
    env.jj_ok(&repo, ["status"]);
    // The user's commit and file stay; the land's change is gone from main.
    assert_eq!(read(repo.join("later.txt")), "later\n");
    assert_eq!(
        subjects(&env, &repo, "::@ & description(exact:\"later\\n\")"),
        "later"
    );
    assert_eq!(read(repo.join("a.txt")), "hello\n");
    assert!(!repo.join("new.txt").exists());
    assert_eq!(
        subjects(&env, &repo, "::@ & description(exact:\"work\\n\")"),
        ""
    );
}

#[test]
fn a_child_lands_only_its_own_commits() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["run", "p", "--", "sh", "-c", "echo p > p.txt"])
        .assert_ok();
    let child = [
        "run",
        "c",
        "--parent",
        "p",
        "--",
        "sh",
        "-c",
        "echo c > c.txt",
    ];
    env.aw(&repo, child).assert_ok();
    // The parent edits the file its child's copy holds, after the child started.
    env.aw(&repo, ["run", "p", "--", "sh", "-c", "echo p2 > p.txt"])
        .assert_ok();
    let out = env.aw(&repo, ["land", "c", "--json"]);
    out.assert_ok();
    let doc = out.json();
    assert_eq!(doc["outcome"], "landed", "{doc:#}");
    assert_eq!(doc["paths"], serde_json::json!(["c.txt"]), "{doc:#}");
    let parent = env.ws_path(&repo, "p");
    assert_eq!(read(parent.join("p.txt")), "p2\n");
    assert_eq!(read(parent.join("c.txt")), "c\n");
    assert_no_markers(&parent);
    // The landed commit has one parent, not the copy of the parent's state.
    let parents = env.jj_ok(
        &parent,
        ["log", "--no-graph", "-r", "@-", "-T", r#"parents.len()"#],
    );
    assert_eq!(parents, "1");
    assert_eq!(
        env.jj_ok(
            &repo,
            ["log", "--no-graph", "-r", "conflicts()", "-T", "commit_id"]
        ),
        ""
    );
    // The child goes on above its landed commit.
    let c = env.ws_path(&repo, "c");
    env.jj_ok(&c, ["status"]);
    assert_eq!(read(c.join("c.txt")), "c\n");
    assert_no_markers(&c);
}

#[test]
fn a_land_never_moves_another_workspace() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", "echo w > w.txt"])
        .assert_ok();
    let cp = env.aw(&repo, ["checkpoint", "w1", "--json"]);
    cp.assert_ok();
    let commit = cp.json()["commit_id"].as_str().unwrap().to_string();
    let other = [
        "run",
        "o",
        "--base-change",
        &commit,
        "--",
        "sh",
        "-c",
        "echo o > o.txt",
    ];
    env.aw(&repo, other).assert_ok();
    // Another one on w1's working-copy commit itself, which the land puts on top.
    let wc = env.commit_id(&repo, "w1@");
    let on_wc = [
        "run",
        "o2",
        "--base-change",
        &wc,
        "--",
        "sh",
        "-c",
        "echo o2 > o2.txt",
    ];
    env.aw(&repo, on_wc).assert_ok();
    snapshot(&env, &repo);
    let o = env.ws_path(&repo, "o");
    env.jj_ok(&o, ["status"]);
    let before = graph(&env, &repo);
    let out = env.aw(&repo, ["land", "w1"]);
    insta::assert_snapshot!(out, @r#"
    --- stderr ---
    Error: landing workspace "w1" would move the commits of workspaces o, o2 built on its commits; nothing was landed
    Hint: land o, o2 first, or clean them (`agent-workspace clean o` keeps its edits), then land this one
    [exit 1]
    "#);
    assert_eq!(graph(&env, &repo), before);
    assert!(!repo.join("w.txt").exists());
    // Once the other workspaces are cleaned, the land goes through.
    env.aw(&repo, ["clean", "o"]).assert_ok();
    env.aw(&repo, ["clean", "o2"]).assert_ok();
    env.aw(&repo, ["land", "w1"]).assert_ok();
    assert_eq!(read(repo.join("w.txt")), "w\n");
}

#[test]
fn a_conflicted_main_working_copy_is_refused_naming_its_conflicts() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", "echo w > w.txt"])
        .assert_ok();
    // The main working copy is a merge of two sides that changed a.txt differently.
    for side in ["left", "right"] {
        env.jj_ok(
            &repo,
            ["new", "description(exact:\"initial\\n\")", "-m", side],
        );
        fs::write(repo.join("a.txt"), format!("{side}\n")).unwrap();
    }
    env.jj_ok(
        &repo,
        [
            "new",
            "description(exact:\"left\\n\")",
            "description(exact:\"right\\n\")",
        ],
    );
    snapshot(&env, &repo);
    let before = graph(&env, &repo);
    let out = env.aw(&repo, ["land", "w1"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: the working copy at [TMP]/repo has unresolved conflicts in a.txt; nothing was landed
    Hint: resolve them there first (`jj resolve`, or edit the files and let jj snapshot them), then land again
    [exit 1]
    ");
    assert_eq!(graph(&env, &repo), before);
    assert!(!repo.join("w.txt").exists());
}

#[test]
fn allow_conflicts_is_a_usage_error_on_git() {
    let env = TestEnv::new();
    let repo = crate::backends::Backend::Git.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", "echo w > w.txt"])
        .assert_ok();
    let out = env.aw(&repo, ["land", "w1", "--allow-conflicts"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: --allow-conflicts is for jj repositories: git never lands a conflicted merge
    Hint: drop it; `agent-workspace land w1 --prefer workspace|target` resolves conflicting hunks
    [exit 2]
    ");
}

/// A conflict `--prefer` cannot settle (the workspace's own merge of two of its commits that
/// changed the same line, which becomes more than two-sided once rebased) is reported, and
/// nothing changes.
#[test]
fn a_conflict_prefer_cannot_settle_is_reported_and_changes_nothing() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let script = concat!(
        "echo A > a.txt && jj commit -m A",
        " && jj new 'description(exact:\"initial\\n\")' -m B && echo B > a.txt",
        " && jj new 'description(exact:\"A\\n\")' 'description(exact:\"B\\n\")' -m M",
        " && jj new"
    );
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", script])
        .assert_ok();
    main_commits_a(&env, &repo, "from main\n");
    snapshot(&env, &repo);
    let before = graph(&env, &repo);
    let out = env.aw(&repo, ["land", "w1", "--prefer", "workspace", "--json"]);
    out.assert_code(1);
    let doc = json(&out);
    assert_eq!(doc["outcome"], "conflicted", "{doc:#}");
    assert_eq!(doc["applied"], false, "{doc:#}");
    let m = env.commit_id(&repo, "description(exact:\"M\\n\")");
    let conflicts = doc["conflicts"].as_array().unwrap();
    assert!(
        conflicts
            .iter()
            .any(|c| c["commit_id"] == m.as_str() && c["path"] == "a.txt"),
        "{doc:#}"
    );
    assert_eq!(graph(&env, &repo), before);
    assert_eq!(read(repo.join("a.txt")), "from main\n");
    assert_no_markers(&repo);
}

/// The undo of a `--prefer` land, after the user committed on top of it: the user's commit
/// stays, the land's changes go, and the workspace has its own side of every hunk back.
#[test]
fn the_undo_of_a_prefer_land_keeps_later_work_and_gives_the_workspace_its_side_back() {
    let env = TestEnv::new();
    let repo = hunks(&env);
    let out = env.aw(&repo, ["land", "w1", "--prefer", "target", "--json"]);
    out.assert_ok();
    let undo = json(&out)["undo"].as_str().unwrap().to_string();
    assert_eq!(read(repo.join("a.txt")), "m1\n2\nm3\n4\nw5\n");
    fs::write(repo.join("later.txt"), "later\n").unwrap();
    env.jj_ok(&repo, ["commit", "-m", "later"]);
    env.cmd("sh", &repo).args(["-c", &undo]).run().assert_ok();
    env.jj_ok(&repo, ["status"]);
    assert_eq!(read(repo.join("later.txt")), "later\n");
    assert_eq!(read(repo.join("a.txt")), "m1\n2\nm3\n4\n5\n");
    assert_eq!(
        env.jj_ok(
            &repo,
            ["log", "--no-graph", "-r", "conflicts()", "-T", "commit_id"]
        ),
        ""
    );
    let shown = [
        "--ignore-working-copy",
        "file",
        "show",
        "-r",
        "w1@-",
        "a.txt",
    ];
    assert_eq!(env.jj_ok(&repo, shown), "w1\n2\n3\n4\nw5\n");
}

/// No change is divergent and no commit is conflicted in the repository at `repo`.
fn assert_no_divergence_nor_conflict(env: &TestEnv, repo: &Path) {
    let divergent = ["log", "--no-graph", "-r", "divergent()", "-T", "change_id"];
    assert_eq!(env.jj_ok(repo, divergent), "", "{}", graph(env, repo));
    let conflicted = ["log", "--no-graph", "-r", "conflicts()", "-T", "change_id"];
    assert_eq!(env.jj_ok(repo, conflicted), "", "{}", graph(env, repo));
}

/// The undo of a `--prefer` land after the user edited a file the land resolved and
/// committed in main: only the landed commits go back, so the user's commit keeps its own
/// edit (not divergent, not conflicted), and the workspace gets its commits back exactly.
#[test]
fn the_undo_of_a_prefer_land_never_makes_the_user_s_later_commit_divergent() {
    let env = TestEnv::new();
    let repo = hunks(&env);
    let ws = env.ws_path(&repo, "w1");
    let work_tree = [
        "--ignore-working-copy",
        "file",
        "show",
        "-r",
        "w1@-",
        "a.txt",
    ];
    assert_eq!(env.jj_ok(&repo, work_tree), "w1\n2\n3\n4\nw5\n");
    let out = env.aw(&repo, ["land", "w1", "--prefer", "workspace", "--json"]);
    out.assert_ok();
    let undo = json(&out)["undo"].as_str().unwrap().to_string();
    assert_eq!(read(repo.join("a.txt")), "w1\n2\nm3\n4\nw5\n");
    // The user edits the resolved file (a line the land did not touch) and commits, twice.
    fs::write(repo.join("a.txt"), "w1\n2\nu3\n4\nw5\n").unwrap();
    fs::write(repo.join("later.txt"), "later\n").unwrap();
    env.jj_ok(&repo, ["commit", "-m", "later"]);
    fs::write(repo.join("later.txt"), "later\nagain\n").unwrap();
    env.jj_ok(&repo, ["commit", "-m", "again"]);
    let ran = env.cmd("sh", &repo).args(["-c", &undo]).run();
    ran.assert_ok();
    env.jj_ok(&repo, ["status"]);
    assert_no_divergence_nor_conflict(&env, &repo);
    // The user's lines stay, the land's lines go, in the working copy and in the commits.
    assert_eq!(read(repo.join("a.txt")), "m1\n2\nu3\n4\n5\n");
    assert_eq!(read(repo.join("later.txt")), "later\nagain\n");
    for subject in ["later", "again"] {
        let revset = format!("::@ & description(exact:\"{subject}\\n\")");
        assert_eq!(subjects(&env, &repo, &revset), subject);
    }
    assert_eq!(
        subjects(&env, &repo, "::@ & description(exact:\"work\\n\")"),
        ""
    );
    // The workspace's commit is back exactly as it was before the land.
    assert_eq!(env.jj_ok(&repo, work_tree), "w1\n2\n3\n4\nw5\n");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    assert_eq!(read(ws.join("a.txt")), "w1\n2\n3\n4\nw5\n");
    assert_no_markers(&ws);
    assert_no_markers(&repo);
}

/// The undo of an `--allow-conflicts` land after the user resolved its conflict in main and
/// committed: no change becomes divergent, the user's commit and every line of it stay, and
/// the workspace gets its commits back exactly. The user's resolution was of a conflict the
/// undo takes away: their commit is left conflicted, and jj says so.
#[test]
fn the_undo_of_an_allowed_conflict_resolved_on_top_makes_nothing_divergent() {
    let env = TestEnv::new();
    let repo = hunks(&env);
    let out = env.aw(&repo, ["land", "w1", "--allow-conflicts", "--json"]);
    out.assert_code(1);
    let undo = json(&out)["undo"].as_str().unwrap().to_string();
    assert!(read(repo.join("a.txt")).contains("<<<<<<<"));
    // The user resolves the conflict keeping both lines, and commits.
    fs::write(repo.join("a.txt"), "m1\nw1\n2\nm3\n4\nw5\n").unwrap();
    fs::write(repo.join("later.txt"), "later\n").unwrap();
    env.jj_ok(&repo, ["commit", "-m", "resolved"]);
    let ran = env.cmd("sh", &repo).args(["-c", &undo]).run();
    ran.assert_ok();
    assert!(
        ran.stderr
            .contains("unresolved conflicts at these paths:\na.txt"),
        "{}",
        ran.report()
    );
    let divergent = ["log", "--no-graph", "-r", "divergent()", "-T", "change_id"];
    assert_eq!(env.jj_ok(&repo, divergent), "", "{}", graph(&env, &repo));
    assert_eq!(read(repo.join("later.txt")), "later\n");
    let a = read(repo.join("a.txt"));
    assert!(a.contains("m1\n") && a.contains("m3\n"), "{a}");
    assert_eq!(
        subjects(&env, &repo, "::@ & description(exact:\"resolved\\n\")"),
        "resolved"
    );
    let work_tree = [
        "--ignore-working-copy",
        "file",
        "show",
        "-r",
        "w1@-",
        "a.txt",
    ];
    assert_eq!(env.jj_ok(&repo, work_tree), "w1\n2\n3\n4\nw5\n");
}

/// The undo refuses, changing nothing, when a landed commit was rewritten since the land:
/// putting its files back as they were before the land would drop that rewrite.
#[test]
fn the_undo_changes_nothing_once_a_landed_commit_was_rewritten() {
    let env = TestEnv::new();
    let repo = hunks(&env);
    let out = env.aw(&repo, ["land", "w1", "--prefer", "workspace", "--json"]);
    out.assert_ok();
    let undo = json(&out)["undo"].as_str().unwrap().to_string();
    // The user amends the landed commit itself.
    fs::write(repo.join("amend.txt"), "amended\n").unwrap();
    let squash = ["squash", "--into", "description(exact:\"work\\n\")"];
    env.jj_ok(&repo, squash);
    let before = graph(&env, &repo);
    let ran = env.cmd("sh", &repo).args(["-c", &undo]).run();
    ran.assert_code(1);
    assert!(
        ran.stderr.contains("fewer than the expected 1 revisions"),
        "{}",
        ran.report()
    );
    assert_eq!(graph(&env, &repo), before);
}

/// `--prefer` resolves each landed commit in turn, on the one before as resolved (as `git
/// rebase -X theirs` does): a line of the target's that conflicted with an earlier commit's
/// line is taken out with that hunk, even when a later commit deletes its own line again.
#[test]
fn prefer_resolves_each_landed_commit_in_turn() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    fs::write(repo.join("f.txt"), "x\n").unwrap();
    env.jj_ok(&repo, ["commit", "-m", "x"]);
    let script = "echo a1 >> f.txt && jj commit -m a1 && printf 'x\\n' > f.txt";
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", script])
        .assert_ok();
    main_commits(&env, &repo, "f.txt", "x\nu\n");
    snapshot(&env, &repo);
    let out = env.aw(&repo, ["land", "w1", "--prefer", "workspace", "--json"]);
    out.assert_ok();
    let doc = out.json();
    assert_eq!(
        doc["resolved"],
        serde_json::json!([{"path": "f.txt", "side": "workspace"}])
    );
    // The first commit took `u` out with its conflicting hunk; the second took `a1` out.
    assert_eq!(read(repo.join("f.txt")), "x\n");
}

/// A child lands into a parent whose working copy another workspace made stale while it held
/// an edit jj never recorded: the land brings the parent up to date first, carrying that
/// edit across, instead of failing to read the parent (or losing the edit).
#[test]
fn a_child_lands_into_a_stale_parent_whose_unrecorded_edit_is_kept() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["run", "p", "--", "sh", "-c", "echo p > p.txt"])
        .assert_ok();
    let child = [
        "run",
        "c",
        "--parent",
        "p",
        "--",
        "sh",
        "-c",
        "echo c > c.txt",
    ];
    env.aw(&repo, child).assert_ok();
    let parent = env.ws_path(&repo, "p");
    // An edit in the parent that no jj command recorded, then its working-copy commit
    // rewritten from the main workspace: the parent is stale.
    fs::write(parent.join("mine.txt"), "unrecorded\n").unwrap();
    main_commits(&env, &repo, "upstream.txt", "upstream\n");
    env.jj_ok(&repo, ["rebase", "-b", "p@", "-o", "@-"]);
    let out = env.aw(&repo, ["land", "c", "--json"]);
    out.assert_ok();
    assert_eq!(out.json()["outcome"], "landed", "{}", out.report());
    env.jj_ok(&parent, ["status"]);
    assert_eq!(read(parent.join("mine.txt")), "unrecorded\n");
    assert_eq!(read(parent.join("c.txt")), "c\n");
    assert_eq!(read(parent.join("p.txt")), "p\n");
    assert_eq!(read(parent.join("upstream.txt")), "upstream\n");
    let divergent = ["log", "--no-graph", "-r", "divergent()", "-T", "change_id"];
    assert_eq!(env.jj_ok(&repo, divergent), "", "{}", graph(&env, &repo));
}

/// The undo after the user rebased the workspace onto their later commit in main: that
/// commit is between the landed commits and the workspace's working copy now, yet it is
/// the user's and stays in main; only the landed commits and the workspace's own go back.
#[test]
fn the_undo_leaves_the_user_s_commit_in_main_when_the_workspace_was_rebased_onto_it() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    let out = env.aw(&repo, ["land", "w1", "--json"]);
    out.assert_ok();
    let undo = json(&out)["undo"].as_str().unwrap().to_string();
    fs::write(repo.join("later.txt"), "later\n").unwrap();
    env.jj_ok(&repo, ["commit", "-m", "later"]);
    env.jj_ok(&repo, ["rebase", "-b", "w1@", "-o", "@-"]);
    env.cmd("sh", &repo).args(["-c", &undo]).run().assert_ok();
    env.jj_ok(&repo, ["status"]);
    assert_no_divergence_nor_conflict(&env, &repo);
    assert_eq!(read(repo.join("later.txt")), "later\n");
    assert_eq!(
        subjects(&env, &repo, "::@ & description(exact:\"later\\n\")"),
        "later"
    );
    assert_eq!(read(repo.join("a.txt")), "hello\n");
    assert_eq!(
        subjects(&env, &repo, "::@ & description(exact:\"work\\n\")"),
        ""
    );
    assert_eq!(subjects(&env, &repo, "w1@-"), "work");
}

/// A conflicted file the agent renamed (it started from a main working copy with a
/// conflict): jj records the markers under the new name as ordinary text, no longer a
/// conflict, and jj's own list of conflicts does not name it. A land would write them into
/// the main working copy: the land reports that file as a conflict too (the dry run
/// alike), changes nothing unless allowed, and lists it when allowed (jj seed 3 step 218
/// of the model-based round).
#[test]
fn markers_a_rename_made_ordinary_text_are_reported_as_a_conflict() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    for side in ["left", "right"] {
        env.jj_ok(
            &repo,
            ["new", "description(exact:\"initial\\n\")", "-m", side],
        );
        fs::write(repo.join("a.txt"), format!("{side}\n")).unwrap();
    }
    env.jj_ok(
        &repo,
        [
            "new",
            "description(exact:\"left\\n\")",
            "description(exact:\"right\\n\")",
        ],
    );
    let script = "mv a.txt moved.txt && jj commit -m rename";
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", script])
        .assert_ok();
    assert!(read(env.ws_path(&repo, "w1").join("moved.txt")).contains("<<<<<<<"));
    // The user resolves main's conflict.
    fs::write(repo.join("a.txt"), "resolved\n").unwrap();
    env.jj_ok(&repo, ["commit", "-m", "resolve"]);
    snapshot(&env, &repo);
    let before = graph(&env, &repo);
    let files = |doc: &serde_json::Value| -> Vec<String> {
        let mut files: Vec<String> = doc["conflicts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["path"].as_str().unwrap().to_string())
            .collect();
        files.sort();
        files.dedup();
        files
    };
    let dry = env.aw(&repo, ["land", "w1", "--dry-run", "--json"]);
    let dry_doc = json(&dry);
    assert_eq!(files(&dry_doc), ["a.txt", "moved.txt"], "{dry_doc:#}");
    let out = env.aw(&repo, ["land", "w1", "--json"]);
    out.assert_code(1);
    let doc = json(&out);
    assert_eq!(doc["outcome"], "conflicted", "{doc:#}");
    assert_eq!(files(&doc), ["a.txt", "moved.txt"], "{doc:#}");
    assert_eq!(graph(&env, &repo), before);
    assert!(!repo.join("moved.txt").exists());
    let text = env.aw(&repo, ["land", "w1"]);
    text.assert_code(1);
    assert!(
        text.stdout.contains("\nConflict in moved.txt ("),
        "{}",
        text.report()
    );
    let allowed = env.aw(&repo, ["land", "w1", "--allow-conflicts", "--json"]);
    allowed.assert_code(1);
    let doc = json(&allowed);
    assert_eq!(doc["applied"], true, "{doc:#}");
    assert_eq!(files(&doc), ["a.txt", "moved.txt"], "{doc:#}");
    assert!(read(repo.join("moved.txt")).contains("<<<<<<<"));
}

/// The workspace's commits sit on a commit of main's that an undo left conflicted (the
/// user rebased them there), and main resolved that conflict only in a later commit. Landing
/// them, jj's rebase brings that commit's conflict terms back: the conflict `--prefer` would
/// settle is not between the workspace and the target, and taking "the workspace's side"
/// took out of main a line both had (jj seed 3 step 299 of the model-based round: main's
/// old lines dropped with exit 0). `--prefer` leaves a file the commit the workspace's
/// commits sit on holds conflicted alone: the land reports it and changes nothing.
#[test]
fn prefer_never_settles_a_conflict_of_the_commit_the_workspace_sits_on() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    fs::write(repo.join("s.txt"), "base1\nbase2\n").unwrap();
    env.jj_ok(&repo, ["commit", "-m", "base"]);
    let script = "echo b1 >> s.txt && jj commit -m bwork";
    env.aw(&repo, ["run", "b", "--", "sh", "-c", script])
        .assert_ok();
    main_commits(&env, &repo, "s.txt", "base1\nbase2\nold1\n");
    let landed = env.aw(&repo, ["land", "b", "--allow-conflicts", "--json"]);
    landed.assert_code(1);
    let undo = json(&landed)["undo"].as_str().unwrap().to_string();
    // The user resolves the land's conflict, commits on top, then undoes the land: the
    // resolution and the commit on it become conflicted.
    main_commits(&env, &repo, "s.txt", "base1\nbase2\nold1\nb1\n");
    main_commits(&env, &repo, "s.txt", "base1\nbase2\nold1\nb1\nu2\n");
    env.cmd("sh", &repo).args(["-c", &undo]).run().assert_ok();
    assert!(read(repo.join("s.txt")).contains("<<<<<<<"));
    // The user rebases the workspace onto main's conflicted commit, then resolves main's
    // conflict in a new commit and goes on.
    env.jj_ok(&repo, ["rebase", "-b", "b@", "-o", "@-"]);
    main_commits(&env, &repo, "s.txt", "base1\nbase2\nold1\nb1\nu2\n");
    main_commits(&env, &repo, "s.txt", "base1\nbase2\nold1\nb1\nu2\nu3\n");
    env.aw(&repo, ["run", "b", "--", "sh", "-c", "echo b2 >> s.txt"])
        .assert_ok();
    assert_eq!(
        read(env.ws_path(&repo, "b").join("s.txt")),
        "base1\nbase2\nold1\nb1\nu2\nb2\n"
    );
    snapshot_ws(&env, &repo, "b");
    let before = graph(&env, &repo);
    let out = env.aw(&repo, ["land", "b", "--prefer", "workspace", "--json"]);
    // `old1` is on both sides: no land may take it out.
    assert!(
        read(repo.join("s.txt")).contains("old1\n"),
        "{}\n{}",
        read(repo.join("s.txt")),
        out.report()
    );
    out.assert_code(1);
    let doc = json(&out);
    assert_eq!(doc["outcome"], "conflicted", "{doc:#}");
    assert_eq!(doc["conflicts"][0]["path"], "s.txt", "{doc:#}");
    assert_eq!(graph(&env, &repo), before);
    assert_eq!(read(repo.join("s.txt")), "base1\nbase2\nold1\nb1\nu2\nu3\n");
}

/// Lets jj snapshot the main working copy and workspace `id`'s.
fn snapshot_ws(env: &TestEnv, repo: &Path, id: &str) {
    env.jj_ok(repo, ["status"]);
    env.jj_ok(&env.ws_path(repo, id), ["status"]);
}

#[test]
fn an_allowed_conflicted_land_is_recorded_listed_exits_1_and_its_undo_reverts_it() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    main_commits_a(&env, &repo, "from main\n");
    snapshot(&env, &repo);
    let (ops, before) = (op_ids(&env, &repo), shape(&env, &repo));
    let out = env.aw(&repo, ["land", "w1", "--allow-conflicts"]);
    insta::assert_snapshot!(out, @r#"
    Landed with conflicts 1 commit of w1 onto default@
      [SHORT] work
    2 files changed
    Conflict in a.txt ([SHORT])
    Undo: jj log --no-graph -T '' -r 'exactly(([SHORT]) & ::visible_heads(), 1)' && jj rebase -r 'change_id([CHANGE]) | ((change_id([CHANGE]))::"w1"@ ~ ::present("default"@))' -o [SHORT] && jj restore --from [SHORT] --into 'change_id([CHANGE])'
    --- stderr ---
    Error: the land left 1 conflicted file in the landed commits
    Hint: resolve them in the target (`jj resolve`), or revert the land with `jj log --no-graph -T '' -r 'exactly(([SHORT]) & ::visible_heads(), 1)' && jj rebase -r 'change_id([CHANGE]) | ((change_id([CHANGE]))::"w1"@ ~ ::present("default"@))' -o [SHORT] && jj restore --from [SHORT] --into 'change_id([CHANGE])'` and retry with `agent-workspace land w1 --prefer workspace|target`
    [exit 1]
    "#);
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
