//! Confining a run with bubblewrap: the command (direnv included) can write only its
//! workspace, what the backend needs, a private `/tmp` and paths the user allowed; the main
//! working copy and the other workspaces are hidden; capabilities are dropped.
//!
//! The mounts are applied in order, later ones covering earlier ones: the whole file system
//! read-only, the kernel's writable interfaces (`/proc/sys`, `/proc/sysrq-trigger`, ...)
//! read-only again over the sandbox's own `/proc`, a private `/tmp` and `/var/tmp`, empty `/run` and
//! `$XDG_RUNTIME_DIR` (with what the command must still read put back read-only, and the
//! sockets the user allowed), the main working copy and the namespace hidden under empty
//! tmpfs, then the writable binds, then the backend's `config` and `hooks` read-only again
//! inside them. The command gets its own user, pid, IPC, UTS and cgroup namespaces, no
//! capability, and a seccomp filter (`seccomp`) denying the system calls that reach the
//! kernel's or other processes' state.

use std::ffi::OsString;
use std::fs;
use std::os::fd::RawFd;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use crate::exec::process::{Call, ProcessError};
use crate::repo::Repo;

pub(crate) mod hosts;
pub(crate) mod limits;
pub(crate) mod proxy;
mod secrets;

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
    #[error("cannot allow the socket {} (sandbox.sockets): {source}", path.display())]
    BadSocket {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("sandbox.readable lists {}, which is not an absolute path", path.display())]
    RelativeReadable { path: PathBuf },
    #[error("jj's store/git_target names {} ({reason}): a sandbox mounts only git directories the repository owns", named.display())]
    GitTarget { named: PathBuf, reason: String },
    #[error("cannot build the sandbox's seccomp filter: {0}")]
    Seccomp(String),
    #[error("sandbox.limits.{key} cannot be applied on this host: {why}")]
    LimitUnavailable { key: &'static str, why: String },
    #[error("cannot make the run's cgroup: {why}")]
    NoCgroup { why: String },
    #[error("cannot make the run's cgroup at {}: {source}", path.display())]
    Cgroup {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// bubblewrap on PATH, checked to start a sandbox with the namespaces every run gets here
/// (never falls back to less).
pub(crate) fn find() -> Result<PathBuf, SandboxError> {
    if !cfg!(target_os = "linux") {
        return Err(SandboxError::Unsupported);
    }
    let bin = crate::exec::process::find("bwrap").map_err(|_| SandboxError::Missing)?;
    // The probe's success is remembered for this bubblewrap, user and boot (and the kernel's
    // user-namespace settings): a warm run then starts one bubblewrap, not two. Should the
    // machine change within them, the run's own bubblewrap fails the same way, and a command
    // is never run unconfined either way.
    let key = probe_key(&bin);
    let remembered = probe_file().and_then(|file| {
        crate::store::fsutil::read_untrusted_string(&file, 4096)
            .ok()
            .map(|text| Some(text) == key)
    });
    if remembered == Some(true) {
        return Ok(bin);
    }
    let mut args = vec![];
    let mounts = [
        Mount::read_only(Path::new("/")),
        Mount::Dev { dst: "/dev".into() },
        Mount::Proc {
            dst: "/proc".into(),
        },
    ];
    for mount in &mounts {
        mount.render(&mut args, None);
    }
    args.extend(CONFINED.map(OsString::from));
    let probe = Call::new(&bin).args(args).args(["--", "true"]).stdout();
    match probe {
        Ok(_) => {
            if let (Some(file), Some(key)) = (probe_file(), key) {
                let _ = file.parent().map(fs::create_dir_all);
                let _ = crate::store::fsutil::write_atomic(&file, key.as_bytes());
            }
            Ok(bin)
        }
        Err(e @ ProcessError::Failed { .. }) => Err(SandboxError::Unusable {
            stderr: e.stderr().trim().to_string(),
        }),
        Err(e) => Err(SandboxError::Unusable {
            stderr: e.to_string(),
        }),
    }
}

/// Where a successful probe of bubblewrap is remembered: the user's cache directory.
fn probe_file() -> Option<PathBuf> {
    let cache = crate::vars::non_empty(crate::vars::XDG_CACHE_HOME)
        .map(PathBuf::from)
        .or_else(|| crate::vars::non_empty("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(cache.join("agent-workspace").join("sandbox-probe"))
}

/// What a probe's success holds for: bubblewrap (its path, size, time), the user, the boot
/// and the kernel's settings on user namespaces.
fn probe_key(bin: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata(bin).ok()?;
    let boot = fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let settings: Vec<String> = [
        "/proc/sys/user/max_user_namespaces",
        "/proc/sys/kernel/unprivileged_userns_clone",
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    ]
    .iter()
    .map(|path| {
        fs::read_to_string(path)
            .unwrap_or_default()
            .trim()
            .to_string()
    })
    .collect();
    Some(format!(
        "{} {} {}.{} uid {} boot {} userns {}\n",
        bin.display(),
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec(),
        rustix::process::geteuid().as_raw(),
        boot.trim(),
        settings.join(",")
    ))
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

/// The extra readable paths the user listed (`sandbox.readable`), each absolute; one that
/// does not exist (yet) is kept: nothing is mounted for it.
pub(crate) fn extra_readable(listed: &[PathBuf]) -> Result<Vec<PathBuf>, SandboxError> {
    listed
        .iter()
        .map(|path| match path.is_absolute() {
            true => Ok(path.clone()),
            false => Err(SandboxError::RelativeReadable { path: path.clone() }),
        })
        .collect()
}

/// The host unix sockets the user allowed (`sandbox.sockets`), each resolved and checked to
/// be a socket.
pub(crate) fn sockets(listed: &[PathBuf]) -> Result<Vec<PathBuf>, SandboxError> {
    listed
        .iter()
        .map(|path| {
            let bad = |source| SandboxError::BadSocket {
                path: path.clone(),
                source,
            };
            let resolved = fs::canonicalize(path).map_err(bad)?;
            match fs::metadata(&resolved) {
                Ok(meta) if meta.file_type().is_socket() => Ok(resolved),
                Ok(_) => Err(bad(std::io::Error::other("not a unix socket"))),
                Err(e) => Err(bad(e)),
            }
        })
        .collect()
}

/// What a sandboxed program must still read although it lives in a directory the sandbox
/// hides (`/tmp`, HOME): this binary (`me`), what toolchains read under HOME
/// ([`secrets::HOME_READABLE`]), the configuration jj, git, direnv and agent-workspace read,
/// the directories on PATH, and `extra` (the user's `sandbox.readable`). Never HOME itself,
/// nor a configuration or data directory whole.
pub(crate) fn readable(me: &Path, extra: &[PathBuf]) -> Vec<PathBuf> {
    let mut readable: Vec<PathBuf> = vec![me.to_path_buf()];
    let home = crate::vars::non_empty("HOME").map(PathBuf::from);
    if let Some(home) = &home {
        readable.extend(secrets::home_readable(home));
        readable.push(home.join(".config/agent-workspace"));
    }
    if let Some(config) = crate::vars::non_empty("XDG_CONFIG_HOME").map(PathBuf::from) {
        readable.extend(secrets::XDG_CONFIG_READABLE.iter().map(|p| config.join(p)));
        readable.push(config.join("agent-workspace"));
    }
    if let Some(data) = crate::vars::non_empty("XDG_DATA_HOME").map(PathBuf::from) {
        readable.extend(secrets::XDG_DATA_READABLE.iter().map(|p| data.join(p)));
    }
    readable.extend(crate::vars::raw("JJ_CONFIG").map(PathBuf::from));
    readable.extend(
        std::env::split_paths(&crate::vars::raw("PATH").unwrap_or_default())
            .filter(|dir| Some(dir) != home.as_ref()),
    );
    readable.extend(extra.iter().cloned());
    readable
}

/// `path` with its directory resolved (its last component as it is): where a mount at it
/// lands, compared with the hidden directories, which are resolved too.
fn located(path: &Path) -> Option<PathBuf> {
    let parent = fs::canonicalize(path.parent()?).ok()?;
    Some(parent.join(path.file_name()?))
}

/// What a sandbox is built around.
pub(crate) struct Scope<'a> {
    pub repo: &'a Repo,
    pub workspace: &'a Path,
    /// The workspace root, resolved: every namespace in it is hidden.
    pub root: &'a Path,
    pub namespace_dir: &'a Path,
    /// Paths the command must still read although they live under `/tmp` (its program,
    /// its configuration).
    pub readable: Vec<PathBuf>,
    /// The workspace's own store: mounted instead of the repository's, which then is not
    /// mounted at all.
    pub private: Option<PrivateStore>,
    /// What the backend declares it must write outside the workspace, and what stays
    /// read-only (none with an own store: the repository's store is hidden then).
    pub backend: BackendPaths,
    /// The socket of the run's proxy (`sandbox.allowed_hosts`), mounted at its own path.
    pub proxy: Option<PathBuf>,
}

/// The paths a backend's sandboxed command needs beyond its workspace, as the backend
/// declares them (`vcs::Vcs::sandbox_paths`): bound writable, then bound read-only over
/// whatever covers them (its git `config` and `hooks`, a colocated workspace's `.git`).
#[derive(Debug, Clone, Default)]
pub(crate) struct BackendPaths {
    pub writable: Vec<PathBuf>,
    pub read_only: Vec<PathBuf>,
}

/// A workspace's own store as a sandbox mounts it: its mounts, the writable ones first.
#[derive(Debug, Clone, Default)]
pub(crate) struct PrivateStore {
    pub mounts: Vec<StoreMount>,
}

/// One path of a workspace's own store in its sandbox.
#[derive(Debug, Clone)]
pub(crate) struct StoreMount {
    pub source: PathBuf,
    /// Where it is mounted: over the workspace's entry of that name (its `.jj`, its `.git`),
    /// or (none) at its own path.
    pub over: Option<&'static str>,
    pub writable: bool,
}

impl PrivateStore {
    /// Adds `source`, mounted at its own path, writable or not.
    pub(crate) fn at(mut self, source: PathBuf, writable: bool) -> PrivateStore {
        self.mounts.push(StoreMount {
            source,
            over: None,
            writable,
        });
        self
    }

    /// Adds `source`, mounted over the workspace's entry `name`.
    pub(crate) fn over(mut self, source: PathBuf, name: &'static str, writable: bool) -> Self {
        self.mounts.push(StoreMount {
            source,
            over: Some(name),
            writable,
        });
        self
    }
}

/// The bwrap arguments (after the binary, up to and including `--`) for `options`;
/// `seccomp` is the descriptor bubblewrap reads the filter from (see [`seccomp`]).
pub(crate) fn args(
    options: &Options,
    scope: &Scope,
    seccomp: RawFd,
) -> Result<Vec<OsString>, SandboxError> {
    Ok(plan(options, scope).args(seccomp))
}

/// The sandbox `options` and `scope` make: its mounts in order, its network, its directory.
fn plan(options: &Options, scope: &Scope) -> Plan {
    let mut mounts = vec![
        Mount::read_only(Path::new("/")),
        Mount::Dev { dst: "/dev".into() },
        // The shared memory of the sandbox's own `/dev` is a tmpfs of its own, so its size
        // is bounded like the others'.
        Mount::tmpfs(Path::new("/dev/shm")),
        Mount::Proc {
            dst: "/proc".into(),
        },
    ];
    // The sandbox's own /proc would let real root write the kernel's settings
    // (`kernel.core_pattern` runs a program as root outside every namespace).
    mounts.push(Mount::read_only(Path::new("/proc/sys")));
    for path in KERNEL_READ_ONLY {
        let path = PathBuf::from(path);
        mounts.push(Mount::ReadOnlyIfThere {
            src: path.clone(),
            dst: path,
        });
    }
    let hidden = hidden_dirs();
    for dir in &hidden {
        mounts.push(Mount::tmpfs(dir));
    }
    let put_back = scope.readable.iter().cloned().chain(resolver());
    for path in put_back {
        let Some(dst) = located(&path).filter(|_| path.exists()) else {
            continue;
        };
        if hidden.iter().any(|dir| dst.starts_with(dir) && dst != *dir) {
            mounts.push(Mount::ReadOnly { src: path, dst });
        }
    }
    // The credentials kept inside what was put back.
    let home = crate::vars::non_empty("HOME").map(PathBuf::from);
    let config = crate::vars::non_empty("XDG_CONFIG_HOME").map(PathBuf::from);
    if let Some(home) = &home {
        for file in secrets::covered(home, config.as_deref()) {
            if let Some(dst) = located(&file).filter(|_| fs::symlink_metadata(&file).is_ok()) {
                mounts.push(match file.is_dir() {
                    true => Mount::Tmpfs { dst },
                    false => Mount::ReadOnly {
                        src: "/dev/null".into(),
                        dst,
                    },
                });
            }
        }
    }
    let reachable: Vec<PathBuf> = options
        .sockets
        .iter()
        .chain(&scope.proxy)
        .cloned()
        .collect();
    for socket in hidden_sockets(&hidden, &reachable, &scope.readable) {
        mounts.push(Mount::ReadOnly {
            src: "/dev/null".into(),
            dst: socket,
        });
    }
    for socket in options.sockets.iter().chain(&scope.proxy) {
        mounts.push(Mount::writable(socket));
    }
    mounts.push(Mount::tmpfs(&scope.repo.root));
    // Every namespace of the root (other repositories' workspaces, their own stores and
    // kept files), unless the root holds HOME (then only this namespace is hidden).
    let hide_root = scope.root != scope.namespace_dir
        && scope.root.is_dir()
        && !home
            .as_ref()
            .and_then(|h| fs::canonicalize(h).ok())
            .is_some_and(|h| h.starts_with(scope.root));
    if hide_root {
        mounts.push(Mount::tmpfs(scope.root));
    }
    mounts.push(Mount::tmpfs(scope.namespace_dir));
    // A store of its own: the repository's store is not mounted, also where it does not
    // live under the main working copy (a separate git directory).
    let hide_store = scope.private.is_some()
        && !scope.repo.store.starts_with(&scope.repo.root)
        && scope.repo.store.is_dir();
    if hide_store {
        mounts.push(Mount::tmpfs(&scope.repo.store));
    }
    for path in scope
        .backend
        .writable
        .iter()
        .chain([&scope.workspace.to_path_buf()])
    {
        mounts.push(Mount::writable(path));
    }
    if let Some(private) = &scope.private {
        let (writable, read_only): (Vec<&StoreMount>, Vec<&StoreMount>) =
            private.mounts.iter().partition(|m| m.writable);
        for mount in writable.into_iter().chain(read_only) {
            let src = mount.source.clone();
            let dst = match mount.over {
                Some(name) => scope.workspace.join(name),
                None => mount.source.clone(),
            };
            mounts.push(match mount.writable {
                true => Mount::Writable { src, dst },
                false => Mount::ReadOnly { src, dst },
            });
        }
    }
    for path in &options.writable {
        mounts.push(Mount::writable(path));
    }
    for path in scope.backend.read_only.iter().filter(|p| p.exists()) {
        mounts.push(Mount::read_only(path));
    }
    // A nested run reads the state of its own workspace; the lock files stay hidden (flock
    // works on a read-only file: an agent could block every other run).
    let state = scope.namespace_dir.join(".state");
    if state.is_dir() {
        mounts.push(Mount::read_only(&state));
        // Other workspaces' records (their command lines) and setup logs are theirs: each is
        // covered, as it is when the sandbox starts.
        for other in others_state(&state, scope.workspace) {
            mounts.push(match other.is_dir() {
                true => Mount::Tmpfs { dst: other },
                false => Mount::ReadOnly {
                    src: "/dev/null".into(),
                    dst: other,
                },
            });
        }
    }
    // The empty tmpfs hiding the main working copy, the root, the namespace and HOME is
    // read-only too.
    mounts.push(Mount::RemountReadOnly {
        dst: scope.repo.root.clone(),
    });
    if hide_root {
        mounts.push(Mount::RemountReadOnly {
            dst: scope.root.to_path_buf(),
        });
    }
    mounts.push(Mount::RemountReadOnly {
        dst: scope.namespace_dir.to_path_buf(),
    });
    if let Some(home) = hidden.iter().find(|d| home_dir().as_ref() == Some(*d)) {
        mounts.push(Mount::RemountReadOnly { dst: home.clone() });
    }
    if hide_store {
        mounts.push(Mount::RemountReadOnly {
            dst: scope.repo.store.clone(),
        });
    }
    let vars: Vec<OsString> = std::env::vars_os().map(|(name, _)| name).collect();
    Plan {
        mounts,
        // Allowed host by host: a network of its own, its way out the proxy's socket.
        network: options.network && options.allowed_hosts.is_none(),
        chdir: scope.workspace.to_path_buf(),
        unset: secrets::withheld(vars.iter().map(OsString::as_os_str), &options.pass_env),
        tmp_size: options.limits.as_ref().and_then(|l| l.tmp),
    }
}

/// One step of a sandbox's file system, applied in order (a later one covers an earlier).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mount {
    /// `src` at `dst`, read-only.
    ReadOnly { src: PathBuf, dst: PathBuf },
    /// `src` at `dst`, read-only, where `src` exists (nothing otherwise).
    ReadOnlyIfThere { src: PathBuf, dst: PathBuf },
    /// `src` at `dst`, writable.
    Writable { src: PathBuf, dst: PathBuf },
    /// An empty tmpfs hiding whatever is at `dst`.
    Tmpfs { dst: PathBuf },
    /// The mount at `dst` made read-only.
    RemountReadOnly { dst: PathBuf },
    /// A minimal `/dev` at `dst`.
    Dev { dst: PathBuf },
    /// The sandbox's own `/proc` at `dst`.
    Proc { dst: PathBuf },
}

impl Mount {
    /// `path` onto itself, read-only.
    fn read_only(path: &Path) -> Mount {
        Mount::ReadOnly {
            src: path.to_path_buf(),
            dst: path.to_path_buf(),
        }
    }

    /// `path` onto itself, writable.
    fn writable(path: &Path) -> Mount {
        Mount::Writable {
            src: path.to_path_buf(),
            dst: path.to_path_buf(),
        }
    }

    fn tmpfs(path: &Path) -> Mount {
        Mount::Tmpfs {
            dst: path.to_path_buf(),
        }
    }

    /// bubblewrap's words for this mount: the one place they are written; each tmpfs is
    /// `tmp_size` bytes at most where given.
    fn render(&self, args: &mut Vec<OsString>, tmp_size: Option<u64>) {
        let (flag, src, dst) = match self {
            Mount::ReadOnly { src, dst } => ("--ro-bind", Some(src), dst),
            Mount::ReadOnlyIfThere { src, dst } => ("--ro-bind-try", Some(src), dst),
            Mount::Writable { src, dst } => ("--bind", Some(src), dst),
            Mount::Tmpfs { dst } => ("--tmpfs", None, dst),
            Mount::RemountReadOnly { dst } => ("--remount-ro", None, dst),
            Mount::Dev { dst } => ("--dev", None, dst),
            Mount::Proc { dst } => ("--proc", None, dst),
        };
        if let (Mount::Tmpfs { .. }, Some(size)) = (self, tmp_size) {
            args.extend(["--size".into(), size.to_string().into()]);
        }
        args.push(flag.into());
        args.extend(src.map(|s| s.clone().into_os_string()));
        args.push(dst.clone().into_os_string());
    }
}

/// The namespaces every sandbox gets (the probe in [`find`] too): a user namespace even for
/// real root, so its capabilities (dropped anyway) count only inside, and the kernel's
/// root-only files are read-only mounts.
const CONFINED: [&str; 8] = [
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--die-with-parent",
    "--cap-drop",
    "ALL",
];

/// A sandbox as data: its mounts in order, whether it has the network, where it starts.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    mounts: Vec<Mount>,
    network: bool,
    chdir: PathBuf,
    /// The environment variables the sandbox does not get (they carry credentials).
    unset: Vec<OsString>,
    /// The most bytes each tmpfs holds (`sandbox.limits.tmp`).
    tmp_size: Option<u64>,
}

impl Plan {
    /// The bwrap arguments (after the binary, up to and including `--`), the filter read
    /// from the descriptor `seccomp`.
    fn args(&self, seccomp: RawFd) -> Vec<OsString> {
        let mut args = vec![];
        for mount in &self.mounts {
            mount.render(&mut args, self.tmp_size);
        }
        args.extend(CONFINED.map(OsString::from));
        if !self.network {
            args.push("--unshare-net".into());
        }
        args.extend(["--seccomp".into(), seccomp.to_string().into()]);
        args.extend(["--chdir".into(), self.chdir.clone().into_os_string()]);
        for name in &self.unset {
            args.extend(["--unsetenv".into(), name.clone()]);
        }
        args.push("--".into());
        args
    }
}

/// A sandbox other programs are run in one at a time: bubblewrap and the plan, each call
/// handed a filter of its own (bubblewrap reads it whole).
pub(crate) struct Confinement {
    bwrap: PathBuf,
    plan: Plan,
    limit: Option<std::time::Duration>,
}

impl Confinement {
    /// The sandbox of `options` and `scope`, made by `bwrap`.
    pub(crate) fn new(bwrap: &Path, options: &Options, scope: &Scope) -> Confinement {
        Confinement {
            bwrap: bwrap.to_path_buf(),
            plan: plan(options, scope),
            limit: None,
        }
    }

    /// Gives every call wrapped in this sandbox `limit` to end in (see `Call::within`): the
    /// sandbox ends with bubblewrap (`--die-with-parent`), so nothing of a call outlives it.
    pub(crate) fn within(mut self, limit: std::time::Duration) -> Confinement {
        self.limit = Some(limit);
        self
    }

    /// Where the sandbox starts: its workspace, as the programs inside see it.
    pub(crate) fn workspace(&self) -> &Path {
        &self.plan.chdir
    }

    /// `call` run inside the sandbox (its environment, input and directory as they are).
    pub(crate) fn wrap(&self, call: Call) -> Result<Call, SandboxError> {
        let seccomp = std::os::fd::OwnedFd::from(seccomp()?);
        let args = self.plan.args(std::os::fd::AsRawFd::as_raw_fd(&seccomp));
        let call = call.inside(&self.bwrap, args).pass(seccomp);
        Ok(match self.limit {
            Some(limit) => call.within(limit),
            None => call,
        })
    }
}

/// The entries of the namespace's `.state` other than the record of the workspace at
/// `workspace` (`<id>.json`, what a nested run reads), read when the sandbox is made.
fn others_state(state: &Path, workspace: &Path) -> Vec<PathBuf> {
    let Some(id) = workspace.file_name().and_then(|n| n.to_str()) else {
        return vec![];
    };
    let own = std::ffi::OsString::from(format!("{id}.json"));
    let Ok(entries) = fs::read_dir(state) else {
        return vec![];
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|entry| entry.file_name() != own)
        .map(|entry| entry.path())
        .collect()
}

/// The kernel's files under /proc that root may write, made read-only where they exist.
const KERNEL_READ_ONLY: [&str; 4] = ["/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"];

/// The directories replaced by an empty tmpfs: `/tmp`, and where the host keeps its unix
/// sockets (`/run`, `/var/run` when it is not a link to it, `$XDG_RUNTIME_DIR`).
fn hidden_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![PathBuf::from("/tmp")];
    let runtime = crate::vars::raw("XDG_RUNTIME_DIR").map(PathBuf::from);
    // `/var/tmp` too: another temporary directory of the host's, whose sockets and files come
    // and go (a socket covered one by one could be gone by the time bubblewrap mounts it).
    for dir in [
        Some(PathBuf::from("/var/tmp")),
        Some(PathBuf::from("/run")),
        Some("/var/run".into()),
        runtime,
    ]
    .into_iter()
    .flatten()
    {
        let Ok(dir) = fs::canonicalize(&dir) else {
            continue;
        };
        if dir.is_dir() && !dirs.iter().any(|d| dir.starts_with(d)) {
            dirs.push(dir);
        }
    }
    // HOME is a tmpfs of its own wherever it is (under `/tmp` too), made read-only once what
    // toolchains read is put back.
    if let Some(home) = home_dir().filter(|h| !dirs.contains(h)) {
        dirs.push(home);
    }
    dirs
}

/// HOME, resolved, when it is a directory of its own (never `/`).
fn home_dir() -> Option<PathBuf> {
    let home = fs::canonicalize(crate::vars::non_empty("HOME")?).ok()?;
    (home.parent().is_some() && home.is_dir()).then_some(home)
}

/// The host's DNS configuration, which often lives under `/run` (`/etc/resolv.conf` a link to
/// systemd-resolved's file): put back read-only so a networked run still resolves names.
fn resolver() -> Option<PathBuf> {
    fs::canonicalize("/etc/resolv.conf").ok()
}

/// The host's unix sockets a sandbox would still reach, to be covered: every pathname socket
/// listening on the host (`/proc/net/unix`, so a tmux server's, a nix daemon's or an ssh
/// master's wherever it is), and `$SSH_AUTH_SOCK` and `$DOCKER_HOST`'s; not those under a
/// hidden directory (unless put back readable there), nor those the user allowed
/// (`sandbox.sockets`).
fn hidden_sockets(hidden: &[PathBuf], allowed: &[PathBuf], put_back: &[PathBuf]) -> Vec<PathBuf> {
    let ssh = crate::vars::raw("SSH_AUTH_SOCK").map(PathBuf::from);
    let docker = crate::vars::raw("DOCKER_HOST").and_then(|host| {
        host.to_str()
            .and_then(|h| h.strip_prefix("unix://"))
            .map(PathBuf::from)
    });
    let mut found: Vec<PathBuf> = vec![];
    // Those the variables name, followed where they are links; those listening, where bound.
    let named = [ssh, docker].into_iter().flatten();
    let named = named.filter_map(|path| fs::canonicalize(path).ok());
    let listening = listening_sockets().into_iter().filter_map(|p| located(&p));
    for path in named.chain(listening) {
        let shown = !hidden.iter().any(|dir| path.starts_with(dir))
            || put_back.iter().any(|back| path.starts_with(back));
        if shown
            && fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_socket())
            && !allowed.contains(&path)
            && !found.contains(&path)
        {
            found.push(path);
        }
    }
    found
}

/// The paths of the pathname unix sockets bound on the host (this network namespace's), as
/// `/proc/net/unix` lists them: the last field of each line, when it is an absolute path
/// (an abstract socket's starts with `@`, and the network namespace isolates those).
fn listening_sockets() -> Vec<PathBuf> {
    let Ok(table) = fs::read("/proc/net/unix") else {
        return vec![];
    };
    let mut paths = vec![];
    for line in table.split(|b| *b == b'\n').skip(1) {
        // Num RefCount Protocol Flags Type St Inode Path: the path is what follows the
        // seventh field, spaces and all.
        let mut rest = line;
        for _ in 0..7 {
            let start = rest.iter().position(|b| *b != b' ').unwrap_or(rest.len());
            rest = &rest[start..];
            let end = rest.iter().position(|b| *b == b' ').unwrap_or(rest.len());
            rest = &rest[end..];
        }
        let path = rest.strip_prefix(b" ").unwrap_or(rest);
        if path.first() == Some(&b'/') {
            use std::os::unix::ffi::OsStrExt;
            let path = PathBuf::from(std::ffi::OsStr::from_bytes(path));
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    paths
}

/// The seccomp filter of every sandbox, compiled to the BPF program bubblewrap's `--seccomp`
/// reads, in a pipe whose read end is returned (the program fits the pipe's buffer).
pub(crate) fn seccomp() -> Result<std::io::PipeReader, SandboxError> {
    use std::io::Write;
    let bytes = seccomp_program()?;
    let (reader, mut writer) = std::io::pipe().map_err(|e| SandboxError::Seccomp(e.to_string()))?;
    writer
        .write_all(&bytes)
        .map_err(|e| SandboxError::Seccomp(e.to_string()))?;
    Ok(reader)
}

/// The system calls the filter denies (EPERM): mounting and namespaces' file systems,
/// tracing and reading other processes, the kernel's keyrings, BPF, performance counters,
/// kernel modules and kexec, rebooting, swap, the clock, accounting and the kernel log.
#[cfg(all(
    target_os = "linux",
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64"
    )
))]
const DENIED: &[libc::c_long] = &[
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_acct,
    libc::SYS_syslog,
    libc::SYS_setns,
    libc::SYS_open_by_handle_at,
    libc::SYS_userfaultfd,
    libc::SYS_quotactl,
];

#[cfg(all(
    target_os = "linux",
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64"
    )
))]
// `c_long` and the ioctl request type differ between platforms: the conversions are not
// useless everywhere.
#[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
fn seccomp_program() -> Result<Vec<u8>, SandboxError> {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    };
    let fail = |e: seccompiler::BackendError| SandboxError::Seccomp(e.to_string());
    let mut rules: std::collections::BTreeMap<i64, Vec<SeccompRule>> =
        DENIED.iter().map(|nr| (i64::from(*nr), vec![])).collect();
    // Typing into the terminal the run shares (`TIOCSTI`, `TIOCLINUX`) would run commands in
    // the user's shell once the run ends.
    let ioctl = [libc::TIOCSTI as u64, 12 /* TIOCLINUX */]
        .into_iter()
        .map(|request| {
            SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, request)
                .and_then(|c| SeccompRule::new(vec![c]))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(fail)?;
    rules.insert(i64::from(libc::SYS_ioctl), ioctl);
    if cfg!(target_arch = "x86_64") {
        // The x32 ABI reaches the same calls under numbers with bit 30 set.
        let x32: Vec<(i64, Vec<SeccompRule>)> = DENIED
            .iter()
            .map(|nr| (i64::from(*nr) | 0x4000_0000, vec![]))
            .collect();
        rules.extend(x32);
    }
    let arch = seccompiler::TargetArch::try_from(std::env::consts::ARCH).map_err(fail)?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(fail)?;
    let program: seccompiler::BpfProgram = filter.try_into().map_err(fail)?;
    // `struct sock_filter` in the machine's byte order, as bubblewrap reads it.
    Ok(program
        .iter()
        .flat_map(|op| {
            let mut word = Vec::with_capacity(8);
            word.extend(op.code.to_ne_bytes());
            word.push(op.jt);
            word.push(op.jf);
            word.extend(op.k.to_ne_bytes());
            word
        })
        .collect())
}

#[cfg(not(all(
    target_os = "linux",
    any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64"
    )
)))]
fn seccomp_program() -> Result<Vec<u8>, SandboxError> {
    Err(SandboxError::Seccomp(format!(
        "no seccomp filter for the {} architecture",
        std::env::consts::ARCH
    )))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seccomp_program_is_whole_instructions_naming_every_denied_call() {
        let bytes = seccomp_program().unwrap();
        assert_eq!(bytes.len() % 8, 0);
        let ks: Vec<u32> = bytes
            .chunks(8)
            .map(|op| u32::from_ne_bytes([op[4], op[5], op[6], op[7]]))
            .collect();
        for nr in DENIED.iter().chain([&libc::SYS_ioctl]) {
            assert!(
                ks.contains(&(*nr as u32)),
                "syscall {nr} is not in the filter"
            );
        }
        assert!(ks.contains(&(libc::TIOCSTI as u32)));
    }

    #[test]
    fn a_plan_is_rendered_in_order_in_bubblewraps_words() {
        let plan = Plan {
            mounts: vec![
                Mount::read_only(Path::new("/")),
                Mount::Dev { dst: "/dev".into() },
                Mount::tmpfs(Path::new("/tmp")),
                Mount::Writable {
                    src: "/s/wc/.jj".into(),
                    dst: "/ws/.jj".into(),
                },
                Mount::RemountReadOnly {
                    dst: "/repo".into(),
                },
            ],
            network: false,
            chdir: "/ws".into(),
            unset: vec!["GITHUB_TOKEN".into()],
            tmp_size: Some(1024),
        };
        let args: Vec<String> = plan
            .args(7)
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let mounts = "--ro-bind / / --dev /dev --size 1024 --tmpfs /tmp --bind /s/wc/.jj /ws/.jj \
                      --remount-ro /repo";
        let tail = "--unshare-net --seccomp 7 --chdir /ws --unsetenv GITHUB_TOKEN --";
        assert_eq!(
            args.join(" "),
            format!("{mounts} {} {tail}", CONFINED.join(" "))
        );
    }
}
