//! Helpers the `--sandbox` tests share: whether bubblewrap can make a sandbox here, and a
//! test environment with a repository when it can.

use std::process::Command;

use crate::backends::Backend;
use crate::harness::{which, TestEnv};

/// Whether bubblewrap can make a sandbox on this machine. Where it cannot (or is missing),
/// the test fails, naming the cause, unless `AW_TEST_NO_SANDBOX=1` asks to leave the sandbox
/// tests out (as the nix build sandbox must): then it says so and stops.
pub(crate) fn sandbox_available() -> bool {
    let works = which("bwrap").is_some_and(|bwrap| {
        Command::new(bwrap)
            .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
            .args(["--unshare-pid", "--cap-drop", "ALL", "--", "true"])
            .status()
            .is_ok_and(|s| s.success())
    });
    if !works {
        assert!(
            std::env::var("AW_TEST_NO_SANDBOX").as_deref() == Ok("1"),
            "bubblewrap is missing or cannot start a sandbox here (scripts/install-tools.sh \
             installs it; user namespaces must be allowed); AW_TEST_NO_SANDBOX=1 leaves the \
             sandbox tests out"
        );
        eprintln!("SKIPPED (AW_TEST_NO_SANDBOX=1): bubblewrap cannot start a sandbox here");
    }
    works
}

/// A test environment with a repository of `backend`, when a sandbox can be made here.
pub(crate) fn setup(backend: Backend) -> Option<(TestEnv, std::path::PathBuf)> {
    if !sandbox_available() {
        return None;
    }
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    Some((env, repo))
}
