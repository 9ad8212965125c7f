//! `__exec`, the hidden subcommand that runs the guard: the process between a run's
//! supervisor and its command (started directly or behind `direnv exec`).
//!
//! It reports that it started, keeps the workspace's lease descriptor open, becomes a child
//! subreaper (so every orphaned descendant, double-forked daemons included, becomes its child),
//! waits for the supervisor's go-ahead (the run recorded as running) and starts the command.
//! When the command ends, or when the supervisor dies, it ends every process left below it
//! (SIGTERM, then SIGKILL after a grace period) before exiting with the command's status. So no
//! process of a run outlives its supervisor, and the lease, shared with the guard, stays held
//! until the last of them is gone. Without the go-ahead (the supervisor could not record the
//! run, or died first) it ends without starting the command.

use std::ffi::OsString;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::error::CliError;
use crate::exec::liveness;
use crate::exec::process::{self, GuardSetup, TRAMPOLINE};
use crate::exec::signals;
use crate::ui::Ui;

/// The guard's exit code when its supervisor ended the run before the command started (it
/// could not record the run, or it died); the supervisor reports why, or nobody is left to.
const NO_GO: i32 = 125;

/// How long the processes left behind get between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// Runs the guard for `args` (`-- CMD...`); returns its exit code when it cannot raise the
/// command's signal on itself.
pub fn cmd_exec(ui: &Ui, args: &[OsString]) -> i32 {
    let command = match args.first() {
        Some(sep) if sep == "--" => &args[1..],
        _ => args,
    };
    let mut setup = process::report_started();
    if command.is_empty() {
        ui.error(
            &CliError::usage(format!("{TRAMPOLINE} needs a command"))
                .hint("it is run by agent-workspace itself"),
        );
        return 125;
    }
    #[cfg(not(target_os = "linux"))]
    {
        if !setup.wait_for_go() {
            return NO_GO;
        }
        // No subreaper or parent-death signal here: become the command, as before.
        let (code, err) = process::exec(command, None);
        ui.error(&CliError::failure(format!(
            "{}: {err}",
            command[0].to_string_lossy()
        )));
        return code;
    }
    #[cfg(target_os = "linux")]
    guard(ui, command, &mut setup)
}

#[cfg(target_os = "linux")]
fn guard(ui: &Ui, command: &[OsString], setup: &mut GuardSetup) -> i32 {
    let set = signals::guard_set();
    signals::block(&set);
    // SAFETY: prctl with constant arguments on this process.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
    let supervisor_gone = watch_supervisor(setup);
    if !setup.wait_for_go() {
        return NO_GO;
    }
    let me = std::process::id() as libc::pid_t;
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..]);
    // SAFETY: only async-signal-safe calls in the forked child.
    unsafe {
        cmd.pre_exec(move || signals::prepare_child(false, me));
    }
    let child = match cmd.spawn() {
        Ok(child) => child,
        Err(err) => {
            let code = process::exec_failure_code(&err);
            let program = command[0].to_string_lossy();
            let what = match (code, err.raw_os_error()) {
                (127, _) => "command not found".to_string(),
                (_, Some(libc::EACCES)) => "permission denied".to_string(),
                _ => err.to_string(),
            };
            let hint = match code {
                127 => "check its name and the PATH the workspace's environment sets",
                _ => "make it executable (chmod +x) or run it through its interpreter",
            };
            ui.error(&CliError::failure(format!("{program}: {what}")).hint(hint));
            return code;
        }
    };
    let pid = child.id() as libc::pid_t;
    // The command is reaped below with waitpid; std's handle is not used again.
    std::mem::forget(child);
    let status = supervise(&set, setup, pid, supervisor_gone);
    end_descendants(me);
    // Nothing of the run is left: the supervisor records the outcome while this exits.
    setup.report_ended(status);
    finish(status)
}

/// Arms the parent-death signal; true when the supervisor is already gone.
fn watch_supervisor(setup: &GuardSetup) -> bool {
    let Some(supervisor) = setup.supervisor else {
        return false;
    };
    // SAFETY: prctl and getppid on this process.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, signals::supervisor_died());
        libc::getppid() != supervisor
    }
}

/// Waits for the command, forwarding signals, until it ends or the supervisor dies. Returns
/// the command's wait status (a SIGKILL status when the supervisor died first).
fn supervise(set: &libc::sigset_t, setup: &GuardSetup, pid: libc::pid_t, gone: bool) -> i32 {
    let mut supervisor_gone = gone;
    loop {
        if let Some(status) = reap(pid) {
            return status;
        }
        if supervisor_gone {
            return libc::SIGKILL;
        }
        match signals::wait_timeout(set, Duration::from_millis(500)) {
            Some((sig, _, _)) if sig == signals::supervisor_died() => {}
            Some((libc::SIGCHLD, _, _)) | None => {}
            Some((sig, from_kernel, sender)) => forward(sig, from_kernel, sender, pid, setup),
        }
        // SAFETY: getppid has no preconditions.
        let parent = unsafe { libc::getppid() };
        supervisor_gone = setup.supervisor.is_some_and(|s| s != parent);
    }
}

/// Passes a stop signal on to the command unless it reached it already: a terminal signals
/// the whole foreground group, and the supervisor signals the guard's own group.
fn forward(sig: i32, from_kernel: bool, sender: libc::pid_t, pid: libc::pid_t, setup: &GuardSetup) {
    // SAFETY: plain queries and kill, no memory involved.
    unsafe {
        let own_group = libc::getpgrp() == libc::getpid();
        let group_got_it = own_group && setup.supervisor == Some(sender);
        if from_kernel || group_got_it || sender == libc::getpid() {
            return;
        }
        libc::kill(if own_group { -libc::getpid() } else { pid }, sig);
    }
}

/// Reaps every exited child; returns the command's wait status once it has exited.
fn reap(pid: libc::pid_t) -> Option<i32> {
    let mut found = None;
    loop {
        let mut status = 0;
        // SAFETY: status is a valid out-pointer.
        let reaped = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if reaped <= 0 {
            return found;
        }
        if reaped == pid {
            found = Some(status);
        }
    }
}

/// Ends every process below the guard: SIGTERM (and SIGCONT for stopped ones), then SIGKILL
/// after [`GRACE`], reaping as they go, until none is left.
fn end_descendants(me: libc::pid_t) {
    let start = Instant::now();
    let mut termed = std::collections::HashSet::new();
    loop {
        reap(0);
        // Every process left below the guard has an ancestor chain ending in one of its
        // children (orphans are reparented to it, a subreaper): no child, no descendant, and
        // no need to read /proc (the common case, and the warm path's).
        if !has_children() {
            return;
        }
        let left = liveness::descendants(me as u32);
        if left.is_empty() {
            return;
        }
        let late = start.elapsed() >= GRACE;
        for pid in left {
            let pid = pid as libc::pid_t;
            // SAFETY: kill has no memory-safety preconditions; these pids are our own
            // descendants, which cannot be reused while they are unreaped children or
            // descendants of ours.
            unsafe {
                if late {
                    libc::kill(pid, libc::SIGKILL);
                } else if termed.insert(pid) {
                    libc::kill(pid, libc::SIGTERM);
                    libc::kill(pid, libc::SIGCONT);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether this process has any child (running or not yet reaped).
fn has_children() -> bool {
    // SAFETY: a null status pointer is allowed; WNOHANG never blocks. P_ALL with WNOWAIT
    // leaves any exited child to be reaped by `reap`.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let rc = unsafe {
        libc::waitid(
            libc::P_ALL,
            0,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT | libc::WSTOPPED | libc::WCONTINUED,
        )
    };
    !(rc == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD))
}

/// Exits the way the command did: its exit code, or death by its signal.
fn finish(status: i32) -> i32 {
    let status = std::process::ExitStatus::from_raw(status);
    if let Some(code) = status.code() {
        return code;
    }
    let sig = status.signal().unwrap_or(libc::SIGKILL);
    signals::die_of(sig);
    128 + sig
}
