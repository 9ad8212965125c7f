//! Signal forwarding for the command a run supervises.
//!
//! The signal masks and waits are the C library's (`libc`): rustix offers them only to
//! runtimes. Everything else goes through rustix.
//!
//! SIGINT, SIGTERM, SIGHUP and SIGQUIT are blocked in agent-workspace and collected by one
//! thread, which records the first one and forwards each to the command (its process group when
//! the command has one). Blocking instead of ignoring means a signal that arrives while a
//! workspace is being created is kept until we can roll back cleanly.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Once;

use rustix::process::{Pid, Signal};

const FORWARDED: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

static RECEIVED: AtomicI32 = AtomicI32::new(0);
static TARGET: AtomicI32 = AtomicI32::new(0);
static SHARED_GROUP: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

fn forwarded_set() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise and fill a stack-allocated set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in FORWARDED {
            libc::sigaddset(&mut set, sig);
        }
        set
    }
}

/// Blocks the forwarded signals and starts the thread that collects them. Call before any
/// other thread exists, so every thread inherits the mask.
pub(crate) fn install() {
    INSTALL.call_once(|| {
        let set = forwarded_set();
        // SAFETY: set is a valid, initialised signal set.
        unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
        let spawned = std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || loop {
                let (sig, from_kernel) = wait(&set);
                if sig <= 0 {
                    continue;
                }
                let _ = RECEIVED.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
                let target = TARGET.load(Ordering::SeqCst);
                // A terminal already delivered its signal to every process of a shared group.
                let shared = SHARED_GROUP.load(Ordering::SeqCst);
                if target != 0 && !(shared && from_kernel) {
                    send(target, sig);
                }
            });
        if spawned.is_err() {
            // Without the collector, fall back to the default dispositions.
            // SAFETY: as above.
            unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
        }
    });
}

#[cfg(target_os = "linux")]
fn wait(set: &libc::sigset_t) -> (libc::c_int, bool) {
    // SAFETY: info is written by sigwaitinfo before it is read.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let sig = libc::sigwaitinfo(set, &mut info);
        (sig, info.si_code > 0)
    }
}

#[cfg(not(target_os = "linux"))]
fn wait(set: &libc::sigset_t) -> (libc::c_int, bool) {
    let mut sig: libc::c_int = 0;
    // SAFETY: sig is a valid out-pointer.
    unsafe { libc::sigwait(set, &mut sig) };
    // Without siginfo, treat keyboard signals as coming from the terminal.
    (sig, sig == libc::SIGINT || sig == libc::SIGQUIT)
}

/// The first signal received since `install`, if any.
pub(crate) fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// Sets where signals go: a pid, a negated process-group id, or 0 for nowhere.
pub(crate) fn set_target(target: i32, own_group: bool) {
    SHARED_GROUP.store(!own_group, Ordering::SeqCst);
    TARGET.store(target, Ordering::SeqCst);
    // A signal that arrived before the command existed is delivered now.
    if let (Some(sig), true) = (received(), target != 0) {
        if own_group {
            send(target, sig);
        }
    }
}

/// Sends `sig` to `target`: a pid, or a negated process-group id.
fn send(target: i32, sig: i32) {
    let Some(sig) = Signal::from_named_raw(sig) else {
        return;
    };
    let _ = match Pid::from_raw(target.saturating_abs()) {
        Some(group) if target < 0 => rustix::process::kill_process_group(group, sig),
        Some(pid) => rustix::process::kill_process(pid, sig),
        None => Ok(()),
    };
}

/// Whether stdin is a terminal (in the foreground or not: a run started with `&` is resumed
/// by `fg` like any job).
pub(crate) fn stdin_is_terminal() -> bool {
    std::io::stdin().is_terminal()
}

/// The signal the guard gets when its supervisor dies (its parent-death signal): a real-time
/// signal nothing else sends it.
#[cfg(target_os = "linux")]
pub(crate) fn supervisor_died() -> Signal {
    // SAFETY: a real-time signal above the ones the C library reserves (SIGRTMIN is past
    // them), which nothing in this process handles.
    unsafe { Signal::from_raw_unchecked(libc::SIGRTMIN() + 1) }
}

/// The signals the guard waits for: the forwarded ones, SIGCHLD and [`supervisor_died`].
#[cfg(target_os = "linux")]
pub(crate) fn guard_set() -> libc::sigset_t {
    let mut set = forwarded_set();
    // SAFETY: set is initialised.
    unsafe {
        libc::sigaddset(&mut set, libc::SIGCHLD);
        libc::sigaddset(&mut set, supervisor_died().as_raw());
    }
    set
}

/// Blocks `set` in this (single-threaded) process.
#[cfg(target_os = "linux")]
pub(crate) fn block(set: &libc::sigset_t) {
    // SAFETY: set is a valid, initialised signal set.
    unsafe { libc::sigprocmask(libc::SIG_BLOCK, set, std::ptr::null_mut()) };
}

/// Waits up to `timeout` for a signal of `set`: the signal, whether the kernel (a terminal)
/// sent it, and the sending pid.
#[cfg(target_os = "linux")]
pub(crate) fn wait_timeout(
    set: &libc::sigset_t,
    timeout: std::time::Duration,
) -> Option<(libc::c_int, bool, libc::pid_t)> {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: info is written by sigtimedwait before it is read; ts and set are valid.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let sig = libc::sigtimedwait(set, &mut info, &ts);
        (sig > 0).then(|| (sig, info.si_code > 0, info.si_pid()))
    }
}

/// Ends this process with `sig`, as the command it stood for did.
pub(crate) fn die_of(sig: libc::c_int) {
    // SAFETY: resets one disposition, unblocks everything and raises; no memory involved.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        libc::raise(sig);
    }
}

/// Runs in the forked child before exec: async-signal-safe calls only.
pub(crate) fn prepare_child(own_group: bool, parent: libc::pid_t) -> std::io::Result<()> {
    // SAFETY: empties this (child) process's signal mask; async-signal-safe.
    unsafe {
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    }
    if own_group {
        rustix::process::setpgid(None, None)?;
    }
    #[cfg(target_os = "linux")]
    if let Some(parent) = Pid::from_raw(parent) {
        // The command must not outlive the run that holds its workspace's lease.
        rustix::process::set_parent_process_death_signal(Some(Signal::TERM))?;
        if rustix::process::getppid() != Some(parent) {
            rustix::process::kill_process(rustix::process::getpid(), Signal::TERM)?;
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = parent;
    Ok(())
}

/// The signals a Claude Code session's holder waits for: SIGUSR1, the session ended as it
/// should (its `SessionEnd`); SIGUSR2, let the workspace go now (its `WorktreeRemove`).
#[cfg(target_os = "linux")]
pub(crate) fn session_set() -> libc::sigset_t {
    // SAFETY: the set is initialised by sigemptyset before it is added to.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGUSR1);
        libc::sigaddset(&mut set, libc::SIGUSR2);
        set
    }
}

/// Sends `sig` to `pid` (an error is ignored: the process may have ended).
pub(crate) fn signal_process(pid: u32, sig: rustix::process::Signal) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process(pid, sig);
    }
}
