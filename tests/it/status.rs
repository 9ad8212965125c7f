//! `status`: the table, one workspace's view, `--json`, and how broken workspaces show.

use std::fs;

use serde_json::Value;

use crate::backends::Backend;
use crate::harness::{wait_for_file, TestEnv};
use crate::hostile_records::write_record;

fn the_table_lists_every_workspace_of_the_repository(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    insta::assert_snapshot!(env.aw(&repo, ["status"]), @r"
    WORKSPACE  STATUS  WORKFLOW  CHANGES  UNLANDED  UPDATED
    [exit 0]
    ");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    env.aw(
        &repo,
        [
            "run",
            "w2",
            "--workflow",
            "review",
            "--",
            "sh",
            "-c",
            "exit 3",
        ],
    )
    .assert_code(3);
    env.aw(&repo, ["run", "gone", "--cleanup", "--", "true"])
        .assert_ok();
    insta::assert_snapshot!(env.aw(&repo, ["status"]), @r"
    WORKSPACE  STATUS  WORKFLOW  CHANGES  UNLANDED  UPDATED
    w1         done    -         clean    0         [AGO]
    w2         error   review    clean    0         [AGO]
    [exit 0]
    ");
    // `--paths` adds each workspace's directory.
    insta::assert_snapshot!(env.aw(&repo, ["status", "--paths"]), @r"
    WORKSPACE  STATUS  WORKFLOW  CHANGES  UNLANDED  UPDATED  PATH
    w1         done    -         clean    0         [AGO]  [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1
    w2         error   review    clean    0         [AGO]  [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w2
    [exit 0]
    ");
}

fn status_of_one_workspace_shows_its_record_and_runs(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(
        &repo,
        [
            "run",
            "w1",
            "--workflow",
            "build",
            "--",
            "sh",
            "-c",
            "exit 2",
        ],
    )
    .assert_code(2);
    env.aw(&repo, ["run", "w1", "--", "echo", "it's done"])
        .assert_ok();
    let out = env.aw(&repo, ["status", "w1"]);
    match backend {
        Backend::Jj => insta::assert_snapshot!(out, @r"
        workspace     w1
        status        done
        path          [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1
        workflow      build
        backend       jj
        repo          [TMP]/repo
        base          -
        command       echo 'it'\''s done'
        exit code     0
        created       [TIME]
        updated       [TIME]
        direnv        allowed
        sandbox       no
        commits       0
        files         0 changed, +0 -0
        last activity [TIME]

        RUNS
        STARTED               STATUS  EXIT  DURATION  WORKFLOW  COMMAND
        [TIME]  done    0     [DUR]      build     echo 'it'\''s done'
        [TIME]  error   2     [DUR]      build     sh -c 'exit 2'
        [exit 0]
        "),
        Backend::Git => insta::assert_snapshot!(out, @r"
        workspace     w1
        status        done
        path          [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1
        workflow      build
        backend       git
        branch        agent-workspace/w1
        repo          [TMP]/repo
        base          -
        command       echo 'it'\''s done'
        exit code     0
        created       [TIME]
        updated       [TIME]
        direnv        allowed
        sandbox       no
        commits       0
        files         0 changed, +0 -0
        last activity [TIME]

        RUNS
        STARTED               STATUS  EXIT  DURATION  WORKFLOW  COMMAND
        [TIME]  done    0     [DUR]      build     echo 'it'\''s done'
        [TIME]  error   2     [DUR]      build     sh -c 'exit 2'
        [exit 0]
        "),
    }
}

fn status_json_lists_every_workspace_with_its_record(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    env.aw(
        &repo,
        [
            "run",
            "w2",
            "--workflow",
            "review",
            "--",
            "sh",
            "-c",
            "exit 3",
        ],
    )
    .assert_code(3);
    let out = env.aw(&repo, ["status", "--json"]);
    out.assert_ok();
    let doc = out.json();
    // jj's `may_be_behind` depends on the second the run ended in (see live_look.rs).
    let shown = env
        .normalize_json(&doc)
        .replace("\"may_be_behind\": true", "\"may_be_behind\": false");
    insta::assert_snapshot!(
        backend.snapshot("status_json_lists_every_workspace_with_its_record"),
        shown
    );
    // `status <id> --json` prints that workspace's object alone, with what only the view of
    // one workspace measures.
    let one = env.aw(&repo, ["status", "w2", "--json"]);
    let mut one = one.json();
    let object = one.as_object_mut().unwrap();
    let changes = object.remove("changes").unwrap();
    assert_eq!(changes["files_count"], 0);
    assert_eq!(object.remove("schema_version"), Some(1.into()));
    assert!(object
        .remove("last_activity")
        .is_some_and(|t| t.is_string()));
    // The table reads the same changes (jj: as last snapshotted, where the view of one
    // workspace no run holds snapshots first).
    let mut listed = doc["workspaces"][1].clone();
    let listed_changes = listed.as_object_mut().unwrap().remove("changes").unwrap();
    assert_eq!(listed_changes["files_count"], changes["files_count"]);
    assert_eq!(listed_changes["unlanded_commits_count"], 0);
    assert_eq!(one, listed);
}

fn an_unknown_id_exits_1(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    insta::assert_snapshot!(env.aw(&repo, ["status", "nope"]), @r#"
    --- stderr ---
    Error: no workspace "nope" (looked for [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/nope)
    Hint: list workspaces with `agent-workspace status`; create one with `agent-workspace run`
    [exit 1]
    "#);
    // With --json the error is also a document on stdout (failure.schema.json).
    insta::assert_snapshot!(env.aw(&repo, ["status", "nope", "--json"]), @r#"
    {
      "schema_version": 1,
      "error": {
        "kind": "failure",
        "message": "no workspace \"nope\" (looked for [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/nope)",
        "causes": [],
        "hint": "list workspaces with `agent-workspace status`; create one with `agent-workspace run`"
      },
      "exit_code": 1
    }
    --- stderr ---
    Error: no workspace "nope" (looked for [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/nope)
    Hint: list workspaces with `agent-workspace status`; create one with `agent-workspace run`
    [exit 1]
    "#);
}

fn a_directory_deleted_by_hand_shows_as_missing_directory(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    env.aw(&repo, ["run", "w2", "--", "true"]).assert_ok();
    fs::remove_dir_all(env.ws_path(&repo, "w1")).unwrap();
    assert_eq!(backend.registered(&env, &repo), ["default", "w1", "w2"]);
    // The record agent-workspace keeps of the missing directory still gives its times.
    insta::assert_snapshot!(env.aw(&repo, ["status"]), @r"
    WORKSPACE  STATUS             WORKFLOW  CHANGES  UNLANDED  UPDATED
    w1         missing-directory  -         -        -         [AGO]
    w2         done               -         clean    0         [AGO]
    --- stderr ---
    w1: its directory was deleted; `agent-workspace run w1 -- ...` re-creates it with its edits, `agent-workspace clean w1` forgets it
    [exit 0]
    ");
    let json = env.aw(&repo, ["status", "w1", "--json"]);
    let entry = json.json();
    assert_eq!(entry["status"], "missing-directory");
    assert_eq!(entry["problem"], "missing-directory");
    // What agent-workspace still keeps of it: its record, in JSON and in the view.
    assert_eq!(entry["record"]["workspace_id"], "w1", "{entry:#}");
    let view = env.aw(&repo, ["status", "w1"]);
    assert!(
        view.stdout
            .contains("record        as agent-workspace keeps it (the directory is gone)"),
        "{}",
        view.report()
    );
    assert!(view.stdout.contains("\nRUNS\n"), "{}", view.report());
}

fn corrupt_metadata_is_reported_never_a_crash(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    write_record(&env, &repo, "w1", "{not json");
    insta::assert_snapshot!(env.aw(&repo, ["status"]), @r"
    WORKSPACE  STATUS            WORKFLOW  CHANGES  UNLANDED  UPDATED
    w1         corrupt-metadata  -         -        -         -
    --- stderr ---
    w1: its record is unreadable (key must be a string at line 1 column 2 in [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.state/w1.json); the next run keeps it aside and starts a new one
    [exit 0]
    ");
    insta::assert_snapshot!(env.aw(&repo, ["status", "w1"]), @r"
    workspace     w1
    status        corrupt-metadata
    path          [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1
    problem       corrupt-metadata
    --- stderr ---
    w1: its record is unreadable (key must be a string at line 1 column 2 in [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.state/w1.json); the next run keeps it aside and starts a new one
    [exit 0]
    ");
    let json = env.aw(&repo, ["status", "--json"]);
    let doc = json.json();
    let entry = &doc["workspaces"][0];
    assert_eq!(entry["status"], "corrupt-metadata", "{doc:#}");
    assert_eq!(entry["problem"], "corrupt-metadata", "{doc:#}");
    assert!(entry["hint"].as_str().is_some(), "{doc:#}");
}

fn the_run_after_a_corrupt_record_keeps_it_aside_and_starts_a_new_one(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    write_record(&env, &repo, "w1", "{not json");
    let rerun = env.aw(
        &repo,
        ["run", "w1", "--", "sh", "-c", "echo \"$AW_TEST_VAR\""],
    );
    assert_eq!(rerun.assert_ok().stdout, "from-envrc\n");
    assert!(
        rerun.stderr.contains("was unreadable"),
        "{}",
        rerun.report()
    );
    let kept: Vec<_> = fs::read_dir(&ws)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".agent-workflow.json.corrupt."))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(fs::read_to_string(ws.join(&kept[0])).unwrap(), "{not json");
    assert_eq!(env.metadata(&ws)["status"], "done");
}

fn the_run_after_a_deleted_record_adopts_the_workspace(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    fs::remove_file(ws.join(".agent-workflow.json")).unwrap();
    fs::remove_file(env.namespace_dir(&repo).join(".state/w1.json")).unwrap();
    let status = env.aw(&repo, ["status"]);
    assert!(
        status.stdout.contains("missing-metadata"),
        "{}",
        status.report()
    );
    let rerun = env.aw(
        &repo,
        ["run", "w1", "--", "sh", "-c", "echo \"$AW_TEST_VAR\""],
    );
    assert_eq!(rerun.assert_ok().stdout, "from-envrc\n");
    assert_eq!(env.metadata(&ws)["status"], "done");
}

fn the_run_after_a_corrupt_record_works_with_no_direnv(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    write_record(&env, &repo, "w1", "{not json");
    let rerun = env.aw(&repo, ["run", "w1", "--no-direnv", "--", "true"]);
    insta::assert_snapshot!(rerun, @r"
    --- stderr ---
    Warning: the record of [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1 was unreadable (key must be a string at line 1 column 2 in [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.state/w1.json); kept it as [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.state/w1.json.corrupt.[N] and [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/.agent-workflow.json.corrupt.[N] and started a new record
    [exit 0]
    ");
    assert_eq!(env.metadata(&ws)["status"], "done");
    assert_eq!(env.aw(&repo, ["status"]).stderr, "");
}

fn a_run_whose_supervisor_died_shows_as_crashed(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let started = env.path().join("started");
    let script = format!("touch '{}'; exec sleep 30", started.display());
    let run = env
        .aw_cmd(&repo)
        .args(["run", "w1", "--", "sh", "-c", &script])
        .spawn();
    wait_for_file(&started);
    let live = env.aw(&repo, ["status"]);
    assert!(
        live.stdout.contains("w1         running"),
        "{}",
        live.report()
    );
    // SIGKILL cannot be forwarded or recorded: the record still says running.
    run.signal("KILL");
    let killed = run.wait();
    assert_eq!(killed.code(), None, "{}", killed.report());
    crate::reliability_support::wait_until_released(&env, &repo, "w1");
    insta::assert_snapshot!(env.aw(&repo, ["status"]), @r"
    WORKSPACE  STATUS   WORKFLOW  CHANGES  UNLANDED  UPDATED
    w1         crashed  -         clean    0         [AGO]
    --- stderr ---
    w1: its run died; `agent-workspace run w1 -- ...` resumes it, `agent-workspace clean w1` removes it
    [exit 0]
    ");
    let json = env.aw(&repo, ["status", "w1", "--json"]);
    let entry = json.json();
    assert_eq!(entry["status"], "crashed", "{entry:#}");
    assert_eq!(entry["recorded_status"], "running", "{entry:#}");
    assert_eq!(entry["problem"], "crashed", "{entry:#}");
    // The workspace is usable again.
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    assert_eq!(env.metadata(&env.ws_path(&repo, "w1"))["status"], "done");
}

/// Runs `w1` under `root` (reached through a symlink or `..`), then checks that status and
/// clean still know it as a registered workspace and clean keeps its edits.
fn assert_root_alias_works(env: &TestEnv, backend: Backend, repo: &std::path::Path, root: &str) {
    let aw = |args: &[&str]| env.aw_cmd(repo).args(["--root", root]).args(args).run();
    aw(&["run", "w1", "--", "sh", "-c", "echo precious > p.txt"]).assert_ok();
    let out = aw(&["status", "--json"]);
    let doc = out.json();
    assert_eq!(doc["workspaces"][0]["status"], "done", "{doc:#}");
    assert_eq!(doc["workspaces"][0]["problem"], Value::Null, "{doc:#}");
    let clean = aw(&["clean", "w1"]);
    clean.assert_ok();
    let (keeper, _) = backend.kept(env, repo, "w1", &clean.stdout);
    assert_eq!(backend.kept_file(env, repo, &keeper, "p.txt"), "precious\n");
    assert_eq!(backend.registered(env, repo), ["default"]);
}

fn a_root_reached_through_a_symlink_still_knows_its_workspaces(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let real = env.path().join("real-root");
    fs::create_dir_all(&real).unwrap();
    let link = env.path().join("link-root");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert_root_alias_works(&env, backend, &repo, link.to_str().unwrap());
}

fn a_root_given_with_dot_dot_still_knows_its_workspaces(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    assert_root_alias_works(&env, backend, &repo, "../dot-dot-root");
}

fn clean_force_under_a_symlinked_root_keeps_unrecorded_edits(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let real = env.path().join("real-root");
    fs::create_dir_all(&real).unwrap();
    let link = env.path().join("link-root");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let root = link.to_str().unwrap();
    let aw = |args: &[&str]| env.aw_cmd(&repo).args(["--root", root]).args(args).run();
    aw(&["run", "w1", "--", "sh", "-c", "echo precious > p.txt"]).assert_ok();
    let clean = aw(&["clean", "--force", "w1"]);
    clean.assert_ok();
    let (keeper, _) = backend.kept(&env, &repo, "w1", &clean.stdout);
    assert_eq!(
        backend.kept_file(&env, &repo, &keeper, "p.txt"),
        "precious\n"
    );
    assert_eq!(backend.registered(&env, &repo), ["default"]);
}

/// "What needs me?": the changes of each workspace (files and lines, or clean), its commits
/// not yet landed, how long ago it was updated, every line within 80 columns however long
/// the ids; what the tool still knows of a workspace with a problem.
fn the_table_says_what_needs_you_within_80_columns(backend: Backend) {
    let env = TestEnv::new();
    // jj's snapshots taken below must be later than the runs' ends, by the real clock the
    // tool compares them with: a fixed jj clock would date them in 2001.
    env.use_real_time();
    let repo = backend.repo(&env);
    let long = "a-workspace-with-a-long-descriptive-id-for-review";
    let script = "printf 'a\\nb\\n' > two.txt; echo x > one.txt";
    env.aw(
        &repo,
        [
            "run",
            long,
            "--workflow",
            "review",
            "--",
            "sh",
            "-c",
            script,
        ],
    )
    .assert_ok();
    env.aw(&repo, ["run", "w2", "--", "sh", "-c", "echo y > y.txt"])
        .assert_ok();
    env.aw(&repo, ["run", "w3", "--", "sh", "-c", "echo z > z.txt"])
        .assert_ok();
    let ws = |id: &str| env.ws_path(&repo, id);
    crate::diff_support::commit_all(backend, &env, &ws("w3"), "z");
    if backend == Backend::Jj {
        // The table reads jj's last snapshot: the user's `jj status` takes one, in a second
        // after every run ended (one in the same second may be behind: `*`).
        let ended = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        while std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            == ended
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        env.jj_ok(&ws(long), ["status"]);
        env.jj_ok(&ws("w3"), ["status"]);
    }
    env.aw(&repo, ["land", "w2"]).assert_ok();
    let out = env.aw(&repo, ["status"]);
    out.assert_ok();
    for line in out.stdout.lines() {
        assert!(
            line.chars().count() <= 80,
            "{line:?} is wider than 80 columns"
        );
    }
    // jj's `*` (its snapshot is not newer than the run's end) depends on the second each
    // happened in; live_look.rs tests it.
    let table = env.normalize(&out.stdout).replace("*  ", "   ");
    insta::assert_snapshot!(table, @r"
    WORKSPACE  STATUS  WORKFLOW  CHANGES        UNLANDED  UPDATED
    a-workspace-with-a-long-descriptive-id-for-review
               done    review    2 files +3 -0  0         [AGO]
    w2         landed  -         1 file +1 -0   0         [AGO]
    w3         done    -         1 file +1 -0   1         [AGO]
    ");
    let json = env.aw(&repo, ["status", "--json"]).json();
    let changes = &json["workspaces"][2]["changes"];
    assert_eq!(changes["files_count"], 1, "{json:#}");
    assert_eq!(changes["unlanded_commits_count"], 1, "{json:#}");
    assert_eq!(changes["commits"][0]["description"], "z", "{json:#}");
    let landed = env.aw(&repo, ["status", "w2"]);
    assert!(
        landed.stdout.contains("\ncommits       1, all landed\n"),
        "{}",
        landed.report()
    );
    // `--paths` may run past 80 columns with its paths, never with the other columns.
    let paths = env.aw(&repo, ["status", "--paths"]);
    assert!(paths
        .assert_ok()
        .stdout
        .contains(&ws("w3").display().to_string()));
    if backend == Backend::Jj {
        // A workspace jj no longer knows still shows its workflow, from its record.
        env.jj_ok(&repo, ["workspace", "forget", long]);
        let out = env.aw(&repo, ["status"]);
        let table = env.normalize(&out.stdout).replace("clean*", "clean ");
        assert!(
            table.contains(&format!("{long}\n           unregistered  review ")),
            "{table}"
        );
    }
}

crate::both_backends!(
    the_table_says_what_needs_you_within_80_columns,
    the_table_lists_every_workspace_of_the_repository,
    status_of_one_workspace_shows_its_record_and_runs,
    status_json_lists_every_workspace_with_its_record,
    an_unknown_id_exits_1,
    a_directory_deleted_by_hand_shows_as_missing_directory,
    corrupt_metadata_is_reported_never_a_crash,
    the_run_after_a_corrupt_record_keeps_it_aside_and_starts_a_new_one,
    the_run_after_a_deleted_record_adopts_the_workspace,
    the_run_after_a_corrupt_record_works_with_no_direnv,
    a_run_whose_supervisor_died_shows_as_crashed,
    a_root_reached_through_a_symlink_still_knows_its_workspaces,
    a_root_given_with_dot_dot_still_knows_its_workspaces,
    clean_force_under_a_symlinked_root_keeps_unrecorded_edits,
);
