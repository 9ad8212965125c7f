//! `clean`: keep a workspace's edits (in a change for jj, on its branch for git), forget it,
//! delete its directory; and never touch what is not a workspace.

use std::fs;

use crate::backends::{git_ok, Backend};
use crate::harness::{wait_for_file, TestEnv};

fn clean_keeps_unrecorded_edits(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    // Edited by hand after the run: no jj or git command has seen it yet.
    fs::write(ws.join("notes.txt"), "unrecorded\n").unwrap();
    fs::write(ws.join("a.txt"), "changed\n").unwrap();
    let out = env.aw(&repo, ["clean", "w1"]);
    // jj's change id is random (the tool's jj is not seeded: see harness::env::seed); the
    // commit git made is the same in every run (the harness fixes git's clock).
    match backend {
        Backend::Jj => {
            insta::assert_snapshot!(out, @r"
            Removed w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1); its edits are kept in change [CHANGE]
            [exit 0]
            ")
        }
        Backend::Git => insta::assert_snapshot!(out, @r"
        Removed w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1); its uncommitted changes were committed to branch agent-workspace/w1 ([SHORT])
        [exit 0]
        "),
    }
    assert!(!ws.exists(), "{}", env.listing());
    assert_eq!(backend.registered(&env, &repo), ["default"]);
    let (keeper, files) = backend.kept(&env, &repo, "w1", &out.stdout);
    assert_eq!(
        backend.kept_file(&env, &repo, &keeper, "notes.txt"),
        "unrecorded\n"
    );
    assert_eq!(
        backend.kept_file(&env, &repo, &keeper, "a.txt"),
        "changed\n"
    );
    assert_eq!(files, ".envrc\na.txt\nnotes.txt\nsub/b.txt\n");
    // What keeps the edits sits on top of the workspace's base, "initial".
    let parent = match backend {
        Backend::Jj => {
            assert_eq!(env.change_id(&repo, &keeper), keeper);
            let parent = format!("{keeper}-");
            env.jj_ok(
                &repo,
                ["log", "--no-graph", "-r", &parent, "-T", "description"],
            )
        }
        Backend::Git => {
            let subject = |rev: &str| git_ok(&env, &repo, &["log", "-1", "--format=%s", rev]);
            assert_eq!(
                subject(&keeper),
                "agent-workspace: uncommitted changes of workspace w1\n"
            );
            subject(&format!("{keeper}~"))
        }
    };
    assert_eq!(parent, "initial\n");
}

fn clean_of_a_workspace_without_edits_says_so(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let out = env.aw(&repo, ["clean", "w1"]);
    let said = out.to_string();
    match backend {
        Backend::Jj => {
            insta::assert_snapshot!(said, @r"
            Removed w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1); it had no edits to keep
            [exit 0]
            ")
        }
        // Nothing to commit: the branch, still at the base, is kept and reported.
        Backend::Git => {
            insta::assert_snapshot!(said, @r"
            Removed w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1); branch agent-workspace/w1 ([SHORT]) keeps its commits
            [exit 0]
            ");
            let tip = git_ok(&env, &repo, &["rev-parse", "agent-workspace/w1"]);
            assert_eq!(tip.trim(), backend.base_of(&env, &repo));
        }
    }
    assert!(!env.ws_path(&repo, "w1").exists());
    assert_eq!(backend.registered(&env, &repo), ["default"]);
    insta::assert_snapshot!(env.aw(&repo, ["status"]), @r"
    WORKSPACE  STATUS  WORKFLOW  CHANGES  UNLANDED  UPDATED
    [exit 0]
    ");
}

fn clean_removes_several_workspaces(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    env.aw(&repo, ["run", "w2", "--", "sh", "-c", "echo x > x.txt"])
        .assert_ok();
    env.aw(&repo, ["run", "w3", "--", "true"]).assert_ok();
    let out = env.aw(&repo, ["clean", "w1", "w2"]);
    let said = out.to_string();
    match backend {
        Backend::Jj => insta::assert_snapshot!(said, @r"
        Removed w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1); it had no edits to keep
        Removed w2 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w2); its edits are kept in change [CHANGE]
        [exit 0]
        "),
        Backend::Git => insta::assert_snapshot!(said, @r"
        Removed w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1); branch agent-workspace/w1 ([SHORT]) keeps its commits
        Removed w2 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w2); its uncommitted changes were committed to branch agent-workspace/w2 ([SHORT])
        [exit 0]
        "),
    }
    assert_eq!(backend.registered(&env, &repo), ["default", "w3"]);
}

fn clean_of_an_unknown_id_exits_1(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    insta::assert_snapshot!(env.aw(&repo, ["clean", "nope"]), @r#"
    --- stderr ---
    Error: no workspace "nope" (looked for [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/nope)
    Hint: list workspaces with `agent-workspace status`; create one with `agent-workspace run`
    [exit 1]
    "#);
    // A known id beside an unknown one is still removed; the exit code reports the failure.
    let out = env.aw(&repo, ["clean", "w1", "nope"]);
    let said = out.to_string();
    match backend {
        Backend::Jj => insta::assert_snapshot!(said, @r#"
        Removed w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1); it had no edits to keep
        --- stderr ---
        Error: no workspace "nope" (looked for [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/nope)
        Hint: list workspaces with `agent-workspace status`; create one with `agent-workspace run`
        [exit 1]
        "#),
        Backend::Git => insta::assert_snapshot!(said, @r#"
        Removed w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1); branch agent-workspace/w1 ([SHORT]) keeps its commits
        --- stderr ---
        Error: no workspace "nope" (looked for [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/nope)
        Hint: list workspaces with `agent-workspace status`; create one with `agent-workspace run`
        [exit 1]
        "#),
    }
    assert_eq!(backend.registered(&env, &repo), ["default"]);
}

fn clean_refuses_a_workspace_replaced_by_a_symlink_to_elsewhere(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let outside = env.path().join("precious");
    fs::create_dir_all(outside.join("dir")).unwrap();
    fs::write(outside.join("keep.txt"), "mine\n").unwrap();
    fs::write(outside.join("dir/also.txt"), "also mine\n").unwrap();
    fs::remove_dir_all(&ws).unwrap();
    std::os::unix::fs::symlink(&outside, &ws).unwrap();

    insta::assert_snapshot!(env.aw(&repo, ["clean", "w1"]), @r"
    --- stderr ---
    Skipped w1: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1 is a symlink or file, not a workspace; not touching it
    [exit 1]
    ");
    insta::assert_snapshot!(env.aw(&repo, ["run", "w1", "--", "touch", "ran"]), @r"
    --- stderr ---
    Error: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1 is a symlink or file, not a workspace directory; refusing to touch it
    Hint: remove it by hand once you know where it points
    [exit 125]
    ");
    assert_eq!(
        fs::read_to_string(outside.join("keep.txt")).unwrap(),
        "mine\n"
    );
    assert_eq!(
        fs::read_to_string(outside.join("dir/also.txt")).unwrap(),
        "also mine\n"
    );
    let mut names: Vec<_> = fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["dir", "keep.txt"]);
    assert!(fs::symlink_metadata(&ws).unwrap().file_type().is_symlink());
}

/// With and without edits in the deleted directory.
fn clean_forgets_a_workspace_whose_directory_was_deleted(backend: Backend) {
    for command in [&["true"][..], &["sh", "-c", "echo x > e.txt"]] {
        let env = TestEnv::new();
        let repo = backend.repo(&env);
        env.aw(&repo, ["run", "w1", "--"].iter().chain(command))
            .assert_ok();
        fs::remove_dir_all(env.ws_path(&repo, "w1")).unwrap();
        let out = env.aw(&repo, ["clean", "w1"]);
        out.assert_ok();
        assert_eq!(backend.registered(&env, &repo), ["default"]);
        let status = env.aw(&repo, ["status"]);
        assert_eq!(
            status.assert_ok().stdout,
            "WORKSPACE  STATUS  WORKFLOW  CHANGES  UNLANDED  UPDATED\n"
        );
    }
}

fn clean_refuses_a_workspace_with_a_live_run(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let started = env.path().join("started");
    let release = env.path().join("release");
    let script = format!(
        "touch '{}'; while [ ! -e '{}' ]; do sleep 0.02; done",
        started.display(),
        release.display()
    );
    let run = env
        .aw_cmd(&repo)
        .args(["run", "w1", "--", "sh", "-c", &script])
        .spawn();
    wait_for_file(&started);
    let out = env.aw(&repo, ["clean", "w1"]);
    fs::write(&release, "").unwrap();
    run.wait().assert_ok();
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Skipped w1: a run is live (pid [PID], since [TIME]); pass --force to stop it first
    [exit 1]
    ");
    assert!(env.ws_path(&repo, "w1").join("a.txt").is_file());
}

/// `clean --dry-run` says what the removal would keep aside, in text and in JSON, and
/// changes nothing.
fn a_dry_run_says_what_would_be_kept_aside(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    fs::write(ws.join(".gitignore"), ".env\n").unwrap();
    fs::write(ws.join(".env"), "secret\n").unwrap();
    let out = env.aw(&repo, ["clean", "w1", "--dry-run", "--json"]);
    out.assert_ok();
    let doc = out.json();
    crate::schemas::assert_valid("clean", &doc);
    let untracked = &doc["removed"][0]["untracked"];
    assert_eq!(untracked["kept_files_count"], 1, "{doc:#}");
    assert_eq!(untracked["kept_bytes"], 7, "{doc:#}");
    assert_eq!(untracked["kept_dir"], serde_json::Value::Null, "{doc:#}");
    let text = env.aw(&repo, ["clean", "w1", "--dry-run"]);
    insta::assert_snapshot!(text, @r"
    Would remove w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1); would keep aside 1 file (7 B) that no commit holds
    [exit 0]
    ");
    assert_eq!(fs::read_to_string(ws.join(".env")).unwrap(), "secret\n");
    assert!(!env.namespace_dir(&repo).join(".kept").exists());
}

/// A workspace's run logs (`<namespace>/.logs/<id>/`, the MCP server's copies of its runs'
/// output) go with it: a dry run says they would, the removal says it removed them (text and
/// JSON), and another workspace's logs stay.
fn clean_removes_the_workspace_run_logs(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    env.aw(&repo, ["run", "w2", "--", "true"]).assert_ok();
    let logs = env.namespace_dir(&repo).join(".logs");
    for (id, count) in [("w1", 2), ("w2", 1)] {
        fs::create_dir_all(logs.join(id)).unwrap();
        for n in 0..count {
            let name = format!("2000-01-01T000000Z.{n:09}.log");
            fs::write(logs.join(id).join(name), "output\n").unwrap();
        }
    }
    let dry = env.aw(&repo, ["clean", "w1", "--dry-run"]);
    insta::assert_snapshot!(dry, @r"
    Would remove w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1); would remove its 2 run logs ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.logs/w1)
    [exit 0]
    ");
    let doc = env.aw(&repo, ["clean", "w1", "--dry-run", "--json"]).json();
    crate::schemas::assert_valid("clean", &doc);
    assert_eq!(doc["removed"][0]["run_logs"]["files_count"], 2, "{doc:#}");
    assert!(logs.join("w1").is_dir());

    let out = env.aw(&repo, ["clean", "w1"]);
    match backend {
        Backend::Jj => insta::assert_snapshot!(out, @r"
        Removed w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1); it had no edits to keep; removed its 2 run logs ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.logs/w1)
        [exit 0]
        "),
        Backend::Git => insta::assert_snapshot!(out, @r"
        Removed w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1); branch agent-workspace/w1 ([SHORT]) keeps its commits; removed its 2 run logs ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.logs/w1)
        [exit 0]
        "),
    }
    assert!(!logs.join("w1").exists(), "{}", env.listing());
    assert!(logs.join("w2").is_dir());

    let doc = env.aw(&repo, ["clean", "w2", "--json"]).json();
    crate::schemas::assert_valid("clean", &doc);
    let run_logs = &doc["removed"][0]["run_logs"];
    assert_eq!(run_logs["files_count"], 1, "{doc:#}");
    assert_eq!(run_logs["left"], serde_json::Value::Null, "{doc:#}");
    assert_eq!(run_logs["path"], logs.join("w2").to_str().unwrap());
    assert!(!logs.join("w2").exists());
    // A workspace that never had logs says nothing of them.
    env.aw(&repo, ["run", "w3", "--", "true"]).assert_ok();
    let doc = env.aw(&repo, ["clean", "w3", "--json"]).json();
    assert_eq!(
        doc["removed"][0]["run_logs"],
        serde_json::Value::Null,
        "{doc:#}"
    );
}

crate::both_backends!(
    clean_removes_the_workspace_run_logs,
    a_dry_run_says_what_would_be_kept_aside,
    clean_keeps_unrecorded_edits,
    clean_of_a_workspace_without_edits_says_so,
    clean_removes_several_workspaces,
    clean_of_an_unknown_id_exits_1,
    clean_refuses_a_workspace_replaced_by_a_symlink_to_elsewhere,
    clean_forgets_a_workspace_whose_directory_was_deleted,
    clean_refuses_a_workspace_with_a_live_run,
);

/// clean asks jj only what it needs, in two processes: the snapshot that keeps the edits,
/// which also names the commits and files that keep them, and `forget`; which workspaces jj
/// knows is read from jj's own records, not from a `jj workspace list` (which reads every
/// workspace's root).
#[test]
fn jj_clean_asks_jj_no_workspace_list() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    fs::write(ws.join("notes.txt"), "unrecorded\n").unwrap();
    let bin = env.path().join("logging-jj");
    fs::create_dir_all(&bin).unwrap();
    let log = env.path().join("jj-calls.log");
    let real = crate::harness::which("jj").unwrap();
    fs::write(
        bin.join("jj"),
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.display()
        ),
    )
    .unwrap();
    fs::set_permissions(bin.join("jj"), fs::Permissions::from_mode(0o755)).unwrap();
    env.aw_cmd(&repo)
        .env("PATH", env.path_with_first(&bin))
        .args(["clean", "w1"])
        .run()
        .assert_ok();
    let asked = fs::read_to_string(&log).unwrap_or_default();
    assert!(!asked.contains(" workspace list "), "{asked}");
    // One line per call (a template's newline continues the line before).
    let calls = asked
        .lines()
        .filter(|l| l.starts_with("--no-pager"))
        .count();
    assert_eq!(calls, 2, "{asked}");
    assert!(!ws.exists(), "{}", env.listing());
    assert_eq!(Backend::Jj.registered(&env, &repo), ["default"]);
    // The unrecorded file is in the change clean kept.
    let kept = env.jj_ok(
        &repo,
        ["file", "list", "-r", "heads(all() ~ ::default@ ~ root())"],
    );
    assert!(kept.contains("notes.txt"), "{kept}");
}

/// jj: clean records the removed workspace's edits and nothing of any other workspace: the
/// forget leaves the main working copy unsnapshotted (a file new there is not recorded by
/// it), and the main working copy is not stale afterwards.
#[test]
fn jj_clean_snapshots_no_other_workspace() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    fs::write(ws.join("notes.txt"), "unrecorded\n").unwrap();
    let main_commit = || {
        env.jj_ok(
            &repo,
            [
                "--ignore-working-copy",
                "log",
                "--no-graph",
                "-r",
                "@",
                "-T",
                "commit_id",
            ],
        )
    };
    let before = main_commit();
    fs::write(repo.join("main-only.txt"), "the main working copy's\n").unwrap();
    env.aw(&repo, ["clean", "w1"]).assert_ok();
    let after = main_commit();
    assert_eq!(before, after, "clean rewrote the main working-copy commit");
    // The workspace's own edit is kept; the main workspace works on as before.
    let kept = env.jj_ok(
        &repo,
        ["file", "list", "-r", "heads(all() ~ ::default@ ~ root())"],
    );
    assert!(kept.contains("notes.txt"), "{kept}");
    let main = env.jj_ok(&repo, ["file", "list", "-r", "@"]);
    assert!(main.contains("main-only.txt"), "{main}");
    assert_eq!(Backend::Jj.registered(&env, &repo), ["default"]);
}
