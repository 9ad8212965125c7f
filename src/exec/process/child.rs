//! The user's command: its chain (direnv, a sandbox, the guard) started in its process group
//! with the descriptors it inherits, the go-ahead, and how the command ended.

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::Command;

use super::guard::GUARD_VAR;
use crate::exec::signals;

/// The user's command (always behind the guard, see `guard.rs`) and how to start it.
pub(crate) struct Child {
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
    /// A descriptor only the chain's first program reads, at the same number (bubblewrap's
    /// seccomp filter, which it closes once loaded).
    pub passed: Option<std::os::fd::OwnedFd>,
    /// A file the guard writes the environment it was given to (what direnv loaded), then
    /// closes before the command starts.
    pub handback: Option<RawFd>,
    /// Start from `env` alone instead of this process's environment plus `env` (a kept
    /// environment direnv loaded before).
    pub env_only: bool,
    /// `cgroup.procs` files the chain's first process joins before it execs (the run's
    /// cgroup: every process of the run is then inside).
    pub cgroup_procs: Vec<RawFd>,
    /// The CPUs the chain is placed on (a sandbox's `cpus`), when not all.
    pub cpus: Option<Vec<usize>>,
}

/// How the user's command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    Exited(i32),
    Signaled(i32),
    /// The program could not be executed (126) or found (127).
    NotStarted(i32),
}

impl Ending {
    /// The exit code agent-workspace reports for this ending.
    pub(crate) fn code(self) -> i32 {
        match self {
            Ending::Exited(code) | Ending::NotStarted(code) => code,
            Ending::Signaled(sig) => 128 + sig,
        }
    }
}

/// A command's chain (the guard, behind direnv or a sandbox when asked) started, its guard
/// held back from starting the command until [`Running::go`].
pub(crate) struct Running {
    /// The chain's first process, or how it ended when it could not be started at all.
    chain: Result<std::process::Child, Ending>,
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
pub(crate) fn start_child(child: Child) -> io::Result<Running> {
    let own_group = !signals::stdin_is_terminal();
    let mut cmd = Command::new(&child.argv[0]);
    cmd.args(&child.argv[1..]).current_dir(&child.dir);
    if child.env_only {
        cmd.env_clear();
    }
    for (k, v) in &child.env {
        cmd.env(k, v);
    }
    if let Some(file) = &child.output {
        cmd.stdin(std::process::Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file.try_clone()?);
    }
    let (started, writer) = io::pipe()?;
    set_nonblocking(&started);
    let (go_reader, go) = io::pipe()?;
    let parent = std::process::id() as libc::pid_t;
    let write_fd = writer.as_raw_fd();
    let go_fd = go_reader.as_raw_fd();
    let lease = child.lease.unwrap_or(-1);
    let passed = child.passed.as_ref().map_or(-1, |fd| fd.as_raw_fd());
    let watched = if child.sandboxed { 0 } else { parent };
    let handback = child.handback.unwrap_or(-1);
    let (cgroup_procs, cpus) = (child.cgroup_procs, child.cpus);
    cmd.env(
        GUARD_VAR,
        format!("{write_fd}:{watched}:{lease}:{go_fd}:{handback}"),
    );
    // SAFETY: the closure only calls async-signal-safe libc functions.
    unsafe {
        cmd.pre_exec(move || {
            inherit(write_fd)?;
            inherit(go_fd)?;
            if lease >= 0 {
                inherit(lease)?;
            }
            if handback >= 0 {
                inherit(handback)?;
            }
            if passed >= 0 {
                inherit(passed)?;
            }
            crate::exec::sandbox::limits::join(&cgroup_procs)?;
            if let Some(cpus) = &cpus {
                crate::exec::sandbox::limits::place(cpus)?;
            }
            signals::prepare_child(own_group, parent)
        });
    }
    let spawned = cmd.spawn();
    drop((writer, go_reader, child.passed));
    let chain = match spawned {
        Ok(proc) => {
            let pid = proc.id() as libc::pid_t;
            signals::set_target(if own_group { -pid } else { pid }, own_group);
            Ok(proc)
        }
        Err(err) => Err(not_started(err)?),
    };
    Ok(Running {
        chain,
        started,
        go: Some(go),
        own_group,
    })
}

impl Running {
    /// Lets the guard start the command.
    pub(crate) fn go(&mut self) {
        if let Some(mut go) = self.go.take() {
            // A guard already gone reads nothing either way: its ending says why.
            let _ = go.write_all(b"1");
        }
    }

    /// Waits until the command has ended. Without [`Running::go`] first, the guard ends
    /// without starting it. The guard reports the command's status as soon as it is known
    /// and nothing else of the run is left, then exits: the returned [`Ended`] waits for
    /// that exit when dropped, so what the caller does with the status in between overlaps
    /// with it.
    pub(crate) fn wait(mut self) -> io::Result<Ended> {
        drop(self.go.take());
        let mut proc = match self.chain {
            Ok(proc) => proc,
            Err(ending) => return Ok(Ended::now(ending, false)),
        };
        let mut report = Report::default();
        if report.read_until_exit(&self.started, proc.id()) {
            let ending = ending_of(std::process::ExitStatus::from_raw(report.status()));
            return Ok(Ended {
                ending,
                started: true,
                guard: Some((proc, self.own_group)),
            });
        }
        let status = proc.wait();
        signals::set_target(0, self.own_group);
        let status = status?;
        report.read_rest(&self.started);
        Ok(Ended::now(ending_of(status), report.started()))
    }
}

/// How a command ended, and the guard still to be waited for (when dropped).
pub(crate) struct Ended {
    pub ending: Ending,
    /// Whether the guard reported its start (proving direnv or a sandbox got that far).
    pub started: bool,
    guard: Option<(std::process::Child, bool)>,
}

impl Ended {
    fn now(ending: Ending, started: bool) -> Ended {
        Ended {
            ending,
            started,
            guard: None,
        }
    }
}

impl Drop for Ended {
    fn drop(&mut self) {
        if let Some((mut guard, own_group)) = self.guard.take() {
            let _ = guard.wait();
            signals::set_target(0, own_group);
        }
    }
}

fn ending_of(status: std::process::ExitStatus) -> Ending {
    match (status.code(), status.signal()) {
        (Some(code), _) => Ending::Exited(code),
        (None, Some(sig)) => Ending::Signaled(sig),
        _ => Ending::Exited(1),
    }
}

/// What the guard wrote to its report pipe: `1` when it started, then the command's wait
/// status (4 bytes, native order) once the command ended and nothing of the run is left.
#[derive(Default)]
struct Report {
    bytes: Vec<u8>,
}

impl Report {
    fn started(&self) -> bool {
        self.bytes.first() == Some(&b'1')
    }

    fn status(&self) -> i32 {
        let mut raw = [0u8; 4];
        raw.copy_from_slice(&self.bytes[1..5]);
        i32::from_ne_bytes(raw)
    }

    /// Reads the report until it holds the status (true), or until the guard's pid `pid`
    /// exits or the pipe ends without it (false). A descriptor direnv's or the command's
    /// leftovers inherited cannot hold this up: the guard's exit ends the wait.
    fn read_until_exit(&mut self, pipe: &io::PipeReader, pid: u32) -> bool {
        #[cfg(target_os = "linux")]
        {
            use rustix::event::{PollFd, PollFlags};
            let Some(pid) = rustix::process::Pid::from_raw(pid as i32) else {
                return false;
            };
            let flags = rustix::process::PidfdFlags::empty();
            let Ok(pidfd) = rustix::process::pidfd_open(pid, flags) else {
                return false;
            };
            loop {
                if self.bytes.len() >= 5 {
                    return self.started();
                }
                let mut fds = [
                    PollFd::new(pipe, PollFlags::IN),
                    PollFd::new(&pidfd, PollFlags::IN),
                ];
                match rustix::event::poll(&mut fds, None) {
                    Ok(_) => {}
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(_) => return false,
                }
                let (pipe_ready, guard_gone) =
                    (!fds[0].revents().is_empty(), !fds[1].revents().is_empty());
                if pipe_ready && !self.read_some(pipe) {
                    return false;
                }
                if !pipe_ready && guard_gone {
                    return false;
                }
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (pipe, pid);
            false
        }
    }

    /// Reads what is there without blocking; false at the pipe's end or on an error.
    fn read_some(&mut self, mut pipe: &io::PipeReader) -> bool {
        let mut buf = [0u8; 8];
        match pipe.read(&mut buf) {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.bytes.extend_from_slice(&buf[..n]);
                true
            }
        }
    }

    /// Reads what the guard wrote before it ended.
    fn read_rest(&mut self, pipe: &io::PipeReader) {
        while self.bytes.len() < 5 && self.read_some(pipe) {}
    }
}

/// Clears close-on-exec on `fd` in a forked child, so the program it execs inherits it.
fn inherit(fd: RawFd) -> io::Result<()> {
    // SAFETY: the number of a descriptor this process owns (passed by number into the
    // forked child), borrowed for the one call; fcntl is async-signal-safe.
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    Ok(rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty())?)
}

fn set_nonblocking(fd: impl std::os::fd::AsFd) {
    use rustix::fs::OFlags;
    if let Ok(flags) = rustix::fs::fcntl_getfl(&fd) {
        let _ = rustix::fs::fcntl_setfl(&fd, flags | OFlags::NONBLOCK);
    }
}

fn not_started(err: io::Error) -> io::Result<Ending> {
    match err.kind() {
        io::ErrorKind::NotFound => Ok(Ending::NotStarted(127)),
        io::ErrorKind::PermissionDenied => Ok(Ending::NotStarted(126)),
        _ if err.raw_os_error() == Some(libc::ENOEXEC) => Ok(Ending::NotStarted(126)),
        _ => Err(err),
    }
}
