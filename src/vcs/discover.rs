//! How the repository a command acts on is found: from any directory inside it, a symlinked
//! path or an agent workspace (jj wins when `.jj` is present), or, inside a sandboxed run
//! with its own store, from the run's environment.

use std::fs;
use std::path::{Path, PathBuf};

use crate::repo::{Backend, Repo};
use crate::vars;

/// Why no repository was found where a command started.
#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    /// A path on the way could not be read or resolved.
    #[error("could not {action} {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// `--backend git` in a jj repository that has no git.
    #[error("{} is a jj repository without git: --backend git needs a git repository", dir.display())]
    JjWithoutGit { dir: PathBuf },
    /// `--backend jj` in a git repository that has no jj.
    #[error("{} is a git repository without jj", dir.display())]
    GitWithoutJj { dir: PathBuf },
    /// No directory from `start` up holds a repository.
    #[error("{} is not inside a jj or git repository", start.display())]
    NotInRepo { start: PathBuf },
    /// A pointer file (`.jj/repo`, `.git`, `commondir`) could not be read.
    #[error("could not read {}", path.display())]
    Pointer {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The jj store a secondary workspace names does not resolve.
    #[error("could not resolve the jj store {}", store.display())]
    JjStore {
        dir: PathBuf,
        store: PathBuf,
        source: std::io::Error,
    },
    /// The jj store is not where a repository's store sits (`<root>/.jj/repo`).
    #[error("unexpected jj store {}", store.display())]
    UnexpectedJjStore { store: PathBuf },
    /// A `.git` file that does not read `gitdir: PATH`.
    #[error("{} is not a gitdir file", dot_git.display())]
    NotGitdir { dot_git: PathBuf },
    /// A worktree of a bare repository.
    #[error("{} belongs to a bare repository ({}), which has no main worktree", dir.display(), store.display())]
    Bare { dir: PathBuf, store: PathBuf },
}

type Result<T> = std::result::Result<T, DiscoverError>;

fn resolve(path: &Path) -> Result<PathBuf> {
    fs::canonicalize(path).map_err(|source| DiscoverError::Io {
        action: "resolve",
        path: path.to_path_buf(),
        source,
    })
}

/// The repository of the sandboxed run this process is in, when it runs inside one from its
/// workspace: there the workspace's `.jj` (git: the git directory its `.git` names) is the
/// workspace's own store and the repository's is not mounted, so the repository is the one
/// the run's environment names.
pub(crate) fn own_store_sandbox(start: &Path) -> Option<Repo> {
    let id = vars::non_empty(vars::ID)?;
    let path = PathBuf::from(vars::raw(vars::PATH)?);
    let root = PathBuf::from(vars::raw(vars::REPO_ROOT)?);
    let backend = Backend::parse(&vars::non_empty(vars::BACKEND)?)?;
    let own = match backend {
        Backend::Jj => path.join(".jj/repo").is_dir(),
        Backend::Git => path.join(".git").is_file(),
    };
    let inside = own
        && crate::exec::sandbox::inside(&id, &path)
        && std::fs::canonicalize(start).is_ok_and(|s| s.starts_with(&path));
    let store = match backend {
        Backend::Jj => root.join(".jj").join("repo"),
        Backend::Git => root.join(".git"),
    };
    inside.then_some(Repo {
        store,
        root,
        backend,
    })
}

/// Finds the repository containing `start`, from any subdirectory, symlinked path or agent
/// workspace. `backend` forces a backend; otherwise jj wins when `.jj` is present.
pub(crate) fn discover(start: &Path, backend: Option<Backend>) -> Result<Repo> {
    let start = resolve(start)?;
    for dir in start.ancestors() {
        let has_jj = dir.join(".jj").is_dir();
        let has_git = dir.join(".git").exists();
        match backend {
            Some(Backend::Git) if has_git => return discover_git(dir),
            Some(Backend::Git) if has_jj => {
                return Err(DiscoverError::JjWithoutGit {
                    dir: dir.to_path_buf(),
                })
            }
            Some(Backend::Jj) if has_git && !has_jj => {
                return Err(DiscoverError::GitWithoutJj {
                    dir: dir.to_path_buf(),
                })
            }
            _ if has_jj => return discover_jj(dir),
            _ if has_git => return discover_git(dir),
            _ => {}
        }
    }
    Err(DiscoverError::NotInRepo { start })
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

fn pointer_error(path: &Path, source: std::io::Error) -> DiscoverError {
    DiscoverError::Pointer {
        path: path.to_path_buf(),
        source,
    }
}

fn discover_jj(dir: &Path) -> Result<Repo> {
    let marker = dir.join(".jj").join("repo");
    let store = if marker.is_dir() {
        marker.clone()
    } else {
        // A secondary workspace: `.jj/repo` holds the store's path relative to `.jj/`.
        let text = read_pointer(&marker).map_err(|e| pointer_error(&marker, e))?;
        dir.join(".jj").join(text.trim_end_matches(['\n', '\r']))
    };
    let store = fs::canonicalize(&store).map_err(|source| DiscoverError::JjStore {
        dir: dir.to_path_buf(),
        store: store.clone(),
        source,
    })?;
    let root = store.parent().and_then(Path::parent).map(Path::to_path_buf);
    let root = root.ok_or_else(|| DiscoverError::UnexpectedJjStore {
        store: store.clone(),
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
        let store = resolve(&dot_git)?;
        return Ok(Repo {
            root: dir.to_path_buf(),
            backend: Backend::Git,
            store,
        });
    }
    let text = read_pointer(&dot_git).map_err(|e| pointer_error(&dot_git, e))?;
    let gitdir = text
        .trim()
        .strip_prefix("gitdir:")
        .map(str::trim)
        .ok_or_else(|| DiscoverError::NotGitdir {
            dot_git: dot_git.clone(),
        })?;
    let gitdir = dir.join(gitdir);
    let commondir = gitdir.join("commondir");
    let Ok(common) = read_pointer(&commondir) else {
        // Not a linked worktree (a submodule, say): this directory is the main worktree.
        let store = resolve(&gitdir)?;
        return Ok(Repo {
            root: dir.to_path_buf(),
            backend: Backend::Git,
            store,
        });
    };
    let common = gitdir.join(common.trim());
    let store = resolve(&common)?;
    match (store.file_name(), store.parent()) {
        (Some(name), Some(root)) if name == ".git" => Ok(Repo {
            root: root.to_path_buf(),
            backend: Backend::Git,
            store,
        }),
        _ => Err(DiscoverError::Bare {
            dir: dir.to_path_buf(),
            store,
        }),
    }
}
