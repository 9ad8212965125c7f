//! The guard's side of its start: what its supervisor hands down through [`GUARD_VAR`], the
//! start report, the go-ahead and the command's status reported back; nested runs' `exec`.

use std::ffi::OsString;
use std::io;
use std::os::fd::RawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use crate::exec::signals;

/// The hidden subcommand that runs the guard (`commands/exec.rs`).
pub const TRAMPOLINE: &str = "__exec";

/// The environment variable through which the guard learns where to report its start, its
/// supervisor's pid, the lease descriptor and where its go-ahead comes from:
/// `<start fd>:<supervisor pid>:<lease fd or -1>:<go fd>`.
pub(crate) const GUARD_VAR: &str = "AGENT_WORKSPACE_GUARD";

/// What a guard learns from its supervisor through [`GUARD_VAR`].
pub(crate) struct GuardSetup {
    /// The supervising agent-workspace, which the run must not outlive.
    pub supervisor: Option<libc::pid_t>,
    /// Where the supervisor's go-ahead comes from (none: go at once).
    go: Option<RawFd>,
    /// Where the start was reported, and the command's status goes.
    report: Option<RawFd>,
}

impl GuardSetup {
    /// Waits for the supervisor's go-ahead to start the command: false when the supervisor
    /// ended the run first (it could not record it, or it died), so the command never starts.
    pub(crate) fn wait_for_go(&self) -> bool {
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

    /// Tells the supervisor how the command ended (its wait status), once nothing else of
    /// the run is left, so it records the outcome while the guard exits.
    pub(crate) fn report_ended(&mut self, status: i32) {
        if let Some(fd) = self.report.take() {
            let bytes = status.to_ne_bytes();
            // SAFETY: writes 4 bytes from a local to, then closes, the inherited report
            // descriptor (a pipe: 4 bytes are written at once or not at all).
            unsafe {
                libc::write(fd, bytes.as_ptr().cast(), bytes.len());
                libc::close(fd);
            }
        }
    }
}

/// In the guard: report that it started (proving a wrapper such as direnv got as far as
/// running it) and take what the supervisor handed down.
pub(crate) fn report_started() -> GuardSetup {
    let value = std::env::var(GUARD_VAR).unwrap_or_default();
    std::env::remove_var(GUARD_VAR);
    let mut fields = value.split(':').map(|f| f.parse::<i32>().ok());
    let mut next = || fields.next().flatten();
    let (fd, supervisor, lease, go) = (next(), next(), next(), next());
    let report = fd.filter(|fd| *fd >= 0);
    if let Some(fd) = report {
        // SAFETY: the descriptor was inherited for exactly this report; it stays open for
        // the command's status, but is not passed on to the command.
        unsafe { libc::write(fd, b"1".as_ptr().cast(), 1) };
        keep_private(fd);
    }
    // The lease stays open in the guard, which holds it for as long as it lives, but is not
    // passed on to the command.
    if let Some(fd) = lease.filter(|fd| *fd >= 0) {
        keep_private(fd);
    }
    GuardSetup {
        supervisor: supervisor.filter(|pid| *pid > 0),
        go: go.filter(|fd| *fd >= 0),
        report,
    }
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
pub(crate) fn keep_private(fd: RawFd) {
    // SAFETY: fcntl on a descriptor this process owns.
    unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
}
