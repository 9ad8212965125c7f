//! Helpers the `--sandbox` tests share: whether bubblewrap can make a sandbox here, and a
//! test environment with a repository when it can.

use std::process::Command;

use crate::backends::Backend;
use crate::harness::{which, TestEnv};

/// Asserts that bubblewrap can make a sandbox on this machine: where it cannot (or is
/// missing) the test fails, naming the cause. Never a silent pass: a build that cannot run
/// bubblewrap (the nix build sandbox) leaves these tests out by name (`cargo test --
/// --skip sandbox`), so each test that needs it says `sandbox` in its name, which this checks.
pub(crate) fn require_sandbox() {
    let thread = std::thread::current();
    let name = thread.name().unwrap_or_default();
    assert!(
        name == "main" || name.contains("sandbox"),
        "{name} needs bubblewrap: its name must say `sandbox`, so that `--skip sandbox` leaves \
         it out where bubblewrap cannot run"
    );
    let works = which("bwrap").is_some_and(|bwrap| {
        Command::new(bwrap)
            .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
            .args(["--unshare-pid", "--cap-drop", "ALL", "--", "true"])
            .status()
            .is_ok_and(|s| s.success())
    });
    assert!(
        works,
        "bubblewrap is missing or cannot start a sandbox here (scripts/install-tools.sh \
         installs it; user namespaces must be allowed); where it cannot run, leave the sandbox \
         tests out: cargo test -- --skip sandbox"
    );
}

/// A test environment with a repository of `backend`, once [`require_sandbox`] holds.
pub(crate) fn setup(backend: Backend) -> (TestEnv, std::path::PathBuf) {
    require_sandbox();
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    (env, repo)
}

/// `stderr` without the note of a sandboxed run that gets no process or memory limit (an
/// unprivileged user on a host whose cgroups only root may write).
pub(crate) fn without_limits_note(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| !l.starts_with("Note: this sandboxed run has no process or memory limit: "))
        .map(|l| format!("{l}\n"))
        .collect()
}
