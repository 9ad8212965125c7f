//! The repair of a stale jj working copy carries only the edits jj never recorded: an
//! upstream change the user rebased the workspace onto stays, conflict markers jj
//! materialized never come back as content, an edit that conflicts with the update is kept
//! aside and named (never written with markers), and a kill during the repair is finished by
//! the next command with the same result.

use std::fs;
use std::path::{Path, PathBuf};

use crate::harness::TestEnv;
use crate::land_support::subjects;

const LINES: &str = "one\ntwo\nthree\nfour\nfive\nsix\n";

/// A jj repo with `f.txt` = [`LINES`] and workspace `w1` whose run committed `agent.txt`.
fn repo_with_agent_commit(env: &TestEnv) -> (PathBuf, PathBuf) {
    let repo = env.jj_repo("repo");
    fs::write(repo.join("f.txt"), LINES).unwrap();
    env.jj_ok(&repo, ["commit", "-m", "lines"]);
    let script = "echo agent > agent.txt && jj commit -m work";
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", script])
        .assert_ok();
    let ws = env.ws_path(&repo, "w1");
    (repo, ws)
}

/// The user commits `f.txt` with its first line changed in the main workspace, then rebases
/// w1's commits onto that commit from there: w1's working copy is stale.
fn rebase_onto_upstream(env: &TestEnv, repo: &Path, first_line: &str) {
    fs::write(repo.join("f.txt"), LINES.replacen("one", first_line, 1)).unwrap();
    env.jj_ok(repo, ["commit", "-m", "upstream"]);
    env.jj_ok(repo, ["rebase", "-b", "w1@", "-o", "@-"]);
    let stale = env.jj(&env.ws_path(repo, "w1"), ["status"]);
    assert_ne!(stale.code(), Some(0), "not stale\n{}", stale.report());
}

/// Unrecorded edits in w1: another file, and the last line of `f.txt`.
fn edit_unrecorded(ws: &Path) {
    fs::write(ws.join("sub/b.txt"), "b\nagent unrecorded\n").unwrap();
    fs::write(ws.join("f.txt"), LINES.replace("six", "six (agent)")).unwrap();
}

fn merged() -> String {
    LINES
        .replacen("one", "upstream", 1)
        .replace("six", "six (agent)")
}

/// What test 1 expects after the repair: the upstream change and both edits in w1's files
/// and in its working-copy commit, on top of the upstream commit; then `land` keeps both.
fn assert_repaired_and_lands(env: &TestEnv, repo: &Path, ws: &Path) {
    assert_eq!(fs::read_to_string(ws.join("f.txt")).unwrap(), merged());
    assert_eq!(
        fs::read_to_string(ws.join("sub/b.txt")).unwrap(),
        "b\nagent unrecorded\n"
    );
    let recorded = env.jj_ok(repo, ["file", "show", "-r", "w1@", "f.txt"]);
    assert_eq!(recorded, merged());
    assert_eq!(subjects(env, repo, "w1@-"), "work");
    assert_eq!(subjects(env, repo, "w1@--"), "upstream");
    assert!(
        !env.namespace_dir(repo).join(".recovering-w1").exists(),
        "{}",
        env.listing()
    );
    assert_eq!(divergent(env, repo), "", "{}", env.jj_ok(repo, ["log"]));
    let land = env.aw(repo, ["land", "w1"]);
    land.assert_ok();
    assert_eq!(fs::read_to_string(repo.join("f.txt")).unwrap(), merged());
    assert_eq!(
        fs::read_to_string(repo.join("agent.txt")).unwrap(),
        "agent\n"
    );
}

/// The visible commits of a divergent change: jj's own update-stale leaves the stale files'
/// snapshot as one, which the repair abandons once their edits are carried.
fn divergent(env: &TestEnv, repo: &Path) -> String {
    let template = r#"if(divergent, commit_id ++ " " ++ description.first_line() ++ "\n")"#;
    env.jj_ok(repo, ["log", "--no-graph", "-r", "all()", "-T", template])
}

#[test]
fn a_rebase_onto_upstream_from_main_keeps_upstream_and_the_unrecorded_edits() {
    let env = TestEnv::new();
    let (repo, ws) = repo_with_agent_commit(&env);
    edit_unrecorded(&ws);
    rebase_onto_upstream(&env, &repo, "upstream");
    let run = env.aw(&repo, ["run", "w1", "--", "true"]);
    insta::assert_snapshot!(run, @r#"
    --- stderr ---
    Note: workspace "w1" was stale; updated it (its edits are kept)
    [exit 0]
    "#);
    assert_repaired_and_lands(&env, &repo, &ws);
}

/// Every file of w1's working-copy commit that holds a conflict marker, unless jj records a
/// conflict there.
fn unrecorded_markers(env: &TestEnv, repo: &Path) -> Vec<String> {
    let conflicted = env.jj(repo, ["resolve", "--list", "-r", "w1@"]).stdout;
    let files = env.jj_ok(repo, ["file", "list", "-r", "w1@"]);
    files
        .lines()
        .filter(|f| !conflicted.lines().any(|c| c.starts_with(f)))
        .filter(|f| {
            let text = env.jj_ok(repo, ["file", "show", "-r", "w1@", f]);
            text.contains("<<<<<<<")
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn conflict_markers_of_an_undone_conflict_never_become_content() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let script = "printf 'from w1\\n' > a.txt && jj commit -m work";
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", script])
        .assert_ok();
    let ws = env.ws_path(&repo, "w1");
    fs::write(repo.join("a.txt"), "from main\n").unwrap();
    env.jj_ok(&repo, ["commit", "-m", "main edit"]);
    // From main, w1's work goes onto main's commit: a conflict jj records, which w1's
    // working copy then materializes with markers; then the rebase is undone.
    env.jj_ok(&repo, ["rebase", "-b", "w1@", "-o", "@-"]);
    let rebase = env.jj_ok(&repo, ["op", "log", "--no-graph", "-n1", "-T", "id"]);
    env.jj_ok(&ws, ["workspace", "update-stale"]);
    let on_disk = fs::read_to_string(ws.join("a.txt")).unwrap();
    assert!(on_disk.contains("<<<<<<<"), "no markers to test: {on_disk}");
    env.jj_ok(&repo, ["op", "revert", &rebase]);
    let run = env.aw(&repo, ["run", "w1", "--", "true"]);
    run.assert_ok();
    assert_eq!(unrecorded_markers(&env, &repo), Vec::<String>::new());
    assert_eq!(divergent(&env, &repo), "");
    assert_eq!(fs::read_to_string(ws.join("a.txt")).unwrap(), "from w1\n");
    assert_eq!(
        env.jj_ok(&repo, ["log", "--no-graph", "-r", "w1@", "-T", "conflict"]),
        "false"
    );
}

#[test]
fn an_unrecorded_edit_that_conflicts_with_the_update_is_kept_aside_and_named() {
    let env = TestEnv::new();
    let (repo, ws) = repo_with_agent_commit(&env);
    let agent = LINES.replacen("one", "one (agent)", 1);
    fs::write(ws.join("f.txt"), &agent).unwrap();
    fs::write(ws.join("sub/b.txt"), "b\nagent unrecorded\n").unwrap();
    rebase_onto_upstream(&env, &repo, "upstream");
    let run = env.aw(&repo, ["run", "w1", "--", "echo", "ran"]);
    // agent-workspace's own failure in `run`.
    run.assert_code(125);
    assert_eq!(run.stdout, "", "{}", run.report());
    let kept_root = env.namespace_dir(&repo).join(".kept");
    let kept: Vec<PathBuf> = fs::read_dir(&kept_root)
        .unwrap_or_else(|e| panic!("{e}\n{}", env.listing()))
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{}", env.listing());
    let kept_file = kept[0].join("f.txt");
    assert_eq!(fs::read_to_string(&kept_file).unwrap(), agent);
    assert!(
        run.stderr.starts_with("Error: ") && run.stderr.contains("f.txt"),
        "{}",
        run.report()
    );
    assert!(
        run.stderr.contains(&kept_file.display().to_string()),
        "{}",
        run.report()
    );
    assert!(run.stderr.contains("\nHint: "), "{}", run.report());
    // The workspace holds the updated version, without markers; the other edit is carried.
    let upstream = LINES.replacen("one", "upstream", 1);
    assert_eq!(fs::read_to_string(ws.join("f.txt")).unwrap(), upstream);
    assert_eq!(
        fs::read_to_string(ws.join("sub/b.txt")).unwrap(),
        "b\nagent unrecorded\n"
    );
    assert_eq!(unrecorded_markers(&env, &repo), Vec::<String>::new());
    // The next run goes on.
    let next = env.aw(&repo, ["run", "w1", "--", "cat", "f.txt"]);
    next.assert_ok();
    assert_eq!(next.stdout, upstream);
    assert!(
        !env.namespace_dir(&repo).join(".recovering-w1").exists(),
        "{}",
        env.listing()
    );
}

/// Test 1's state, with enough untracked files that the copy takes a while; `run w1` is
/// SIGKILLed once `point` exists in the recovery directory, then the next command (`next`:
/// a run in w1, or a command of any kind such as `status`) finishes the repair with test 1's
/// result.
fn killed_at(point: &str, next: &[&str]) {
    let env = TestEnv::new();
    let (repo, ws) = repo_with_agent_commit(&env);
    edit_unrecorded(&ws);
    fs::create_dir(ws.join("many")).unwrap();
    for i in 0..2000 {
        fs::write(ws.join(format!("many/{i}")), format!("{i}\n")).unwrap();
    }
    rebase_onto_upstream(&env, &repo, "upstream");
    let scratch = env.namespace_dir(&repo).join(".recovering-w1");
    let marker = scratch.join(point);
    let running = env.aw_cmd(&repo).args(["run", "w1", "--", "true"]).spawn();
    let guard = std::time::Instant::now();
    while !marker.exists() {
        assert!(guard.elapsed().as_secs() < 120, "{}", env.listing());
        std::thread::yield_now();
    }
    running.signal("KILL");
    let out = running.wait();
    assert_eq!(out.code(), None, "killed by a signal\n{}", out.report());
    assert!(scratch.exists(), "the repair ended before the kill");
    let next = env.aw(&repo, next);
    next.assert_ok();
    // What `next` prints on stdout (a run's nothing, the status table, what gc did) is its
    // own, gc says more on stderr; what each says first, about the repair, is the same.
    let said = next.stderr.lines().next().unwrap_or_default();
    insta::allow_duplicates! { insta::assert_snapshot!(env.normalize(said), @r#"Note: finished the interrupted update of workspace "w1"'s stale working copy; its edits are back from [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.recovering-w1"#) };
    assert_eq!(fs::read_dir(ws.join("many")).unwrap().count(), 2000);
    assert_repaired_and_lands(&env, &repo, &ws);
}

#[test]
fn a_kill_once_the_copy_is_complete_is_finished_with_the_same_result() {
    killed_at("complete", &["run", "w1", "--", "true"]);
}

#[test]
fn a_kill_once_the_working_copy_was_updated_is_finished_with_the_same_result() {
    killed_at("updated", &["run", "w1", "--", "true"]);
}

/// The user's edits are out of the workspace (in the copy) once the update ran: a command
/// of any kind finishes the repair, not only the next one in that workspace.
#[test]
fn a_kill_once_the_working_copy_was_updated_is_finished_by_status() {
    killed_at("updated", &["status"]);
}

#[test]
fn a_kill_once_the_working_copy_was_updated_is_finished_by_gc() {
    killed_at("updated", &["gc"]);
}

#[test]
fn among_many_files_the_update_changed_only_the_edited_ones_are_merged() {
    // Files whose saved copy is what the recorded commit holds are told apart in a few git
    // calls; the edited ones still merge.
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    fs::create_dir(repo.join("many")).unwrap();
    for i in 0..60 {
        fs::write(repo.join(format!("many/{i}")), format!("{i}\n{LINES}")).unwrap();
    }
    env.jj_ok(&repo, ["commit", "-m", "many"]);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    for i in 0..60 {
        let upstream = format!("{i} upstream\n{LINES}");
        fs::write(repo.join(format!("many/{i}")), upstream).unwrap();
    }
    env.jj_ok(&repo, ["commit", "-m", "upstream"]);
    env.jj_ok(&repo, ["rebase", "-b", "w1@", "-o", "@-"]);
    for i in [7, 42] {
        let edited = format!("{i}\n{}", LINES.replace("six", "six (agent)"));
        fs::write(ws.join(format!("many/{i}")), edited).unwrap();
    }
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    for i in 0..60 {
        let mut expected = format!("{i} upstream\n{LINES}");
        if i == 7 || i == 42 {
            expected = expected.replace("six", "six (agent)");
        }
        let file = format!("many/{i}");
        assert_eq!(
            fs::read_to_string(ws.join(&file)).unwrap(),
            expected,
            "{file}"
        );
    }
}

#[test]
fn a_kill_during_a_repair_that_conflicts_is_finished_into_the_same_kept_place() {
    let env = TestEnv::new();
    let (repo, ws) = repo_with_agent_commit(&env);
    let agent = LINES.replacen("one", "one (agent)", 1);
    fs::write(ws.join("f.txt"), &agent).unwrap();
    fs::create_dir(ws.join("many")).unwrap();
    for i in 0..2000 {
        fs::write(ws.join(format!("many/{i}")), format!("{i}\n")).unwrap();
    }
    rebase_onto_upstream(&env, &repo, "upstream");
    let scratch = env.namespace_dir(&repo).join(".recovering-w1");
    let marker = scratch.join("updated");
    let running = env.aw_cmd(&repo).args(["run", "w1", "--", "true"]).spawn();
    let guard = std::time::Instant::now();
    while !marker.exists() {
        assert!(guard.elapsed().as_secs() < 120, "{}", env.listing());
        std::thread::yield_now();
    }
    running.signal("KILL");
    assert_eq!(running.wait().code(), None);
    assert!(scratch.exists(), "the repair ended before the kill");
    let resumed = env.aw(&repo, ["run", "w1", "--", "true"]);
    resumed.assert_code(125);
    let kept: Vec<PathBuf> = fs::read_dir(env.namespace_dir(&repo).join(".kept"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{}", env.listing());
    assert_eq!(fs::read_to_string(kept[0].join("f.txt")).unwrap(), agent);
    assert!(
        resumed
            .stderr
            .contains(&kept[0].join("f.txt").display().to_string()),
        "{}",
        resumed.report()
    );
    let upstream = LINES.replacen("one", "upstream", 1);
    assert_eq!(fs::read_to_string(ws.join("f.txt")).unwrap(), upstream);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    assert!(!scratch.exists(), "{}", env.listing());
}

#[test]
fn deletions_binaries_symlinks_new_files_and_modes_are_merged_or_kept_aside() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    for name in ["f.txt", "g.txt", "x.sh"] {
        fs::write(repo.join(name), LINES).unwrap();
    }
    fs::write(repo.join("bin.dat"), b"\0old").unwrap();
    for link in ["link", "link2"] {
        std::os::unix::fs::symlink("f.txt", repo.join(link)).unwrap();
    }
    env.jj_ok(&repo, ["commit", "-m", "files"]);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    // Unrecorded in w1: a deletion, a binary edit, a mode change, a new file, a line, a
    // symlink's target.
    fs::remove_file(ws.join("g.txt")).unwrap();
    fs::write(ws.join("bin.dat"), b"\0agent").unwrap();
    fs::set_permissions(ws.join("x.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(ws.join("new.txt"), "agent new\n").unwrap();
    fs::write(ws.join("f.txt"), LINES.replace("six", "six (agent)")).unwrap();
    fs::remove_file(ws.join("link2")).unwrap();
    std::os::unix::fs::symlink("x.sh", ws.join("link2")).unwrap();
    // Upstream changes every one of them (and `link`, which w1 left), and w1 is rebased
    // onto it.
    let upstream = LINES.replacen("one", "upstream", 1);
    for name in ["f.txt", "g.txt", "x.sh"] {
        fs::write(repo.join(name), &upstream).unwrap();
    }
    fs::write(repo.join("bin.dat"), b"\0upstream").unwrap();
    fs::write(repo.join("new.txt"), "upstream new\n").unwrap();
    for link in ["link", "link2"] {
        fs::remove_file(repo.join(link)).unwrap();
        std::os::unix::fs::symlink("g.txt", repo.join(link)).unwrap();
    }
    env.jj_ok(&repo, ["commit", "-m", "upstream"]);
    env.jj_ok(&repo, ["rebase", "-b", "w1@", "-o", "@-"]);
    let run = env.aw(&repo, ["run", "w1", "--", "true"]);
    run.assert_code(125);
    let kept: Vec<PathBuf> = fs::read_dir(env.namespace_dir(&repo).join(".kept"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{}", env.listing());
    let kept = &kept[0];
    // Kept aside and named: the binary and the new file; the deletion is named.
    assert_eq!(fs::read(kept.join("bin.dat")).unwrap(), b"\0agent");
    assert_eq!(
        fs::read_to_string(kept.join("new.txt")).unwrap(),
        "agent new\n"
    );
    assert_eq!(
        fs::read_link(kept.join("link2")).unwrap(),
        Path::new("x.sh")
    );
    for name in ["bin.dat", "new.txt", "link2"] {
        let named = kept.join(name).display().to_string();
        assert!(run.stderr.contains(&named), "{}", run.report());
    }
    assert!(
        run.stderr.contains("g.txt: the workspace had deleted it"),
        "{}",
        run.report()
    );
    // The workspace holds the update's versions there, and the merges elsewhere.
    assert_eq!(fs::read(ws.join("bin.dat")).unwrap(), b"\0upstream");
    assert_eq!(
        fs::read_to_string(ws.join("new.txt")).unwrap(),
        "upstream new\n"
    );
    assert_eq!(fs::read_to_string(ws.join("g.txt")).unwrap(), upstream);
    assert_eq!(
        fs::read_to_string(ws.join("f.txt")).unwrap(),
        upstream.replace("six", "six (agent)")
    );
    assert_eq!(fs::read_to_string(ws.join("x.sh")).unwrap(), upstream);
    for link in ["link", "link2"] {
        assert_eq!(fs::read_link(ws.join(link)).unwrap(), Path::new("g.txt"));
    }
    let mode = fs::metadata(ws.join("x.sh")).unwrap().permissions().mode();
    assert_eq!(mode & 0o111, 0o111, "the mode change is carried");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
}

/// What the working copy had recorded, undone from the main workspace by `jj op restore`
/// (or `jj undo`), is not dropped by the repair: the files as they were are kept aside and
/// named, the run fails (125) without starting the command, and the next run goes on with
/// the restored state.
#[test]
fn recorded_work_an_operation_elsewhere_undid_is_kept_aside_and_named() {
    let env = TestEnv::new();
    let (repo, ws) = repo_with_agent_commit(&env);
    let before = env.jj_ok(&repo, ["op", "log", "--no-graph", "-n1", "-T", "id"]);
    fs::write(ws.join("recorded.txt"), "recorded by jj\n").unwrap();
    fs::write(ws.join("f.txt"), LINES.replace("six", "six (recorded)")).unwrap();
    env.jj(&ws, ["status"]).assert_ok();
    env.jj_ok(&repo, ["op", "restore", before.trim()]);
    let run = env.aw(&repo, ["run", "w1", "--", "echo", "ran"]);
    run.assert_code(125);
    assert_eq!(run.stdout, "", "{}", run.report());
    assert!(
        run.stderr.starts_with("Error: ")
            && run.stderr.contains("undid")
            && run.stderr.contains("recorded.txt")
            && run.stderr.contains("f.txt")
            && run.stderr.contains("\nHint: "),
        "{}",
        run.report()
    );
    let kept_root = env.namespace_dir(&repo).join(".kept");
    let kept: Vec<PathBuf> = fs::read_dir(&kept_root)
        .unwrap_or_else(|e| panic!("{e}\n{}", env.listing()))
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{}", env.listing());
    for (file, text) in [
        ("recorded.txt", "recorded by jj\n".to_string()),
        ("f.txt", LINES.replace("six", "six (recorded)")),
    ] {
        let kept_file = kept[0].join(file);
        assert_eq!(fs::read_to_string(&kept_file).unwrap(), text);
        assert!(
            run.stderr.contains(&kept_file.display().to_string()),
            "{}",
            run.report()
        );
    }
    // The workspace follows the restore; the next run goes on.
    assert!(!ws.join("recorded.txt").exists());
    let next = env.aw(&repo, ["run", "w1", "--", "cat", "f.txt"]);
    next.assert_ok();
    assert_eq!(next.stdout, LINES);
}

/// An unrecorded rename in the stale workspace (the update snapshots it into a sibling
/// commit, where jj reports it as a rename): the repair reads both paths, never jj's
/// `{old => new}` display, keeps the renamed file and reports the old name, which the
/// workspace deleted and the update changed.
#[test]
fn an_unrecorded_rename_is_carried_as_a_delete_and_an_add() {
    let env = TestEnv::new();
    let (repo, ws) = repo_with_agent_commit(&env);
    fs::rename(ws.join("f.txt"), ws.join("moved.txt")).unwrap();
    rebase_onto_upstream(&env, &repo, "upstream");
    let run = env.aw(&repo, ["run", "w1", "--", "echo", "ran"]);
    insta::assert_snapshot!(run, @r#"
    --- stderr ---
    Error: workspace "w1" was stale; updating it conflicts with its unrecorded edits to f.txt
    Caused by: f.txt: the workspace had deleted it; the update changed it
    Hint: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1 now holds the updated version of each file; merge the workspace's version into it by hand, then go on: the next run of w1 works as usual
    [exit 125]
    "#);
    assert_eq!(fs::read_to_string(ws.join("moved.txt")).unwrap(), LINES);
    assert_eq!(unrecorded_markers(&env, &repo), Vec::<String>::new());
    let next = env.aw(&repo, ["run", "w1", "--", "cat", "moved.txt"]);
    next.assert_ok();
    assert_eq!(next.stdout, LINES);
}
