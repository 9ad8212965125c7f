//! The setup hook (`setup.command`): run once in a new workspace before its first command,
//! with the command's environment, its outcome and log recorded; a failure fails the run and
//! keeps the workspace; a command of the repository's file runs only when that file is the
//! one at the workspace's base revision, or with `--trust-config`.

use std::fs;
use std::path::Path;

use crate::backends::{git_ok, Backend};
use crate::harness::TestEnv;

fn commit_all(env: &TestEnv, backend: Backend, repo: &Path, message: &str) {
    match backend {
        Backend::Jj => {
            env.jj(repo, ["commit", "-m", message]).assert_ok();
        }
        Backend::Git => {
            git_ok(env, repo, &["add", "-A"]);
            git_ok(env, repo, &["commit", "-q", "-m", message]);
        }
    }
}

fn lines(path: &Path) -> usize {
    fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

fn a_setup_from_the_user_file_runs_once_with_the_command_s_environment(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let count = env.path().join("count");
    let script = format!(
        "echo once >> {}; echo \"setup $AGENT_WORKSPACE_ID $AW_TEST_VAR $PWD\"; echo to-stderr >&2",
        count.display()
    );
    env.user_config(&format!("[setup]\ncommand = {script:?}\n"));
    let out = env.aw(&repo, ["run", "w", "--", "true"]);
    out.assert_ok();
    // Its output goes to the log, not to the run's.
    assert!(!out.stdout.contains("setup"), "{}", out.report());
    assert_eq!(lines(&count), 1);
    let ws = env.ws_path(&repo, "w");
    let record = env.metadata(&ws);
    let setup = &record["setup"];
    assert_eq!(setup["status"], "done", "{record:#}");
    assert_eq!(setup["exit_code"], 0);
    assert_eq!(setup["command"][0], "sh");
    assert!(setup["duration_ms"].is_u64(), "{record:#}");
    let log = setup["log"].as_str().unwrap();
    assert!(!Path::new(log).starts_with(&ws), "{log}");
    let text = fs::read_to_string(log).unwrap();
    let canonical = fs::canonicalize(&ws).unwrap();
    assert!(
        text.contains(&format!("setup w from-envrc {}", canonical.display())),
        "{text}"
    );
    assert!(text.contains("to-stderr"), "{text}");
    // Not again on the next run.
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    assert_eq!(lines(&count), 1);
    // Its log goes with the workspace.
    env.aw(&repo, ["clean", "w"]).assert_ok();
    assert!(!Path::new(log).exists());
}

fn a_failed_setup_fails_the_run_keeps_the_workspace_and_is_retried(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let fixed = env.path().join("fixed");
    env.user_config(&format!(
        "[setup]\ncommand = [\"sh\", \"-c\", \"echo broken; test -e {}\"]\n",
        fixed.display()
    ));
    let out = env.aw(&repo, ["run", "w", "--", "touch", "ran"]);
    out.assert_code(125);
    let ws = env.ws_path(&repo, "w");
    let record = env.metadata(&ws);
    let log = record["setup"]["log"].as_str().unwrap().to_string();
    assert!(
        out.stderr.contains(&format!(
            "Error: the setup command failed (exit code 1); the command was not run. Its output is in {log}"
        )),
        "{}",
        out.report()
    );
    assert!(
        out.stderr.contains(
            "Hint: workspace \"w\" is kept for inspection; the next run retries the setup"
        ),
        "{}",
        out.report()
    );
    assert_eq!(record["setup"]["status"], "failed", "{record:#}");
    assert_eq!(record["setup"]["exit_code"], 1, "{record:#}");
    assert_eq!(fs::read_to_string(&log).unwrap(), "broken\n");
    assert!(ws.is_dir());
    assert!(!ws.join("ran").exists());
    fs::write(&fixed, "").unwrap();
    env.aw(&repo, ["run", "w", "--", "touch", "ran"])
        .assert_ok();
    assert!(ws.join("ran").exists());
    assert_eq!(env.metadata(&ws)["setup"]["status"], "done");
}

fn a_repository_file_s_setup_runs_only_as_at_the_base_revision(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let count = env.path().join("count");
    let config = format!("[setup]\ncommand = \"echo run >> {}\"\n", count.display());
    fs::write(repo.join("agent-workspace.toml"), &config).unwrap();
    commit_all(&env, backend, &repo, "config");
    env.aw(&repo, ["run", "trusted", "--", "true"]).assert_ok();
    assert_eq!(lines(&count), 1);
    // Changed in the main workspace, not at the base revision: refused.
    let changed = format!(
        "[setup]\ncommand = \"echo changed >> {}\"\n",
        count.display()
    );
    fs::write(repo.join("agent-workspace.toml"), changed).unwrap();
    let out = env.aw(&repo, ["run", "w", "--", "touch", "ran"]);
    out.assert_code(125);
    assert!(
        out.stderr.contains(&format!(
            "Error: setup.command comes from {}, which differs from that file at workspace \"w\"'s base revision; not running it",
            repo.join("agent-workspace.toml").display()
        )),
        "{}",
        out.report()
    );
    assert!(out.stderr.contains("--trust-config"), "{}", out.report());
    let ws = env.ws_path(&repo, "w");
    assert!(ws.is_dir() && !ws.join("ran").exists());
    assert_eq!(env.metadata(&ws)["setup"]["status"], "refused");
    assert_eq!(lines(&count), 1);
    // Allowed explicitly.
    env.aw(&repo, ["run", "w", "--trust-config", "--", "touch", "ran"])
        .assert_ok();
    assert!(ws.join("ran").exists());
    assert_eq!(env.metadata(&ws)["setup"]["status"], "done");
    assert_eq!(
        fs::read_to_string(&count).unwrap(),
        "run\nchanged\n",
        "the changed command ran once"
    );
}

#[test]
fn bad_setup_commands_are_refused() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    for (text, key) in [
        ("[setup]\ncommand = 5\n", "at line 2: command = 5"),
        ("[setup]\ncommand = []\n", "setup.command is empty"),
        ("[setup]\ncmd = \"x\"\n", "unknown field `cmd`"),
    ] {
        env.user_config(text);
        let out = env.aw(&repo, ["run", "w", "--", "true"]);
        out.assert_code(2);
        assert!(out.stderr.contains(key), "{}", out.report());
        assert!(out.stderr.contains("Hint: "), "{}", out.report());
        assert!(!env.ws_path(&repo, "w").exists());
    }
}

#[test]
fn a_workspace_made_before_the_setup_was_configured_is_not_set_up() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    env.user_config("[setup]\ncommand = \"exit 3\"\n");
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let record = env.metadata(&env.ws_path(&repo, "w"));
    assert!(record.get("setup").is_none(), "{record:#}");
}

crate::both_backends!(
    a_setup_from_the_user_file_runs_once_with_the_command_s_environment,
    a_failed_setup_fails_the_run_keeps_the_workspace_and_is_retried,
    a_repository_file_s_setup_runs_only_as_at_the_base_revision,
);
