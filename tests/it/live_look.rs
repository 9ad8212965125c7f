//! Looking at a running agent's work: `diff` and `land --dry-run` while another process's
//! run holds the workspace read it without its lease and write nothing (jj: no snapshot, so
//! they show its last snapshot and say when that was; git: its live files, no optional
//! lock), and a real `land` is still refused as busy.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::backends::Backend;
use crate::harness::TestEnv;
use crate::reliability_support::start_long_run;

/// Everything of a workspace a look must leave as it was: its record (state and view), its
/// working copy's own files (jj's `.jj/working_copy`, git's index), and the repository's
/// operation heads (jj).
fn untouched(env: &TestEnv, repo: &Path, ws: &Path, backend: Backend) -> Vec<(PathBuf, Vec<u8>)> {
    let id = ws.file_name().unwrap().to_string_lossy().to_string();
    let mut files = vec![
        env.namespace_dir(repo).join(format!(".state/{id}.json")),
        ws.join(".agent-workflow.json"),
    ];
    let dir = match backend {
        Backend::Jj => ws.join(".jj/working_copy"),
        Backend::Git => {
            let git_dir = env
                .cmd("git", ws)
                .args(["rev-parse", "--absolute-git-dir"])
                .run();
            git_dir.assert_ok();
            PathBuf::from(git_dir.stdout.trim())
        }
    };
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            files.push(path);
        }
    }
    if backend == Backend::Jj {
        let heads = repo.join(".jj/repo/op_heads/heads");
        files.extend(fs::read_dir(&heads).unwrap().map(|e| e.unwrap().path()));
    }
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let bytes = fs::read(&path).unwrap_or_default();
            (path, bytes)
        })
        .collect()
}

/// Whether the lease of `id` is held (by the run).
fn lease_held(env: &TestEnv, repo: &Path, id: &str) -> bool {
    let lease = env.namespace_dir(repo).join(format!(".locks/{id}.lock"));
    !std::process::Command::new("flock")
        .args(["-n", "-E", "99"])
        .arg(&lease)
        .arg("true")
        .status()
        .expect("run flock")
        .success()
}

fn diff_and_dry_run_look_at_a_live_run(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", "echo one > one.txt"])
        .assert_ok();
    let ws = env.ws_path(&repo, "w1");
    if backend == Backend::Jj {
        // The user looks with jj before the next run: one.txt is in jj's last snapshot.
        env.jj_ok(&ws, ["status"]);
    }
    // Times are to the second: the run starts in a later one than that snapshot.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let run = start_long_run(&env, &repo, "w1", &[]);
    // The agent edits while it runs, and touches a tracked file without changing it (git
    // would refresh the index for it, were a read allowed its optional lock).
    fs::write(ws.join("two.txt"), "two\n").unwrap();
    let touched = std::process::Command::new("touch")
        .args(["-d", "2001-01-01 00:00:00"])
        .arg(ws.join("a.txt"))
        .status()
        .unwrap();
    assert!(touched.success());
    let before = untouched(&env, &repo, &ws, backend);

    let diff = env.aw(&repo, ["diff", "w1"]);
    diff.assert_ok();
    let json = env.aw(&repo, ["diff", "w1", "--json"]);
    json.assert_ok();
    let doc: Value = serde_json::from_str(&json.stdout).unwrap();
    crate::schemas::assert_valid("diff", &doc);
    assert_eq!(doc["run_live"], true, "{doc:#}");
    let files: Vec<&str> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    match backend {
        // Nothing snapshotted two.txt yet: the look shows the last snapshot, and says when.
        Backend::Jj => {
            assert_eq!(doc["files_as_of"], "last-snapshot", "{doc:#}");
            assert!(
                doc["snapshot_at"].as_str().unwrap().ends_with('Z'),
                "{doc:#}"
            );
            assert_eq!(files, ["one.txt"], "{doc:#}");
            assert!(
                diff.stdout.contains("as of jj's last snapshot at "),
                "{}",
                diff.stdout
            );
        }
        Backend::Git => {
            assert_eq!(doc["files_as_of"], "live-files", "{doc:#}");
            assert_eq!(files, ["one.txt", "two.txt"], "{doc:#}");
            assert!(diff.stdout.contains("live files"), "{}", diff.stdout);
        }
    }
    assert!(
        diff.stdout.contains("while a run holds it"),
        "{}",
        diff.stdout
    );
    let patch = env.aw(&repo, ["diff", "w1", "--patch"]);
    patch.assert_ok();
    assert!(patch.stdout.contains("+one"), "{}", patch.stdout);

    let dry = env.aw(&repo, ["land", "w1", "--dry-run"]);
    dry.assert_ok();
    assert!(
        dry.stdout
            .starts_with("A run holds workspace w1: its work is read "),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stdout.contains("Would land 1 commit of w1"),
        "{}",
        dry.stdout
    );
    let dry_json = env.aw(&repo, ["land", "w1", "--dry-run", "--json"]);
    dry_json.assert_ok();
    let doc: Value = serde_json::from_str(&dry_json.stdout).unwrap();
    crate::schemas::assert_valid("land", &doc);
    assert_eq!(doc["run_live"], true, "{doc:#}");
    assert_eq!(doc["applied"], false, "{doc:#}");

    // The table reads the same way; jj marks the changes `*`: its last snapshot is older
    // than the run.
    let table = env.aw(&repo, ["status"]);
    let row = table
        .assert_ok()
        .stdout
        .lines()
        .nth(1)
        .unwrap_or_default()
        .to_string();
    let listed = env.aw(&repo, ["status", "--json"]).json();
    crate::schemas::assert_valid("status", &listed);
    let one = env.aw(&repo, ["status", "w1", "--json"]).json();
    crate::schemas::assert_valid("status-workspace", &one);
    assert_eq!(
        one["changes"]["files_as_of"],
        listed["workspaces"][0]["changes"]["files_as_of"]
    );
    let changes = &listed["workspaces"][0]["changes"];
    match backend {
        Backend::Jj => {
            assert!(row.contains(" 1 file +1 -0* "), "{row}");
            assert_eq!(changes["may_be_behind"], true, "{listed:#}");
        }
        Backend::Git => {
            assert!(row.contains(" 2 files +2 -0 "), "{row}");
            assert_eq!(changes["may_be_behind"], false, "{listed:#}");
        }
    }
    // A real land is still refused: the run holds the workspace.
    let real = env.aw(&repo, ["land", "w1"]);
    real.assert_code(1);
    assert!(
        real.stderr
            .starts_with("Error: workspace \"w1\" is busy: a run holds it"),
        "{}",
        real.stderr
    );

    // Record, working copy and operation heads as they were; the run still holds its lease.
    let after = untouched(&env, &repo, &ws, backend);
    let changed: Vec<_> = before
        .iter()
        .filter(|file| !after.contains(file))
        .map(|(path, _)| path)
        .collect();
    assert!(
        changed.is_empty() && after.len() == before.len(),
        "changed: {changed:?}"
    );
    assert!(lease_held(&env, &repo, "w1"));
    assert!(!repo.join("one.txt").exists());
    fs::write(env.path().join("w1.release"), "").unwrap();
    run.wait().assert_ok();
    // Once the run ends, diff holds the workspace again and reads its files as they are.
    let after = crate::diff_support::diff_json(&env, &repo, "w1");
    assert_eq!(after["run_live"], false, "{after:#}");
    assert_eq!(after["files_as_of"], "live-files", "{after:#}");
    assert_eq!(after["files"].as_array().unwrap().len(), 2, "{after:#}");
}

crate::both_backends!(diff_and_dry_run_look_at_a_live_run);

/// A quick first run that ends in the same second as the workspace's creation (jj's last
/// snapshot, to the second): `status` cannot tell whether jj saw what it wrote, so it says
/// "may be behind" (`*`) rather than `clean`. Tried until the two fall in the same second.
#[test]
fn a_run_ending_in_the_second_of_the_last_snapshot_may_be_behind() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    for attempt in 0..20 {
        let id = format!("q{attempt}");
        env.aw(&repo, ["run", &id, "--", "sh", "-c", "echo x > quick.txt"])
            .assert_ok();
        let listed = env.aw(&repo, ["status", "--json"]).json();
        let Some(doc) = listed["workspaces"]
            .as_array()
            .and_then(|all| all.iter().find(|w| w["workspace_id"] == id.as_str()))
        else {
            panic!("{id} not listed: {listed:#}");
        };
        let second = |v: &Value| v.as_str().map(|s| s[..19].to_string());
        let snapshot = second(&doc["changes"]["snapshot_at"]);
        let ended = second(&doc["record"]["finished_at"]);
        if snapshot.is_none() || snapshot != ended {
            continue;
        }
        assert_eq!(doc["changes"]["may_be_behind"], true, "{doc:#}");
        let table = env.aw(&repo, ["status"]).assert_ok().stdout.clone();
        let row = table
            .lines()
            .find(|l| l.starts_with(&id))
            .unwrap_or_default();
        assert!(!row.contains(" clean "), "{table}");
        return;
    }
    panic!("no run ended in the second of its workspace's last snapshot in 20 tries");
}
