//! The words of a sandbox that could not be made: each [`SandboxError`] as the one
//! user-facing error form.

use crate::error::CliError;
use crate::exec::sandbox::SandboxError;

impl From<SandboxError> for CliError {
    fn from(err: SandboxError) -> CliError {
        CliError::from(&err)
    }
}

impl From<&SandboxError> for CliError {
    fn from(err: &SandboxError) -> CliError {
        let message = err.to_string();
        match err {
            SandboxError::Missing => CliError::failure(message).hint(
                "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or run without --sandbox",
            ),
            SandboxError::Unusable { stderr } => CliError::failure(message).hint(unusable_hint(stderr)),
            SandboxError::Unsupported => CliError::failure(message)
                .hint("run without --sandbox on this platform"),
            SandboxError::BadPath { .. } => CliError::failure(message)
                .hint("pass --allow-write an existing directory or file"),
            SandboxError::BadSocket { .. } => CliError::failure(message)
                .hint("list only existing unix sockets in sandbox.sockets, or remove the entry"),
            SandboxError::RelativeReadable { .. } => CliError::usage(message)
                .hint("list absolute paths in sandbox.readable (in your own configuration file)"),
            SandboxError::GitTarget { .. } => CliError::failure(message).hint(
                "something rewrote .jj/repo/store/git_target (a sandboxed agent can write it): put back the repository's own git directory (`../../../.git` for a colocated repository, `git` otherwise) and check what else changed; the command was not run",
            ),
            SandboxError::LimitUnavailable { key, .. } => CliError::failure(message).hint(format!(
                "run as a user who may make cgroups (root, or one a cgroup v2 is delegated to), or remove sandbox.limits.{key} from your own configuration file to run without it; the command was not run"
            )),
            SandboxError::NoCgroup { .. } | SandboxError::Cgroup { .. } => CliError::failure(message).hint(
                "agent-workspace never runs a --sandbox command without the limits it was given; check the cgroup file system, or see `agent-workspace doctor`",
            ),
            SandboxError::Seccomp(_) => CliError::failure(message).hint(
                "this platform has no seccomp support agent-workspace knows; agent-workspace never runs a --sandbox command unconfined",
            ),
        }
    }
}

/// The fix for bubblewrap's known failures to start.
fn unusable_hint(stderr: &str) -> String {
    use crate::exec::classify::{bwrap_start, BwrapStart};
    let root = rustix::process::geteuid().is_root();
    let known = match bwrap_start(stderr, root) {
        BwrapStart::UserNamespacesBlocked => "unprivileged user namespaces are blocked: on Ubuntu 24.04 allow them for bwrap with an AppArmor profile (or sysctl kernel.apparmor_restrict_unprivileged_userns=0); in a container, run it with a seccomp profile that allows user namespaces",
        BwrapStart::CapabilitiesDropped => "the container drops the capabilities bwrap needs: run it with user namespaces allowed (e.g. Docker's --security-opt seccomp=unconfined, or a privileged container)",
        BwrapStart::Other => "see bubblewrap's message; the command was not run",
    };
    format!("{known}; agent-workspace never runs a --sandbox command unconfined")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unusable_bubblewrap_as_root_is_blamed_on_capabilities() {
        let hint = unusable_hint("bwrap: setting up uid map: Operation not permitted");
        match rustix::process::geteuid().is_root() {
            true => assert!(hint.starts_with("the container drops"), "{hint}"),
            false => assert!(hint.starts_with("unprivileged user namespaces"), "{hint}"),
        }
    }
}
