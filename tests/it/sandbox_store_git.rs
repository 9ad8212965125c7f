//! A sandboxed git worktree owns a git directory of its own: whatever the agent does to it
//! (deleting refs, expiring reflogs, collecting garbage, pruning worktrees, writing git
//! configuration) never reaches the user's repository, the user's other branches, stashes
//! and other worktrees are not readable from it, and its commits come back through the tool.
//! Each as the invoking user and, where the tests run as root, as an unprivileged one. That
//! the git configuration it writes never runs outside is told for both backends in
//! `sandbox_store_both.rs`.

use std::fs;
use std::path::Path;

use crate::backends::{git_ok, Backend};
use crate::harness::{Outcome, TestEnv};
use crate::sandbox_support::setup;

/// Runs `script` in workspace `w`, sandboxed, as the invoking or an unprivileged user.
fn sandboxed(env: &TestEnv, repo: &Path, script: &str, unprivileged: bool) -> Outcome {
    let cmd = env
        .aw_cmd(repo)
        .args(["run", "--sandbox", "w", "--", "sh", "-c", script]);
    match unprivileged {
        true => cmd.run_unprivileged(),
        false => cmd.run(),
    }
}

fn tip(env: &TestEnv, repo: &Path, rev: &str) -> String {
    git_ok(env, repo, &["rev-parse", rev]).trim().to_string()
}

/// The user's unpushed commit on `main`, another branch, and `main` itself survive an agent
/// that deletes every ref it can reach (the repository's too, by its path), expires the
/// reflogs, collects garbage and moves `main` (the base trust is checked against).
fn the_users_history_survives(unprivileged: bool) {
    let (env, repo) = setup(Backend::Git);
    fs::write(repo.join("mine.txt"), "only here\n").unwrap();
    git_ok(&env, &repo, &["add", "mine.txt"]);
    git_ok(&env, &repo, &["commit", "-q", "-m", "unpushed work"]);
    git_ok(&env, &repo, &["branch", "feature"]);
    let main = tip(&env, &repo, "main");
    let script = format!(
        "echo agent > agent.txt ; git add agent.txt ; git commit -q -m agent ; \
         git --git-dir={common} update-ref refs/heads/main HEAD ; \
         git --git-dir={common} update-ref -d refs/heads/feature ; \
         git branch -f main HEAD ; \
         git for-each-ref --format='delete %(refname)' | git update-ref --stdin ; \
         git --git-dir={common} for-each-ref --format='delete %(refname)' | git --git-dir={common} update-ref --stdin ; \
         git reflog expire --expire=now --all ; git --git-dir={common} reflog expire --expire=now --all ; \
         git gc -q --prune=now ; git --git-dir={common} gc -q --prune=now ; echo agent-done",
        common = repo.join(".git").display(),
    );
    let out = sandboxed(&env, &repo, &script, unprivileged);
    assert!(out.stdout.contains("agent-done"), "{}", out.report());
    assert_eq!(tip(&env, &repo, "main"), main, "main moved");
    assert_eq!(tip(&env, &repo, "feature"), main, "feature lost");
    assert_eq!(
        git_ok(&env, &repo, &["show", "main:mine.txt"]),
        "only here\n"
    );
    git_ok(&env, &repo, &["fsck", "--no-dangling"]);
}

#[test]
fn the_users_history_survives_for_the_invoking_user() {
    the_users_history_survives(false);
}

#[test]
fn the_users_history_survives_for_an_unprivileged_user() {
    the_users_history_survives(true);
}

/// The user's stash and another agent's branch are not in what the agent can read.
fn other_work_is_not_readable(unprivileged: bool) {
    let (env, repo) = setup(Backend::Git);
    env.aw(
        &repo,
        [
            "run",
            "other",
            "--",
            "sh",
            "-c",
            "echo draft-words > draft.txt && git add draft.txt && git commit -q -m draft",
        ],
    )
    .assert_ok();
    fs::write(repo.join(".env"), "DB_PASSWORD=hunter2\n").unwrap();
    git_ok(&env, &repo, &["add", ".env"]);
    git_ok(&env, &repo, &["stash", "-q"]);
    // The words searched for are spelled apart, so the command line never holds them.
    let script = format!(
        "s=\"hun\"\"ter2\\|dra\"\"ft-words\" ; \
         git log --all -p ; git stash list -p ; \
         git cat-file --batch-all-objects --batch | grep -a -o \"$s\" ; \
         git --git-dir={common} cat-file --batch-all-objects --batch | grep -a -o \"$s\" ; \
         grep -r -a -o \"$s\" \"$(git rev-parse --git-common-dir)\" {common} ; echo agent-done",
        common = repo.join(".git").display(),
    );
    let out = sandboxed(&env, &repo, &script, unprivileged);
    out.assert_ok();
    assert!(out.stdout.contains("agent-done"), "{}", out.report());
    for secret in ["hunter2", "draft-words"] {
        assert!(
            !out.stdout.contains(secret) && !out.stderr.contains(secret),
            "{secret} was readable:\n{}",
            out.report()
        );
    }
}

#[test]
fn other_work_is_not_readable_for_the_invoking_user() {
    other_work_is_not_readable(false);
}

#[test]
fn other_work_is_not_readable_for_an_unprivileged_user() {
    other_work_is_not_readable(true);
}

/// `git worktree prune` inside (whose other worktrees look deleted from there) unregisters
/// nobody, and the other worktree's staged file stays staged.
#[test]
fn worktree_prune_inside_unregisters_nobody() {
    let (env, repo) = setup(Backend::Git);
    env.aw(
        &repo,
        [
            "run",
            "other",
            "--",
            "sh",
            "-c",
            "echo staged > staged.txt && git add staged.txt",
        ],
    )
    .assert_ok();
    let out = sandboxed(&env, &repo, "git worktree prune ; echo agent-done", false);
    assert!(out.stdout.contains("agent-done"), "{}", out.report());
    let other = env.ws_path(&repo, "other");
    let list = git_ok(&env, &repo, &["worktree", "list", "--porcelain"]);
    assert!(
        list.contains(&format!("worktree {}", other.display())),
        "{list}"
    );
    assert_eq!(
        git_ok(&env, &other, &["diff", "--cached", "--name-only"]),
        "staged.txt\n"
    );
}

/// The agent's commits come back onto the worktree's branch, with what it staged still
/// staged, `diff` shows them and `land` brings them; a second run goes on from there.
#[test]
fn the_agents_commits_come_back_and_land() {
    let (env, repo) = setup(Backend::Git);
    let out = sandboxed(
        &env,
        &repo,
        "echo one > one.txt && echo changed >> sub/b.txt && git add one.txt sub/b.txt && \
         git commit -q -m 'first from agent' && \
         echo staged > staged.txt && git add staged.txt && git rev-parse HEAD",
        false,
    );
    out.assert_ok();
    let commit = out.stdout.trim().to_string();
    let ws = env.ws_path(&repo, "w");
    // What the index knew of a file the agent did not change is kept (not hashed again).
    let known = git_ok(&env, &ws, &["ls-files", "--debug", "--", "a.txt"]);
    assert!(!known.contains("mtime: 0:0"), "{known}");
    assert_eq!(tip(&env, &repo, "agent-workspace/w"), commit);
    assert_eq!(
        git_ok(&env, &ws, &["diff", "--cached", "--name-only"]),
        "staged.txt\n"
    );
    assert_eq!(
        git_ok(&env, &ws, &["status", "--porcelain"]),
        "A  staged.txt\n"
    );
    let diff = env.aw(&repo, ["diff", "w"]);
    diff.assert_ok();
    assert!(diff.stdout.contains("one.txt"), "{}", diff.stdout);
    let again = sandboxed(
        &env,
        &repo,
        "git log -1 --format=%s && git diff --cached --name-only && git commit -q -m second",
        false,
    );
    again.assert_ok();
    assert_eq!(
        again.stdout,
        "first from agent\nstaged.txt\n",
        "{}",
        again.report()
    );
    assert_eq!(
        git_ok(
            &env,
            &repo,
            &["log", "-1", "--format=%s", "agent-workspace/w"]
        ),
        "second\n"
    );
    env.aw(&repo, ["land", "w"]).assert_ok();
    assert_eq!(fs::read_to_string(repo.join("one.txt")).unwrap(), "one\n");
    assert_eq!(
        fs::read_to_string(repo.join("staged.txt")).unwrap(),
        "staged\n"
    );
    // The user's side moved the worktree (a checkpoint): the next run starts from there.
    fs::write(ws.join("two.txt"), "two\n").unwrap();
    env.aw(&repo, ["checkpoint", "w", "-m", "from the user"])
        .assert_ok();
    let seen = sandboxed(
        &env,
        &repo,
        "git log -1 --format=%s && cat two.txt && git status --porcelain",
        false,
    );
    seen.assert_ok();
    assert_eq!(
        seen.stdout,
        "[workspace w] from the user\ntwo\n",
        "{}",
        seen.report()
    );
}

/// Another workspace's record (its command line) and setup log are not readable from a
/// sandbox; the run's own record is.
#[test]
fn other_workspaces_records_are_not_readable() {
    let (env, repo) = setup(Backend::Git);
    env.aw(&repo, ["run", "other", "--", "true", "argv-secret-words"])
        .assert_ok();
    let state = env.namespace_dir(&repo).join(".state");
    let script = format!(
        "s=\"argv-sec\"\"ret-words\" ; cat {state}/* 2>/dev/null | grep -a -o \"$s\" ; \
         test -s {state}/w.json && echo own-record ; echo agent-done",
        state = state.display()
    );
    let out = sandboxed(&env, &repo, &script, false);
    out.assert_ok();
    assert!(out.stdout.contains("agent-done"), "{}", out.report());
    assert!(out.stdout.contains("own-record"), "{}", out.report());
    assert!(
        !out.stdout.contains("argv-secret-words"),
        "another workspace's record was readable:\n{}",
        out.report()
    );
}

/// bubblewrap's startup probe is remembered for that bubblewrap, user and boot: a warm run
/// starts one bubblewrap, not two.
#[test]
fn the_bubblewrap_probe_is_remembered() {
    let (env, repo) = setup(Backend::Git);
    sandboxed(&env, &repo, "true", false).assert_ok();
    let remembered =
        fs::read_to_string(env.xdg_cache().join("agent-workspace/sandbox-probe")).unwrap();
    let bwrap = crate::harness::which("bwrap").unwrap();
    assert!(
        remembered.starts_with(&format!("{} ", bwrap.display())),
        "{remembered}"
    );
    assert!(remembered.contains(" boot "), "{remembered}");
}

/// Work the agent made in its own git directory beyond what comes back (`HEAD` and the
/// index) is never removed silently: `clean` keeps the directory aside, names where (text
/// and JSON) and what it holds, and the work is readable there. A branch at the commit that
/// came back holds nothing more: that directory goes.
fn other_work_keeps_the_git_dir_aside(unprivileged: bool) {
    let scenarios = [
        ("a branch", "git branch -q side && git checkout -q side && echo s > s.txt && git add s.txt && git commit -q -m side && git checkout -q -", Some("side")),
        ("a stash", "echo st > st.txt && git add st.txt && git stash -q", Some("stash")),
        ("a tag", "git tag -a v1 -m 'agent tag'", Some("v1")),
        ("a detached commit", "git checkout -q --detach && echo d > d.txt && git add d.txt && git commit -q -m detached && git checkout -q -", None),
        ("a branch where HEAD is", "git branch alias", None),
    ];
    for (what, extra, name) in scenarios {
        let (env, repo) = setup(Backend::Git);
        let script = format!(
            "echo back > back.txt && git add back.txt && git commit -q -m back && {extra} && echo agent-done"
        );
        let out = sandboxed(&env, &repo, &script, unprivileged);
        assert!(
            out.stdout.contains("agent-done"),
            "{what}: {}",
            out.report()
        );
        let cmd = env.aw_cmd(&repo).args(["clean", "w", "--force", "--json"]);
        let clean = match unprivileged {
            true => cmd.run_unprivileged(),
            false => cmd.run(),
        };
        clean.assert_ok();
        assert!(
            !env.namespace_dir(&repo).join(".private/w").exists(),
            "{what}: {}",
            clean.report()
        );
        let kept = &clean.json()["removed"][0]["own_store_kept"];
        if what == "a branch where HEAD is" {
            assert!(kept.is_null(), "{what}: {}", clean.report());
            continue;
        }
        let path = kept["path"]
            .as_str()
            .unwrap_or_else(|| panic!("{what}: {}", clean.report()));
        let path = Path::new(path);
        assert!(
            path.starts_with(env.namespace_dir(&repo).join(".kept")),
            "{what}: {}",
            clean.report()
        );
        assert!(
            kept["holds"]
                .as_str()
                .is_some_and(|h| name.is_none_or(|n| h.contains(n))),
            "{what}: {}",
            clean.report()
        );
        // The work is there, whole (its base's objects too).
        let log = git_ok(
            &env,
            &repo,
            &[
                &format!("--git-dir={}", path.display()),
                "log",
                "--all",
                "--reflog",
                "--format=%s",
            ],
        );
        let wanted = match what {
            "a branch" => "side",
            "a stash" => "WIP on ",
            "a tag" => "back",
            _ => "detached",
        };
        assert!(log.contains(wanted), "{what}: {log}");
        git_ok(
            &env,
            &repo,
            &[
                &format!("--git-dir={}", path.display()),
                "fsck",
                "--no-dangling",
            ],
        );
        let text = env.aw(&repo, ["clean", "--purge-kept", "w", "--dry-run"]);
        assert!(
            text.stdout
                .contains(&env.namespace_dir(&repo).join(".kept").display().to_string()),
            "{what}: {}",
            text.report()
        );
    }
}

#[test]
fn other_work_keeps_the_git_dir_aside_for_the_invoking_user() {
    other_work_keeps_the_git_dir_aside(false);
}

#[test]
fn other_work_keeps_the_git_dir_aside_for_an_unprivileged_user() {
    other_work_keeps_the_git_dir_aside(true);
}

/// A worktree in the middle of a merge (or holding unresolved conflicts, as a conflicting
/// `git stash pop` leaves) is refused by a sandboxed run with an error naming it and how to
/// conclude or abort it, exit 125, nothing changed: its merge state, conflicts and index stay
/// as they were, no store of its own is made. (Carrying a half-done merge into the agent's
/// own git directory and back could lose the conflict state the user is resolving.)
fn a_worktree_mid_merge_is_refused(unprivileged: bool) {
    for what in ["a merge", "unresolved conflicts"] {
        let (env, repo) = setup(Backend::Git);
        env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
        let ws = env.ws_path(&repo, "w");
        fs::write(repo.join("a.txt"), "from main\n").unwrap();
        git_ok(&env, &repo, &["commit", "-q", "-am", "main side"]);
        fs::write(ws.join("a.txt"), "from w\n").unwrap();
        match what {
            "a merge" => {
                git_ok(&env, &ws, &["commit", "-q", "-am", "w side"]);
                let merge = env.cmd("git", &ws).args(["merge", "-q", "main"]).run();
                assert_ne!(merge.code(), Some(0), "{}", merge.report());
            }
            _ => {
                git_ok(&env, &ws, &["stash", "-q"]);
                git_ok(&env, &ws, &["merge", "-q", "--ff-only", "main"]);
                let pop = env.cmd("git", &ws).args(["stash", "pop", "-q"]).run();
                assert_ne!(pop.code(), Some(0), "{}", pop.report());
            }
        }
        let git_dir = git_ok(&env, &ws, &["rev-parse", "--absolute-git-dir"]);
        let git_dir = Path::new(git_dir.trim());
        let state = || {
            (
                git_ok(&env, &ws, &["ls-files", "-s"]),
                fs::read(git_dir.join("index")).unwrap(),
                fs::read_to_string(git_dir.join("MERGE_HEAD")).ok(),
                fs::read_to_string(ws.join("a.txt")).unwrap(),
            )
        };
        let before = state();
        assert!(
            git_ok(&env, &ws, &["ls-files", "-u"]).contains("a.txt"),
            "{what}: no conflict to test with"
        );
        let out = sandboxed(&env, &repo, "echo ran", unprivileged);
        assert_eq!(out.code(), Some(125), "{what}: {}", out.report());
        assert!(!out.stdout.contains("ran"), "{what}: {}", out.report());
        let wanted = format!("Error: worktree {} holds {what}", ws.display());
        let stderr = crate::sandbox_support::without_limits_note(&out.stderr);
        assert!(stderr.starts_with(&wanted), "{what}: {}", out.report());
        let hint = match what {
            "a merge" => "merge --abort",
            _ => "a.txt",
        };
        assert!(
            out.stderr.contains("\nHint: ") && out.stderr.contains(hint),
            "{what}: {}",
            out.report()
        );
        assert!(
            state() == before,
            "{what}: the worktree changed\n{}",
            out.report()
        );
        assert!(
            !env.namespace_dir(&repo).join(".private/w").exists(),
            "{what}: {}",
            out.report()
        );
    }
}

#[test]
fn a_worktree_mid_merge_is_refused_for_the_invoking_user() {
    a_worktree_mid_merge_is_refused(false);
}

#[test]
fn a_worktree_mid_merge_is_refused_for_an_unprivileged_user() {
    a_worktree_mid_merge_is_refused(true);
}

/// The hooks an agent puts in its own git directory never run when its work comes back:
/// a `reference-transaction` hook that ignores SIGTERM and never ends would hold the export
/// (git moves a ref there); the work comes back at once, the hook never having run.
#[test]
fn a_hook_in_its_own_store_never_runs_when_its_work_comes_back() {
    let (env, repo) = setup(Backend::Git);
    env.user_config("[sandbox]\nbring_back_timeout = \"20s\"\n");
    let ws = env.ws_path(&repo, "w");
    let script = "echo h > hooked.txt && git add hooked.txt && git commit -q -m 'hooked work' && \
         hooks=$(git rev-parse --git-path hooks) && mkdir -p \"$hooks\" && \
         printf '#!/bin/sh\\ntrap \"\" TERM INT\\necho ran >> \"%s/hook-ran\"\\nsleep 600\\n' \"$PWD\" \
           > \"$hooks/reference-transaction\" && chmod +x \"$hooks/reference-transaction\"";
    let run = sandboxed(&env, &repo, script, false);
    run.assert_ok();
    assert!(!run.stderr.contains("not brought back"), "{}", run.report());
    assert!(
        !ws.join("hook-ran").exists(),
        "the hook ran: {}",
        run.report()
    );
    let subjects = git_ok(&env, &repo, &["log", "--all", "--format=%s"]);
    assert!(
        subjects.contains("hooked work"),
        "{subjects}\n{}",
        run.report()
    );
}
