//! The one reader of what the programs agent-workspace starts for itself print on stderr
//! (jj's and git's words are read by `vcs/{jj,git}/classify.rs`): bubblewrap's failures to
//! start a sandbox, and the C library's words for a full disk, whatever program says them.
//! Each match is tested on what bwrap 0.8 and glibc print.

/// Whether a program reported a full file system (`ENOSPC`'s message).
pub(crate) fn disk_full(stderr: &str) -> bool {
    stderr.contains("No space left on device")
}

/// Why bubblewrap could not start a sandbox, as far as the fix differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BwrapStart {
    /// The kernel or its policy refuses unprivileged user namespaces.
    UserNamespacesBlocked,
    /// A container dropped the capabilities bwrap needs.
    CapabilitiesDropped,
    /// Anything else: reported as bwrap said it.
    Other,
}

/// Sorts bubblewrap's failure to start by its stderr; `root` when it ran as root, whose
/// failing uid map means missing capabilities (a container), not a namespace policy.
pub(crate) fn bwrap_start(stderr: &str, root: bool) -> BwrapStart {
    if (stderr.contains("uid map") && !root)
        || stderr.contains("No permissions to create new namespace")
    {
        BwrapStart::UserNamespacesBlocked
    } else if stderr.contains("Can't mount proc") || stderr.contains("Operation not permitted") {
        BwrapStart::CapabilitiesDropped
    } else {
        BwrapStart::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bubblewrap_s_failures_are_told_apart() {
        // What bwrap 0.8.0 printed: an unprivileged user where user namespaces are off, root
        // in a container without CAP_SYS_ADMIN, and a missing directory to bind.
        let uid_map = "bwrap: setting up uid map: Permission denied\n";
        let policy = "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.\n";
        let proc = "bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n";
        let missing = "bwrap: Can't find source path /nowhere: No such file or directory\n";
        assert_eq!(
            bwrap_start(uid_map, false),
            BwrapStart::UserNamespacesBlocked
        );
        assert_eq!(bwrap_start(policy, true), BwrapStart::UserNamespacesBlocked);
        assert_eq!(bwrap_start(proc, true), BwrapStart::CapabilitiesDropped);
        assert_eq!(bwrap_start(missing, false), BwrapStart::Other);
    }

    #[test]
    fn a_full_disk_is_recognised() {
        assert!(disk_full(
            "error: unable to write file a.txt: No space left on device\n"
        ));
        assert!(!disk_full("fatal: not a git repository\n"));
    }
}
