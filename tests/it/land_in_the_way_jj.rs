//! jj `land` and the files jj does not track: a file of the main working copy jj does not
//! track (ignored, or too big to snapshot) where the land writes refuses the land, nothing
//! changed; a file of the workspace jj does not track is named by the land and never lost
//! by `clean --landed`; a file holding conflict markers as text is never offered `--prefer`.

use std::fs;
use std::path::Path;

use crate::harness::TestEnv;
use crate::land_support::{graph, snapshot};

/// More than jj's default `snapshot.max-new-file-size` (1 MiB): jj refuses to track it.
const BIG: usize = 1_200_000;

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A jj repo whose workspace `w1` committed `script`'s files (`jj commit -m work`).
fn repo_where_w1_committed(env: &TestEnv, script: &str) -> std::path::PathBuf {
    let repo = env.jj_repo("repo");
    let script = format!("{script} && jj commit -m work");
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", &script])
        .assert_ok();
    repo
}

/// Lands `w1` into main, which must refuse naming `named`, and checks that nothing changed:
/// every commit, and main's files `kept` (path, content).
fn assert_refused(env: &TestEnv, repo: &Path, named: &[&str], kept: &[(&str, &str)]) {
    snapshot(env, repo);
    let before = graph(env, repo);
    for args in [&["land", "w1", "--dry-run"][..], &["land", "w1"][..]] {
        let out = env.aw(repo, args);
        out.assert_code(1);
        assert!(
            out.stderr.starts_with("Error: the working copy at ")
                && out
                    .stderr
                    .contains("has files jj does not track where the land would write")
                && out.stderr.contains("nothing was landed"),
            "{}",
            out.report()
        );
        for name in named {
            assert!(out.stderr.contains(name), "{name}: {}", out.report());
        }
        assert!(
            out.stderr.contains("move them away or delete them"),
            "{}",
            out.report()
        );
        assert_eq!(graph(env, repo), before, "{}", out.report());
        for (path, text) in kept {
            assert_eq!(read(&repo.join(path)), *text, "{}", out.report());
        }
    }
    // Main's working copy records nothing new either.
    let status = env.jj_ok(repo, ["diff", "--name-only"]);
    assert_eq!(graph(env, repo), before, "{status}");
}

/// main ignores `out.txt` (its own uncommitted `.gitignore`) and holds one; the workspace
/// committed a file of that name. jj would leave main's file as it is and record, in main's
/// working copy, a change reverting the landed one.
#[test]
fn an_ignored_file_where_the_land_writes_refuses_the_land() {
    let env = TestEnv::new();
    let repo = repo_where_w1_committed(&env, "echo theirs > out.txt");
    fs::write(repo.join(".gitignore"), "out.txt\n").unwrap();
    fs::write(repo.join("out.txt"), "mine\n").unwrap();
    assert_refused(&env, &repo, &["out.txt"], &[("out.txt", "mine\n")]);
    // Moved away, the land goes through.
    fs::remove_file(repo.join("out.txt")).unwrap();
    env.aw(&repo, ["land", "w1"]).assert_ok();
    assert_eq!(read(&repo.join("out.txt")), "theirs\n");
}

/// main holds an untracked file too big for jj to track where the land writes.
#[test]
fn a_file_too_big_to_track_where_the_land_writes_refuses_the_land() {
    let env = TestEnv::new();
    let repo = repo_where_w1_committed(&env, "echo theirs > big.bin");
    let big = "x".repeat(BIG);
    fs::write(repo.join("big.bin"), &big).unwrap();
    assert_refused(&env, &repo, &["big.bin"], &[("big.bin", big.as_str())]);
}

/// main holds an ignored file where the land needs a directory (`gen`, the workspace
/// committed `gen/x.txt`), and an ignored directory with content where the land writes a
/// file (`cache`).
#[test]
fn an_ignored_file_or_directory_in_the_way_of_the_land_refuses_it() {
    let env = TestEnv::new();
    let repo = repo_where_w1_committed(&env, "mkdir gen && echo x > gen/x.txt && echo c > cache");
    fs::write(repo.join(".gitignore"), "/gen\n/cache\n").unwrap();
    fs::write(repo.join("gen"), "my gen\n").unwrap();
    fs::create_dir(repo.join("cache")).unwrap();
    fs::write(repo.join("cache/data"), "my cache\n").unwrap();
    assert_refused(
        &env,
        &repo,
        &["gen", "cache"],
        &[("gen", "my gen\n"), ("cache/data", "my cache\n")],
    );
}

/// A symlink main does not track where the land writes is refused too, and never followed.
#[test]
fn an_ignored_symlink_where_the_land_writes_refuses_the_land() {
    let env = TestEnv::new();
    let repo = repo_where_w1_committed(&env, "mkdir d && echo x > d/x.txt");
    fs::write(repo.join(".gitignore"), "/d\n").unwrap();
    let elsewhere = env.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, repo.join("d")).unwrap();
    assert_refused(&env, &repo, &["d"], &[]);
    assert!(!elsewhere.join("x.txt").exists());
}

/// A new file of the workspace too big for jj to track is not landed: the land says so
/// (text and JSON), and `clean --landed` (and its dry run) never drops it unnamed.
#[test]
fn a_file_jj_refused_to_track_is_named_by_land_and_never_lost_by_clean_landed() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let script = format!("head -c {BIG} /dev/zero > big.bin && echo s > small.txt");
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", &script])
        .assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let dry = env.aw(&repo, ["land", "w1", "--dry-run", "--json"]);
    dry.assert_ok();
    assert_eq!(
        dry.json()["not_landed"],
        serde_json::json!(["big.bin"]),
        "{}",
        dry.report()
    );
    let out = env.aw(&repo, ["land", "w1", "--json"]);
    out.assert_ok();
    let doc = out.json();
    crate::schemas::assert_valid("land", &doc);
    assert_eq!(doc["outcome"], "landed", "{doc:#}");
    assert_eq!(doc["not_landed"], serde_json::json!(["big.bin"]), "{doc:#}");
    assert!(out.stderr.contains("big.bin"), "{}", out.report());
    assert_eq!(read(&repo.join("small.txt")), "s\n");
    assert!(!repo.join("big.bin").exists());
    // Landed again (nothing new), the text names it too.
    let text = env.aw(&repo, ["land", "w1"]);
    insta::assert_snapshot!(text, @r"
    Nothing to land: workspace w1 has no commits outside default@
    --- stderr ---
    Warning: not landed: big.bin (jj does not track it)
    Hint: jj tracks no new file larger than snapshot.max-new-file-size (1 MiB unless configured), none outside snapshot.auto-track and nothing inside a nested repository: shrink or move such a file, or raise the limit (`jj config set --repo snapshot.max-new-file-size 10MiB`), then land again; ignore it if it is no work to keep
    [exit 0]
    ");
    // `clean --landed` does not take the workspace as landed: it says which file is not
    // in the target, in its dry run and when it runs, and leaves the workspace as it is.
    for args in [
        &["clean", "--landed", "--dry-run"][..],
        &["clean", "--landed"][..],
    ] {
        let out = env.aw(&repo, args);
        out.assert_ok();
        assert!(
            out.stderr.contains("Skipped w1: ")
                && out.stderr.contains("big.bin")
                && out.stderr.contains("agent-workspace clean w1"),
            "{}",
            out.report()
        );
        assert!(!out.stdout.contains("w1"), "{}", out.report());
        assert_eq!(fs::metadata(ws.join("big.bin")).unwrap().len(), BIG as u64);
    }
    // Cleaned by name, the file is kept aside where the removal says.
    let clean = env.aw(&repo, ["clean", "w1"]);
    clean.assert_ok();
    let kept = env.namespace_dir(&repo).join(".kept");
    let found: Vec<_> = fs::read_dir(&kept)
        .unwrap_or_else(|e| panic!("{e}: {}", clean.report()))
        .flatten()
        .map(|e| e.path().join("big.bin"))
        .filter(|p| p.exists())
        .collect();
    assert_eq!(found.len(), 1, "{}", clean.report());
    assert_eq!(fs::metadata(&found[0]).unwrap().len(), BIG as u64);
    assert!(
        clean
            .stdout
            .contains(&found[0].parent().unwrap().display().to_string()),
        "{}",
        clean.report()
    );
}

/// A file the workspace wrote with conflict markers as ordinary text: jj has no conflict to
/// resolve, so `--prefer` cannot settle it and the hint never offers it.
#[test]
fn markers_as_text_are_never_offered_prefer() {
    let env = TestEnv::new();
    let repo = repo_where_w1_committed(
        &env,
        "printf 'a\\n<<<<<<< side\\nb\\n>>>>>>> end\\n' > m.txt",
    );
    snapshot(&env, &repo);
    let before = graph(&env, &repo);
    let out = env.aw(&repo, ["land", "w1"]);
    out.assert_code(1);
    assert!(
        out.stdout.contains("\nConflict in m.txt ("),
        "{}",
        out.report()
    );
    assert!(!out.stderr.contains("--prefer"), "{}", out.report());
    assert!(
        out.stderr.contains("m.txt") && out.stderr.contains("--allow-conflicts"),
        "{}",
        out.report()
    );
    assert_eq!(graph(&env, &repo), before);
    // Retried with --prefer, it still conflicts, and the hint still does not offer it.
    let prefer = env.aw(&repo, ["land", "w1", "--prefer", "workspace"]);
    insta::assert_snapshot!(prefer, @r"
    Did not land 1 commit of w1 onto default@
      [SHORT] work
    1 file changed
    Conflict in m.txt ([SHORT])
    --- stderr ---
    Error: landing workspace w1 onto default@ conflicts in 1 file; nothing was changed
    Hint: m.txt holds conflict markers as ordinary text, not a conflict jj knows: edit it in the workspace and land again, or land with --allow-conflicts to bring the markers into the target as they are
    [exit 1]
    ");
    // Landed as asked, the hint names no `jj resolve` nor `--prefer`: there is nothing to
    // resolve, the markers are text to edit.
    let allowed = env.aw(&repo, ["land", "w1", "--allow-conflicts"]);
    insta::assert_snapshot!(allowed, @r#"
    Landed with conflicts 1 commit of w1 onto default@
      [SHORT] work
    1 file changed
    Conflict in m.txt ([SHORT])
    Undo: jj log --no-graph -T '' -r 'exactly(([SHORT]) & ::visible_heads(), 1)' && jj rebase -r 'change_id([CHANGE]) | ((change_id([CHANGE]))::"w1"@ ~ ::present("default"@))' -o [SHORT] && jj restore --from [SHORT] --into 'change_id([CHANGE])'
    --- stderr ---
    Error: the land left 1 conflicted file in the landed commits
    Hint: m.txt holds conflict markers as ordinary text, not a conflict jj knows: edit it in the target to settle it, or revert the land with `jj log --no-graph -T '' -r 'exactly(([SHORT]) & ::visible_heads(), 1)' && jj rebase -r 'change_id([CHANGE]) | ((change_id([CHANGE]))::"w1"@ ~ ::present("default"@))' -o [SHORT] && jj restore --from [SHORT] --into 'change_id([CHANGE])'`
    [exit 1]
    "#);
}
