//! Files an agent can write, replaced by a FIFO: `run`, `status`, `gc --dry-run` and `clean`
//! never wait on one (they would hang, SIGTERM or not); they refuse it or go by
//! agent-workspace's own state, and say so.

use std::path::Path;
use std::process::Command;

use crate::backends::Backend;
use crate::harness::{Outcome, TestEnv, AW};

/// Seconds after which a command counts as hung (it is then killed).
const HUNG: &str = "20";

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// `agent-workspace ARGS`, killed (and failed) when it has not ended within [`HUNG`].
fn aw_bounded(env: &TestEnv, repo: &Path, args: &[&str]) -> Outcome {
    let out = env
        .cmd("timeout", repo)
        .args(["-s", "KILL", HUNG, AW])
        .args(args)
        .run();
    assert_ne!(
        out.code(),
        Some(137),
        "`agent-workspace {}` hung on a FIFO:\n{}",
        args.join(" "),
        out.stderr
    );
    out
}

fn a_fifo_record_never_hangs(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w");
    mkfifo(&ws.join(".agent-workflow.json"));
    // The record is agent-workspace's own state; the view in the workspace is only a copy.
    let status = aw_bounded(&env, &repo, &["status"]);
    insta::assert_snapshot!(status, @r"
    WORKSPACE  STATUS  WORKFLOW  CHANGES  UNLANDED  UPDATED
    w          done    -         clean    0         [AGO]
    --- stderr ---
    w: its .agent-workflow.json was changed outside agent-workspace, which goes by its own state in .state/w.json; the next `agent-workspace run w` rewrites it
    [exit 0]
    ");
    aw_bounded(&env, &repo, &["status", "w"]).assert_ok();
    aw_bounded(&env, &repo, &["gc", "--dry-run"]).assert_ok();
    let run = aw_bounded(&env, &repo, &["run", "w", "--", "true"]);
    run.assert_ok();
    assert!(
        ws.join(".agent-workflow.json").is_file(),
        "the run did not put its record back"
    );
    mkfifo(&ws.join(".agent-workflow.json"));
    aw_bounded(&env, &repo, &["clean", "w"]).assert_ok();
    assert!(!ws.exists());
}

fn a_fifo_envrc_is_refused_and_never_hangs(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w");
    let envrc = ws.join(".envrc");
    mkfifo(&envrc);
    let run = aw_bounded(&env, &repo, &["run", "w", "--", "echo", "ran"]);
    insta::assert_snapshot!(run, @r"
    --- stderr ---
    Error: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w/.envrc is a FIFO, not a regular file; refusing to open it
    Hint: agent-workspace reads only regular files of a sane size where an agent can write; move [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w/.envrc away (an agent may have put it there) and try again
    [exit 125]
    ");
    assert!(
        run.stderr.starts_with(&format!(
            "Error: {} is a FIFO, not a regular file; refusing to open it\n",
            envrc.display()
        )),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("\nHint: "), "{}", run.stderr);
    aw_bounded(&env, &repo, &["status"]).assert_ok();
    aw_bounded(&env, &repo, &["status", "w"]).assert_ok();
    aw_bounded(&env, &repo, &["gc", "--dry-run"]).assert_ok();
    aw_bounded(&env, &repo, &["clean", "w"]);
}

crate::both_backends!(
    a_fifo_record_never_hangs,
    a_fifo_envrc_is_refused_and_never_hangs,
    a_fifo_envrc_is_refused_for_an_unprivileged_user,
    a_fifo_repository_pointer_is_refused_and_never_hangs,
);

/// A FIFO planted as a workspace's lease file is refused, not opened and waited on.
#[test]
fn a_fifo_lease_is_refused_and_never_hangs() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let lease = env.namespace_dir(&repo).join(".locks/w.lock");
    assert!(lease.is_file(), "no lease at {}", lease.display());
    mkfifo(&lease);
    let run = aw_bounded(&env, &repo, &["run", "w", "--", "echo", "ran"]);
    assert!(!run.stdout.contains("ran"), "{}", run.stdout);
    assert!(
        run.stderr.starts_with(&format!(
            "Error: {} is a FIFO, not a regular file; refusing to open it\n",
            lease.display()
        )),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("\nHint: "), "{}", run.stderr);
    run.assert_code(125);
    aw_bounded(&env, &repo, &["status"]).assert_ok();
}

/// The same refusal for an unprivileged user (where the tests run as root: nobody).
fn a_fifo_envrc_is_refused_for_an_unprivileged_user(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let envrc = env.ws_path(&repo, "w").join(".envrc");
    mkfifo(&envrc);
    let run = env
        .cmd("timeout", &repo)
        .args(["-s", "KILL", HUNG, AW, "run", "w", "--", "echo", "ran"])
        .run_unprivileged();
    assert_ne!(run.code(), Some(137), "hung on a FIFO:\n{}", run.stderr);
    insta::assert_snapshot!(run, @r"
    --- stderr ---
    Error: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w/.envrc is a FIFO, not a regular file; refusing to open it
    Hint: agent-workspace reads only regular files of a sane size where an agent can write; move [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w/.envrc away (an agent may have put it there) and try again
    [exit 125]
    ");
    assert!(
        run.stderr.starts_with(&format!(
            "Error: {} is a FIFO, not a regular file; refusing to open it\n",
            envrc.display()
        )),
        "{}",
        run.stderr
    );
}

/// git: a FIFO in place of the worktree's index (in the git directory a sandboxed run can
/// write) stops `diff` with an error instead of hanging it.
#[test]
fn a_fifo_git_index_is_refused_and_never_hangs() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let index = repo.join(".git/worktrees/w/index");
    assert!(index.is_file(), "no index at {}", index.display());
    mkfifo(&index);
    let diff = aw_bounded(&env, &repo, &["diff", "w"]);
    assert_ne!(diff.code(), Some(0), "{}", diff.stdout);
    assert!(
        diff.stderr.starts_with("Error: ") && diff.stderr.contains(index.to_str().unwrap()),
        "{}",
        diff.stderr
    );
    assert!(diff.stderr.contains("\nHint: "), "{}", diff.stderr);
}

/// A FIFO in place of a workspace's `.git` file (git) or `.jj/repo` file (jj) stops a command
/// started inside that workspace with an error instead of hanging it.
fn a_fifo_repository_pointer_is_refused_and_never_hangs(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w");
    let pointer = match backend {
        Backend::Jj => ws.join(".jj/repo"),
        Backend::Git => ws.join(".git"),
    };
    assert!(pointer.is_file(), "no file at {}", pointer.display());
    mkfifo(&pointer);
    let status = aw_bounded(&env, &ws, &["status"]);
    assert_ne!(status.code(), Some(0), "{}", status.stdout);
    assert!(
        status.stderr.starts_with("Error: ") && status.stderr.contains(pointer.to_str().unwrap()),
        "{}",
        status.stderr
    );
    assert!(
        status.stderr.contains("\nHint: ") && status.stderr.contains("not a regular file"),
        "{}",
        status.stderr
    );
}

/// git: a FIFO the agent left in place of a tracked file (git cannot add one) stops `clean`,
/// `diff` and `checkpoint` with an error naming that file and a hint, nothing staged,
/// committed or removed; once it is gone, `clean` works.
#[test]
fn a_fifo_in_place_of_a_tracked_file_is_named_by_git() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    env.aw(
        &repo,
        [
            "run",
            "w",
            "--",
            "sh",
            "-c",
            "rm a.txt && mkfifo a.txt && echo x > new.txt",
        ],
    )
    .assert_ok();
    let ws = env.ws_path(&repo, "w");
    let fifo = ws.join("a.txt");
    let tip = |rev: &str| crate::backends::git_ok(&env, &repo, &["rev-parse", rev]);
    let before = tip("agent-workspace/w");
    for args in [
        &["clean", "w"][..],
        &["diff", "w"],
        &["checkpoint", "w", "-m", "c"],
    ] {
        let out = aw_bounded(&env, &repo, args);
        assert_eq!(out.code(), Some(1), "{}", out.report());
        assert!(
            out.stderr.starts_with(&format!(
                "Error: {} is a FIFO, which git cannot record",
                fifo.display()
            )),
            "{}",
            out.report()
        );
        assert!(
            out.stderr
                .contains("\nHint: nothing was recorded; remove it")
                && out.stderr.contains(&format!("rm {}", fifo.display())),
            "{}",
            out.report()
        );
        assert!(ws.join("new.txt").is_file(), "{}", out.report());
        assert_eq!(tip("agent-workspace/w"), before, "{}", out.report());
        assert_eq!(
            crate::backends::git_ok(&env, &ws, &["diff", "--cached", "--name-only"]),
            "",
            "{}",
            out.report()
        );
    }
    std::fs::remove_file(&fifo).unwrap();
    aw_bounded(&env, &repo, &["clean", "w"]).assert_ok();
    assert!(!ws.exists());
}

/// jj: the same FIFO is recorded as the file's deletion and kept aside by `clean`, like any
/// file no commit holds.
#[test]
fn a_fifo_in_place_of_a_tracked_file_is_kept_aside_by_jj() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    env.aw(
        &repo,
        [
            "run",
            "w",
            "--",
            "sh",
            "-c",
            "rm a.txt && mkfifo a.txt && echo x > new.txt",
        ],
    )
    .assert_ok();
    let ws = env.ws_path(&repo, "w");
    let clean = aw_bounded(&env, &repo, &["clean", "w"]);
    clean.assert_ok();
    assert!(!ws.exists());
    assert!(clean.stdout.contains("kept 1 file"), "{}", clean.report());
    let kept = env.namespace_dir(&repo).join(".kept");
    let dir = std::fs::read_dir(&kept)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(dir.join("a.txt"))
        .unwrap()
        .file_type()
        .is_fifo());
}
