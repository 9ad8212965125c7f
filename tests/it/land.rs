//! `land` on jj: the workspace's commits rebased between the main working copy and its
//! parent in one operation that `jj undo` reverts; conflicts recorded and listed; `--prefer`,
//! `--dry-run`, `--onto`; a dirty main working copy refused. Both backends: status, bad input
//! and `clean --landed`.

use std::fs;
use std::path::Path;

use crate::backends::Backend;
use crate::harness::{wait_for_file, TestEnv};

/// The ids of the current operations, newest first.
pub fn op_ids(env: &TestEnv, repo: &Path) -> Vec<String> {
    let out = env.jj_ok(repo, ["op", "log", "--no-graph", "-T", r#"id ++ "\n""#]);
    out.lines().map(str::to_string).collect()
}

/// Every visible commit with its parents, description and working copies: the commit graph.
pub fn graph(env: &TestEnv, repo: &Path) -> String {
    let template = r#"commit_id ++ " <- " ++ parents.map(|p| p.commit_id()).join(",") ++ " " ++ description.first_line() ++ " " ++ working_copies ++ "\n""#;
    env.jj_ok(
        repo,
        [
            "--ignore-working-copy",
            "log",
            "--no-graph",
            "-r",
            "all()",
            "-T",
            template,
        ],
    )
}

/// A jj repo with workspace `w1` whose run committed `a.txt` = `text` and `new.txt` inside
/// it (`jj commit`), so the land itself records nothing; every working copy snapshotted.
/// The first lines of the descriptions of the commits `revset` names in `repo`.
fn subjects(env: &TestEnv, repo: &Path, revset: &str) -> String {
    env.jj_ok(
        repo,
        [
            "log",
            "--no-graph",
            "-r",
            revset,
            "-T",
            "description.first_line()",
        ],
    )
}

fn repo_with_work(env: &TestEnv, text: &str) -> std::path::PathBuf {
    let repo = env.jj_repo("repo");
    let script = format!("printf '{text}' > a.txt && echo new > new.txt && jj commit -m work");
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", &script])
        .assert_ok();
    snapshot(env, &repo);
    repo
}

/// Lets jj snapshot the main working copy and `w1`'s, so the next land adds only its own
/// operations.
fn snapshot(env: &TestEnv, repo: &Path) {
    env.jj_ok(repo, ["status"]);
    env.jj_ok(&env.ws_path(repo, "w1"), ["status"]);
}

/// Commits `a.txt` = `text` in the main working copy (the target's side of a conflict).
fn main_commits_a(env: &TestEnv, repo: &Path, text: &str) {
    main_commits(env, repo, "a.txt", text);
}

fn main_commits(env: &TestEnv, repo: &Path, file: &str, text: &str) {
    fs::write(repo.join(file), text).unwrap();
    env.jj_ok(repo, ["commit", "-m", "main edit"]);
}

#[test]
fn a_land_puts_the_work_below_the_main_working_copy_in_one_operation() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    fs::write(repo.join("mine.txt"), "main's own edit\n").unwrap();
    snapshot(&env, &repo);
    let (ops, before) = (op_ids(&env, &repo), graph(&env, &repo));
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
    // One operation, which `jj undo` reverts to the commit graph as it was.
    let after = op_ids(&env, &repo);
    assert_eq!(
        after.len(),
        ops.len() + 1,
        "{}",
        env.jj_ok(&repo, ["op", "log"])
    );
    assert_eq!(after[1..], ops[..]);
    env.jj_ok(&repo, ["undo"]);
    assert_eq!(graph(&env, &repo), before);
    assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), "hello\n");
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
    assert_eq!(doc["files"], serde_json::json!(["a.txt"]));
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
fn a_conflicted_land_is_recorded_listed_exits_1_and_jj_undo_reverts_it() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    main_commits_a(&env, &repo, "from main\n");
    snapshot(&env, &repo);
    let (ops, before) = (op_ids(&env, &repo), graph(&env, &repo));
    let out = env.aw(&repo, ["land", "w1"]);
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
    assert_eq!(record["land"]["conflicts"][0]["file"], "a.txt");
    let landed = record["land"]["commits"][0].as_str().unwrap();
    assert_eq!(record["land"]["conflicts"][0]["commit"], landed);
    let status = env.aw(&repo, ["status"]);
    assert!(
        status.stdout.contains("w1         conflicted"),
        "{}",
        status.report()
    );
    assert_eq!(op_ids(&env, &repo).len(), ops.len() + 1);
    env.jj_ok(&repo, ["undo"]);
    assert_eq!(graph(&env, &repo), before);
    assert_eq!(
        fs::read_to_string(repo.join("a.txt")).unwrap(),
        "from main\n"
    );
}

fn prefer(side: &str, expected: &str) {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    main_commits_a(&env, &repo, "from main\n");
    snapshot(&env, &repo);
    let before = graph(&env, &repo);
    let out = env.aw(&repo, ["land", "w1", "--prefer", side]);
    out.assert_ok();
    assert!(
        out.stdout
            .contains(&format!("Resolved a.txt by taking the {side} side\n")),
        "{}",
        out.report()
    );
    assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), expected);
    assert_eq!(
        env.jj_ok(
            &repo,
            ["log", "--no-graph", "-r", "conflicts()", "-T", "commit_id"]
        ),
        ""
    );
    let land = &env.metadata(&env.ws_path(&repo, "w1"))["land"];
    assert_eq!(land["outcome"], "landed");
    assert_eq!(
        land["resolved"],
        serde_json::json!([{"file": "a.txt", "side": side}])
    );
    // The rebase and each resolution are operations of their own: restoring the operation
    // before the land reverts them all.
    let op = land["operation_before"].as_str().unwrap().to_string();
    env.jj_ok(&repo, ["op", "restore", &op]);
    assert_eq!(graph(&env, &repo), before);
    assert_eq!(
        fs::read_to_string(repo.join("a.txt")).unwrap(),
        "from main\n"
    );
}

#[test]
fn prefer_workspace_takes_the_workspace_s_side() {
    prefer("workspace", "from w1\n");
}

#[test]
fn prefer_target_takes_the_target_s_side() {
    prefer("target", "from main\n");
}

#[test]
fn a_main_working_copy_with_edits_to_the_same_file_is_refused() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    fs::write(repo.join("a.txt"), "main's unfinished edit\n").unwrap();
    snapshot(&env, &repo);
    let (ops, before) = (op_ids(&env, &repo), graph(&env, &repo));
    let out = env.aw(&repo, ["land", "w1"]);
    out.assert_code(1);
    assert!(
        out.stderr
            .contains("has edits in files the land would change: a.txt; nothing was landed"),
        "{}",
        out.report()
    );
    assert!(out.stderr.contains("\nHint: "), "{}", out.report());
    assert_eq!(
        fs::read_to_string(repo.join("a.txt")).unwrap(),
        "main's unfinished edit\n"
    );
    assert_eq!(graph(&env, &repo), before);
    assert_eq!(op_ids(&env, &repo), ops);
    assert!(env
        .metadata(&env.ws_path(&repo, "w1"))
        .get("land")
        .is_none());
}

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
}

fn status_shows_landed(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", "echo x > x.txt"])
        .assert_ok();
    env.aw(&repo, ["land", "w1"]).assert_ok();
    let status = env.aw(&repo, ["status", "w1", "--json"]).json();
    assert_eq!(status["status"], "landed");
    assert_eq!(status["record"]["land"]["outcome"], "landed");
    let text = env.aw(&repo, ["status"]);
    assert!(
        text.stdout.contains("w1         landed"),
        "{}",
        text.report()
    );
    // A run after the land is newer: its status shows again.
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    assert_eq!(
        env.aw(&repo, ["status", "w1", "--json"]).json()["status"],
        "done"
    );
    assert_eq!(fs::read_to_string(repo.join("x.txt")).unwrap(), "x\n");
}

fn land_refuses_bad_input(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let unknown = env.aw(&repo, ["land", "nope"]);
    unknown.assert_code(1);
    assert!(
        unknown.stderr.starts_with("Error: no workspace \"nope\""),
        "{}",
        unknown.report()
    );
    assert!(unknown.stderr.contains("\nHint: "), "{}", unknown.report());
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", "echo x > x.txt"])
        .assert_ok();
    let onto = env.aw(&repo, ["land", "w1", "--onto", "no-such-rev"]);
    onto.assert_code(1);
    assert!(
        onto.stderr
            .starts_with("Error: cannot land onto \"no-such-rev\""),
        "{}",
        onto.report()
    );
    assert!(
        onto.stderr.contains("\nHint: pass --onto"),
        "{}",
        onto.report()
    );
    let bad_side = env.aw(&repo, ["land", "w1", "--prefer", "mine"]);
    bad_side.assert_code(2);
    assert!(!repo.join("x.txt").exists());
    assert!(env
        .metadata(&env.ws_path(&repo, "w1"))
        .get("land")
        .is_none());
}

fn land_refuses_a_live_run_unless_nested(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let started = env.path().join("started");
    let release = env.path().join("release");
    let script = format!(
        "echo x > x.txt; touch '{}'; while [ ! -e '{}' ]; do sleep 0.02; done; agent-workspace land w1 > landed.out",
        started.display(),
        release.display()
    );
    let run = env
        .aw_cmd(&repo)
        .args(["run", "w1", "--", "sh", "-c", &script])
        .spawn();
    wait_for_file(&started);
    let out = env.aw(&repo, ["land", "w1"]);
    fs::write(&release, "").unwrap();
    let ran = run.wait();
    ran.assert_ok();
    // The record the nested land saved is the run's own record's, not a changed view.
    assert!(
        !ran.stderr.contains("was changed during the run"),
        "{}",
        ran.report()
    );
    out.assert_code(1);
    assert!(
        out.stderr
            .starts_with("Error: workspace \"w1\" is busy: a run holds it (pid "),
        "{}",
        out.report()
    );
    assert!(out.stderr.contains("\nHint: "), "{}", out.report());
    // From inside the run, the land went through, and the run's end kept its record.
    let ws = env.ws_path(&repo, "w1");
    let said = fs::read_to_string(ws.join("landed.out")).unwrap();
    assert!(said.starts_with("Landed 1 commit of w1 onto "), "{said}");
    assert_eq!(fs::read_to_string(repo.join("x.txt")).unwrap(), "x\n");
    assert_eq!(env.metadata(&ws)["land"]["outcome"], "landed");
}

fn clean_landed_selects_only_fully_landed_workspaces(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    for id in ["w1", "w2", "w3"] {
        let script = format!("echo {id} > {id}.txt");
        env.aw(&repo, ["run", id, "--", "sh", "-c", &script])
            .assert_ok();
    }
    env.aw(&repo, ["land", "w1"]).assert_ok();
    env.aw(&repo, ["land", "w3"]).assert_ok();
    // w3 goes on working after its land: that work is in no target.
    fs::write(env.ws_path(&repo, "w3").join("later.txt"), "later\n").unwrap();
    let dry = env.aw(&repo, ["clean", "--landed", "--dry-run"]);
    dry.assert_ok();
    assert_eq!(
        env.normalize(&dry.stdout),
        "Would remove w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1)\n"
    );
    let none = env.aw(&repo, ["clean", "--landed", "--status", "error"]);
    none.assert_ok();
    assert_eq!(none.stdout, "");
    // `--status landed` goes by the status alone: w3 too.
    let by_status = env.aw(&repo, ["clean", "--status", "landed", "--dry-run"]);
    by_status.assert_ok();
    assert_eq!(
        by_status.stdout.lines().count(),
        2,
        "{}",
        by_status.report()
    );
    env.aw(&repo, ["clean", "--landed"]).assert_ok();
    assert!(!env.ws_path(&repo, "w1").exists());
    assert!(env.ws_path(&repo, "w2").exists());
    assert!(env.ws_path(&repo, "w3").join("later.txt").exists());
}

crate::both_backends!(
    a_child_lands_on_its_parent_by_default,
    status_shows_landed,
    land_refuses_bad_input,
    land_refuses_a_live_run_unless_nested,
    clean_landed_selects_only_fully_landed_workspaces,
);

#[test]
fn the_workspace_land_recipe_passes_the_id_and_flags() {
    let env = TestEnv::new();
    let repo = env.recipes_repo();
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", "echo x > x.txt"])
        .assert_ok();
    let recipe = |args: &[&str]| env.recipe(&repo, "workspace-land", args);
    let dry = recipe(&["w1", "--dry-run", "--json"]);
    assert_eq!(dry.json()["dry_run"], true);
    assert!(!repo.join("x.txt").exists());
    recipe(&["w1"]).assert_ok();
    assert_eq!(fs::read_to_string(repo.join("x.txt")).unwrap(), "x\n");
}

/// Gives workspace `id` the parent `parent` in its record (as a child made from it has).
fn set_parent(env: &TestEnv, repo: &Path, id: &str, parent: &str) {
    let mut record = env.metadata(&env.ws_path(repo, id));
    record["parent"] = parent.into();
    crate::hostile_records::write_record(
        env,
        repo,
        id,
        &serde_json::to_string_pretty(&record).unwrap(),
    );
}

fn a_child_lands_on_its_parent_by_default(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "p", "--", "sh", "-c", "echo p > p.txt"])
        .assert_ok();
    // The child starts from the parent's exact state, its unrecorded p.txt included.
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
    let out = env.aw(&repo, ["land", "c", "--json"]);
    let doc = out.json();
    let expected = match backend {
        Backend::Jj => "p@",
        Backend::Git => "agent-workspace/p",
    };
    assert_eq!(doc["target"], expected);
    // The parent's working copy has the child's work and keeps its own; the repository's
    // main working copy has neither.
    let parent = env.ws_path(&repo, "p");
    assert_eq!(fs::read_to_string(parent.join("c.txt")).unwrap(), "c\n");
    assert_eq!(fs::read_to_string(parent.join("p.txt")).unwrap(), "p\n");
    assert!(!repo.join("c.txt").exists());
    if backend == Backend::Git {
        let status = crate::backends::git_ok(&env, &parent, &["status", "--porcelain"]);
        assert_eq!(
            status, "",
            "the fork's copy of p.txt is now committed on p's branch"
        );
    }
    // A parent with a live run is not changed under it, unless the land is asked from inside
    // that run.
    let started = env.path().join("started");
    let release = env.path().join("release");
    let script = format!(
        "touch '{}'; while [ ! -e '{}' ]; do sleep 0.02; done; agent-workspace land c",
        started.display(),
        release.display()
    );
    let run = env
        .aw_cmd(&repo)
        .args(["run", "p", "--", "sh", "-c", &script])
        .spawn();
    wait_for_file(&started);
    fs::write(env.ws_path(&repo, "c").join("c2.txt"), "c2\n").unwrap();
    let busy = env.aw(&repo, ["land", "c"]);
    assert!(!parent.join("c2.txt").exists());
    fs::write(&release, "").unwrap();
    run.wait().assert_ok();
    busy.assert_code(1);
    assert!(
        busy.stderr
            .starts_with("Error: cannot land on the parent: workspace \"p\" is busy"),
        "{}",
        busy.report()
    );
    assert!(busy.stderr.contains("\nHint: "), "{}", busy.report());
    assert_eq!(fs::read_to_string(parent.join("c2.txt")).unwrap(), "c2\n");
    // A parent that is gone leaves no default: --onto is asked for.
    set_parent(&env, &repo, "c", "gone");
    let orphan = env.aw(&repo, ["land", "c"]);
    orphan.assert_code(1);
    assert!(
        orphan
            .stderr
            .starts_with("Error: the parent workspace \"gone\" is gone"),
        "{}",
        orphan.report()
    );
    assert!(
        orphan.stderr.contains("\nHint: pass --onto REV"),
        "{}",
        orphan.report()
    );
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
