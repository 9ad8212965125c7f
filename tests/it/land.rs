//! `land`'s stories both backends tell alike, each checked with its own commands: the work
//! comes into the main working copy (jj: below it, in operations the printed undo reverts;
//! git: its branch fast-forwarded), edits no commit holds are recorded first, `--onto` lands
//! on another target, `--prefer` takes the named side of a conflict, and a main working copy
//! (git: worktree) with edits to a file the land would change (or one the workspace renamed
//! away) is refused with nothing changed. What only one backend does is in `land_git.rs`
//! and the `land_safety_*.rs` files.

use std::fs;
use std::path::{Path, PathBuf};

use crate::backends::{git_ok, Backend};
use crate::harness::TestEnv;
use crate::land_support::{graph, main_commits, op_ids, shape, snapshot, subjects, undo_of};

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

/// The work of `w1` lands in the main working copy, which keeps its own edit (jj: a file it
/// changed, git: an untracked file); the workspace goes on from the landed work.
fn a_land_brings_the_work_into_the_main_working_copy(backend: Backend) {
    let env = TestEnv::new();
    let repo = repo_with_work(backend, &env, "from w1\n");
    let (mine, text) = match backend {
        Backend::Jj => ("mine.txt", "main's own edit\n"),
        Backend::Git => ("mine.txt", "untracked, untouched\n"),
    };
    fs::write(repo.join(mine), text).unwrap();
    let before = match backend {
        Backend::Jj => {
            snapshot(&env, &repo);
            Some((op_ids(&env, &repo), shape(&env, &repo)))
        }
        Backend::Git => None,
    };
    let out = env.aw(&repo, ["land", "w1"]);
    match backend {
        Backend::Jj => insta::assert_snapshot!(out, @r#"
        Landed 1 commit of w1 onto default@
          [SHORT] work
        2 files changed
        Undo: jj log --no-graph -T '' -r 'exactly(([SHORT]) & ::visible_heads(), 1)' && jj rebase -r 'change_id([CHANGE]) | ((change_id([CHANGE]))::"w1"@ ~ ::present("default"@))' -o [SHORT] && jj restore --from [SHORT] --into 'change_id([CHANGE])'
        [exit 0]
        "#),
        Backend::Git => insta::assert_snapshot!(out, @r#"
        Landed 1 commit of w1 onto main
          [SHORT] agent-workspace: uncommitted changes of workspace w1
        2 files changed
        Undo: if test "$(git -C [TMP]/repo symbolic-ref -q HEAD)@$(git -C [TMP]/repo rev-parse -q --verify HEAD)" = refs/heads/main@[COMMIT]; then git -C [TMP]/repo reset --quiet --keep [COMMIT]; else echo 'not undone: main is no longer at [SHORT] in [TMP]/repo' >&2; false; fi
        [exit 0]
        "#),
    }
    assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), "from w1\n");
    assert_eq!(fs::read_to_string(repo.join("new.txt")).unwrap(), "new\n");
    assert_eq!(fs::read_to_string(repo.join(mine)).unwrap(), text);
    let ws = env.ws_path(&repo, "w1");
    let record = env.metadata(&ws);
    assert_eq!(record["land"]["outcome"], "landed");
    match backend {
        Backend::Jj => {
            let (ops, shape_before) = before.unwrap();
            assert_eq!(record["land"]["target"], "default@");
            assert_eq!(record["land"]["operation_before"], ops[0].as_str());
            // The main working copy keeps its own edit on top of the work.
            let parent = |rev: &str| subjects(&env, &repo, rev);
            assert_eq!(parent("@-"), "work");
            assert_eq!(parent("@--"), "initial");
            // The workspace goes on above its landed commit, its files current, and is not
            // stale: jj works there without `workspace update-stale`.
            assert_eq!(parent("w1@-"), "work");
            env.jj_ok(&ws, ["status"]);
            assert_eq!(fs::read_to_string(ws.join("a.txt")).unwrap(), "from w1\n");
            // The land's operations come after those before it (the rebase, the workspace's
            // working copy put on top; in a colocated repository jj adds one resetting git's
            // HEAD as the main working copy is updated). The printed undo takes the work back
            // out of the main working copy, which keeps its own edit, and the workspace
            // keeps it.
            let after = op_ids(&env, &repo);
            assert!(
                after.len() >= ops.len() + 2,
                "{}",
                env.jj_ok(&repo, ["op", "log"])
            );
            assert_eq!(after[after.len() - ops.len()..], ops[..]);
            let undo = undo_of(&out);
            assert!(!undo.contains("jj op "), "{undo}");
            env.cmd("sh", &repo).args(["-c", &undo]).run().assert_ok();
            assert_eq!(shape(&env, &repo), shape_before);
            assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), "hello\n");
            assert!(!repo.join("new.txt").exists());
            assert_eq!(fs::read_to_string(repo.join(mine)).unwrap(), text);
            assert_eq!(parent("w1@-"), "work");
        }
        Backend::Git => {
            assert_eq!(record["land"]["target"], "main");
            // A fast-forward: main is the workspace's branch, which holds its changes, now
            // committed; the main worktree has nothing else to commit.
            let tip = git_ok(&env, &repo, &["rev-parse", "agent-workspace/w1"]);
            assert_eq!(git_ok(&env, &repo, &["rev-parse", "main"]), tip);
            assert_eq!(
                git_ok(&env, &repo, &["status", "--porcelain"]),
                "?? mine.txt\n"
            );
            assert_eq!(git_ok(&env, &ws, &["status", "--porcelain"]), "");
            let subject = git_ok(&env, &ws, &["log", "-1", "--format=%s"]);
            assert_eq!(
                subject,
                "agent-workspace: uncommitted changes of workspace w1\n"
            );
        }
    }
}

/// Edits the workspace's run left unrecorded (jj: in its working-copy commit; git:
/// uncommitted) are recorded first and land too; landing again finds nothing left.
fn unrecorded_edits_are_recorded_first_and_land_too(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(
        &repo,
        ["run", "w1", "--", "sh", "-c", "echo edited > a.txt"],
    )
    .assert_ok();
    let out = env.aw(&repo, ["land", "w1", "--json"]);
    let doc = out.json();
    assert_eq!(doc["outcome"], "landed");
    assert_eq!(doc["recorded_edits"], true);
    assert_eq!(doc["paths"], serde_json::json!(["a.txt"]));
    let subject = match backend {
        Backend::Jj => "[workspace w1] edits recorded by land",
        Backend::Git => "agent-workspace: uncommitted changes of workspace w1",
    };
    assert_eq!(doc["commits"][0]["subject"], subject);
    assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), "edited\n");
    // The workspace has nothing left to record: jj's working copy is a new empty commit on
    // top of the landed one, git's worktree is clean.
    let ws = env.ws_path(&repo, "w1");
    match backend {
        Backend::Jj => {
            let empty = env.jj_ok(&ws, ["log", "--no-graph", "-r", "@", "-T", "empty"]);
            assert_eq!(empty, "true");
        }
        Backend::Git => assert_eq!(git_ok(&env, &ws, &["status", "--porcelain"]), ""),
    }
    let again = env.aw(&repo, ["land", "w1"]);
    match backend {
        Backend::Jj => insta::assert_snapshot!(again, @r"
        Nothing to land: workspace w1 has no commits outside default@
        [exit 0]
        "),
        Backend::Git => insta::assert_snapshot!(again, @r"
        Nothing to land: workspace w1 has no commits outside main
        [exit 0]
        "),
    }
}

/// `--onto` lands on another target (jj: a revision, and the workspace follows; git: a
/// branch, never a commit) and leaves the main working copy as it was.
fn onto_lands_on_another_target_and_leaves_the_main_working_copy(backend: Backend) {
    let env = TestEnv::new();
    let repo = repo_with_work(backend, &env, "from w1\n");
    let target = match backend {
        Backend::Jj => {
            main_commits(&env, &repo, "sub/b.txt", "from main\n");
            env.jj_ok(&repo, ["bookmark", "create", "side", "-r", "@-"]);
            "side"
        }
        Backend::Git => {
            git_ok(&env, &repo, &["branch", "release"]);
            // A commit is no branch to merge into: refused, naming what git lands into.
            let head = git_ok(&env, &repo, &["rev-parse", "main"]);
            let refused = env.aw(&repo, ["land", "w1", "--onto", head.trim()]);
            insta::assert_snapshot!(refused, @r#"
            --- stderr ---
            Error: cannot land onto "[COMMIT]": no local branch has that name
            Hint: git lands by merging into a branch: pass --onto a local branch name (create one at that commit with `git branch NAME REV`)
            [exit 1]
            "#);
            "release"
        }
    };
    let main_before = match backend {
        Backend::Jj => env.commit_id(&repo, "@-"),
        Backend::Git => git_ok(&env, &repo, &["rev-parse", "main"]),
    };
    let out = env.aw(&repo, ["land", "w1", "--onto", target]);
    match backend {
        Backend::Jj => insta::assert_snapshot!(out, @r#"
        Landed 1 commit of w1 onto [COMMIT]
          [SHORT] work
        2 files changed
        Undo: jj log --no-graph -T '' -r 'exactly(([SHORT]) & ::visible_heads(), 1)' && jj rebase -r '(change_id([CHANGE]))::"w1"@' -o [SHORT] && jj restore --from [SHORT] --into 'change_id([CHANGE])'
        [exit 0]
        "#),
        Backend::Git => insta::assert_snapshot!(out, @r"
        Landed 1 commit of w1 onto release
          [SHORT] agent-workspace: uncommitted changes of workspace w1
        2 files changed
        Undo: git -C [TMP]/repo update-ref refs/heads/release [COMMIT] [COMMIT]
        [exit 0]
        "),
    }
    // The main working copy was not the target: untouched.
    assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), "hello\n");
    let land = &env.metadata(&env.ws_path(&repo, "w1"))["land"];
    match backend {
        Backend::Jj => {
            assert_eq!(env.commit_id(&repo, "@-"), main_before);
            let desc = |rev: &str| subjects(&env, &repo, rev);
            assert_eq!(desc("w1@-"), "work");
            assert_eq!(desc("w1@--"), "main edit");
            assert_eq!(land["target"], env.commit_id(&repo, "side").as_str());
            // Again: the commits already sit there, and nothing changes.
            let graph_now = graph(&env, &repo);
            env.aw(&repo, ["land", "w1", "--onto", "side"]).assert_ok();
            assert_eq!(graph(&env, &repo), graph_now);
        }
        Backend::Git => {
            assert_eq!(git_ok(&env, &repo, &["rev-parse", "main"]), main_before);
            let release = git_ok(&env, &repo, &["show", "release:a.txt"]);
            assert_eq!(release, "from w1\n");
            assert_eq!(land["target"], "release");
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
    a_land_brings_the_work_into_the_main_working_copy,
    unrecorded_edits_are_recorded_first_and_land_too,
    onto_lands_on_another_target_and_leaves_the_main_working_copy,
    prefer_workspace_takes_the_workspace_s_side,
    prefer_target_takes_the_target_s_side,
    a_main_working_copy_with_edits_to_the_same_file_is_refused,
    a_main_edit_to_a_file_the_workspace_renamed_is_refused,
);
