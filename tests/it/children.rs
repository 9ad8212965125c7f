//! `run --parent`: a child workspace starts from its parent's exact state, unrecorded edits
//! included, and the parent stays as it was; depth limit, orphans and bad parents.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use crate::backends::{git_ok, Backend};
use crate::harness::TestEnv;
use crate::reliability_support::start_long_run;

/// Modifies a.txt and creates new.txt in a new workspace `id`, recording nothing; with git,
/// a.txt's change is also staged, so the parent's index holds something of its own.
fn parent_with_edits(backend: Backend, env: &TestEnv, repo: &Path, id: &str) {
    let mut script = "echo parent-edit >> a.txt; echo fresh > new.txt".to_string();
    if backend == Backend::Git {
        script += "; git add a.txt";
    }
    env.aw(repo, ["run", id, "--", "sh", "-c", &script])
        .assert_ok();
}

/// What the parent's state is made of, in terms its owner sees: jj's change id of its
/// working copy (a snapshot may give it a new commit id, never a new change); git's HEAD,
/// branch tip, staged diff, status and branches.
fn parent_state(backend: Backend, env: &TestEnv, repo: &Path, ws: &Path) -> Vec<String> {
    match backend {
        Backend::Jj => vec![env.change_id(repo, "p1@")],
        Backend::Git => [
            "rev-parse HEAD agent-workspace/p1",
            "diff --cached",
            "status --porcelain --untracked-files=all",
            "branch --list",
        ]
        .iter()
        .map(|args| git_ok(env, ws, &args.split(' ').collect::<Vec<_>>()))
        .collect(),
    }
}

/// The change ids of every visible commit (jj).
fn visible_changes(env: &TestEnv, repo: &Path) -> BTreeSet<String> {
    let out = env.jj_ok(
        repo,
        [
            "log",
            "--no-graph",
            "-r",
            "all()",
            "-T",
            "change_id ++ \"\\n\"",
        ],
    );
    out.lines().map(str::to_string).collect()
}

fn a_child_starts_from_its_parents_unrecorded_edits_and_the_parent_stays_as_it_was(
    backend: Backend,
) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    parent_with_edits(backend, &env, &repo, "p1");
    let ws = env.ws_path(&repo, "p1");
    let files_before = (
        fs::read_to_string(ws.join("a.txt")).unwrap(),
        fs::read_to_string(ws.join("new.txt")).unwrap(),
    );
    let before = parent_state(backend, &env, &repo, &ws);
    let changes_before = (backend == Backend::Jj).then(|| visible_changes(&env, &repo));

    let out = env.aw(
        &repo,
        [
            "run",
            "c1",
            "--parent",
            "p1",
            "--",
            "sh",
            "-c",
            "cat a.txt new.txt",
        ],
    );
    out.assert_ok();
    assert_eq!(
        out.stdout,
        "hello\nparent-edit\nfresh\n",
        "{}",
        out.report()
    );

    let mut after = parent_state(backend, &env, &repo, &ws);
    if backend == Backend::Git {
        // The child's branch is the one new branch.
        after[3] = after[3].replace("+ agent-workspace/c1\n", "");
    }
    assert_eq!(after, before);
    let files_after = (
        fs::read_to_string(ws.join("a.txt")).unwrap(),
        fs::read_to_string(ws.join("new.txt")).unwrap(),
    );
    assert_eq!(files_after, files_before);
    if let Some(mut expected) = changes_before {
        // The new commits are a copy of the parent's state and the child's working copy on
        // it; the copy holds the parent's files, and is not the parent's commit.
        expected.insert(env.change_id(&repo, "c1@"));
        expected.insert(env.change_id(&repo, "c1@-"));
        assert_eq!(visible_changes(&env, &repo), expected);
        assert_ne!(env.change_id(&repo, "c1@-"), env.change_id(&repo, "p1@"));
        let differ = env.jj_ok(
            &repo,
            ["diff", "--from", "p1@", "--to", "c1@-", "--summary"],
        );
        assert_eq!(differ, "");
        // The parent's change now holds its edits, as they are on disk.
        let show = |file: &str| env.jj_ok(&repo, ["file", "show", "-r", "p1@", file]);
        assert_eq!((show("root:a.txt"), show("root:new.txt")), files_before);
        assert_eq!(backend.changes(&env, &ws), "M a.txt\nA new.txt\n");
    } else {
        let scratch = env.namespace_dir(&repo).join(".locks/.fork-c1.index");
        assert!(!scratch.exists(), "{}", env.listing());
        let child_base = git_ok(&env, &repo, &["rev-parse", "agent-workspace/c1^"]);
        assert_eq!(
            child_base,
            git_ok(&env, &repo, &["rev-parse", "agent-workspace/p1"])
        );
    }
    let child = env.ws_path(&repo, "c1");
    assert_eq!(env.metadata(&child)["parent"], "p1");
    let json = env.aw(&repo, ["status", "c1", "--json"]).json();
    assert_eq!(json["parent"], "p1");
    assert_eq!(json["orphaned"], false);
    let table = env.aw(&repo, ["status"]);
    let lines: Vec<&str> = table.stdout.lines().collect();
    assert!(
        lines[0].starts_with("WORKSPACE  STATUS  PARENT  WORKFLOW"),
        "{}",
        table.report()
    );
    assert!(
        lines[1].starts_with("c1         done    p1      -"),
        "{}",
        table.report()
    );
    assert!(
        lines[2].starts_with("p1         done    -       -"),
        "{}",
        table.report()
    );
}

fn the_depth_limit_refuses_a_child_too_deep(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let run = |id: &str, parent: &str, limit: &str| {
        env.aw_cmd(&repo)
            .env("AGENT_WORKSPACE_MAX_DEPTH", limit)
            .args(["run", id, "--parent", parent, "--", "true"])
            .run()
    };
    env.aw(&repo, ["run", "p", "--", "true"]).assert_ok();
    run("c", "p", "1").assert_ok();
    let deep = run("g", "c", "1");
    insta::assert_snapshot!(deep, @r#"
    --- stderr ---
    Error: workspace "g" would be nested 2 deep under "c", more than the limit of 1
    Hint: start it from a workspace higher up, or raise the limit with AGENT_WORKSPACE_MAX_DEPTH
    [exit 125]
    "#);
    assert!(!env.ws_path(&repo, "g").exists());
    let mut registered = backend.registered(&env, &repo);
    registered.sort();
    assert_eq!(registered, ["c", "default", "p"]);
    let bad = run("g", "c", "deep");
    insta::assert_snapshot!(bad, @r#"
    --- stderr ---
    Error: AGENT_WORKSPACE_MAX_DEPTH is "deep", not a whole number
    Hint: set it to how deep children may nest (e.g. 10), or unset it
    [exit 2]
    "#);
    // Within the default limit (10).
    run("g", "c", "").assert_ok();
}

fn a_child_of_a_cleaned_parent_still_runs_and_shows_orphaned(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    parent_with_edits(backend, &env, &repo, "p1");
    env.aw(&repo, ["run", "c1", "--parent", "p1", "--", "true"])
        .assert_ok();
    env.aw(&repo, ["clean", "p1"]).assert_ok();
    let out = env.aw(&repo, ["run", "c1", "--", "cat", "new.txt"]);
    out.assert_ok();
    assert_eq!(out.stdout, "fresh\n");
    let json = env.aw(&repo, ["status", "c1", "--json"]).json();
    assert_eq!(json["parent"], "p1");
    assert_eq!(json["orphaned"], true);
    let table = env.aw(&repo, ["status"]);
    assert!(
        table
            .stdout
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("c1         done    p1 (orphaned)"),
        "{}",
        table.report()
    );
    let detail = env.aw(&repo, ["status", "c1"]);
    assert!(
        detail.stdout.contains("\nparent        p1 (orphaned)\n"),
        "{}",
        detail.report()
    );
}

fn bad_parents_are_refused_with_nothing_left_behind(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let unknown = env.aw(&repo, ["run", "c1", "--parent", "nope", "--", "true"]);
    unknown.assert_code(125);
    assert!(
        unknown
            .stderr
            .starts_with("Error: no workspace \"nope\" to start \"c1\" from"),
        "{}",
        unknown.report()
    );
    assert!(unknown.stderr.contains("\nHint: "), "{}", unknown.report());
    assert!(!env.ws_path(&repo, "c1").exists());
    assert!(!env.namespace_dir(&repo).join(".locks/c1.lock").exists());
    let itself = env.aw(&repo, ["run", "c1", "--parent", "c1", "--", "true"]);
    insta::assert_snapshot!(itself, @r#"
    --- stderr ---
    Error: workspace "c1" cannot be its own parent
    Hint: pass --parent the id of another, existing workspace
    [exit 2]
    "#);
    let both = env.aw(
        &repo,
        [
            "run",
            "c1",
            "--parent",
            "p1",
            "--base-change",
            "@",
            "--",
            "true",
        ],
    );
    both.assert_code(2);

    parent_with_edits(backend, &env, &repo, "p1");
    env.aw(&repo, ["run", "other", "--", "true"]).assert_ok();
    let existing = env.aw(&repo, ["run", "other", "--parent", "p1", "--", "true"]);
    insta::assert_snapshot!(existing, @r#"
    --- stderr ---
    Error: workspace "other" already exists; --parent only applies when it is created
    Hint: drop --parent to run in it, or pick a new id for the child
    [exit 2]
    "#);
    env.aw(&repo, ["run", "c1", "--parent", "p1", "--", "true"])
        .assert_ok();
    // The same parent again: a plain run in the existing child.
    env.aw(&repo, ["run", "c1", "--parent", "p1", "--", "true"])
        .assert_ok();

    // A parent held by a live run is busy, unless asked from inside that run.
    let running = start_long_run(&env, &repo, "p1", &[]);
    let busy = env.aw(&repo, ["run", "c2", "--parent", "p1", "--", "true"]);
    insta::assert_snapshot!(busy, @r#"
    --- stderr ---
    Error: workspace "p1" is busy: a run holds it (pid [PID], workflow -)
    Hint: wait for the run to end, or do this from inside that run (`run --checkpoint` checkpoints after every run)
    [exit 125]
    "#);
    assert!(!env.ws_path(&repo, "c2").exists());
    fs::write(env.path().join("p1.release"), "").unwrap();
    running.wait().assert_ok();
    let script = "echo inside > inside.txt; agent-workspace run c3 --parent p1 -- cat inside.txt";
    let nested = env.aw(&repo, ["run", "p1", "--", "sh", "-c", script]);
    nested.assert_ok();
    assert_eq!(nested.stdout, "inside\n", "{}", nested.report());
}

/// A child trusts only the `.envrc` its parent was trusted with: one the parent's agent
/// changed (and was never allowed) is not loaded in the child without `--trust-envrc`; one
/// the parent was allowed with is.
fn a_child_inherits_its_parents_envrc_trust_and_no_more(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let show = ["--", "sh", "-c", "echo \"var=$AW_TEST_VAR\""];
    let edit = "echo 'export AW_TEST_VAR=from-agent' > .envrc";
    env.aw(&repo, ["run", "p1", "--no-direnv", "--", "sh", "-c", edit])
        .assert_ok();
    let mut args = vec!["run", "c1", "--parent", "p1"];
    args.extend(show);
    let refused = env.aw(&repo, &args);
    refused.assert_code(125);
    assert!(
        refused
            .stderr
            .contains("differs from the .envrc of the workspace's base revision"),
        "{}",
        refused.report()
    );
    assert!(refused.stderr.contains("\nHint: "), "{}", refused.report());
    let mut args = vec!["run", "c1", "--trust-envrc"];
    args.extend(show);
    assert_eq!(env.aw(&repo, &args).assert_ok().stdout, "var=from-agent\n");

    // Allowed in the parent (--trust-envrc): the child trusts that same .envrc.
    let mut args = vec!["run", "p1", "--trust-envrc"];
    args.extend(show);
    env.aw(&repo, &args).assert_ok();
    let mut args = vec!["run", "c2", "--parent", "p1"];
    args.extend(show);
    let out = env.aw(&repo, &args);
    assert_eq!(
        out.assert_ok().stdout,
        "var=from-agent\n",
        "{}",
        out.report()
    );
    // An unchanged .envrc is trusted as the base's, as for any new workspace.
    env.aw(&repo, ["run", "p2", "--", "true"]).assert_ok();
    let mut args = vec!["run", "c3", "--parent", "p2"];
    args.extend(show);
    assert_eq!(env.aw(&repo, &args).assert_ok().stdout, "var=from-envrc\n");
}

crate::both_backends!(
    a_child_inherits_its_parents_envrc_trust_and_no_more,
    a_child_starts_from_its_parents_unrecorded_edits_and_the_parent_stays_as_it_was,
    the_depth_limit_refuses_a_child_too_deep,
    a_child_of_a_cleaned_parent_still_runs_and_shows_orphaned,
    bad_parents_are_refused_with_nothing_left_behind,
);

/// The parent's later edits never reach its child: the child started from a copy of the
/// parent's state, not on the parent's working-copy commit (which jj would rebase it onto).
#[test]
fn a_jj_parents_later_edits_stay_out_of_its_child() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    parent_with_edits(Backend::Jj, &env, &repo, "p1");
    env.aw(&repo, ["run", "c1", "--parent", "p1", "--", "true"])
        .assert_ok();
    let parent = env.ws_path(&repo, "p1");
    fs::write(parent.join("a.txt"), "later parent edit\n").unwrap();
    env.jj_ok(&parent, ["status"]);
    let out = env.aw(&repo, ["run", "c1", "--", "cat", "a.txt"]);
    out.assert_ok();
    assert_eq!(out.stdout, "hello\nparent-edit\n", "{}", out.report());
    // Nothing moved under the child: its working copy was not made stale, and it has
    // changed nothing (a child rebased onto the parent's new state would now "undo" it).
    assert!(!out.stderr.contains("stale"), "{}", out.report());
    let diff = env.aw(&repo, ["diff", "c1", "--json"]).json();
    assert_eq!(diff["files"], serde_json::json!([]), "{diff}");
}
