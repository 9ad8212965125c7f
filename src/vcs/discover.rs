//! How the repository a command acts on is found: from any directory inside it, a symlinked
//! path or an agent workspace (jj wins when `.jj` is present), or, inside a sandboxed run
//! with its own store, from the run's environment.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{CliError, Result};
use crate::repo::{Backend, Repo};
use crate::vars;

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
