//! What `status <ID>` adds to the record (commits, changed files, last activity) and what
//! `--size` measures (allocated bytes, hard links once, symlinks never followed).

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::backends::{git_ok, Backend};
use crate::harness::TestEnv;

/// A workspace `w1` with one commit ("first") and one unrecorded new file.
fn workspace_with_a_commit(backend: Backend, env: &TestEnv, repo: &Path) -> std::path::PathBuf {
    env.aw(repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(repo, "w1");
    fs::write(ws.join("a.txt"), "hello\nworld\n").unwrap();
    match backend {
        Backend::Jj => {
            env.jj_ok(&ws, ["commit", "-m", "first"]);
        }
        Backend::Git => {
            git_ok(env, &ws, &["commit", "-q", "-am", "first"]);
        }
    }
    fs::write(ws.join("new.txt"), "one\ntwo\n").unwrap();
    ws
}

fn status_of_one_workspace_shows_its_commits_and_files(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    workspace_with_a_commit(backend, &env, &repo);
    let out = env.aw(&repo, ["status", "w1"]);
    let text = env.normalize(&out.assert_ok().stdout);
    assert!(text.contains("\ncommits       1\n"), "{text}");
    assert!(
        text.contains("\nfiles         2 changed, +3 -0\n"),
        "{text}"
    );
    assert!(text.contains("\nlast activity [TIME]\n"), "{text}");
    assert!(!text.contains("\nsize "), "{text}");
    let commits = text.split("\nCOMMITS\n").nth(1).unwrap_or_default();
    assert!(
        commits
            .lines()
            .next()
            .unwrap_or_default()
            .ends_with("  first"),
        "{text}"
    );
    let json = env.aw(&repo, ["status", "w1", "--json"]).json();
    let diff = env.aw(&repo, ["diff", "w1", "--json"]).json();
    let changes = &json["changes"];
    assert_eq!(
        changes["files_count"], diff["totals"]["files_count"],
        "{json:#}"
    );
    assert_eq!(changes["added"], diff["totals"]["added"]);
    assert_eq!(changes["removed"], diff["totals"]["removed"]);
    assert_eq!(changes["commits"], diff["commits"]);
    assert_eq!(json["last_activity"], json["updated_at"]);
    assert!(json.get("size_bytes").is_none(), "{json:#}");
}

/// `status --size --json`'s object for workspace `id`.
fn sized(env: &TestEnv, repo: &Path, id: &str) -> Value {
    let doc = env.aw(repo, ["status", "--size", "--json"]).json();
    doc["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["workspace_id"] == id)
        .cloned()
        .unwrap()
}

fn size_counts_a_hard_link_once_and_never_follows_a_symlink(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let before = sized(&env, &repo, "w1")["size_bytes"].as_u64().unwrap();
    fs::write(ws.join("data.bin"), vec![7u8; 256 << 10]).unwrap();
    let with_file = sized(&env, &repo, "w1")["size_bytes"].as_u64().unwrap();
    assert!(with_file >= before + (256 << 10), "{before} -> {with_file}");
    let outside = env.path().join("big.bin");
    fs::write(&outside, vec![1u8; 4 << 20]).unwrap();
    fs::hard_link(ws.join("data.bin"), ws.join("link.bin")).unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("big-link")).unwrap();
    let with_links = sized(&env, &repo, "w1")["size_bytes"].as_u64().unwrap();
    // The hard link adds no data and the symlink's target is not counted; only the
    // directory's own entries may grow by a block or so.
    assert!(
        with_links - with_file < 64 << 10,
        "{with_file} -> {with_links}"
    );
}

fn size_shows_as_a_column_and_moves_last_activity_to_the_newest_file(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let plain = env.aw(&repo, ["status"]);
    assert!(
        !plain.assert_ok().stdout.contains("SIZE"),
        "{}",
        plain.stdout
    );
    let table = env.aw(&repo, ["status", "--size"]);
    let header = table
        .assert_ok()
        .stdout
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>(),
        [
            "WORKSPACE",
            "STATUS",
            "WORKFLOW",
            "CHANGES",
            "UNLANDED",
            "UPDATED",
            "SIZE"
        ]
    );
    let ws = env.ws_path(&repo, "w1");
    fs::write(ws.join("later.txt"), "x\n").unwrap();
    env.cmd("touch", &ws)
        .args(["-d", "2099-01-02T03:04:05Z", "later.txt"])
        .run()
        .assert_ok();
    let json = env.aw(&repo, ["status", "w1", "--size", "--json"]).json();
    assert_eq!(json["newest_mtime"], "2099-01-02T03:04:05Z", "{json:#}");
    assert_eq!(json["last_activity"], "2099-01-02T03:04:05Z", "{json:#}");
    assert!(
        json["size_bytes"].as_u64().is_some_and(|b| b > 0),
        "{json:#}"
    );
    let text = env.aw(&repo, ["status", "w1", "--size"]);
    let text = text.assert_ok().stdout.clone();
    assert!(
        text.contains("\nnewest file   2099-01-02T03:04:05Z\n"),
        "{text}"
    );
    assert!(text.contains("\nsize          "), "{text}");
}

fn status_size_of_an_unknown_id_exits_1(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let out = env.aw(&repo, ["status", "nope", "--size"]);
    insta::assert_snapshot!(out, @r#"
    --- stderr ---
    Error: no workspace "nope" (looked for [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/nope)
    Hint: list workspaces with `agent-workspace status`; create one with `agent-workspace run`
    [exit 1]
    "#);
}

fn the_table_asks_a_few_cheap_questions_per_workspace_and_never_snapshots(backend: Backend) {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    for id in ["w1", "w2", "w3"] {
        env.aw(&repo, ["run", id, "--", "true"]).assert_ok();
    }
    // A wrapper in front of the real tool that logs every call.
    let bin = env.path().join("logging-bin");
    fs::create_dir_all(&bin).unwrap();
    let log = env.path().join("calls.log");
    let tool = backend.name();
    let real = crate::harness::which(tool).unwrap();
    let wrapper = bin.join(tool);
    fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
    let logged = |args: &[&str]| {
        let _ = fs::remove_file(&log);
        env.aw_cmd(&repo)
            .env("PATH", env.path_with_first(&bin))
            .args(args)
            .run()
            .assert_ok();
        fs::read_to_string(&log).unwrap_or_default()
    };
    let calls = |args: &[&str]| logged(args).lines().count();
    // The listing of the backend's workspaces (jj may answer from its cache), then for each
    // workspace's changes: jj one query (git then compares in the backing repository), git
    // its log and a temporary index (add, write-tree, diff).
    let per_workspace = match backend {
        Backend::Jj => 1,
        Backend::Git => 4,
    };
    for args in [
        &["status"][..],
        &["status", "--size"],
        &["status", "--json"],
    ] {
        let n = calls(args);
        assert!(n <= 1 + 3 * per_workspace, "{args:?}: {n} calls");
    }
    // jj never snapshots a working copy for the table: every query ignores them, and what
    // they answered is kept until the next operation (nothing asked again).
    if backend == Backend::Jj {
        assert_eq!(calls(&["status"]), 0);
        let cache = env.namespace_dir(&repo).join(".cache");
        for entry in fs::read_dir(&cache).unwrap() {
            let path = entry.unwrap().path();
            if path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("changes")
            // each workspace's, and all of them in one file
            {
                fs::remove_file(path).unwrap();
            }
        }
        let asked = logged(&["status"]);
        assert_eq!(asked.lines().count(), 3, "{asked}");
        for line in asked.lines() {
            assert!(
                line.contains("--ignore-working-copy") || line.contains(" workspace list "),
                "{line}"
            );
        }
    }
    // The view of one workspace reads its changes: the wrapper sees those calls (jj: its
    // registration is read from jj's files, and one query snapshots the workspace).
    let asked = logged(&["status", "w1"]);
    match backend {
        Backend::Jj => assert!(
            asked
                .lines()
                .any(|l| l.contains(" log ") && !l.contains("--ignore-working-copy")),
            "{asked}"
        ),
        Backend::Git => assert!(asked.lines().count() >= 2, "{asked}"),
    }
}

/// A wrapper in front of the real `tool` that logs each call's arguments to `log`; returns
/// the directory to put first on PATH.
pub(crate) fn logging_wrapper(env: &TestEnv, tool: &str, log: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = env.path().join(format!("logging-{tool}"));
    fs::create_dir_all(&bin).unwrap();
    let real = crate::harness::which(tool).unwrap();
    let wrapper = bin.join(tool);
    fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// The CHANGES cell of workspace `id` in `status`.
fn changes_cell(env: &TestEnv, repo: &Path, id: &str) -> Value {
    let doc = env.aw(repo, ["status", "--json"]).json();
    doc["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["workspace_id"] == id)
        .map(|w| w["changes"].clone())
        .unwrap()
}

/// In a busy repository every agent's operation is a new jj operation: the table must not ask
/// jj again about the workspaces whose working-copy commit stayed the same, and must still
/// follow every workspace whose commit moved, whoever moved it.
#[test]
fn jj_status_after_other_operations_asks_only_about_moved_working_copies() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    for id in ["w1", "w2", "w3"] {
        env.aw(&repo, ["run", id, "--", "true"]).assert_ok();
    }
    env.aw(&repo, ["status"]).assert_ok();
    let log = env.path().join("jj-calls.log");
    let bin = logging_wrapper(&env, "jj", &log);
    let logged = || {
        let _ = fs::remove_file(&log);
        let out = env
            .aw_cmd(&repo)
            .env("PATH", env.path_with_first(&bin))
            .args(["status"])
            .run();
        out.assert_ok();
        (
            out.stdout.clone(),
            fs::read_to_string(&log).unwrap_or_default(),
        )
    };
    // An operation that moves no workspace's commit: nothing to ask.
    env.jj_ok(&repo, ["bookmark", "create", "elsewhere", "-r", "@-"]);
    let (_, asked) = logged();
    assert_eq!(asked, "", "an unrelated operation made status ask jj");
    // w2 edits a file and jj snapshots it (another agent's command in w2): only w2 is asked
    // about, and its row shows the file.
    let w2 = env.ws_path(&repo, "w2");
    fs::write(w2.join("a.txt"), "one\ntwo\n").unwrap();
    env.jj_ok(&w2, ["status"]);
    let (table, asked) = logged();
    assert_eq!(asked.lines().count(), 1, "{asked}");
    assert!(asked.contains(&*w2.to_string_lossy()), "{asked}");
    let row = table
        .lines()
        .find(|l| l.starts_with("w2 "))
        .unwrap_or_default();
    assert!(row.contains("+2"), "{table}");
    assert_eq!(changes_cell(&env, &repo, "w2")["added"], 2);
    // Another workspace rewrites w1's working-copy commit (a description from the main
    // workspace): w1's row follows it.
    env.jj_ok(
        &repo,
        ["describe", "-r", "w1@", "-m", "named from elsewhere"],
    );
    let w1 = env.ws_path(&repo, "w1");
    fs::write(w1.join("b.txt"), "x\n").unwrap();
    env.jj_ok(&w1, ["commit", "-m", "b"]);
    let changes = changes_cell(&env, &repo, "w1");
    assert_eq!(changes["files_count"], 1, "{changes:#}");
    assert_eq!(changes["commits"][0]["description"], "b", "{changes:#}");
    // The answers read back are the same as asked fresh (the kept answers deleted).
    for entry in fs::read_dir(env.namespace_dir(&repo).join(".cache")).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("changes")
        // each workspace's, and all of them in one file
        {
            fs::remove_file(path).unwrap();
        }
    }
    assert_eq!(changes_cell(&env, &repo, "w1"), changes);
    assert_eq!(changes_cell(&env, &repo, "w2")["added"], 2);
}

/// The table kept whole (`.cache/table.v2`) answers `status` only while nothing a row shows
/// changed. Each change comes alone after the table was kept (so that no other change hides
/// a missed one), and each answer is the same as one made from the files: the clock moving
/// the UPDATED cells, a state written anew by rename and a view edited in place (same size
/// and modification time), a state removed and one added, a new run, a workspace removed and one added (by `run`, and a directory made by
/// hand), a repository change that moves no
/// working copy (the kept table stands) and one that moves one (CHANGES follows), a live
/// run (kept, its process looked at each time) that dies.
#[test]
fn jj_the_kept_table_sees_every_change_a_row_can_show() {
    use std::time::{Duration, Instant};
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    for id in ["w1", "w2", "w3", "w4"] {
        env.aw(&repo, ["run", id, "--", "true"]).assert_ok();
    }
    let ran = Instant::now();
    let ns = env.namespace_dir(&repo);
    let kept = ns.join(".cache").join("table.v2");
    let records = ns.join(".cache").join("records.v2");
    // `status`, and whether the kept table answered it: the kept records, removed first,
    // are written again by every table made from the files.
    let status = || {
        let _ = fs::remove_file(&records);
        let out = env.aw(&repo, ["status"]);
        out.assert_ok();
        let answered = !records.exists();
        (out, answered)
    };
    // The same answer as made from the files alone.
    let same_as_fresh = |out: &crate::harness::Outcome| {
        let _ = fs::remove_file(&kept);
        let fresh = env.aw(&repo, ["status"]);
        assert_eq!(
            without_times(&fresh.assert_ok().stdout),
            without_times(&out.stdout),
            "{}",
            out.report()
        );
        assert_eq!(fresh.stderr, out.stderr);
    };
    // Files changed in the last two seconds are never kept: let them settle, then keep.
    let keep = || {
        std::thread::sleep(Duration::from_millis(2500));
        let (out, _) = status();
        assert!(kept.exists(), "no table kept: {}", out.report());
        out
    };
    let first = keep();
    let (again, answered) = status();
    assert!(
        answered,
        "the kept table did not answer: {}",
        again.report()
    );
    assert_eq!(without_times(&again.stdout), without_times(&first.stdout));
    assert_eq!(again.stderr, first.stderr);

    // The clock: five seconds after the runs, `just now` is `5s ago`, from the kept table too.
    std::thread::sleep(Duration::from_secs(6).saturating_sub(ran.elapsed()));
    let (later, answered) = status();
    assert!(answered, "{}", later.report());
    assert!(
        row(&later.stdout, "w4").ends_with(" ago"),
        "{}",
        later.report()
    );

    // w3's state written anew as agent-workspace writes a state (a new file renamed over
    // it), of the same size and modification time: its record now says idle.
    let state = ns.join(".state").join("w3.json");
    replace_by_rename(&state, "\"done\"", "\"idle\"");
    let (out, _) = status();
    assert!(row(&out.stdout, "w3").contains("idle"), "{}", out.report());
    same_as_fresh(&out);
    // Edited in place by hand (which agent-workspace never does): `status w3` reads it.
    keep();
    edit_in_place(&state, "\"idle\"", "\"done\"");
    let one = env.aw(&repo, ["status", "w3"]);
    assert!(one.assert_ok().stdout.contains("done"), "{}", one.report());

    // w2's view edited in place: reported as changed outside agent-workspace.
    keep();
    let w2 = env.ws_path(&repo, "w2");
    edit_in_place(&w2.join(".agent-workflow.json"), "\"done\"", "\"idle\"");
    let (out, _) = status();
    assert!(
        out.stderr
            .contains("w2: its .agent-workflow.json was changed"),
        "{}",
        out.report()
    );
    same_as_fresh(&out);

    // A new run of w1.
    keep();
    env.aw(&repo, ["run", "w1", "--workflow", "review", "--", "false"]);
    let (out, _) = status();
    assert!(row(&out.stdout, "w1").contains("error"), "{}", out.report());
    assert!(
        row(&out.stdout, "w1").contains("review"),
        "{}",
        out.report()
    );
    same_as_fresh(&out);

    // w4's state removed (its view alone is then its record, as an older version left
    // it), then written again saying idle: its row follows both.
    keep();
    let state = ns.join(".state").join("w4.json");
    let saved = fs::read_to_string(&state).unwrap();
    fs::remove_file(&state).unwrap();
    let (out, _) = status();
    assert!(row(&out.stdout, "w4").contains("done"), "{}", out.report());
    same_as_fresh(&out);
    keep();
    fs::write(&state, saved.replacen("\"done\"", "\"idle\"", 1)).unwrap();
    let (out, _) = status();
    assert!(row(&out.stdout, "w4").contains("idle"), "{}", out.report());
    same_as_fresh(&out);

    // w4 removed, then w5 added.
    keep();
    env.aw(&repo, ["clean", "w4"]).assert_ok();
    let (out, _) = status();
    assert_eq!(row(&out.stdout, "w4"), "", "{}", out.report());
    same_as_fresh(&out);
    keep();
    env.aw(&repo, ["run", "w5", "--", "true"]).assert_ok();
    let (out, _) = status();
    assert!(row(&out.stdout, "w5").contains("done"), "{}", out.report());
    same_as_fresh(&out);

    // A directory made by hand in the namespace (no jj operation): not registered.
    keep();
    fs::create_dir(ns.join("w7")).unwrap();
    let (out, _) = status();
    assert!(
        row(&out.stdout, "w7").contains("unregistered"),
        "{}",
        out.report()
    );
    same_as_fresh(&out);
    fs::remove_dir(ns.join("w7")).unwrap();

    // A repository change that moves no working copy: the kept table still answers.
    let before = keep();
    env.jj_ok(&repo, ["bookmark", "create", "elsewhere", "-r", "@-"]);
    let (out, answered) = status();
    assert!(answered, "{}", out.report());
    assert_eq!(without_times(&out.stdout), without_times(&before.stdout));
    // One that moves w2's (a file snapshotted by another command in w2): CHANGES follows.
    keep();
    fs::write(w2.join("new.txt"), "one\ntwo\n").unwrap();
    env.jj_ok(&w2, ["status"]);
    let (out, _) = status();
    assert!(
        row(&out.stdout, "w2").contains("1 file +2 -0"),
        "{}",
        out.report()
    );
    same_as_fresh(&out);

    // A live run: kept with its process, which is looked at each time (it can die without
    // any file changing): the kept table answers while it runs, and its death is seen.
    keep();
    let started = env.path().join("started");
    let script = format!("touch '{}'; exec sleep 30", started.display());
    let run = env
        .aw_cmd(&repo)
        .args(["run", "w6", "--", "sh", "-c", &script])
        .spawn();
    crate::harness::wait_for_file(&started);
    let live = keep();
    assert!(
        row(&live.stdout, "w6").contains("running"),
        "{}",
        live.report()
    );
    let (out, answered) = status();
    assert!(answered, "{}", out.report());
    assert_eq!(without_times(&out.stdout), without_times(&live.stdout));
    run.signal("KILL");
    run.wait();
    crate::reliability_support::wait_until_released(&env, &repo, "w6");
    let (out, _) = status();
    assert!(
        row(&out.stdout, "w6").contains("crashed"),
        "{}",
        out.report()
    );
    same_as_fresh(&out);
}

crate::both_backends!(
    the_table_asks_a_few_cheap_questions_per_workspace_and_never_snapshots,
    status_of_one_workspace_shows_its_commits_and_files,
    size_counts_a_hard_link_once_and_never_follows_a_symlink,
    size_shows_as_a_column_and_moves_last_activity_to_the_newest_file,
    status_size_of_an_unknown_id_exits_1,
    the_table_sees_every_change_to_a_record_it_kept,
);

/// Rewrites `file` in place (same inode, same size, same modification time) with `from`
/// replaced by `to` of the same length: only its change time tells.
fn edit_in_place(file: &Path, from: &str, to: &str) {
    use std::io::{Seek, Write};
    assert_eq!(from.len(), to.len());
    let text = fs::read_to_string(file).unwrap();
    assert!(text.contains(from), "{text}");
    let modified = fs::metadata(file).unwrap().modified().unwrap();
    let mut f = fs::OpenOptions::new().write(true).open(file).unwrap();
    f.rewind().unwrap();
    f.write_all(text.replacen(from, to, 1).as_bytes()).unwrap();
    f.set_modified(modified).unwrap();
}

/// Writes `file` anew with `from` replaced by `to` (a new file of the same size and
/// modification time, renamed over it), as agent-workspace writes a state.
fn replace_by_rename(file: &Path, from: &str, to: &str) {
    assert_eq!(from.len(), to.len());
    let text = fs::read_to_string(file).unwrap();
    assert!(text.contains(from), "{text}");
    let modified = fs::metadata(file).unwrap().modified().unwrap();
    let tmp = file.with_extension("tmp-test");
    fs::write(&tmp, text.replacen(from, to, 1)).unwrap();
    fs::File::options()
        .write(true)
        .open(&tmp)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    fs::rename(&tmp, file).unwrap();
}

/// The table without its UPDATED column ("just now", "3s ago" move while a test runs).
fn without_times(table: &str) -> Vec<String> {
    table
        .lines()
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let keep = match words.last() {
                Some(&"ago") => words.len() - 2,
                Some(&"now") if words.len() >= 2 && words[words.len() - 2] == "just" => {
                    words.len() - 2
                }
                _ => words.len(),
            };
            words[..keep].join(" ")
        })
        .collect()
}

fn row<'a>(table: &'a str, id: &str) -> &'a str {
    table
        .lines()
        .find(|l| l.starts_with(&format!("{id} ")))
        .unwrap_or_default()
}

/// The table reads records through the namespace's kept copy, and sees every change made to
/// a record after it was kept: a new run's record, a view edited in place and a state edited
/// in place (same inode, size and modification time).
fn the_table_sees_every_change_to_a_record_it_kept(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    for id in ["w1", "w2", "w3"] {
        env.aw(&repo, ["run", id, "--", "true"]).assert_ok();
    }
    // Records changed in the last two seconds are never kept: let them settle.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    // An earlier version's kept records go when this version keeps its own.
    let cache = env.namespace_dir(&repo).join(".cache");
    fs::create_dir_all(&cache).unwrap();
    let superseded = [cache.join("records.v1"), cache.join("changes.v2.all")];
    for file in &superseded {
        fs::write(file, "{}").unwrap();
    }
    let first = env.aw(&repo, ["status"]).assert_ok().stdout.clone();
    let kept = cache.join("records.v2");
    let text = fs::read_to_string(&kept).unwrap();
    assert!(!superseded[0].exists(), "the superseded records.v1 is left");
    // jj's CHANGES answers are kept too (git keeps none).
    if backend == Backend::Jj {
        assert!(
            !superseded[1].exists(),
            "the superseded changes.v2.all is left"
        );
    }
    for id in ["w1", "w2", "w3"] {
        assert!(text.contains(&format!("\"{id}\"")), "{text}");
        assert!(row(&first, id).contains("done"), "{first}");
    }
    assert_eq!(
        without_times(&env.aw(&repo, ["status"]).assert_ok().stdout),
        without_times(&first)
    );

    // A new run rewrites w1's record.
    env.aw(&repo, ["run", "w1", "--workflow", "review", "--", "false"]);
    // w2's view is edited in place: reported as changed outside agent-workspace.
    let w2 = env.ws_path(&repo, "w2");
    edit_in_place(&w2.join(".agent-workflow.json"), "\"done\"", "\"idle\"");
    // w3's state is edited in place: its record now says idle.
    let state = env.namespace_dir(&repo).join(".state").join("w3.json");
    edit_in_place(&state, "\"done\"", "\"idle\"");

    let after = env.aw(&repo, ["status"]);
    let table = after.assert_ok().stdout.clone();
    assert!(row(&table, "w1").contains("error"), "{}", after.report());
    assert!(row(&table, "w1").contains("review"), "{}", after.report());
    assert!(
        after
            .stderr
            .contains("w2: its .agent-workflow.json was changed"),
        "{}",
        after.report()
    );
    assert!(row(&table, "w3").contains("idle"), "{}", after.report());
    // The same as read from the files alone.
    fs::remove_file(&kept).unwrap();
    let fresh = env.aw(&repo, ["status"]);
    assert_eq!(
        without_times(&fresh.assert_ok().stdout),
        without_times(&table)
    );
    assert_eq!(fresh.stderr, after.stderr);
}
