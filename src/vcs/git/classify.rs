//! The one reader of git's stderr: what a failed git command said, in the terms
//! agent-workspace acts on. git runs with `LC_ALL=C`, so its wording is the English one
//! matched here, tested on what git 2.47 prints (captured from real commands; the integration
//! tests run the same situations end to end).

/// What a failed git command reported, as far as agent-workspace tells failures apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The directory is no longer a worktree git knows (its administrative files are gone).
    NotARepository,
    /// `worktree remove` of a path git holds no worktree at.
    NotAWorktree,
    /// `branch -d` of a branch whose commits are not merged.
    NotFullyMerged,
    /// Anything else: reported as git said it.
    Other,
}

/// Sorts a failed git command by its stderr.
pub(crate) fn failure(stderr: &str) -> Failure {
    if stderr.contains("not a git repository") {
        Failure::NotARepository
    } else if stderr.contains("is not a working tree") {
        Failure::NotAWorktree
    } else if stderr.contains("is not fully merged") {
        Failure::NotFullyMerged
    } else {
        Failure::Other
    }
}

/// The file `git add` refused because it is no regular file, symlink or repository (a
/// FIFO, a socket, a device), as git names it: relative to the worktree.
pub(crate) fn unaddable(stderr: &str) -> Option<&str> {
    stderr.lines().find_map(|line| {
        line.trim_start_matches("error: ")
            .strip_suffix(": can only add regular files, symbolic links or git-directories")
    })
}

/// Whether git's stderr says it could not write a file of the worktree (a full disk: git
/// says `unable to write file X`, without the system's message).
pub(crate) fn write_failed(stderr: &str) -> bool {
    crate::exec::classify::disk_full(stderr) || stderr.contains("unable to write file")
}

#[cfg(test)]
mod tests {
    use super::*;

    // What git 2.47.3 printed under LC_ALL=C.

    /// `git ls-files -v -z` in a worktree whose `.git/worktrees/<name>` was deleted.
    const NO_ADMIN: &str = "fatal: not a git repository: /tmp/cls/g/.git/worktrees/gwt2\n";
    /// `git worktree remove --force --force <a path that is no worktree>`.
    const NO_WORKTREE: &str = "fatal: '/tmp/cls/nowt' is not a working tree\n";
    /// `git branch --quiet -d --end-of-options br` with a commit only on br.
    const UNMERGED: &str = "error: the branch 'br' is not fully merged\nhint: If you are sure you want to delete it, run 'git branch -D br'\nhint: Disable this message with \"git config advice.forceDeleteBranch false\"\n";

    /// `git add --all` in a worktree where a tracked `a.txt` was replaced by a FIFO.
    const FIFO: &str = "a.txt: can only add regular files, symbolic links or git-directories\nfatal: updating files failed\n";

    /// The line git prints when it cannot write a file of the worktree (a full disk under
    /// `merge --ff-only`, met end to end by `land_disk::git_a_disk_filling_during_the_fast_forward_puts_main_back`).
    const WRITE: &str = "error: unable to write file big.bin\n";

    #[test]
    fn a_file_git_could_not_write_is_told() {
        assert!(write_failed(WRITE));
        assert!(!write_failed(UNMERGED));
    }

    #[test]
    fn unaddable_files_are_named() {
        assert_eq!(unaddable(FIFO), Some("a.txt"));
        assert_eq!(unaddable(UNMERGED), None);
    }

    #[test]
    fn failures_are_told_apart() {
        assert_eq!(failure(NO_ADMIN), Failure::NotARepository);
        assert_eq!(failure(NO_WORKTREE), Failure::NotAWorktree);
        assert_eq!(failure(UNMERGED), Failure::NotFullyMerged);
        assert_eq!(
            failure("fatal: a branch named 'x' already exists\n"),
            Failure::Other
        );
    }
}
