//! The guard: the process between a run's supervisor and its command (started directly or
//! behind `direnv exec`), run by the hidden [`TRAMPOLINE`] subcommand.
//!
//! It reports that it started, keeps the workspace's lease descriptor open, becomes a child
//! subreaper (so every orphaned descendant, double-forked daemons included, becomes its child),
//! waits for the supervisor's go-ahead (the run recorded as running) and starts the command.
//! When the command ends, or when the supervisor dies, it ends every process left below it
//! (SIGTERM, then SIGKILL after a grace period) before exiting with the command's status. So no
//! process of a run outlives its supervisor, and the lease, shared with the guard, stays held
//! until the last of them is gone. Without the go-ahead (the supervisor could not record the
//! run, or died first) it ends without starting the command.
//!
//! Also here: what the supervisor hands down through [`GUARD_VAR`], the start report, the
//! go-ahead and the command's status reported back; nested runs' `exec`.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use rustix::io::{Errno, FdFlags};
use rustix::process::{Pid, Signal};

use crate::exec::{liveness, signals};

/// The hidden subcommand that runs the guard (`commands/exec.rs`).
pub const TRAMPOLINE: &str = "__exec";

/// The environment variable through which the guard learns where to report its start, its
/// supervisor's pid, the lease descriptor, where its go-ahead comes from and where to hand
/// back the environment it was given:
/// `<start fd>:<supervisor pid>:<lease fd or -1>:<go fd>:<environment fd or -1>`.
pub(crate) const GUARD_VAR: &str = "AGENT_WORKSPACE_GUARD";

/// The guard's exit code when its supervisor ended the run before the command started (it
/// could not record the run, or it died); the supervisor reports why, or nobody is left to.
pub(crate) const NO_GO: i32 = 125;

/// How long the processes left behind get between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// What a guard learns from its supervisor through [`GUARD_VAR`].
pub(crate) struct GuardSetup {
    /// The supervising agent-workspace, which the run must not outlive.
    supervisor: Option<Pid>,
    /// Where the supervisor's go-ahead comes from (none: go at once).
    go: Option<OwnedFd>,
    /// Where the start was reported, and the command's status goes.
    report: Option<OwnedFd>,
    /// The workspace's lease, held for as long as the guard lives.
    _lease: Option<OwnedFd>,
    /// The socket of the sandbox's proxy, when its network is allowed host by host.
    proxy: Option<std::path::PathBuf>,
}

impl GuardSetup {
    /// Waits for the supervisor's go-ahead to start the command: false when the supervisor
    /// ended the run first (it could not record it, or it died), so the command never starts.
    pub(crate) fn wait_for_go(&mut self) -> bool {
        // Taken, so it is closed after the read and kept out of the command.
        let Some(fd) = self.go.take() else {
            return true;
        };
        let mut byte = [0u8; 1];
        let read = loop {
            match rustix::io::read(&fd, &mut byte) {
                Err(Errno::INTR) => continue,
                other => break other,
            }
        };
        matches!(read, Ok(1)) && byte[0] == b'1'
    }

    /// Tells the supervisor how the command ended (its wait status), once nothing else of
    /// the run is left, so it records the outcome while the guard exits.
    pub(crate) fn report_ended(&mut self, status: i32) {
        if let Some(fd) = self.report.take() {
            // A pipe: the 4 bytes are written at once or not at all.
            let _ = rustix::io::write(&fd, &status.to_ne_bytes());
        }
    }
}

/// In the guard: report that it started (proving a wrapper such as direnv got as far as
/// running it) and take what the supervisor handed down.
pub(crate) fn report_started() -> GuardSetup {
    let value = std::env::var(GUARD_VAR).unwrap_or_default();
    std::env::remove_var(GUARD_VAR);
    let proxy = std::env::var_os(super::forward::PROXY_VAR).map(std::path::PathBuf::from);
    std::env::remove_var(super::forward::PROXY_VAR);
    let mut fields = value.split(':').map(|f| f.parse::<i32>().ok());
    let mut next = || fields.next().flatten();
    let (report, supervisor, lease, go) = (next(), next(), next(), next());
    let handback = next();
    let (report, lease, go) = (adopt(report), adopt(lease), adopt(go));
    if let Some(fd) = adopt(handback) {
        // Before the start is reported: once it is, the supervisor may read it.
        hand_back_environment(fd);
    }
    if let Some(fd) = &report {
        let _ = rustix::io::write(fd, b"1");
    }
    // The report stays open for the command's status and the lease for as long as the guard
    // lives, neither passed on to the command.
    for fd in [&report, &lease].into_iter().flatten() {
        keep_private(fd);
    }
    GuardSetup {
        supervisor: supervisor.and_then(Pid::from_raw),
        go,
        report,
        _lease: lease,
        proxy,
    }
}

/// Writes this process's environment (what direnv loaded, [`GUARD_VAR`] left out) to `fd` as
/// `NAME=value` entries each ended by a NUL, then an empty one, and closes it, so the command never has it.
fn hand_back_environment(fd: OwnedFd) {
    use std::io::Write;
    use std::os::unix::ffi::OsStrExt;
    let mut bytes = vec![];
    for (name, value) in std::env::vars_os() {
        bytes.extend_from_slice(name.as_bytes());
        bytes.push(b'=');
        bytes.extend_from_slice(value.as_bytes());
        bytes.push(0);
    }
    // An empty entry ends it: a write cut short is told from a whole one.
    bytes.push(0);
    // A file of the supervisor's (not a pipe): the write never waits for a reader.
    let _ = std::fs::File::from(fd).write_all(&bytes);
}

/// Takes ownership of a descriptor the process that started this one passed down by number
/// (the supervisor to its guard, a hook to the session holder it starts), when it is open.
pub(crate) fn adopt(fd: Option<RawFd>) -> Option<OwnedFd> {
    let fd = fd.filter(|fd| *fd >= 0)?;
    // SAFETY: the number is only borrowed for the check that it is open.
    rustix::io::fcntl_getfd(unsafe { BorrowedFd::borrow_raw(fd) }).ok()?;
    // SAFETY: the starter passed this open descriptor down for this process alone
    // (GUARD_VAR, `--lease-fd`); nothing else in this process owns it.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Replaces this process with `argv` (nested runs). Returns only on failure, with the exit
/// code env(1) uses (127 not found, 126 otherwise) and the error.
pub(crate) fn exec(argv: &[OsString], dir: Option<&Path>) -> (i32, io::Error) {
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
pub(crate) fn exec_failure_code(err: &io::Error) -> i32 {
    match err.kind() {
        io::ErrorKind::NotFound => 127,
        _ => 126,
    }
}

/// Sets close-on-exec on `fd`, so programs this process starts do not inherit it.
fn keep_private(fd: impl AsFd) {
    let _ = rustix::io::fcntl_setfd(fd, FdFlags::CLOEXEC);
}

/// The guard's life once it has reported its start (Linux): waits for the go-ahead, runs
/// `command` as a child subreaper, forwards signals, ends whatever the command left behind
/// and reports the status. Returns the exit code to end with (the command's, or [`NO_GO`]),
/// or the code and error of a command that could not be started. `no_proxy` hears why the
/// sandbox's proxy listener could not start (the command then runs with no network).
#[cfg(target_os = "linux")]
pub(crate) fn guard(
    command: &[OsString],
    setup: &mut GuardSetup,
    no_proxy: impl FnOnce(io::Error),
) -> Result<i32, (i32, io::Error)> {
    let set = signals::guard_set();
    signals::block(&set);
    let me = rustix::process::getpid();
    let _ = rustix::process::set_child_subreaper(Some(me));
    let supervisor_gone = watch_supervisor(setup);
    if !setup.wait_for_go() {
        return Ok(NO_GO);
    }
    let parent = me.as_raw_nonzero().get();
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..]);
    // After the signals are blocked: the listener's threads must never take one.
    if let Some(socket) = &setup.proxy {
        match super::forward::start(socket) {
            Ok(vars) => {
                cmd.envs(vars);
            }
            // The command runs without its way out: said by the caller.
            Err(err) => no_proxy(err),
        }
    }
    // SAFETY: only async-signal-safe calls in the forked child.
    unsafe {
        cmd.pre_exec(move || signals::prepare_child(false, parent));
    }
    let child = cmd.spawn().map_err(|err| (exec_failure_code(&err), err))?;
    let pid = Pid::from_child(&child);
    // The command is reaped below with waitpid; std's handle is not used again.
    std::mem::forget(child);
    let status = supervise(&set, setup, pid, supervisor_gone);
    end_descendants(me);
    // Nothing of the run is left: the supervisor records the outcome while this exits.
    setup.report_ended(status);
    Ok(finish(status))
}

/// Arms the parent-death signal; true when the supervisor is already gone.
#[cfg(target_os = "linux")]
fn watch_supervisor(setup: &GuardSetup) -> bool {
    let Some(supervisor) = setup.supervisor else {
        return false;
    };
    let _ = rustix::process::set_parent_process_death_signal(Some(signals::supervisor_died()));
    rustix::process::getppid() != Some(supervisor)
}

/// Waits for the command, forwarding signals, until it ends or the supervisor dies. Returns
/// the command's wait status (a SIGKILL status when the supervisor died first).
#[cfg(target_os = "linux")]
fn supervise(set: &libc::sigset_t, setup: &GuardSetup, pid: Pid, gone: bool) -> i32 {
    let mut supervisor_gone = gone;
    loop {
        if let Some(status) = reap(Some(pid)) {
            return status;
        }
        if supervisor_gone {
            return libc::SIGKILL;
        }
        match signals::wait_timeout(set, Duration::from_millis(500)) {
            Some((sig, _, _)) if sig == signals::supervisor_died().as_raw() => {}
            Some((libc::SIGCHLD, _, _)) | None => {}
            Some((sig, from_kernel, sender)) => forward(sig, from_kernel, sender, pid, setup),
        }
        let parent = rustix::process::getppid();
        supervisor_gone = setup.supervisor.is_some_and(|s| Some(s) != parent);
    }
}

/// Passes a stop signal on to the command unless it reached it already: a terminal signals
/// the whole foreground group, and the supervisor signals the guard's own group.
#[cfg(target_os = "linux")]
fn forward(sig: i32, from_kernel: bool, sender: libc::pid_t, pid: Pid, setup: &GuardSetup) {
    let me = rustix::process::getpid();
    let sender = Pid::from_raw(sender);
    let own_group = rustix::process::getpgrp() == me;
    let group_got_it = own_group && setup.supervisor.is_some() && setup.supervisor == sender;
    if from_kernel || group_got_it || sender == Some(me) {
        return;
    }
    let Some(sig) = Signal::from_named_raw(sig) else {
        return;
    };
    let _ = match own_group {
        true => rustix::process::kill_process_group(me, sig),
        false => rustix::process::kill_process(pid, sig),
    };
}

/// Reaps every exited child; returns the wait status of `command` once it has exited.
#[cfg(target_os = "linux")]
fn reap(command: Option<Pid>) -> Option<i32> {
    let mut found = None;
    while let Ok(Some((reaped, status))) =
        rustix::process::waitpid(None, rustix::process::WaitOptions::NOHANG)
    {
        if Some(reaped) == command {
            found = Some(status.as_raw());
        }
    }
    found
}

/// Ends every process below the guard: SIGTERM (and SIGCONT for stopped ones), then SIGKILL
/// after [`GRACE`], reaping as they go, until none is left.
#[cfg(target_os = "linux")]
fn end_descendants(me: Pid) {
    let start = Instant::now();
    let mut termed = std::collections::HashSet::new();
    loop {
        reap(None);
        // Every process left below the guard has an ancestor chain ending in one of its
        // children (orphans are reparented to it, a subreaper): no child, no descendant, and
        // no need to read /proc (the common case, and the warm path's).
        if !has_children() {
            return;
        }
        let left = liveness::descendants(me.as_raw_nonzero().get() as u32);
        if left.is_empty() {
            return;
        }
        let late = start.elapsed() >= GRACE;
        // These pids are our own descendants, which cannot be reused while they are
        // unreaped children or descendants of ours.
        for pid in left.into_iter().filter_map(|pid| Pid::from_raw(pid as i32)) {
            if late {
                let _ = rustix::process::kill_process(pid, Signal::KILL);
            } else if termed.insert(pid) {
                let _ = rustix::process::kill_process(pid, Signal::TERM);
                let _ = rustix::process::kill_process(pid, Signal::CONT);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether this process has any child (running or not yet reaped). WNOWAIT leaves any
/// exited child to be reaped by [`reap`].
#[cfg(target_os = "linux")]
fn has_children() -> bool {
    use rustix::process::{WaitId, WaitIdOptions};
    let options = WaitIdOptions::EXITED
        | WaitIdOptions::NOHANG
        | WaitIdOptions::NOWAIT
        | WaitIdOptions::STOPPED
        | WaitIdOptions::CONTINUED;
    !matches!(
        rustix::process::waitid(WaitId::All, options),
        Err(Errno::CHILD)
    )
}

/// Exits the way the command did: its exit code, or death by its signal.
#[cfg(target_os = "linux")]
fn finish(status: i32) -> i32 {
    let status = std::process::ExitStatus::from_raw(status);
    if let Some(code) = status.code() {
        return code;
    }
    let sig = status.signal().unwrap_or(libc::SIGKILL);
    signals::die_of(sig);
    128 + sig
}
