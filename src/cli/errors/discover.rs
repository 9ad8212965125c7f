//! The words of a repository not found: each [`DiscoverError`] with what to do instead.

use crate::error::CliError;
use crate::vcs::discover::DiscoverError;

impl From<DiscoverError> for CliError {
    fn from(err: DiscoverError) -> CliError {
        let message = err.to_string();
        match err {
            DiscoverError::Io {
                action,
                path,
                source,
            } => CliError::io(action, &path, &source),
            DiscoverError::JjWithoutGit { .. } => CliError::failure(message)
                .hint("drop --backend git (and unset AGENT_WORKSPACE_BACKEND) to use jj"),
            DiscoverError::GitWithoutJj { .. } => CliError::failure(message)
                .hint("use --backend git, or run `jj git init --colocate` there"),
            DiscoverError::NotInRepo { .. } => CliError::failure(message)
                .hint("run from inside the repository or pass --repo PATH"),
            DiscoverError::Pointer { path, source } => {
                let error = CliError::io("read", &path, &source);
                match source.kind() {
                    std::io::ErrorKind::InvalidInput => error.hint(format!(
                        "{} must be the small file jj or git wrote there; something replaced it: run from the main workspace (or pass --repo PATH) and repair or remove that workspace",
                        path.display()
                    )),
                    _ => error,
                }
            }
            DiscoverError::JjStore { dir, store, source } => {
                CliError::io("resolve the jj store", &store, &source).hint(format!(
                    "{} may belong to a deleted repository",
                    dir.display()
                ))
            }
            DiscoverError::UnexpectedJjStore { .. } => CliError::failure(message)
                .hint("run from the repository's main workspace, or pass --repo PATH"),
            DiscoverError::NotGitdir { .. } => CliError::failure(message)
                .hint("a .git file must read `gitdir: PATH`; repair it, or pass --repo PATH"),
            DiscoverError::Bare { .. } => CliError::failure(message)
                .hint("use a repository with a main worktree (not bare), or pass --repo PATH"),
        }
    }
}
