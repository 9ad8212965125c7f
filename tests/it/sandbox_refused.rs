//! `--sandbox` never runs a command unconfined: without bubblewrap, or with one that cannot
//! make a sandbox, nothing runs; sandbox options without `--sandbox` are usage errors.

use crate::backends::Backend;
use crate::harness::TestEnv;
use crate::sandbox_support::setup;

#[test]
fn without_bubblewrap_nothing_runs_and_the_error_says_why() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    let marker = env.path().join("ran");
    let out = env
        .aw_cmd(&repo)
        .env("PATH", env.path_with_only(&["jj", "git", "direnv"]))
        .args(["run", "--sandbox", "w", "--", "touch"])
        .arg(&marker)
        .run();
    out.assert_code(125);
    assert!(!marker.exists(), "the command ran unconfined");
    assert!(!env.ws_path(&repo, "w").exists(), "a workspace was created");
    insta::assert_snapshot!(out.stderr, @r"
    Error: --sandbox needs bubblewrap (bwrap), which is not on PATH
    Hint: install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or run without --sandbox
    ");
}

#[test]
fn sandbox_options_need_sandbox() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    let out = env.aw(&repo, ["run", "--no-network", "w", "--", "true"]);
    out.assert_code(2);
    assert!(out.stderr.starts_with("Error: "), "{}", out.stderr);
    assert!(out.stderr.contains("--sandbox"), "{}", out.stderr);
    assert!(!env.ws_path(&repo, "w").exists());
}

/// Inside a container that dropped every capability (here: an outer bubblewrap with
/// `--cap-drop ALL`), bubblewrap cannot make a sandbox: the probe says so and why, and the
/// command does not run.
#[test]
fn an_unusable_bubblewrap_stops_the_run_with_the_known_cause() {
    let (env, repo) = setup(Backend::Jj);
    let marker = env.path().join("ran");
    let root = env.path().display().to_string();
    let out = env
        .cmd("bwrap", &repo)
        .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
        .args(["--bind", &root, &root, "--cap-drop", "ALL", "--"])
        .arg(crate::harness::AW)
        .args(["run", "--sandbox", "w", "--", "touch"])
        .arg(&marker)
        .run();
    out.assert_code(125);
    assert!(!marker.exists(), "the command ran unconfined");
    assert!(!env.ws_path(&repo, "w").exists(), "a workspace was created");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(
        lines[0].starts_with("Error: bubblewrap cannot create a sandbox here: ")
            && lines[0].contains("Operation not permitted"),
        "{}",
        out.stderr
    );
    assert!(
        lines.iter().any(
            |l| l.starts_with("Hint: the container drops the capabilities")
                && l.ends_with("agent-workspace never runs a --sandbox command unconfined")
        ),
        "{}",
        out.stderr
    );
}
