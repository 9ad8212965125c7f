//! The words of the store's errors: a file refused or not read ([`FsError`]), a lock not
//! taken ([`LockError`]).

use crate::error::CliError;
use crate::store::fsutil::FsError;
use crate::store::layout::{InvalidId, LayoutError};
use crate::store::lock::LockError;

impl From<FsError> for CliError {
    fn from(err: FsError) -> Self {
        CliError::from(&err)
    }
}

impl From<&FsError> for CliError {
    fn from(err: &FsError) -> Self {
        let message = err.to_string();
        match err {
            FsError::Symlink { path } => CliError::failure(message).hint(format!(
                "agent-workspace never follows symlinks in its own directories; remove {} (after checking where it points) and try again",
                path.display()
            )),
            FsError::NotADirectory { path } => CliError::failure(message).hint(format!(
                "agent-workspace expects a directory it made there; move {} away and try again",
                path.display()
            )),
            FsError::NameTooLong { path, component } => CliError::name_too_long(path, component),
            FsError::NotRegular { path, .. } | FsError::TooLarge { path, .. } => {
                CliError::failure(message).hint(format!(
                    "agent-workspace reads only regular files of a sane size where an agent can write; move {} away (an agent may have put it there) and try again",
                    path.display()
                ))
            }
            FsError::Io {
                action,
                path,
                source,
            } => CliError::io(action, path, source),
        }
    }
}

impl From<LockError> for CliError {
    fn from(err: LockError) -> Self {
        match err {
            LockError::Open(FsError::Io { source, path, .. }) => {
                CliError::io("open the lock file", &path, &source).hint(format!(
                    "agent-workspace keeps its locks in {}; make it writable by this user",
                    path.parent().unwrap_or(&path).display()
                ))
            }
            LockError::Open(other) => other.into(),
            LockError::Lock { path, source } => CliError::io("lock", &path, &source).hint(
                "the file system must support flock(2); pass --root DIR on a local file system",
            ),
        }
    }
}

impl From<InvalidId> for CliError {
    fn from(err: InvalidId) -> CliError {
        CliError::usage(err.to_string())
            .hint("use 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit")
    }
}

impl From<LayoutError> for CliError {
    fn from(err: LayoutError) -> CliError {
        let message = err.to_string();
        match err {
            LayoutError::NoHome => {
                CliError::failure(message).hint("pass --root DIR or set AI_WORKSPACES_ROOT")
            }
            LayoutError::NoCurrentDir { path, source } => CliError::io("read", &path, &source),
            LayoutError::RootInRepo { .. } => {
                CliError::failure(message).hint("choose a root outside the repository")
            }
            LayoutError::RootNotDir { .. } => CliError::failure(message)
                .hint("pass --root DIR or set AI_WORKSPACES_ROOT to a directory"),
            LayoutError::Unwritable { path, source } => {
                CliError::io("create the workspace directory", &path, &source)
                    .hint("pass --root DIR or set AI_WORKSPACES_ROOT to a writable directory")
            }
            LayoutError::Fs(e) => e.into(),
        }
    }
}
