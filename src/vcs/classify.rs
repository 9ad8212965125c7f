//! The one reader of what jj and git both say alike on stderr, beside each backend's own
//! classifier (`jj/classify.rs`, `git/classify.rs`): a commit whose signing failed, and a name
//! git refuses as a branch or ref (git itself, or jj's git export). Tested on what git 2.47.3
//! prints.

/// Whether a failed jj or git command reported that signing a commit failed.
pub(crate) fn signing_failed(stderr: &str) -> bool {
    stderr.contains("gpg") || stderr.contains("signing")
}

/// Whether a failed jj or git command refused a branch or ref name.
pub(crate) fn bad_ref_name(stderr: &str) -> bool {
    stderr.contains("not a valid branch name") || stderr.contains("invalid ref")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signing_and_ref_name_failures_are_told_apart() {
        // git 2.47.3 with commit.gpgsign=true and a gpg.program that fails, and
        // `git branch 'a..b'`.
        let signing =
            "error: gpg failed to sign the data:\n\nfatal: failed to write commit object\n";
        let name = "fatal: 'a..b' is not a valid branch name\n";
        let other = "fatal: not a git repository: /tmp/cls/g/.git/worktrees/gwt2\n";
        assert!(signing_failed(signing) && !bad_ref_name(signing));
        assert!(bad_ref_name(name) && !signing_failed(name));
        assert!(!signing_failed(other) && !bad_ref_name(other));
    }
}
