//! git `diff`'s summary counts untracked files' lines itself, as `git diff --numstat` counts
//! a new file, and asks git (through a temporary index) whenever git could count otherwise:
//! an untracked file that may be a rename of a deleted one, an attributes file, anything
//! but a regular file or a symlink.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use serde_json::Value;

use crate::backends::{git_ok, Backend};
use crate::diff_support::diff_json;
use crate::harness::TestEnv;

/// The summary's file lines, each as its fields (kind, insertions, deletions, path).
fn summary_rows(text: &str) -> Vec<String> {
    let mut rows: Vec<String> = text
        .lines()
        .skip_while(|l| !l.is_empty())
        .skip(1)
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    rows.pop(); // the totals
    rows
}

/// The rows the summary shows for the files of `diff --json` (which writes a tree through
/// a temporary index: git's own count), in the JSON's order.
fn json_rows(json: &Value) -> Vec<String> {
    json["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let (ins, del) = match f["binary"].as_bool().unwrap() {
                true => ("bin".to_string(), "bin".to_string()),
                false => (format!("+{}", f["added"]), format!("-{}", f["removed"])),
            };
            let path = match f.get("old_path").and_then(Value::as_str) {
                Some(old) => format!("{old} -> {}", f["path"].as_str().unwrap()),
                None => f["path"].as_str().unwrap().to_string(),
            };
            format!("{} {ins} {del} {path}", f["status"].as_str().unwrap())
        })
        .collect()
}

/// The summary of `id` and the git commands it ran (one per line).
fn logged_summary(env: &TestEnv, repo: &Path, id: &str) -> (String, String) {
    let log = env.path().join("git-calls.log");
    let _ = fs::remove_file(&log);
    let bin = crate::status_details::logging_wrapper(env, "git", &log);
    let out = env
        .aw_cmd(repo)
        .env("PATH", env.path_with_first(&bin))
        .args(["diff", id])
        .run();
    out.assert_ok();
    (
        out.stdout.clone(),
        fs::read_to_string(&log).unwrap_or_default(),
    )
}

/// Untracked files of every shape git counts in its own way: the summary shows what git's
/// count through an index shows (the JSON's), without adding anything to an index.
#[test]
fn git_summary_counts_untracked_files_as_git_does_without_an_index() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    fs::write(ws.join("a.txt"), "changed\n").unwrap();
    fs::write(ws.join("empty.txt"), "").unwrap();
    fs::write(ws.join("no-newline.txt"), "one\ntwo").unwrap();
    fs::write(ws.join("blank-lines.txt"), "\n\n\n").unwrap();
    fs::write(ws.join("crlf.txt"), "one\r\ntwo\r\nthree\r").unwrap();
    fs::write(ws.join("nul.bin"), b"ab\0cd\n").unwrap();
    // git looks for a NUL in the first 8,000 bytes only.
    let mut late = "x\n".repeat(4000).into_bytes();
    late.extend_from_slice(b"\0tail\n");
    fs::write(ws.join("late-nul.txt"), &late).unwrap();
    let mut early = "x\n".repeat(3999).into_bytes();
    early.extend_from_slice(b"x\0\n");
    fs::write(ws.join("early-nul.txt"), &early).unwrap();
    fs::create_dir_all(ws.join("deep/er")).unwrap();
    fs::write(ws.join("deep/er/n\u{e9}w.txt"), "a\nb\n").unwrap();
    // Symlinks count as their target's text (one line), never as what they point to.
    let outside = env.path().join("outside.txt");
    fs::write(&outside, "1\n2\n3\n4\n").unwrap();
    symlink(&outside, ws.join("link-out")).unwrap();
    symlink("deep", ws.join("link-dir")).unwrap();
    symlink("missing", ws.join("link-dangling")).unwrap();
    let (summary, asked) = logged_summary(&env, &repo, "w1");
    let json = diff_json(&env, &repo, "w1");
    assert_eq!(
        summary_rows(&summary),
        json_rows(&json),
        "{summary}{json:#}"
    );
    assert_eq!(summary_rows(&summary).len(), 12, "{summary}");
    assert!(
        !asked.lines().any(|l| l.contains(" add ")),
        "the summary added files to an index:\n{asked}"
    );
    // The worktree's index and status are as before.
    let status = git_ok(&env, &ws, &["status", "--porcelain"]);
    assert!(status.contains("?? empty.txt"), "{status}");
}

/// Where git could count an untracked file otherwise (a rename of a deleted file, an
/// attributes file that applies), the summary asks git about those few paths and shows
/// what it counts, still without adding every file to an index.
#[test]
fn git_summary_asks_git_where_it_could_count_otherwise() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    let lines: String = (1..=40).map(|n| format!("line {n}\n")).collect();
    fs::write(repo.join("ren.txt"), &lines).unwrap();
    git_ok(&env, &repo, &["add", "-A"]);
    git_ok(&env, &repo, &["commit", "-q", "-m", "ren"]);
    let check = |id: &str, setup: &dyn Fn(&Path), expect: &[&str]| {
        env.aw(&repo, ["run", id, "--", "true"]).assert_ok();
        let ws = env.ws_path(&repo, id);
        setup(&ws);
        let (summary, asked) = logged_summary(&env, &repo, id);
        // git counts the few paths concerned, and adds no other file to an index.
        assert!(
            !asked.lines().any(|l| l.contains(" add ")),
            "the summary added every file to an index:\n{asked}"
        );
        let json = diff_json(&env, &repo, id);
        assert_eq!(
            summary_rows(&summary),
            json_rows(&json),
            "{summary}{json:#}"
        );
        for row in expect {
            assert!(
                summary_rows(&summary).contains(&row.to_string()),
                "{row}\n{summary}"
            );
        }
    };
    // A deleted file moved by hand: renamed, not deleted and created.
    check(
        "mv",
        &|ws| fs::rename(ws.join("ren.txt"), ws.join("moved.txt")).unwrap(),
        &["renamed +0 -0 ren.txt -> moved.txt"],
    );
    // A move by hand beside an unrelated new file and another deletion.
    check(
        "mix",
        &|ws| {
            fs::rename(ws.join("ren.txt"), ws.join("sub/moved.txt")).unwrap();
            fs::write(ws.join("other.txt"), "other\n").unwrap();
            fs::remove_file(ws.join("a.txt")).unwrap();
        },
        &[
            "renamed +0 -0 ren.txt -> sub/moved.txt",
            "created +1 -0 other.txt",
            "deleted +0 -1 a.txt",
        ],
    );
    // A file taken out of the index but left on disk, unchanged: no change at all.
    check(
        "uncached",
        &|ws| {
            git_ok(&env, ws, &["rm", "-q", "--cached", "a.txt"]);
            fs::write(ws.join("new.txt"), "new\n").unwrap();
        },
        &["created +1 -0 new.txt"],
    );
    // An untracked attributes file that makes a text file binary.
    check(
        "attr",
        &|ws| {
            fs::write(ws.join(".gitattributes"), "*.dat -diff\n").unwrap();
            fs::write(ws.join("x.dat"), "text\n").unwrap();
        },
        &["created bin bin x.dat", "created +1 -0 .gitattributes"],
    );
    // The same in a subdirectory's attributes file.
    check(
        "subattr",
        &|ws| {
            fs::create_dir(ws.join("d")).unwrap();
            fs::write(ws.join("d/.gitattributes"), "*.txt binary\n").unwrap();
            fs::write(ws.join("d/y.txt"), "text\n").unwrap();
        },
        &["created bin bin d/y.txt"],
    );
    // The repository's own attributes file.
    let info = repo.join(".git/info");
    fs::create_dir_all(&info).unwrap();
    fs::write(info.join("attributes"), "*.info -diff\n").unwrap();
    check(
        "info",
        &|ws| fs::write(ws.join("z.info"), "text\n").unwrap(),
        &["created bin bin z.info"],
    );
}
