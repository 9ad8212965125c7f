//! `land` on git never loses or overwrites what anyone wrote: the printed undo reverts only
//! that land (and is refused once the branch moved on), another workspace's branch is not
//! landed on under its run, the main worktree's ignored files and an unfinished merge are
//! never overwritten (its edits to a file the workspace renamed: `land.rs`), a detached
//! HEAD's commits are never passed over, and the dry run says what the land then does.

use std::fs;
use std::path::{Path, PathBuf};

use crate::backends::{git_ok, git_repo};
use crate::harness::{wait_for_file, TestEnv};

/// Every ref, the main worktree's index and status, and `w1`'s status and HEAD.
fn state(env: &TestEnv, repo: &Path) -> String {
    let ws = env.ws_path(repo, "w1");
    let status = ["status", "--porcelain", "--untracked-files=all"];
    [
        git_ok(
            env,
            repo,
            &["for-each-ref", "--format=%(refname) %(objectname)"],
        ),
        git_ok(env, repo, &["ls-files", "-s"]),
        git_ok(env, repo, &status),
        git_ok(env, &ws, &status),
        git_ok(env, &ws, &["rev-parse", "HEAD"]),
    ]
    .join("--\n")
}

/// A git repo whose workspace `w1` ran `script`.
fn repo_where_w1_ran(env: &TestEnv, script: &str) -> PathBuf {
    let repo = git_repo(env, "repo");
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", script])
        .assert_ok();
    repo
}

fn rev(env: &TestEnv, dir: &Path, rev: &str) -> String {
    git_ok(env, dir, &["rev-parse", rev]).trim().to_string()
}

/// Runs the undo a land printed, through a shell, in `dir`.
fn run_undo(env: &TestEnv, dir: &Path, undo: &str) -> crate::harness::Outcome {
    env.cmd("sh", dir).args(["-c", undo]).run()
}

#[test]
fn the_printed_undo_of_a_land_in_the_main_worktree_puts_it_back() {
    let env = TestEnv::new();
    let repo = repo_where_w1_ran(&env, "echo w1 > a.txt && echo new > new.txt");
    let before = rev(&env, &repo, "main");
    fs::write(repo.join("mine.txt"), "untracked\n").unwrap();
    let out = env.aw(&repo, ["land", "w1"]);
    out.assert_ok();
    let line = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("Undo: "))
        .unwrap_or_else(|| panic!("no undo line: {}", out.report()))
        .to_string();
    let landed = rev(&env, &repo, "main");
    assert_ne!(landed, before);
    // The undo names its directory: it works from anywhere.
    run_undo(&env, env.path(), &line).assert_ok();
    assert_eq!(rev(&env, &repo, "main"), before);
    assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), "hello\n");
    assert!(!repo.join("new.txt").exists());
    assert_eq!(
        git_ok(&env, &repo, &["status", "--porcelain"]),
        "?? mine.txt\n"
    );
    // The workspace's branch still holds its work: it lands again.
    let again = env.aw(&repo, ["land", "w1", "--json"]);
    again.assert_ok();
    let doc = again.json();
    assert_eq!(doc["target_before"], before.as_str());
    assert_eq!(doc["merge_commit"], landed.as_str());
    assert!(doc["undo"].as_str().unwrap().contains("--keep"), "{doc}");
    assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), "w1\n");
}

#[test]
fn the_printed_undo_is_refused_once_the_user_committed_more() {
    let env = TestEnv::new();
    let repo = repo_where_w1_ran(&env, "echo w1 > a.txt");
    // main moved too: the land is a merge commit.
    fs::write(repo.join("sub/b.txt"), "main\n").unwrap();
    git_ok(&env, &repo, &["commit", "-q", "-am", "main edit"]);
    let doc = env.aw(&repo, ["land", "w1", "--json"]).json();
    assert_eq!(doc["outcome"], "landed", "{doc}");
    let undo = doc["undo"].as_str().unwrap().to_string();
    fs::write(repo.join("later.txt"), "user's later work\n").unwrap();
    git_ok(&env, &repo, &["add", "later.txt"]);
    git_ok(&env, &repo, &["commit", "-q", "-m", "later"]);
    let later = rev(&env, &repo, "main");
    let refused = run_undo(&env, &repo, &undo);
    assert_ne!(refused.code(), Some(0), "{}", refused.report());
    assert_eq!(rev(&env, &repo, "main"), later);
    assert_eq!(
        fs::read_to_string(repo.join("later.txt")).unwrap(),
        "user's later work\n"
    );
    assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), "w1\n");
    assert_eq!(git_ok(&env, &repo, &["status", "--porcelain"]), "");
}

#[test]
fn the_printed_undo_of_a_branch_moved_by_update_ref_is_a_compare_and_swap() {
    let env = TestEnv::new();
    let repo = repo_where_w1_ran(&env, "echo w1 > a.txt");
    git_ok(&env, &repo, &["branch", "release"]);
    let before = rev(&env, &repo, "release");
    let doc = env
        .aw(&repo, ["land", "w1", "--onto", "release", "--json"])
        .json();
    let undo = doc["undo"].as_str().unwrap().to_string();
    let landed = rev(&env, &repo, "release");
    assert_eq!(
        undo,
        format!(
            "git -C {} update-ref refs/heads/release {before} {landed}",
            repo.display()
        )
    );
    assert_eq!(doc["target_before"], before.as_str());
    run_undo(&env, &repo, &undo).assert_ok();
    assert_eq!(rev(&env, &repo, "release"), before);
    // Landed again, then the branch moves on: the same undo is refused.
    let doc = env
        .aw(&repo, ["land", "w1", "--onto", "release", "--json"])
        .json();
    let undo = doc["undo"].as_str().unwrap().to_string();
    let tree = rev(&env, &repo, "release^{tree}");
    let parent = rev(&env, &repo, "release");
    let later = git_ok(
        &env,
        &repo,
        &["commit-tree", &tree, "-p", &parent, "-m", "later"],
    );
    git_ok(
        &env,
        &repo,
        &["update-ref", "refs/heads/release", later.trim()],
    );
    let refused = run_undo(&env, &repo, &undo);
    assert_ne!(refused.code(), Some(0), "{}", refused.report());
    assert_eq!(rev(&env, &repo, "release"), later.trim());
}

/// `land --onto <another workspace's branch>` changes that workspace's files: refused while
/// a run holds it, as a land on a parent is.
#[test]
fn landing_onto_another_workspace_s_branch_under_its_run_is_busy() {
    let env = TestEnv::new();
    let repo = repo_where_w1_ran(&env, "echo w1 > a.txt");
    let started = env.path().join("started");
    let release = env.path().join("release");
    let script = format!(
        "touch '{}'; while [ ! -e '{}' ]; do sleep 0.02; done",
        started.display(),
        release.display()
    );
    let run = env
        .aw_cmd(&repo)
        .args(["run", "w2", "--", "sh", "-c", &script])
        .spawn();
    wait_for_file(&started);
    let w2 = env.ws_path(&repo, "w2");
    let before = rev(&env, &w2, "HEAD");
    let busy = env.aw(&repo, ["land", "w1", "--onto", "agent-workspace/w2"]);
    let a_then = fs::read_to_string(w2.join("a.txt")).unwrap();
    let head_then = rev(&env, &w2, "HEAD");
    fs::write(&release, "").unwrap();
    run.wait().assert_ok();
    insta::assert_snapshot!(busy, @r#"
    --- stderr ---
    Error: cannot land on workspace "w2"'s branch agent-workspace/w2: workspace "w2" is busy: a run holds it (pid [PID], workflow -)
    Hint: wait for the run to end, or do this from inside that run (`run --checkpoint` checkpoints after every run)
    [exit 1]
    "#);
    assert_eq!(a_then, "hello\n");
    assert_eq!(head_then, before);
    // Once the run ended, the land goes through and changes w2's files.
    env.aw(&repo, ["land", "w1", "--onto", "agent-workspace/w2"])
        .assert_ok();
    assert_eq!(fs::read_to_string(w2.join("a.txt")).unwrap(), "w1\n");
}

/// A file the main worktree ignores that the workspace tracks: `git merge --ff-only` would
/// replace it without a copy anywhere.
#[test]
fn a_file_main_ignores_but_the_workspace_tracks_is_never_overwritten() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    fs::write(repo.join(".gitignore"), "*.log\n").unwrap();
    git_ok(&env, &repo, &["add", ".gitignore"]);
    git_ok(&env, &repo, &["commit", "-q", "-m", "ignore logs"]);
    env.aw(
        &repo,
        [
            "run",
            "w1",
            "--",
            "sh",
            "-c",
            "echo agent > notes.log && echo same > same.log && git add -f notes.log same.log",
        ],
    )
    .assert_ok();
    fs::write(repo.join("notes.log"), "the user's own log\n").unwrap();
    fs::write(repo.join("same.log"), "same\n").unwrap();
    let before = state(&env, &repo);
    let out = env.aw(&repo, ["land", "w1"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: the main worktree at [TMP]/repo has files that git ignores there where the land would write: notes.log; nothing was landed
    Hint: the land would replace them and no commit holds them: move them away (or commit them there), then land again
    [exit 1]
    ");
    assert_eq!(
        fs::read_to_string(repo.join("notes.log")).unwrap(),
        "the user's own log\n"
    );
    assert_eq!(state(&env, &repo), before);
    // The dry run says the same.
    env.aw(&repo, ["land", "w1", "--dry-run"]).assert_code(1);
    // Once the user moved it away, the land goes through; an identical file is no obstacle.
    fs::rename(repo.join("notes.log"), env.path().join("kept.log")).unwrap();
    env.aw(&repo, ["land", "w1"]).assert_ok();
    assert_eq!(
        fs::read_to_string(repo.join("notes.log")).unwrap(),
        "agent\n"
    );
    assert_eq!(fs::read_to_string(repo.join("same.log")).unwrap(), "same\n");
}

/// The main worktree in the middle of a merge (conflicted) and of a rebase.
#[test]
fn a_main_worktree_mid_merge_or_rebase_is_refused_naming_the_cause() {
    let env = TestEnv::new();
    // The workspace's change is elsewhere, and uncommitted: a land would commit it first.
    let repo = repo_where_w1_ran(&env, "echo new > new.txt");
    git_ok(&env, &repo, &["checkout", "-q", "-b", "side"]);
    fs::write(repo.join("a.txt"), "side\n").unwrap();
    git_ok(&env, &repo, &["commit", "-q", "-am", "side"]);
    git_ok(&env, &repo, &["checkout", "-q", "main"]);
    fs::write(repo.join("a.txt"), "main\n").unwrap();
    git_ok(&env, &repo, &["commit", "-q", "-am", "main"]);
    let merge = env.cmd("git", &repo).args(["merge", "-q", "side"]).run();
    assert_eq!(merge.code(), Some(1), "{}", merge.report());
    let before = state(&env, &repo);
    for args in [&["land", "w1"][..], &["land", "w1", "--dry-run"]] {
        let out = env.aw(&repo, args);
        out.assert_code(1);
        assert!(
            out.stderr.starts_with("Error: the main worktree at ")
                && out.stderr.contains("is in the middle of a merge"),
            "{}",
            out.report()
        );
        assert!(out.stderr.contains("\nHint: "), "{}", out.report());
        assert_eq!(state(&env, &repo), before);
    }
    git_ok(&env, &repo, &["merge", "--abort"]);
    // A rebase stopped on a conflict: HEAD is detached, the branch is being rebased.
    let rebase = env.cmd("git", &repo).args(["rebase", "side"]).run();
    assert_eq!(rebase.code(), Some(1), "{}", rebase.report());
    let before = state(&env, &repo);
    for args in [&["land", "w1"][..], &["land", "w1", "--onto", "main"]] {
        let out = env.aw(&repo, args);
        out.assert_code(1);
        assert!(
            out.stderr.contains("is in the middle of a rebase"),
            "{}",
            out.report()
        );
        assert_eq!(state(&env, &repo), before);
    }
    git_ok(&env, &repo, &["rebase", "--abort"]);
    // Unmerged entries without any operation in progress (a conflicted `stash pop`).
    fs::write(repo.join("a.txt"), "stashed\n").unwrap();
    git_ok(&env, &repo, &["stash", "-q"]);
    fs::write(repo.join("a.txt"), "committed\n").unwrap();
    git_ok(&env, &repo, &["commit", "-q", "-am", "again"]);
    let pop = env.cmd("git", &repo).args(["stash", "pop", "-q"]).run();
    assert_ne!(pop.code(), Some(0), "{}", pop.report());
    let before = state(&env, &repo);
    let out = env.aw(&repo, ["land", "w1"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: the main worktree at [TMP]/repo has unmerged files: a.txt; nothing was landed
    Hint: resolve them there first (edit, then `git add` them), then land again
    [exit 1]
    ");
    assert_eq!(state(&env, &repo), before);
}

/// An agent that detached its HEAD and committed there: its commits land (and the worktree
/// is back on its branch), never "Nothing to land".
#[test]
fn a_commit_on_a_detached_head_lands() {
    let env = TestEnv::new();
    let repo = repo_where_w1_ran(
        &env,
        "git checkout -q --detach && echo d > d.txt && git add d.txt && git commit -qm detached-work && echo u > u.txt",
    );
    let ws = env.ws_path(&repo, "w1");
    let out = env.aw(&repo, ["land", "w1"]);
    insta::assert_snapshot!(out, @r#"
    Landed 2 commits of w1 onto main
      [SHORT] detached-work
      [SHORT] agent-workspace: uncommitted changes of workspace w1
    2 files changed
    Put the workspace's detached HEAD ([SHORT]) back on its branch
    Undo: if test "$(git -C [TMP]/repo symbolic-ref -q HEAD)@$(git -C [TMP]/repo rev-parse -q --verify HEAD)" = refs/heads/main@[COMMIT]; then git -C [TMP]/repo reset --quiet --keep [COMMIT]; else echo 'not undone: main is no longer at [SHORT] in [TMP]/repo' >&2; false; fi
    [exit 0]
    "#);
    assert_eq!(fs::read_to_string(repo.join("d.txt")).unwrap(), "d\n");
    assert_eq!(fs::read_to_string(repo.join("u.txt")).unwrap(), "u\n");
    assert_eq!(
        git_ok(&env, &ws, &["symbolic-ref", "HEAD"]),
        "refs/heads/agent-workspace/w1\n"
    );
    assert_eq!(git_ok(&env, &ws, &["status", "--porcelain"]), "");
    assert_eq!(
        rev(&env, &repo, "main"),
        rev(&env, &repo, "agent-workspace/w1")
    );
    assert!(
        !git_ok(&env, &repo, &["branch", "--list"]).contains("-detached-"),
        "no branch made silently"
    );
}

/// A detached HEAD that left the branch's own commits behind: refused, naming the commit,
/// with nothing moved.
#[test]
fn a_detached_head_beside_the_branch_is_refused_naming_its_commit() {
    let env = TestEnv::new();
    let repo = repo_where_w1_ran(
        &env,
        "echo b > b.txt && git add b.txt && git commit -qm on-branch && git checkout -q --detach HEAD~1 && echo d > d.txt && git add d.txt && git commit -qm detached-work",
    );
    let ws = env.ws_path(&repo, "w1");
    let detached = rev(&env, &ws, "HEAD");
    let before = state(&env, &repo);
    for args in [&["land", "w1"][..], &["land", "w1", "--dry-run"]] {
        let out = env.aw(&repo, args);
        out.assert_code(1);
        assert!(
            out.stderr.starts_with("Error: ")
                && out.stderr.contains(&detached[..12])
                && out.stderr.contains("agent-workspace/w1"),
            "{}",
            out.report()
        );
        assert!(!out.stdout.contains("Nothing to land"), "{}", out.report());
        assert!(out.stderr.contains("\nHint: "), "{}", out.report());
        assert_eq!(state(&env, &repo), before);
    }
}

/// The fields of a land's JSON a dry run predicts.
fn prediction(doc: &serde_json::Value) -> serde_json::Value {
    let subjects: Vec<&serde_json::Value> = doc["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["subject"])
        .collect();
    let conflicts: Vec<&serde_json::Value> = doc["conflicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["path"])
        .collect();
    serde_json::json!({
        // A dry run's `would_land`/`would_conflict` predicts `landed`/`conflicted`.
        "outcome": match doc["outcome"].as_str() {
            Some("would_land") => "landed".into(),
            Some("would_conflict") => "conflicted".into(),
            _ => doc["outcome"].clone(),
        },
        "target": doc["target"],
        "commits": subjects,
        "files": doc["paths"],
        "conflicts": conflicts,
        "resolved": doc["resolved"],
    })
}

/// Dry run then land, in each situation: the dry run's JSON says what the land's then does.
#[test]
fn a_dry_run_predicts_the_real_land() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("uncommitted work", "echo w1 > a.txt && echo n > n.txt", &[]),
        (
            "committed and uncommitted work, main moved",
            "echo c > c.txt && git add c.txt && git commit -qm c && echo w1 > sub/b.txt",
            &["main-moves"],
        ),
        ("a conflict", "echo w1 > a.txt", &["main-conflicts"]),
        (
            "a conflict resolved",
            "echo w1 > a.txt && echo n > n.txt",
            &["main-conflicts", "--prefer", "workspace"],
        ),
        (
            "a detached HEAD with uncommitted changes",
            "git checkout -q --detach && echo d > d.txt && git add d.txt && git commit -qm d && echo u > a.txt",
            &[],
        ),
    ];
    for (what, script, extra) in cases {
        let env = TestEnv::new();
        let repo = repo_where_w1_ran(&env, script);
        let mut args = vec!["land", "w1", "--json"];
        for arg in *extra {
            match *arg {
                "main-moves" => {
                    fs::write(repo.join("m.txt"), "m\n").unwrap();
                    git_ok(&env, &repo, &["add", "m.txt"]);
                    git_ok(&env, &repo, &["commit", "-q", "-m", "m"]);
                }
                "main-conflicts" => {
                    fs::write(repo.join("a.txt"), "main\n").unwrap();
                    git_ok(&env, &repo, &["commit", "-q", "-am", "main"]);
                }
                other => args.push(other),
            }
        }
        let mut dry = args.clone();
        dry.push("--dry-run");
        let predicted = env.aw(&repo, &dry);
        let real = env.aw(&repo, &args);
        assert_eq!(predicted.code(), real.code(), "{what}: {}", real.report());
        let doc = |out: &crate::harness::Outcome| -> serde_json::Value {
            serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.report()))
        };
        assert_eq!(
            prediction(&doc(&predicted)),
            prediction(&doc(&real)),
            "{what}: {}\n{}",
            predicted.report(),
            real.report()
        );
    }
}

/// A child landed on its parent brings the parent's own uncommitted changes it started from;
/// the undo gives the parent those back, uncommitted, as before the land.
#[test]
fn the_undo_of_a_land_on_a_parent_keeps_the_parent_s_uncommitted_changes() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    env.aw(&repo, ["run", "p", "--", "sh", "-c", "echo p > p.txt"])
        .assert_ok();
    env.aw(
        &repo,
        [
            "run",
            "c",
            "--parent",
            "p",
            "--",
            "sh",
            "-c",
            "echo c > c.txt",
        ],
    )
    .assert_ok();
    let parent = env.ws_path(&repo, "p");
    let before = rev(&env, &parent, "HEAD");
    let doc = env.aw(&repo, ["land", "c", "--json"]).json();
    assert_eq!(doc["target"], "agent-workspace/p", "{doc}");
    assert_eq!(fs::read_to_string(parent.join("c.txt")).unwrap(), "c\n");
    run_undo(&env, &repo, doc["undo"].as_str().unwrap()).assert_ok();
    assert_eq!(rev(&env, &parent, "HEAD"), before);
    assert!(!parent.join("c.txt").exists());
    assert_eq!(fs::read_to_string(parent.join("p.txt")).unwrap(), "p\n");
    assert_eq!(
        git_ok(
            &env,
            &parent,
            &["status", "--porcelain", "--untracked-files=all"]
        ),
        "?? p.txt\n"
    );
}

/// What main ignores where the land puts a directory (a file `logs`) or a file (a directory
/// `cache/` of ignored files): `git merge` would delete them, with no copy anywhere.
#[test]
fn ignored_files_in_the_way_of_a_landed_path_are_never_removed() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    fs::write(repo.join(".gitignore"), "logs\ncache/\n").unwrap();
    git_ok(&env, &repo, &["add", ".gitignore"]);
    git_ok(&env, &repo, &["commit", "-q", "-m", "ignore"]);
    let script = "mkdir logs && echo x > logs/a.txt && echo y > cache && git add -f logs/a.txt cache && git commit -qm add";
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", script])
        .assert_ok();
    fs::write(repo.join("logs"), "the user's log file\n").unwrap();
    fs::create_dir(repo.join("cache")).unwrap();
    fs::write(repo.join("cache/data"), "the user's cache\n").unwrap();
    let before = state(&env, &repo);
    let out = env.aw(&repo, ["land", "w1"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: the main worktree at [TMP]/repo has files that git ignores there where the land would write: cache/data, logs; nothing was landed
    Hint: the land would replace them and no commit holds them: move them away (or commit them there), then land again
    [exit 1]
    ");
    assert_eq!(state(&env, &repo), before);
    assert_eq!(
        fs::read_to_string(repo.join("logs")).unwrap(),
        "the user's log file\n"
    );
    assert_eq!(
        fs::read_to_string(repo.join("cache/data")).unwrap(),
        "the user's cache\n"
    );
}

/// A workspace whose agent left a merge stopped on a conflict: its files hold conflict
/// markers, which a land would commit as content.
#[test]
fn a_workspace_mid_merge_is_refused_and_no_marker_lands() {
    let env = TestEnv::new();
    let script = "git checkout -qb side && echo s > a.txt && git commit -qam s \
        && git checkout -q agent-workspace/w1 && echo w > a.txt && git commit -qam w \
        && ! git merge -q side";
    let repo = repo_where_w1_ran(&env, script);
    let ws = env.ws_path(&repo, "w1");
    assert!(fs::read_to_string(ws.join("a.txt"))
        .unwrap()
        .contains("<<<<<<<"));
    let before = state(&env, &repo);
    let out = env.aw(&repo, ["land", "w1"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: the worktree at [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1 is in the middle of a merge, with unmerged files: a.txt; nothing was changed
    Hint: resolve each file (edit out its conflict markers, then `git -C [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1 add -- a.txt`) and conclude it (`git -C [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1 commit`) or abort it (`git -C [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1 merge --abort`), then try again
    [exit 1]
    ");
    assert_eq!(state(&env, &repo), before);
    assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), "hello\n");
}

/// An agent that switched to a branch of its own and committed there: landing the
/// workspace's branch would pass that work over, so the land is refused naming the branch.
#[test]
fn work_on_another_branch_is_refused_naming_it() {
    let env = TestEnv::new();
    let repo = repo_where_w1_ran(
        &env,
        "git switch -qc feature && echo f > f.txt && git add f.txt && git commit -qm feature-work",
    );
    let before = state(&env, &repo);
    let out = env.aw(&repo, ["land", "w1"]);
    out.assert_code(1);
    assert!(
        out.stderr
            .starts_with("Error: workspace \"w1\" is on branch feature (at ")
            && out.stderr.contains("not on its branch agent-workspace/w1"),
        "{}",
        out.report()
    );
    assert!(
        out.stderr.contains("switch agent-workspace/w1 && git -C "),
        "{}",
        out.report()
    );
    assert_eq!(state(&env, &repo), before);
}

/// Found by the model round (git seed 3, step 54): the user amended main's last commit, a
/// land's merge commit, under a workspace started on it. The workspace and main then have
/// two merge bases (the amended commit's parents), and git's merge diffs against a virtual
/// base merged from both, conflict markers included: a file the workspace never touched
/// conflicts there, and `--prefer workspace` took the user's later line out of it (exit 0).
/// `--prefer` settles no file the merge bases disagree on: it is reported, nothing moves.
#[test]
fn prefer_never_drops_a_line_of_a_file_the_workspace_never_changed_after_an_amend() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    fs::write(repo.join("s.txt"), "x\n").unwrap();
    git_ok(&env, &repo, &["add", "s.txt"]);
    git_ok(&env, &repo, &["commit", "-q", "-m", "s"]);
    env.aw(&repo, ["run", "w4", "--", "sh", "-c", "echo w4 >> s.txt"])
        .assert_ok();
    fs::write(repo.join("s.txt"), "x\nu1\n").unwrap();
    git_ok(&env, &repo, &["commit", "-q", "-am", "u1"]);
    env.aw(&repo, ["land", "w4", "--prefer", "workspace"])
        .assert_ok();
    assert_eq!(fs::read_to_string(repo.join("s.txt")).unwrap(), "x\nw4\n");
    // w5 starts on the land's merge commit and never touches s.txt.
    env.aw(&repo, ["run", "w5", "--", "sh", "-c", "echo w5 > w5.txt"])
        .assert_ok();
    // The user amends that merge commit, then adds a line to s.txt.
    fs::write(repo.join("other.txt"), "u2\n").unwrap();
    git_ok(&env, &repo, &["add", "other.txt"]);
    git_ok(&env, &repo, &["commit", "-q", "--amend", "--no-edit"]);
    fs::write(repo.join("s.txt"), "x\nw4\nu3\n").unwrap();
    git_ok(&env, &repo, &["commit", "-q", "-am", "u3"]);
    let bases = git_ok(
        &env,
        &repo,
        &["merge-base", "--all", "main", "agent-workspace/w5"],
    );
    assert_eq!(bases.lines().count(), 2, "{bases}");
    let refs = ["for-each-ref", "--format=%(refname) %(objectname)"];
    let state = |env: &TestEnv| {
        let status = ["status", "--porcelain", "--untracked-files=all"];
        [git_ok(env, &repo, &refs), git_ok(env, &repo, &status)].join("--\n")
    };
    let before = state(&env);
    let dry = env.aw(
        &repo,
        ["land", "w5", "--prefer", "workspace", "--dry-run", "--json"],
    );
    let out = env.aw(&repo, ["land", "w5", "--prefer", "workspace", "--json"]);
    // The user's line is in a file only main changed: no land may take it out.
    assert_eq!(
        fs::read_to_string(repo.join("s.txt")).unwrap(),
        "x\nw4\nu3\n",
        "{}",
        out.report()
    );
    out.assert_code(1);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["outcome"], "conflicted", "{doc:#}");
    assert_eq!(doc["conflicts"][0]["path"], "s.txt", "{doc:#}");
    assert_eq!(doc["resolved"], serde_json::json!([]), "{doc:#}");
    assert_eq!(
        prediction(&serde_json::from_str(&dry.stdout).unwrap()),
        prediction(&doc)
    );
    let plain = env.aw(&repo, ["land", "w5", "--prefer", "workspace"]);
    insta::assert_snapshot!(plain, @r"
    Did not land 2 commits of w5 onto main
      [SHORT] Merge workspace w4 into main
      [SHORT] agent-workspace: uncommitted changes of workspace w5
    0 files changed
    Conflict in s.txt ([SHORT])
    --- stderr ---
    Error: merging workspace w5 into main conflicts in 1 file that --prefer cannot settle; nothing was changed
    Hint: --prefer settles neither a modify/delete conflict, nor a file one side renamed while the other changed it and holds the new name too (git would merge one into the other), nor a file that differs between the workspace's merge bases with main (there are more than one once a commit it started on was amended or rebased in main); rebase the workspace onto main (`git rebase --autostash main` in it) and land again, or merge by hand: git merge -X no-renames [COMMIT]
    [exit 1]
    ");
    assert_eq!(state(&env), before);
    // The hint's way out: the workspace rebased onto main lands, every line kept.
    let ws = env.ws_path(&repo, "w5");
    git_ok(&env, &ws, &["rebase", "-q", "--autostash", "main"]);
    env.aw(&repo, ["land", "w5", "--prefer", "workspace"])
        .assert_ok();
    assert_eq!(
        fs::read_to_string(repo.join("s.txt")).unwrap(),
        "x\nw4\nu3\n"
    );
    assert_eq!(fs::read_to_string(repo.join("w5.txt")).unwrap(), "w5\n");
}

#[test]
/// The target renamed a file the workspace also carried to the new name and then wrote
/// afresh under the old one: git's rename detection would pair the target's rename with the
/// workspace's "change" of the old name and merge the new file's lines into the renamed one,
/// the renamed file's lines gone without a conflict (plain `git merge` does so too). Such a
/// pairing is reported as a conflict, with and without `--prefer`, and nothing changes.
fn a_rename_in_main_never_swallows_the_workspace_s_new_file_of_the_old_name() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    fs::create_dir_all(repo.join("sub")).unwrap();
    fs::write(repo.join("sub/s3.txt"), "1\n2\n3\n4\n5\n").unwrap();
    git_ok(&env, &repo, &["add", "-A"]);
    git_ok(&env, &repo, &["commit", "-q", "-m", "s3"]);
    env.aw(
        &repo,
        [
            "run",
            "w",
            "--",
            "sh",
            "-c",
            "cp sub/s3.txt moved.txt && echo new > sub/s3.txt",
        ],
    )
    .assert_ok();
    git_ok(&env, &repo, &["mv", "sub/s3.txt", "moved.txt"]);
    git_ok(&env, &repo, &["commit", "-q", "-m", "rename"]);
    let refs = ["for-each-ref", "--format=%(refname) %(objectname)"];
    let state = |env: &TestEnv| {
        let status = ["status", "--porcelain", "--untracked-files=all"];
        [git_ok(env, &repo, &refs), git_ok(env, &repo, &status)].join("--\n")
    };
    let before = state(&env);
    for prefer in [None, Some("workspace"), Some("target")] {
        let mut args = vec!["land", "w"];
        if let Some(side) = prefer {
            args.extend(["--prefer", side]);
        }
        let mut dry_args = args.clone();
        dry_args.extend(["--dry-run", "--json"]);
        let dry = env.aw(&repo, dry_args);
        args.push("--json");
        let out = env.aw(&repo, args);
        assert_eq!(
            fs::read_to_string(repo.join("moved.txt")).unwrap(),
            "1\n2\n3\n4\n5\n",
            "{prefer:?}: {}",
            out.report()
        );
        out.assert_code(1);
        let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert_eq!(doc["outcome"], "conflicted", "{prefer:?}: {doc:#}");
        let paths: Vec<&str> = doc["conflicts"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["path"].as_str())
            .collect();
        assert!(paths.contains(&"sub/s3.txt"), "{prefer:?}: {doc:#}");
        assert_eq!(
            prediction(&serde_json::from_str(&dry.stdout).unwrap()),
            prediction(&doc),
            "{prefer:?}"
        );
        assert_eq!(state(&env), before, "{prefer:?}");
    }
    let plain = env.aw(&repo, ["land", "w"]);
    insta::assert_snapshot!(plain, @r"
    Did not land 1 commit of w onto main
      [SHORT] agent-workspace: uncommitted changes of workspace w
    0 files changed
    Conflict in sub/s3.txt ([SHORT])
    Conflict in moved.txt ([SHORT])
    --- stderr ---
    Error: merging workspace w into main conflicts in 2 files; nothing was changed
    Hint: retry with `agent-workspace land w --prefer workspace|target`, or merge by hand: git merge [COMMIT]
    [exit 1]
    ");
}
