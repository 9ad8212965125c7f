//! The user's command: started behind the guard in its process group with the descriptors it
//! inherits, how it ended, and the guard's side of the start report; nested runs' `exec`.

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::signals;

/// The user's command (always behind the guard, see `guard.rs`) and how to start it.
pub struct Child {
    pub argv: Vec<OsString>,
    pub dir: PathBuf,
    pub env: Vec<(OsString, OsString)>,
    /// A descriptor the guard inherits and keeps open for as long as any process of the run
    /// lives: the workspace's lease.
    pub lease: Option<RawFd>,
    /// Started inside a sandbox's own pid namespace: the guard's parent there is not the
    /// supervisor (the sandbox ends with the supervisor instead).
    pub sandboxed: bool,
    /// Where stdout and stderr go instead of ours (stdin is then empty): the setup's log.
    pub output: Option<std::fs::File>,
}

/// The hidden subcommand that runs the guard (`commands/exec.rs`).
pub const TRAMPOLINE: &str = "__exec";

/// The environment variable through which the guard learns where to report its start, its
/// supervisor's pid, the lease descriptor and where its go-ahead comes from:
/// `<start fd>:<supervisor pid>:<lease fd or -1>:<go fd>`.
pub const GUARD_VAR: &str = "AGENT_WORKSPACE_GUARD";

/// How the user's command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Exited(i32),
    Signaled(i32),
    /// The program could not be executed (126) or found (127).
    NotStarted(i32),
}

impl Ending {
    /// The exit code agent-workspace reports for this ending.
    pub fn code(self) -> i32 {
        match self {
            Ending::Exited(code) | Ending::NotStarted(code) => code,
            Ending::Signaled(sig) => 128 + sig,
        }
    }
}

/// A command's chain (the guard, behind direnv or a sandbox when asked) started, its guard
/// held back from starting the command until [`Running::go`].
pub struct Running {
    proc: Option<std::process::Child>,
    /// How it ended when the chain's first program could not be started at all.
    not_started: Option<Ending>,
    started: io::PipeReader,
    go: Option<io::PipeWriter>,
    own_group: bool,
}

/// Starts the user's command's chain: everything up to the guard, which reports its start and
/// then waits for [`Running::go`] before it starts the command (so what the supervisor still
/// has to do overlaps with direnv loading the environment).
///
/// When stdin is a terminal the command shares our process group, so job control (Ctrl-C,
/// Ctrl-Z, `fg` of a run started with `&`) works as for any shell command; otherwise it gets a
/// group of its own so a signal sent to agent-workspace reaches the command's whole tree.
pub fn start_child(child: Child) -> io::Result<Running> {
    let own_group = !signals::stdin_is_terminal();
    let mut cmd = Command::new(&child.argv[0]);
    cmd.args(&child.argv[1..]).current_dir(&child.dir);
    for (k, v) in &child.env {
        cmd.env(k, v);
    }
    if let Some(file) = &child.output {
        cmd.stdin(std::process::Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file.try_clone()?);
    }
    let (started, writer) = io::pipe()?;
    set_nonblocking(started.as_raw_fd());
    let (go_reader, go) = io::pipe()?;
    let parent = std::process::id() as libc::pid_t;
    let write_fd = writer.as_raw_fd();
    let go_fd = go_reader.as_raw_fd();
    let lease = child.lease.unwrap_or(-1);
    let watched = if child.sandboxed { 0 } else { parent };
    cmd.env(GUARD_VAR, format!("{write_fd}:{watched}:{lease}:{go_fd}"));
    // SAFETY: the closure only calls async-signal-safe libc functions.
    unsafe {
        cmd.pre_exec(move || {
            inherit(write_fd)?;
            inherit(go_fd)?;
            if lease >= 0 {
                inherit(lease)?;
            }
            signals::prepare_child(own_group, parent)
        });
    }
    let spawned = cmd.spawn();
    drop((writer, go_reader));
    let (proc, not_started) = match spawned {
        Ok(proc) => {
            let pid = proc.id() as libc::pid_t;
            signals::set_target(if own_group { -pid } else { pid }, own_group);
            (Some(proc), None)
        }
        Err(err) => (None, Some(not_started(err)?)),
    };
    Ok(Running {
        proc,
        not_started,
        started,
        go: Some(go),
        own_group,
    })
}

impl Running {
    /// Lets the guard start the command.
    pub fn go(&mut self) {
        if let Some(mut go) = self.go.take() {
            // A guard already gone reads nothing either way: its ending says why.
            let _ = go.write_all(b"1");
        }
    }

    /// Waits for the chain to end. Without [`Running::go`] first, the guard ends without
    /// starting the command. Returns how it ended and whether the guard reported its start.
    pub fn wait(mut self) -> io::Result<(Ending, bool)> {
        drop(self.go.take());
        if let Some(ending) = self.not_started {
            return Ok((ending, false));
        }
        let Some(mut proc) = self.proc.take() else {
            return Ok((Ending::NotStarted(126), false));
        };
        let status = proc.wait();
        signals::set_target(0, self.own_group);
        let status = status?;
        let ending = match (status.code(), status.signal()) {
            (Some(code), _) => Ending::Exited(code),
            (None, Some(sig)) => Ending::Signaled(sig),
            _ => Ending::Exited(1),
        };
        let mut byte = [0u8];
        Ok((ending, self.started.read(&mut byte).is_ok_and(|n| n == 1)))
    }
}

/// Clears close-on-exec on `fd` in a forked child, so the program it execs inherits it.
fn inherit(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor this process owns; async-signal-safe.
    match unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } {
        -1 => Err(io::Error::last_os_error()),
        _ => Ok(()),
    }
}

fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl on a descriptor this process owns.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

/// Sets close-on-exec on `fd`, so programs this process starts do not inherit it.
pub fn keep_private(fd: RawFd) {
    // SAFETY: fcntl on a descriptor this process owns.
    unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
}

fn not_started(err: io::Error) -> io::Result<Ending> {
    match err.kind() {
        io::ErrorKind::NotFound => Ok(Ending::NotStarted(127)),
        io::ErrorKind::PermissionDenied => Ok(Ending::NotStarted(126)),
        _ if err.raw_os_error() == Some(libc::ENOEXEC) => Ok(Ending::NotStarted(126)),
        _ => Err(err),
    }
}

/// What a guard learns from its supervisor through [`GUARD_VAR`].
pub struct GuardSetup {
    /// The supervising agent-workspace, which the run must not outlive.
    pub supervisor: Option<libc::pid_t>,
    /// Where the supervisor's go-ahead comes from (none: go at once).
    go: Option<RawFd>,
}

impl GuardSetup {
    /// Waits for the supervisor's go-ahead to start the command: false when the supervisor
    /// ended the run first (it could not record it, or it died), so the command never starts.
    pub fn wait_for_go(&self) -> bool {
        let Some(fd) = self.go else {
            return true;
        };
        let mut byte = 0u8;
        let n = loop {
            // SAFETY: reads one byte into a local from a descriptor inherited for this.
            let n = unsafe { libc::read(fd, (&mut byte as *mut u8).cast(), 1) };
            if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                break n;
            }
        };
        // SAFETY: the descriptor was inherited for exactly this read; closing it keeps it
        // out of the command.
        unsafe { libc::close(fd) };
        n == 1 && byte == b'1'
    }
}

/// In the guard: report that it started (proving a wrapper such as direnv got as far as
/// running it) and take what the supervisor handed down.
pub fn report_started() -> GuardSetup {
    let value = std::env::var(GUARD_VAR).unwrap_or_default();
    std::env::remove_var(GUARD_VAR);
    let mut fields = value.split(':').map(|f| f.parse::<i32>().ok());
    let mut next = || fields.next().flatten();
    let (fd, supervisor, lease, go) = (next(), next(), next(), next());
    if let Some(fd) = fd.filter(|fd| *fd >= 0) {
        // SAFETY: the descriptor was inherited for exactly this write; closing it keeps it
        // out of the command.
        unsafe {
            libc::write(fd, b"1".as_ptr().cast(), 1);
            libc::close(fd);
        }
    }
    // The lease stays open in the guard, which holds it for as long as it lives, but is not
    // passed on to the command.
    if let Some(fd) = lease.filter(|fd| *fd >= 0) {
        keep_private(fd);
    }
    GuardSetup {
        supervisor: supervisor.filter(|pid| *pid > 0),
        go: go.filter(|fd| *fd >= 0),
    }
}

/// Replaces this process with `argv` (nested runs). Returns only on failure, with the exit
/// code env(1) uses (127 not found, 126 otherwise) and the error.
pub fn exec(argv: &[OsString], dir: Option<&Path>) -> (i32, io::Error) {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    // SAFETY: only async-signal-safe calls: restore the default signal mask before exec.
    unsafe {
        cmd.pre_exec(move || signals::prepare_child(false, 0));
    }
    let err = cmd.exec();
    (exec_failure_code(&err), err)
}

/// The exit code for a program that could not be started: 127 not found, 126 otherwise.
pub fn exec_failure_code(err: &io::Error) -> i32 {
    match err.kind() {
        io::ErrorKind::NotFound => 127,
        _ => 126,
    }
}
