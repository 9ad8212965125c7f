//! The repository a command acts on: its backend, its identity (the main workspace's root
//! and the shared store) and how it is found from any directory inside it.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{CliError, Result};

/// Which version-control system manages a workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Jj,
    Git,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Jj => "jj",
            Backend::Git => "git",
        }
    }

    /// Parses a name given on the command line or in `AGENT_WORKSPACE_BACKEND`.
    pub fn parse(text: &str) -> Option<Backend> {
        match text {
            "jj" => Some(Backend::Jj),
            "git" => Some(Backend::Git),
            _ => None,
        }
    }
}

/// The repository a command acts on, identified by its main workspace (or main worktree).
#[derive(Debug, Clone)]
pub(crate) struct Repo {
    /// Canonical root of the main workspace: the identity hashed into the namespace.
    pub root: PathBuf,
    pub backend: Backend,
    /// jj: the shared `.jj/repo` store; git: the common git dir.
    pub store: PathBuf,
}

/// Finds the repository containing `start`, from any subdirectory, symlinked path or agent
/// workspace. `backend` forces a backend; otherwise jj wins when `.jj` is present.
pub(crate) fn discover(start: &Path, backend: Option<Backend>) -> Result<Repo> {
    let start = fs::canonicalize(start).map_err(|e| CliError::io("resolve", start, &e))?;
    for dir in start.ancestors() {
        let has_jj = dir.join(".jj").is_dir();
        let has_git = dir.join(".git").exists();
        match backend {
            Some(Backend::Git) if has_git => return discover_git(dir),
            Some(Backend::Git) if has_jj => {
                return Err(CliError::failure(format!(
                    "{} is a jj repository without git: --backend git needs a git repository",
                    dir.display()
                ))
                .hint("drop --backend git (and unset AGENT_WORKSPACE_BACKEND) to use jj"))
            }
            Some(Backend::Jj) if has_git && !has_jj => {
                return Err(CliError::failure(format!(
                    "{} is a git repository without jj",
                    dir.display()
                ))
                .hint("use --backend git, or run `jj git init --colocate` there"))
            }
            _ if has_jj => return discover_jj(dir),
            _ if has_git => return discover_git(dir),
            _ => {}
        }
    }
    Err(CliError::failure(format!(
        "{} is not inside a jj or git repository",
        start.display()
    ))
    .hint("run from inside the repository or pass --repo PATH"))
}

/// A small file naming another place (`.jj/repo`, `.git`, `commondir`), which whatever runs
/// in a workspace can replace: read without blocking (a FIFO is refused, not waited on),
/// only a regular file, at most 64 KiB.
fn read_pointer(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let mut text = String::new();
    file.take(64 << 10).read_to_string(&mut text)?;
    Ok(text)
}

fn pointer_error(path: &Path, err: &std::io::Error) -> CliError {
    let error = CliError::io("read", path, err);
    match err.kind() {
        std::io::ErrorKind::InvalidInput => error.hint(format!(
            "{} must be the small file jj or git wrote there; something replaced it: run from the main workspace (or pass --repo PATH) and repair or remove that workspace",
            path.display()
        )),
        _ => error,
    }
}

fn discover_jj(dir: &Path) -> Result<Repo> {
    let marker = dir.join(".jj").join("repo");
    let store = if marker.is_dir() {
        marker.clone()
    } else {
        // A secondary workspace: `.jj/repo` holds the store's path relative to `.jj/`.
        let text = read_pointer(&marker).map_err(|e| pointer_error(&marker, &e))?;
        dir.join(".jj").join(text.trim_end_matches(['\n', '\r']))
    };
    let store = fs::canonicalize(&store).map_err(|e| {
        CliError::io("resolve the jj store", &store, &e).hint(format!(
            "{} may belong to a deleted repository",
            dir.display()
        ))
    })?;
    let root = store.parent().and_then(Path::parent).map(Path::to_path_buf);
    let root = root.ok_or_else(|| {
        CliError::failure(format!("unexpected jj store {}", store.display()))
            .hint("run from the repository's main workspace, or pass --repo PATH")
    })?;
    Ok(Repo {
        root,
        backend: Backend::Jj,
        store,
    })
}

fn discover_git(dir: &Path) -> Result<Repo> {
    let dot_git = dir.join(".git");
    if dot_git.is_dir() {
        let store =
            fs::canonicalize(&dot_git).map_err(|e| CliError::io("resolve", &dot_git, &e))?;
        return Ok(Repo {
            root: dir.to_path_buf(),
            backend: Backend::Git,
            store,
        });
    }
    let text = read_pointer(&dot_git).map_err(|e| pointer_error(&dot_git, &e))?;
    let gitdir = text
        .trim()
        .strip_prefix("gitdir:")
        .map(str::trim)
        .ok_or_else(|| {
            CliError::failure(format!("{} is not a gitdir file", dot_git.display()))
                .hint("a .git file must read `gitdir: PATH`; repair it, or pass --repo PATH")
        })?;
    let gitdir = dir.join(gitdir);
    let commondir = gitdir.join("commondir");
    let Ok(common) = read_pointer(&commondir) else {
        // Not a linked worktree (a submodule, say): this directory is the main worktree.
        let store = fs::canonicalize(&gitdir).map_err(|e| CliError::io("resolve", &gitdir, &e))?;
        return Ok(Repo {
            root: dir.to_path_buf(),
            backend: Backend::Git,
            store,
        });
    };
    let common = gitdir.join(common.trim());
    let store = fs::canonicalize(&common).map_err(|e| CliError::io("resolve", &common, &e))?;
    match (store.file_name(), store.parent()) {
        (Some(name), Some(root)) if name == ".git" => Ok(Repo {
            root: root.to_path_buf(),
            backend: Backend::Git,
            store,
        }),
        _ => Err(CliError::failure(format!(
            "{} belongs to a bare repository ({}), which has no main worktree",
            dir.display(),
            store.display()
        ))
        .hint("use a repository with a main worktree (not bare), or pass --repo PATH")),
    }
}
