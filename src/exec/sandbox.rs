//! Confining a run with bubblewrap: the command (direnv included) can write only its
//! workspace, what the backend needs, a private `/tmp` and paths the user allowed; the main
//! working copy and the other workspaces are hidden; capabilities are dropped.
//!
//! The mounts are applied in order, later ones covering earlier ones: the whole file system
//! read-only, a private `/tmp` (with what the command must still read put back read-only),
//! the main working copy and the namespace hidden under empty tmpfs, then the writable binds,
//! then the backend's `config` and `hooks` read-only again inside them.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::CliError;
use crate::exec::process::{Call, ProcessError};
use crate::repo::{Backend, Repo};

/// How a run is confined: the record owns the type it keeps.
pub(crate) use crate::store::metadata::SandboxOptions as Options;

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("--sandbox needs bubblewrap (bwrap), which is not on PATH")]
    Missing,
    #[error("bubblewrap cannot create a sandbox here: {stderr}")]
    Unusable { stderr: String },
    #[error("--sandbox is supported on Linux only")]
    Unsupported,
    #[error("cannot allow writes to {}: {source}", path.display())]
    BadPath {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl From<SandboxError> for CliError {
    fn from(err: SandboxError) -> CliError {
        let message = err.to_string();
        match err {
            SandboxError::Missing => CliError::failure(message).hint(
                "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or run without --sandbox",
            ),
            SandboxError::Unusable { stderr } => CliError::failure(message).hint(unusable_hint(&stderr)),
            SandboxError::Unsupported => CliError::failure(message)
                .hint("run without --sandbox on this platform"),
            SandboxError::BadPath { .. } => CliError::failure(message)
                .hint("pass --allow-write an existing directory or file"),
        }
    }
}

/// The fix for bubblewrap's known failures to start.
fn unusable_hint(stderr: &str) -> String {
    let known = if stderr.contains("uid map")
        || stderr.contains("No permissions to create new namespace")
    {
        "unprivileged user namespaces are blocked: on Ubuntu 24.04 allow them for bwrap with an AppArmor profile (or sysctl kernel.apparmor_restrict_unprivileged_userns=0); in a container, run it with a seccomp profile that allows user namespaces"
    } else if stderr.contains("Can't mount proc") || stderr.contains("Operation not permitted") {
        "the container drops the capabilities bwrap needs: run it with user namespaces allowed (e.g. Docker's --security-opt seccomp=unconfined, or a privileged container)"
    } else {
        "see bubblewrap's message; the command was not run"
    };
    format!("{known}; agent-workspace never runs a --sandbox command unconfined")
}

/// bubblewrap on PATH, checked to start a sandbox here (never falls back to no sandbox).
pub(crate) fn find() -> Result<PathBuf, SandboxError> {
    if !cfg!(target_os = "linux") {
        return Err(SandboxError::Unsupported);
    }
    let bin = crate::exec::process::find("bwrap").map_err(|_| SandboxError::Missing)?;
    let probe = Call::new(&bin)
        .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
        .args([
            "--unshare-pid",
            "--cap-drop",
            "ALL",
            "--die-with-parent",
            "--",
            "true",
        ])
        .stdout();
    match probe {
        Ok(_) => Ok(bin),
        Err(e @ ProcessError::Failed { .. }) => Err(SandboxError::Unusable {
            stderr: e.stderr().trim().to_string(),
        }),
        Err(e) => Err(SandboxError::Unusable {
            stderr: e.to_string(),
        }),
    }
}

/// The extra writable paths: the flags' and the environment's, each resolved and existing.
pub(crate) fn writable(flags: &[PathBuf]) -> Result<Vec<PathBuf>, SandboxError> {
    let from_env = crate::vars::raw(crate::vars::SANDBOX_WRITE).unwrap_or_default();
    let listed = std::env::split_paths(&from_env).filter(|p| !p.as_os_str().is_empty());
    flags
        .iter()
        .cloned()
        .chain(listed)
        .map(|path| {
            fs::canonicalize(&path).map_err(|source| SandboxError::BadPath { path, source })
        })
        .collect()
}

/// What a sandbox is built around.
pub(crate) struct Scope<'a> {
    pub repo: &'a Repo,
    pub workspace: &'a Path,
    pub namespace_dir: &'a Path,
    /// Paths the command must still read although they live under `/tmp` (its program,
    /// its configuration).
    pub readable: Vec<PathBuf>,
}

/// The bwrap arguments (after the binary, up to and including `--`) for `options`.
pub(crate) fn args(options: &Options, scope: &Scope) -> Vec<OsString> {
    let mut args = Args::default();
    args.add([
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
    ]);
    for path in &scope.readable {
        if path.starts_with("/tmp") && path.exists() {
            args.bind("--ro-bind", path);
        }
    }
    args.bind("--tmpfs-at", &scope.repo.root);
    args.bind("--tmpfs-at", scope.namespace_dir);
    let (writable, protected) = backend_paths(scope.repo);
    for path in writable.iter().chain([&scope.workspace.to_path_buf()]) {
        args.bind("--bind", path);
    }
    for path in &options.writable {
        args.bind("--bind", path);
    }
    for path in protected.iter().filter(|p| p.exists()) {
        args.bind("--ro-bind", path);
    }
    // A nested run reads the lease and the state of its own workspace.
    for dir in [".locks", ".state"] {
        let path = scope.namespace_dir.join(dir);
        if path.is_dir() {
            args.bind("--ro-bind", &path);
        }
    }
    // The empty tmpfs hiding the main working copy and the namespace is read-only too.
    args.bind("--remount-ro", &scope.repo.root);
    args.bind("--remount-ro", scope.namespace_dir);
    args.add(["--unshare-pid", "--die-with-parent", "--cap-drop", "ALL"]);
    if !options.network {
        args.add(["--unshare-net"]);
    }
    args.add(["--chdir"]);
    args.0.push(scope.workspace.into());
    args.add(["--"]);
    args.0
}

#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    fn add<const N: usize>(&mut self, words: [&str; N]) {
        self.0.extend(words.iter().map(OsString::from));
    }

    /// `--tmpfs-at` hides `path` under an empty tmpfs, `--remount-ro` makes the mount at
    /// `path` read-only; the others bind `path` onto itself.
    fn bind(&mut self, how: &str, path: &Path) {
        match how {
            "--tmpfs-at" => self.0.extend(["--tmpfs".into(), path.into()]),
            "--remount-ro" => self.0.extend([how.into(), path.into()]),
            _ => self.0.extend([how.into(), path.into(), path.into()]),
        }
    }
}

/// What the backend must write outside the workspace, and what inside that stays read-only.
fn backend_paths(repo: &Repo) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut git_dirs = vec![];
    let mut writable = vec![repo.store.clone()];
    match repo.backend {
        Backend::Git => git_dirs.push(repo.store.clone()),
        Backend::Jj => {
            // The backing git repository: inside the store, or the colocated `.git`.
            let store = repo.store.join("store");
            if let Ok(target) = fs::read_to_string(store.join("git_target")) {
                if let Ok(git) = fs::canonicalize(store.join(target.trim())) {
                    if !git.starts_with(&repo.store) {
                        writable.push(git.clone());
                    }
                    git_dirs.push(git);
                }
            }
        }
    }
    let protected = git_dirs
        .iter()
        .flat_map(|g| [g.join("config"), g.join("hooks")])
        .collect();
    (writable, protected)
}

/// Whether this process runs inside the sandbox of a run of workspace `id` at `path`: the
/// environment names that workspace and a sandbox, and this pid namespace's init is
/// bubblewrap (the supervisor outside is not visible from here).
pub(crate) fn inside(id: &str, path: &Path) -> bool {
    let var = |key| crate::vars::raw(key);
    var(crate::vars::SANDBOX).is_some()
        && var(crate::vars::ID).as_deref() == Some(id.as_ref())
        && var(crate::vars::PATH).as_deref() == Some(path.as_os_str())
        && fs::read_to_string("/proc/1/comm").is_ok_and(|c| c.trim() == "bwrap")
}
