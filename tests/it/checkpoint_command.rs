//! `checkpoint`: a workspace's state recorded as a commit of its own, the working copy
//! continuing on top; files it leaves out; bad input, a stale jj copy, failed signing; recipe.

use std::fs;

use serde_json::Value;

use crate::backends::{git_ok, Backend};
use crate::checkpoint_support::{below_working_copy, checkpoint, description, files_of};
use crate::diff_support::{more_base_files, racily_clean_rewrite};
use crate::harness::TestEnv;

fn a_checkpoint_commits_the_changes_and_the_working_copy_continues_on_top(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let edit = "echo more >> a.txt; echo new > new.txt";
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", edit])
        .assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let first = checkpoint(&env, &repo, &["w1"]);
    assert_eq!(first["created"], true, "{first:#}");
    assert_eq!(first["number"], 1);
    assert_eq!(first["description"], "[workspace w1] checkpoint 1");
    assert_eq!(first["paths_count"], 2);
    assert_eq!(first["paths"], serde_json::json!(["a.txt", "new.txt"]));
    let commit = first["commit_id"].as_str().unwrap().to_string();
    assert_eq!(
        description(backend, &env, &repo, &commit),
        "[workspace w1] checkpoint 1"
    );
    assert_eq!(files_of(backend, &env, &repo, &commit), "a.txt\nnew.txt\n");
    // The working copy goes on from the checkpoint, with nothing left unrecorded.
    assert_eq!(below_working_copy(backend, &env, &ws), commit);
    assert_eq!(backend.changes(&env, &ws), "");
    assert_eq!(
        fs::read_to_string(ws.join("a.txt")).unwrap(),
        "hello\nmore\n"
    );
    match backend {
        Backend::Jj => {
            assert_eq!(first["change_id"], env.change_id(&repo, &commit));
        }
        Backend::Git => {
            assert_eq!(first["change_id"], Value::Null);
            let tip = git_ok(&env, &repo, &["rev-parse", "agent-workspace/w1"]);
            assert_eq!(tip.trim(), commit);
        }
    }

    // Nothing changed since: no commit, said so, exit 0.
    let none = env.aw(&repo, ["checkpoint", "w1"]);
    none.assert_ok();
    assert_eq!(
        none.stdout,
        "nothing to checkpoint in workspace w1: no changes since its last commit\n"
    );
    let none = checkpoint(&env, &repo, &["w1"]);
    assert_eq!(none["created"], false, "{none:#}");
    assert_eq!(none["commit_id"], Value::Null);
    assert_eq!(below_working_copy(backend, &env, &ws), commit);

    // The next one is numbered 2; a message replaces the default.
    fs::write(ws.join("new.txt"), "changed\n").unwrap();
    let second = env.aw(&repo, ["checkpoint", "w1"]);
    second.assert_ok();
    assert!(
        second
            .stdout
            .starts_with("checkpoint 2 of workspace w1: commit "),
        "{}",
        second.report()
    );
    assert!(
        second.stdout.ends_with("1 file changed\n  new.txt\n"),
        "{}",
        second.report()
    );
    let second_commit = below_working_copy(backend, &env, &ws);
    assert_eq!(
        description(backend, &env, &repo, &second_commit),
        "[workspace w1] checkpoint 2"
    );
    fs::remove_file(ws.join("a.txt")).unwrap();
    let third = checkpoint(&env, &repo, &["w1", "-m", "tests pass"]);
    assert_eq!(third["number"], 3);
    let third_commit = third["commit_id"].as_str().unwrap();
    assert_eq!(
        description(backend, &env, &repo, third_commit),
        "[workspace w1] tests pass"
    );
    assert_eq!(files_of(backend, &env, &repo, third_commit), "a.txt\n");
    assert_eq!(env.metadata(&ws)["checkpoints"], 3);
}

fn a_checkpoint_says_which_files_it_does_not_record(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let left_out = match backend {
        // Over jj's snapshot.max-new-file-size (1 MiB).
        Backend::Jj => {
            fs::write(ws.join("big.bin"), vec![b'x'; 1024 * 1024 + 1]).unwrap();
            "big.bin"
        }
        Backend::Git => {
            let exclude = git_ok(&env, &repo, &["rev-parse", "--git-path", "info/exclude"]);
            let exclude = repo.join(exclude.trim());
            let mut text = fs::read_to_string(&exclude).unwrap_or_default();
            text.push_str("*.log\n");
            fs::write(&exclude, text).unwrap();
            fs::write(ws.join("build.log"), "x\n").unwrap();
            "build.log"
        }
    };
    fs::write(ws.join("small.txt"), "s\n").unwrap();
    let out = env.aw(&repo, ["checkpoint", "w1", "--json"]);
    let doc = out.json();
    assert_eq!(doc["paths"], serde_json::json!(["small.txt"]), "{doc:#}");
    let not = doc["not_recorded"].as_array().unwrap();
    assert_eq!(not.len(), 1, "{doc:#}");
    assert_eq!(not[0]["path"], left_out);
    assert!(
        out.stderr
            .contains(&format!("Warning: not in the checkpoint: {left_out} (")),
        "{}",
        out.report()
    );
    assert!(out.stderr.contains("Hint: "), "{}", out.report());
}

fn bad_checkpoints_fail_with_a_hint_and_change_nothing(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let unknown = env.aw(&repo, ["checkpoint", "nope"]);
    insta::assert_snapshot!(unknown, @r#"
    --- stderr ---
    Error: no workspace "nope" (looked for [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/nope)
    Hint: list workspaces with `agent-workspace status`; create one with `agent-workspace run`
    [exit 1]
    "#);
    assert!(!env.ws_path(&repo, "nope").exists());
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", "echo x > x.txt"])
        .assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let before = below_working_copy(backend, &env, &ws);
    let empty = env.aw(&repo, ["checkpoint", "w1", "-m", " "]);
    insta::assert_snapshot!(empty, @r"
    --- stderr ---
    Error: the checkpoint message is empty
    Hint: pass -m a message, or leave -m out for `checkpoint N`
    [exit 2]
    ");
    let bad_id = env.aw(&repo, ["checkpoint", "../w1"]);
    bad_id.assert_code(2);
    assert_eq!(below_working_copy(backend, &env, &ws), before);
    assert_eq!(backend.changes(&env, &ws), "A x.txt\n");
}

/// jj: a working copy another workspace made stale is brought up to date, its edits kept and
/// checkpointed.
#[test]
fn a_stale_jj_working_copy_is_updated_and_its_edits_checkpointed() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", "echo 1 > one.txt"])
        .assert_ok();
    let first = checkpoint(&env, &repo, &["w1"]);
    let commit = first["commit_id"].as_str().unwrap();
    // Rewriting the checkpoint from the main workspace makes w1's working copy stale.
    env.jj_ok(&repo, ["describe", "-r", commit, "-m", "renamed"]);
    let ws = env.ws_path(&repo, "w1");
    fs::write(ws.join("two.txt"), "2\n").unwrap();
    let second = checkpoint(&env, &repo, &["w1"]);
    assert_eq!(second["created"], true, "{second:#}");
    assert_eq!(second["paths"], serde_json::json!(["two.txt"]));
    let second_commit = second["commit_id"].as_str().unwrap();
    assert_eq!(
        files_of(Backend::Jj, &env, &repo, second_commit),
        "two.txt\n"
    );
    assert_eq!(env.jj_ok(&ws, ["diff", "--summary"]), "");
    assert_eq!(fs::read_to_string(ws.join("one.txt")).unwrap(), "1\n");
}

/// git with commit signing that cannot work here: the checkpoint fails cleanly (nothing
/// committed, nothing left staged), and after a run the command's exit code stands.
#[test]
fn a_commit_that_cannot_be_signed_fails_the_checkpoint_cleanly_and_not_the_run() {
    let env = TestEnv::new();
    let repo = crate::backends::git_repo(&env, "repo");
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", "echo x > x.txt"])
        .assert_ok();
    for (key, value) in [("commit.gpgsign", "true"), ("gpg.program", "false")] {
        git_ok(&env, &repo, &["config", key, value]);
    }
    let ws = env.ws_path(&repo, "w1");
    let head = git_ok(&env, &ws, &["rev-parse", "HEAD"]);
    let failed = env.aw(&repo, ["checkpoint", "w1"]);
    failed.assert_code(1);
    assert!(
        failed
            .stderr
            .starts_with("Error: could not commit the checkpoint of workspace \"w1\""),
        "{}",
        failed.report()
    );
    assert!(
        failed.stderr.contains("commit.gpgsign"),
        "{}",
        failed.report()
    );
    assert_eq!(git_ok(&env, &ws, &["rev-parse", "HEAD"]), head);
    assert_eq!(git_ok(&env, &ws, &["diff", "--cached", "--name-only"]), "");
    assert_eq!(git_ok(&env, &ws, &["status", "--porcelain"]), "?? x.txt\n");

    let run = env.aw(
        &repo,
        ["run", "w1", "--checkpoint", "--", "sh", "-c", "exit 4"],
    );
    insta::assert_snapshot!(run, @r#"
    --- stderr ---
    Warning: the run ended (exit code 4) but its checkpoint failed: could not commit the checkpoint of workspace "w1"
    Hint: nothing was committed or left staged; fix the commit (e.g. its signing setup: `git -C [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1 config commit.gpgsign false`) and try again
    [exit 4]
    "#);
    let record = env.metadata(&ws);
    assert_eq!(record["runs"][1].get("checkpoint"), None, "{record:#}");
    assert_eq!(record["status"], "error");
    assert_eq!(git_ok(&env, &ws, &["rev-parse", "HEAD"]), head);
}

/// A same-size rewrite that only git's racy-git rule tells (see [`racily_clean_rewrite`]) is
/// in a child's fork point (built from a temporary index with no cached file stats) and in a
/// checkpoint (the worktree's own index, which git reads right), also when no git call may
/// write that index (`GIT_OPTIONAL_LOCKS=0`).
#[test]
fn git_fork_points_and_checkpoints_take_a_same_size_rewrite_that_only_the_racy_rule_tells() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    more_base_files(Backend::Git, &env, &repo);
    env.aw(&repo, ["run", "p1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "p1");
    racily_clean_rewrite(&env, &ws, "bin.dat", b"\0\x02binary");
    let aw = |args: &[&str]| {
        let cmd = env.aw_cmd(&repo).env("GIT_OPTIONAL_LOCKS", "0");
        cmd.args(args).run()
    };
    aw(&["run", "c1", "--parent", "p1", "--", "true"]).assert_ok();
    let child = env.ws_path(&repo, "c1").join("bin.dat");
    assert_eq!(fs::read(child).unwrap(), b"\0\x02binary");
    let out = aw(&["checkpoint", "p1", "--json"]);
    assert_eq!(
        out.assert_ok().json()["paths"],
        serde_json::json!(["bin.dat"])
    );
}

#[test]
fn the_workspace_checkpoint_recipe_checkpoints_with_and_without_a_message() {
    let env = TestEnv::new();
    let repo = env.recipes_repo();
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", "echo 1 > one.txt"])
        .assert_ok();
    let just = |args: &[&str]| env.recipe(&repo, args[0], &args[1..]);
    let first = just(&["workspace-checkpoint", "w1"]);
    insta::assert_snapshot!(first, @r"
    checkpoint 1 of workspace w1: commit [COMMIT], change [CHANGE]
    1 file changed
      one.txt
    --- stderr ---
    '[AW]' checkpoint 'w1' 
    [exit 0]
    ");
    let ws = env.ws_path(&repo, "w1");
    fs::write(ws.join("two.txt"), "2\n").unwrap();
    just(&["workspace-checkpoint", "w1", "it's two"]).assert_ok();
    assert_eq!(
        description(Backend::Jj, &env, &repo, &env.commit_id(&ws, "@-")),
        "[workspace w1] it's two"
    );
}

/// A checkpoint SIGKILLed after the backend made its commit and before its number was
/// recorded: the next checkpoint gets the next number, never the same one again (the number
/// is reserved in the saved record before the commit is made).
fn a_checkpoint_killed_after_its_commit_never_repeats_its_number(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", "echo one > one.txt"])
        .assert_ok();
    let (tool, trigger) = match backend {
        Backend::Jj => ("jj", "commit --message"),
        Backend::Git => ("git", "commit --quiet"),
    };
    let path = crate::pool_crash::killing_wrapper(&env, tool, trigger, false);
    let killed = env
        .aw_cmd(&repo)
        .env("PATH", &path)
        .env("TRIGGER", trigger)
        .args(["checkpoint", "w1"])
        .run();
    assert_eq!(killed.code(), None, "killed\n{}", killed.report());
    let ws = env.ws_path(&repo, "w1");
    let first = below_working_copy(backend, &env, &ws);
    assert_eq!(
        description(backend, &env, &repo, &first),
        "[workspace w1] checkpoint 1"
    );
    fs::write(ws.join("two.txt"), "two\n").unwrap();
    let second = checkpoint(&env, &repo, &["w1"]);
    assert_eq!(second["number"], 2, "{second:#}");
    assert_eq!(second["description"], "[workspace w1] checkpoint 2");
    // Nothing recorded: the number stays free for the next one.
    let nothing = checkpoint(&env, &repo, &["w1"]);
    assert_eq!(nothing["created"], false, "{nothing:#}");
    fs::write(ws.join("three.txt"), "three\n").unwrap();
    assert_eq!(checkpoint(&env, &repo, &["w1"])["number"], 3);
}

crate::both_backends!(
    a_checkpoint_killed_after_its_commit_never_repeats_its_number,
    a_checkpoint_commits_the_changes_and_the_working_copy_continues_on_top,
    a_checkpoint_says_which_files_it_does_not_record,
    bad_checkpoints_fail_with_a_hint_and_change_nothing,
);
