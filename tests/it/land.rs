//! `land`'s stories both backends tell alike, each checked with its own commands: `--prefer`
//! takes the named side of a conflict, and a main working copy (git: worktree) with edits
//! to a file the land would change (or one the workspace renamed away) is refused with
//! nothing changed. What only one backend does is in `land_jj.rs`, `land_git.rs` and their
//! `land_safety_*.rs`.

use std::fs;
use std::path::{Path, PathBuf};

use crate::backends::{git_ok, Backend};
use crate::harness::TestEnv;
use crate::land_support::{graph, op_ids, shape, snapshot, undo_of};

/// A repository whose workspace `w1` changed `a.txt` to `text` and made `new.txt`: jj's run
/// committed them (every working copy snapshotted), git's left them uncommitted.
fn repo_with_work(backend: Backend, env: &TestEnv, text: &str) -> PathBuf {
    match backend {
        Backend::Jj => crate::land_support::repo_with_work(env, text),
        Backend::Git => crate::land_git::repo_with_work(env, text),
    }
}

/// Commits `a.txt` = `text` on the main side (the target's side of a conflict).
fn main_commits_a(backend: Backend, env: &TestEnv, repo: &Path, text: &str) {
    match backend {
        Backend::Jj => crate::land_support::main_commits_a(env, repo, text),
        Backend::Git => crate::land_git::main_commits_a(env, repo, text),
    }
}

fn prefer(backend: Backend, side: &str, expected: &str) {
    let env = TestEnv::new();
    let repo = repo_with_work(backend, &env, "from w1\n");
    main_commits_a(backend, &env, &repo, "from main\n");
    let before = match backend {
        Backend::Jj => {
            snapshot(&env, &repo);
            shape(&env, &repo)
        }
        Backend::Git => String::new(),
    };
    let out = env.aw(&repo, ["land", "w1", "--prefer", side]);
    out.assert_ok();
    assert!(
        out.stdout
            .contains(&format!("Resolved a.txt by taking the {side} side\n")),
        "{}",
        out.report()
    );
    assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), expected);
    let land = &env.metadata(&env.ws_path(&repo, "w1"))["land"];
    assert_eq!(land["outcome"], "landed");
    assert_eq!(
        land["resolved"],
        serde_json::json!([{"path": "a.txt", "side": side}])
    );
    match backend {
        Backend::Jj => {
            assert_eq!(
                env.jj_ok(
                    &repo,
                    ["log", "--no-graph", "-r", "conflicts()", "-T", "commit_id"]
                ),
                ""
            );
            // The printed undo takes the work back out and restores the landed commit as
            // it was before the land, the workspace's side included.
            let undo = undo_of(&out);
            assert_eq!(undo.matches("jj restore --from ").count(), 1, "{undo}");
            assert!(!undo.contains("jj op "), "{undo}");
            env.cmd("sh", &repo).args(["-c", &undo]).run().assert_ok();
            assert_eq!(shape(&env, &repo), before);
            let shown = [
                "--ignore-working-copy",
                "file",
                "show",
                "-r",
                "w1@-",
                "a.txt",
            ];
            assert_eq!(env.jj_ok(&repo, shown), "from w1\n");
            assert_eq!(
                fs::read_to_string(repo.join("a.txt")).unwrap(),
                "from main\n"
            );
        }
        Backend::Git => {
            assert_eq!(fs::read_to_string(repo.join("new.txt")).unwrap(), "new\n");
            assert_eq!(git_ok(&env, &repo, &["status", "--porcelain"]), "");
        }
    }
}

fn prefer_workspace_takes_the_workspace_s_side(backend: Backend) {
    prefer(backend, "workspace", "from w1\n");
}

fn prefer_target_takes_the_target_s_side(backend: Backend) {
    prefer(backend, "target", "from main\n");
}

/// What the refusal of a main side with edits to `a.txt` says.
fn main_has_edits_to_a(backend: Backend) -> &'static str {
    match backend {
        Backend::Jj => "has edits in files the land would change: a.txt; nothing was landed",
        Backend::Git => {
            "has uncommitted changes in files the land would change: a.txt; nothing was landed"
        }
    }
}

/// jj's main working copy or git's main worktree has its own edit to `a.txt`, which the
/// land would change: refused, and nothing changes (jj: the graph and the operation log;
/// git: every ref, the index, both worktrees' status).
fn a_main_working_copy_with_edits_to_the_same_file_is_refused(backend: Backend) {
    let env = TestEnv::new();
    let repo = repo_with_work(backend, &env, "from w1\n");
    fs::write(repo.join("a.txt"), "main's unfinished edit\n").unwrap();
    let unchanged = || match backend {
        Backend::Jj => {
            let ops = op_ids(&env, &repo);
            format!("{}--\n{}", ops.join("\n"), graph(&env, &repo))
        }
        Backend::Git => crate::land_git::state(&env, &repo),
    };
    if backend == Backend::Jj {
        snapshot(&env, &repo);
    }
    let before = unchanged();
    let out = env.aw(&repo, ["land", "w1"]);
    out.assert_code(1);
    assert!(
        out.stderr.contains(main_has_edits_to_a(backend)),
        "{}",
        out.report()
    );
    assert!(out.stderr.contains("\nHint: "), "{}", out.report());
    assert_eq!(
        fs::read_to_string(repo.join("a.txt")).unwrap(),
        "main's unfinished edit\n"
    );
    assert_eq!(unchanged(), before);
    assert!(env
        .metadata(&env.ws_path(&repo, "w1"))
        .get("land")
        .is_none());
}

/// The workspace committed a rename of `a.txt`; the main side has an uncommitted edit to
/// `a.txt`: the land would delete it there, so it is refused and nothing changes (git's was
/// `an_edit_in_main_to_a_file_the_workspace_renamed_blocks_the_land`).
fn a_main_edit_to_a_file_the_workspace_renamed_is_refused(backend: Backend) {
    let env = TestEnv::new();
    let (repo, script) = match backend {
        Backend::Jj => (
            env.jj_repo("repo"),
            "mv a.txt renamed.txt && jj commit -m rename",
        ),
        Backend::Git => (
            crate::backends::git_repo(&env, "repo"),
            "git mv a.txt renamed.txt && git commit -qm rename",
        ),
    };
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", script])
        .assert_ok();
    fs::write(repo.join("a.txt"), "main's unfinished edit\n").unwrap();
    let unchanged = || match backend {
        Backend::Jj => graph(&env, &repo),
        Backend::Git => crate::land_git::state(&env, &repo),
    };
    if backend == Backend::Jj {
        snapshot(&env, &repo);
    }
    let before = unchanged();
    let out = env.aw(&repo, ["land", "w1"]);
    out.assert_code(1);
    assert!(
        out.stderr.contains(main_has_edits_to_a(backend)),
        "{}",
        out.report()
    );
    assert_eq!(unchanged(), before);
    assert_eq!(
        fs::read_to_string(repo.join("a.txt")).unwrap(),
        "main's unfinished edit\n"
    );
}

crate::both_backends!(
    prefer_workspace_takes_the_workspace_s_side,
    prefer_target_takes_the_target_s_side,
    a_main_working_copy_with_edits_to_the_same_file_is_refused,
    a_main_edit_to_a_file_the_workspace_renamed_is_refused,
);
