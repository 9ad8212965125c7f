//! Error and report messages in the README's form (`Error:`, `Caused by:`, `Hint:`): names
//! too long, failed commits, failed creations, lock files, deleted branches.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use crate::backends::{git_ok, git_repo};
use crate::harness::TestEnv;

#[test]
fn a_repository_name_too_long_for_a_namespace_is_named() {
    let env = TestEnv::new();
    // 250 bytes is a valid directory name; the namespace adds 11 and is not.
    let name = "r".repeat(250);
    let repo = git_repo(&env, &name);
    let out = env.aw(&repo, ["run", "w1", "--", "touch", "ran"]);
    // status has nothing to list: no namespace can exist under that name.
    let status = env.aw(&repo, ["status"]);
    insta::with_settings!({filters => vec![("r{250}", "[250 r]")]}, {
        insta::assert_snapshot!(out, @r#"
        --- stderr ---
        Error: the name "[250 r]-[HASH]" in [TMP]/xdg/cache/ai-workspaces/[250 r]-[HASH] is 261 bytes, longer than the file system allows (255)
        Hint: workspace namespaces are named after the repository's directory: use a shorter name for it (or a shorter workspace id)
        [exit 125]
        "#);
        insta::assert_snapshot!(status, @r"
        WORKSPACE  STATUS  WORKFLOW  CHANGES  UNLANDED  UPDATED
        [exit 0]
        ");
    });
    assert!(!repo.join("ran").exists());
}

#[test]
fn a_failed_signed_commit_leaves_nothing_staged_and_says_what_to_do() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    env.aw(
        &repo,
        [
            "run",
            "w1",
            "--",
            "sh",
            "-c",
            "echo new > new.txt; echo more >> a.txt",
        ],
    )
    .assert_ok();
    let ws = env.ws_path(&repo, "w1");
    git_ok(&env, &repo, &["config", "commit.gpgsign", "true"]);
    git_ok(&env, &repo, &["config", "gpg.program", "/nonexistent/gpg"]);
    let before = git_ok(&env, &ws, &["status", "--porcelain"]);
    let out = env.aw(&repo, ["clean", "w1"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: could not commit the uncommitted changes of [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1; the workspace is kept
    Caused by: `git -C [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1 commit --quiet --no-verify -m 'agent-workspace: uncommitted changes of workspace w1'` failed (exit status: 128)
    Caused by: fatal: cannot exec '/nonexistent/gpg': No such file or directory
               gpg failed to sign the data:
               (no gpg output)
               fatal: failed to write commit object
    Hint: nothing was left staged; fix the commit (e.g. its signing setup: `git -C [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1 config commit.gpgsign false`) or commit the changes yourself, then clean again
    [exit 1]
    ");
    // The worktree is as the agent left it: kept, nothing staged, the edits in place.
    assert_eq!(git_ok(&env, &ws, &["status", "--porcelain"]), before);
    assert_eq!(git_ok(&env, &ws, &["diff", "--cached", "--name-only"]), "");
    assert_eq!(fs::read_to_string(ws.join("new.txt")).unwrap(), "new\n");
    assert!(ws.join(".agent-workflow.json").is_file());
}

#[test]
fn a_failed_worktree_creation_has_a_hint_and_leaves_no_lease() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    // git cannot make its administrative directory for the worktree.
    fs::write(repo.join(".git/worktrees"), "not a directory\n").unwrap();
    let out = env.aw(&repo, ["run", "w1", "--", "touch", "ran"]);
    insta::assert_snapshot!(out, @r#"
    --- stderr ---
    Error: could not create git worktree "w1" at [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1
    Caused by: `git -C [TMP]/repo worktree add --quiet -b agent-workspace/w1 [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1 [COMMIT]` failed (exit status: 128)
    Caused by: fatal: could not create leading directories of '.git/worktrees/w1': Not a directory
    Hint: nothing of the workspace was kept; fix what the backend reports above and run again
    [exit 125]
    "#);
    let ns = env.namespace_dir(&repo);
    assert!(!ns.join("w1").exists(), "{}", env.listing());
    assert!(!ns.join(".locks/w1.lock").exists(), "{}", env.listing());
    assert!(!repo.join("ran").exists());
}

#[test]
fn an_unusable_lock_file_has_a_hint() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let lease = env.namespace_dir(&repo).join(".locks/w1.lock");
    fs::remove_file(&lease).unwrap();
    fs::create_dir(&lease).unwrap();
    let out = env.aw(&repo, ["run", "w1", "--", "true"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.locks/w1.lock is a directory, not a regular file; refusing to open it
    Hint: agent-workspace reads only regular files of a sane size where an agent can write; move [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.locks/w1.lock away (an agent may have put it there) and try again
    [exit 125]
    ");
}

/// A directory where the record view goes (an agent made it) is refused, not moved: the run
/// stops with a clear error, the directory and what it holds stay, and no temp file is left.
#[test]
fn a_directory_at_the_record_view_is_refused_and_kept() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let view = ws.join(".agent-workflow.json");
    fs::remove_file(&view).unwrap();
    fs::create_dir(&view).unwrap();
    fs::write(view.join("kept"), "an agent's file\n").unwrap();
    let out = env.aw(&repo, ["run", "w1", "--", "true"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: could not write [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/.agent-workflow.json
    Caused by: Is a directory (os error 21)
    Hint: a directory stands where agent-workspace writes a file: move [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/.agent-workflow.json away (nothing in it was touched) and try again
    [exit 125]
    ");
    assert_eq!(
        fs::read_to_string(view.join("kept")).unwrap(),
        "an agent's file\n"
    );
    let temps: Vec<_> = fs::read_dir(&ws)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp."))
        .collect();
    assert!(temps.is_empty(), "{temps:?}");
}

#[test]
fn delete_branch_names_the_deleted_branch_and_how_to_restore_it() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    env.aw(&repo, ["run", "merged", "--", "true"]).assert_ok();
    let tip = git_ok(&env, &repo, &["rev-parse", "agent-workspace/merged"]);
    let out = env.aw(&repo, ["clean", "--delete-branch", "merged"]);
    // The restore command names the branch's tip itself (the snapshot shows it as [COMMIT]).
    let restore = format!("`git branch agent-workspace/merged {}`", tip.trim());
    assert!(out.stdout.contains(&restore), "{}", out.report());
    insta::assert_snapshot!(out, @r"
    Removed merged ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/merged); deleted branch agent-workspace/merged ([SHORT]) as --delete-branch asked; `git branch agent-workspace/merged [COMMIT]` restores it
    [exit 0]
    ");
}

/// When a run cannot be recorded as running, its command never starts, although direnv (or
/// the guard) was already on its way meanwhile; the chain ends with the error, so the next
/// run finds the workspace free. (`.state` read-only, as a user file permissions apply to.)
#[test]
fn a_run_that_cannot_be_recorded_never_starts_its_command() {
    let env = TestEnv::new();
    let repos = [
        (env.jj_repo("jj"), "through direnv"),
        (git_repo(&env, "git"), "directly"),
    ];
    let mut refused = vec![];
    for (repo, how) in repos {
        env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
        let state = env.namespace_dir(&repo).join(".state");
        fs::set_permissions(&state, fs::Permissions::from_mode(0o555)).unwrap();
        let marker = env.path().join("ran");
        let out = env
            .aw_cmd(&repo)
            .args(["run", "w1", "--", "touch"])
            .arg(&marker)
            .run_unprivileged();
        fs::set_permissions(&state, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!marker.exists(), "{how}: the command ran: {}", out.report());
        env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
        refused.push(out);
    }
    insta::assert_snapshot!(refused[0], @r"
    --- stderr ---
    Error: could not write [TMP]/xdg/cache/ai-workspaces/jj-[HASH]/.state/w1.json
    Caused by: Permission denied (os error 13)
    Hint: make [TMP]/xdg/cache/ai-workspaces/jj-[HASH]/.state/w1.json writable by this user, or pass --root DIR for another workspace root
    [exit 125]
    ");
    insta::assert_snapshot!(refused[1], @r"
    --- stderr ---
    Error: could not write [TMP]/xdg/cache/ai-workspaces/git-[HASH]/.state/w1.json
    Caused by: Permission denied (os error 13)
    Hint: make [TMP]/xdg/cache/ai-workspaces/git-[HASH]/.state/w1.json writable by this user, or pass --root DIR for another workspace root
    [exit 125]
    ");
}
