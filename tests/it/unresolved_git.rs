//! git: a worktree holding unresolved conflicts (unmerged index entries a `git merge` or a
//! `git stash pop` left half-way) or conflict-marker lines it adds is refused by
//! `checkpoint`, `clean` and `land`, naming the files and how to conclude or abort, and
//! nothing is committed, moved or removed. Marker lines already in the base are content.

use std::fs;
use std::path::{Path, PathBuf};

use crate::backends::{git_ok, git_repo};
use crate::harness::{Outcome, TestEnv};

const MARKED: &str = "<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> side\n";

/// Every ref, the main worktree's index, status and files, and `w1`'s HEAD, index, merge
/// state, status and `a.txt`: what a refused command must leave as it was.
fn state(env: &TestEnv, repo: &Path) -> String {
    let ws = env.ws_path(repo, "w1");
    let status = ["status", "--porcelain", "--untracked-files=all"];
    let git_dir = git_ok(env, &ws, &["rev-parse", "--absolute-git-dir"]);
    let git_dir = PathBuf::from(git_dir.trim());
    let index = fs::read(git_dir.join("index")).unwrap();
    [
        git_ok(
            env,
            repo,
            &["for-each-ref", "--format=%(refname) %(objectname)"],
        ),
        git_ok(env, repo, &["ls-files", "-s"]),
        git_ok(env, repo, &status),
        fs::read_to_string(repo.join("a.txt")).unwrap(),
        git_ok(env, &ws, &["rev-parse", "HEAD"]),
        git_ok(env, &ws, &["ls-files", "-s"]),
        format!("{index:?}"),
        fs::read_to_string(git_dir.join("MERGE_HEAD")).unwrap_or_default(),
        git_ok(env, &ws, &status),
        fs::read_to_string(ws.join("a.txt")).unwrap_or_default(),
    ]
    .join("--\n")
}

/// A git repo whose workspace `w1` holds a conflict in `a.txt` with `main`: `how` is
/// "merge" (its commit merged with main, stopped) or "stash pop" (its uncommitted edit
/// stashed, main brought in, the pop stopped).
fn conflicted(env: &TestEnv, how: &str) -> PathBuf {
    let repo = git_repo(env, "repo");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    fs::write(repo.join("a.txt"), "from main\n").unwrap();
    git_ok(env, &repo, &["commit", "-q", "-am", "main side"]);
    fs::write(ws.join("a.txt"), "from w1\n").unwrap();
    let stopped = match how {
        "merge" => {
            git_ok(env, &ws, &["commit", "-q", "-am", "w1 side"]);
            env.cmd("git", &ws).args(["merge", "-q", "main"]).run()
        }
        _ => {
            git_ok(env, &ws, &["stash", "-q"]);
            git_ok(env, &ws, &["merge", "-q", "--ff-only", "main"]);
            env.cmd("git", &ws).args(["stash", "pop", "-q"]).run()
        }
    };
    assert_ne!(stopped.code(), Some(0), "{how}: {}", stopped.report());
    assert!(
        git_ok(env, &ws, &["ls-files", "-u"]).contains("a.txt"),
        "{how}: no conflict to test with"
    );
    assert!(fs::read_to_string(ws.join("a.txt"))
        .unwrap()
        .starts_with("<<<<<<< "));
    repo
}

/// A refusal: exit 1, one error naming `file`, a hint holding `hint`.
fn assert_refused(out: &Outcome, file: &str, hint: &str, what: &str) {
    assert_eq!(out.code(), Some(1), "{what}: {}", out.report());
    assert!(
        out.stderr.starts_with("Error: "),
        "{what}: {}",
        out.report()
    );
    let (error, rest) = out.stderr.split_once("\nHint: ").unwrap_or_else(|| {
        panic!("{what}: no hint: {}", out.report());
    });
    assert!(error.contains(file), "{what}: {}", out.report());
    assert!(rest.contains(hint), "{what}: {}", out.report());
}

#[test]
fn unmerged_files_are_refused_by_checkpoint_clean_and_land_and_nothing_changes() {
    for (how, hint) in [("merge", "merge --abort"), ("stash pop", "a.txt")] {
        let env = TestEnv::new();
        let repo = conflicted(&env, how);
        let ws = env.ws_path(&repo, "w1");
        let before = state(&env, &repo);
        for args in [
            &["checkpoint", "w1"][..],
            &["checkpoint", "w1", "--json"],
            &["clean", "w1"],
            &["land", "w1"],
            &["land", "w1", "--dry-run"],
        ] {
            let what = format!("{how}: {}", args.join(" "));
            let out = env.aw(&repo, args);
            assert_refused(&out, "a.txt", hint, &what);
            assert!(!out.stdout.contains("Landed"), "{what}: {}", out.report());
            assert_eq!(state(&env, &repo), before, "{what}: {}", out.report());
            assert!(ws.is_dir(), "{what}: the workspace went");
        }
        // Marked resolved by hand, markers left in: still refused, now for the markers
        // (land: for the merge it would land in the middle of, if one is).
        git_ok(&env, &ws, &["add", "a.txt"]);
        let before = state(&env, &repo);
        for args in [&["checkpoint", "w1"][..], &["clean", "w1"], &["land", "w1"]] {
            let what = format!("{how}, added: {}", args.join(" "));
            let out = env.aw(&repo, args);
            if how == "merge" && args[0] == "land" {
                out.assert_code(1);
                assert!(
                    out.stderr.contains("in the middle of a merge")
                        && out.stderr.contains("merge --abort"),
                    "{what}: {}",
                    out.report()
                );
            } else {
                assert_refused(&out, "a.txt", "a.txt", &what);
                assert!(
                    out.stderr.contains("conflict marker"),
                    "{what}: {}",
                    out.report()
                );
            }
            assert_eq!(state(&env, &repo), before, "{what}: {}", out.report());
            assert!(ws.is_dir(), "{what}: the workspace went");
        }
    }
}

/// Markers committed in the workspace (the agent concluded the merge with them) never land.
#[test]
fn committed_marker_lines_are_refused_by_land_and_its_dry_run() {
    let env = TestEnv::new();
    let repo = conflicted(&env, "merge");
    let ws = env.ws_path(&repo, "w1");
    git_ok(
        &env,
        &ws,
        &["commit", "-q", "-am", "concluded with markers"],
    );
    let before = state(&env, &repo);
    for args in [&["land", "w1"][..], &["land", "w1", "--dry-run"]] {
        let what = args.join(" ");
        let out = env.aw(&repo, args);
        assert_refused(&out, "a.txt", "a.txt", &what);
        assert!(
            out.stderr.contains("conflict marker"),
            "{what}: {}",
            out.report()
        );
        assert_eq!(state(&env, &repo), before, "{what}: {}", out.report());
    }
    assert_eq!(
        fs::read_to_string(repo.join("a.txt")).unwrap(),
        "from main\n"
    );
}

/// Marker lines an agent merely wrote (no merge, nothing unmerged) are refused as well.
#[test]
fn marker_lines_an_agent_wrote_are_refused() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    let script = format!(
        "printf '{}' > new.txt && echo fine > b.txt",
        MARKED.replace('\n', "\\n")
    );
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", &script])
        .assert_ok();
    let ws = env.ws_path(&repo, "w1");
    assert_eq!(fs::read_to_string(ws.join("new.txt")).unwrap(), MARKED);
    let before = state(&env, &repo);
    for args in [
        &["checkpoint", "w1"][..],
        &["clean", "w1"],
        &["land", "w1"],
        &["land", "w1", "--dry-run"],
    ] {
        let what = args.join(" ");
        let out = env.aw(&repo, args);
        assert_refused(&out, "new.txt", "new.txt", &what);
        assert!(!out.stderr.contains("b.txt"), "{what}: {}", out.report());
        assert_eq!(state(&env, &repo), before, "{what}: {}", out.report());
        assert!(ws.is_dir(), "{what}: the workspace went");
    }
    assert!(!repo.join("new.txt").exists());
}

/// A file the base holds with marker lines is content: the workspace may change it (and
/// add others) and checkpoint, land and clean as usual.
#[test]
fn marker_lines_in_the_base_are_content() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    fs::write(repo.join("fixture.txt"), MARKED).unwrap();
    git_ok(&env, &repo, &["add", "fixture.txt"]);
    git_ok(
        &env,
        &repo,
        &["commit", "-q", "-m", "a fixture with markers"],
    );
    let script = "echo more >> fixture.txt && echo new > new.txt";
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", script])
        .assert_ok();
    env.aw(&repo, ["checkpoint", "w1"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    fs::write(ws.join("later.txt"), "later\n").unwrap();
    env.aw(&repo, ["land", "w1"]).assert_ok();
    assert_eq!(
        fs::read_to_string(repo.join("fixture.txt")).unwrap(),
        format!("{MARKED}more\n")
    );
    assert_eq!(
        fs::read_to_string(repo.join("later.txt")).unwrap(),
        "later\n"
    );
    fs::write(ws.join("last.txt"), "last\n").unwrap();
    env.aw(&repo, ["clean", "w1"]).assert_ok();
    assert!(!ws.exists());
}
