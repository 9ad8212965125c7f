//! The only module that starts processes: captured helper calls (jj, git, direnv) and the
//! user's command, with its process group, inherited descriptors and exit status.

use std::ffi::OsString;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::signals;

/// A helper call that could not run or did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("{program} was not found on PATH")]
    NotFound { program: String },
    #[error("could not run `{cmdline}`: {source}")]
    Spawn { cmdline: String, source: io::Error },
    #[error("`{cmdline}` failed ({status})")]
    Failed {
        cmdline: String,
        status: String,
        stderr: String,
        code: Option<i32>,
    },
}

impl ProcessError {
    /// The stderr of a failed call, empty otherwise.
    pub fn stderr(&self) -> &str {
        match self {
            ProcessError::Failed { stderr, .. } => stderr,
            _ => "",
        }
    }
}

/// The path of `program` on PATH.
pub fn find(program: &str) -> Result<PathBuf, ProcessError> {
    which::which(program).map_err(|_| ProcessError::NotFound {
        program: program.to_string(),
    })
}

/// A helper program invocation whose output is captured.
pub struct Call {
    program: PathBuf,
    args: Vec<OsString>,
    dir: Option<PathBuf>,
    env: Vec<(OsString, OsString)>,
}

impl Call {
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Call {
            program: program.into(),
            args: vec![],
            dir: None,
            env: vec![],
        }
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn dir(mut self, dir: &Path) -> Self {
        self.dir = Some(dir.to_path_buf());
        self
    }

    pub fn env(mut self, key: &str, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The command line as a shell would read it back (program name, quoted arguments).
    fn cmdline(&self) -> String {
        let name = self.program.file_name().unwrap_or(self.program.as_os_str());
        std::iter::once(name)
            .chain(self.args.iter().map(OsString::as_os_str))
            .map(|word| quote(&word.to_string_lossy()))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Runs the call and returns its stdout when it exits 0.
    pub fn stdout(self) -> Result<String, ProcessError> {
        self.start()?.wait()
    }

    /// Runs the call and returns its stdout and stderr when it exits 0 (for calls whose
    /// warnings matter even when they succeed).
    pub fn output(self) -> Result<(String, String), ProcessError> {
        self.start()?.wait_both()
    }

    /// Runs the call and returns its stdout, byte for byte, when it exits 0.
    pub fn stdout_bytes(self) -> Result<Vec<u8>, ProcessError> {
        self.start()?.wait_bytes()
    }

    /// Runs the call and returns its exit code and stdout when it exits 0 or with one of
    /// `codes` (e.g. `git merge-tree`, which exits 1 on conflicts and still reports).
    pub fn stdout_allowing(self, codes: &[i32]) -> Result<(i32, String), ProcessError> {
        let started = self.start()?;
        let output = started
            .child
            .wait_with_output()
            .map_err(|source| ProcessError::Spawn {
                cmdline: started.cmdline.clone(),
                source,
            })?;
        match output.status.code() {
            Some(code) if code == 0 || codes.contains(&code) => {
                Ok((code, String::from_utf8_lossy(&output.stdout).into_owned()))
            }
            code => Err(ProcessError::Failed {
                cmdline: started.cmdline,
                status: describe_status(output.status),
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
                code,
            }),
        }
    }

    /// Starts the call; [`Started::wait`] collects its outcome.
    pub fn start(self) -> Result<Started, ProcessError> {
        let cmdline = self.cmdline();
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = &self.dir {
            cmd.current_dir(dir);
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().map_err(|source| match source.kind() {
            io::ErrorKind::NotFound => ProcessError::NotFound {
                program: self.program.display().to_string(),
            },
            _ => ProcessError::Spawn {
                cmdline: cmdline.clone(),
                source,
            },
        })?;
        Ok(Started { child, cmdline })
    }
}

/// A helper call running in the background.
pub struct Started {
    child: std::process::Child,
    cmdline: String,
}

impl Started {
    /// Waits for the call and returns its stdout when it exited 0.
    pub fn wait(self) -> Result<String, ProcessError> {
        self.wait_both().map(|(stdout, _)| stdout)
    }

    /// Waits for the call and returns its stdout and stderr when it exited 0.
    pub fn wait_both(self) -> Result<(String, String), ProcessError> {
        let (stdout, stderr) = self.wait_raw()?;
        Ok((
            String::from_utf8_lossy(&stdout).into_owned(),
            String::from_utf8_lossy(&stderr).into_owned(),
        ))
    }

    /// Waits for the call and returns its stdout as bytes when it exited 0.
    pub fn wait_bytes(self) -> Result<Vec<u8>, ProcessError> {
        self.wait_raw().map(|(stdout, _)| stdout)
    }

    /// Waits for the call and returns its stdout and stderr as bytes when it exited 0.
    fn wait_raw(self) -> Result<(Vec<u8>, Vec<u8>), ProcessError> {
        let output = self
            .child
            .wait_with_output()
            .map_err(|source| ProcessError::Spawn {
                cmdline: self.cmdline.clone(),
                source,
            })?;
        if output.status.success() {
            return Ok((output.stdout, output.stderr));
        }
        Err(ProcessError::Failed {
            cmdline: self.cmdline,
            status: describe_status(output.status),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            code: output.status.code(),
        })
    }
}

/// `word` as a shell reads it: bare when it holds only safe characters, else single-quoted.
pub fn quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn describe_status(status: std::process::ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status: {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => status.to_string(),
    }
}

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
/// supervisor's pid and the lease descriptor: `<start fd>:<supervisor pid>:<lease fd or -1>`.
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

/// Runs the user's command to completion with the caller's stdio, forwarding signals.
///
/// When stdin is a terminal the command shares our process group, so job control (Ctrl-C,
/// Ctrl-Z, `fg` of a run started with `&`) works as for any shell command; otherwise it gets a
/// group of its own so a signal sent to agent-workspace reaches the command's whole tree.
/// Returns how it ended and whether the guard reported its start.
pub fn run_child(child: Child) -> io::Result<(Ending, bool)> {
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
    let (mut started, writer) = io::pipe()?;
    set_nonblocking(started.as_raw_fd());
    let parent = std::process::id() as libc::pid_t;
    let write_fd = writer.as_raw_fd();
    let lease = child.lease.unwrap_or(-1);
    let watched = if child.sandboxed { 0 } else { parent };
    cmd.env(GUARD_VAR, format!("{write_fd}:{watched}:{lease}"));
    // SAFETY: the closure only calls async-signal-safe libc functions.
    unsafe {
        cmd.pre_exec(move || {
            inherit(write_fd)?;
            if lease >= 0 {
                inherit(lease)?;
            }
            signals::prepare_child(own_group, parent)
        });
    }
    let spawned = cmd.spawn();
    drop(writer);
    let mut proc = match spawned {
        Ok(proc) => proc,
        Err(err) => return not_started(err).map(|ending| (ending, false)),
    };
    let pid = proc.id() as libc::pid_t;
    signals::set_target(if own_group { -pid } else { pid }, own_group);
    let status = proc.wait();
    signals::set_target(0, own_group);
    let status = status?;
    let ending = match (status.code(), status.signal()) {
        (Some(code), _) => Ending::Exited(code),
        (None, Some(sig)) => Ending::Signaled(sig),
        _ => Ending::Exited(1),
    };
    let mut byte = [0u8];
    Ok((ending, started.read(&mut byte).is_ok_and(|n| n == 1)))
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
}

/// In the guard: report that it started (proving a wrapper such as direnv got as far as
/// running it) and take what the supervisor handed down.
pub fn report_started() -> GuardSetup {
    let value = std::env::var(GUARD_VAR).unwrap_or_default();
    std::env::remove_var(GUARD_VAR);
    let mut fields = value.split(':').map(|f| f.parse::<i32>().ok());
    let (fd, supervisor, lease) = (
        fields.next().flatten(),
        fields.next().flatten(),
        fields.next().flatten(),
    );
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_are_quoted() {
        let call = Call::new("/usr/bin/git")
            .args(["commit", "-m"])
            .arg("it's done")
            .arg("");
        assert_eq!(call.cmdline(), r"git commit -m 'it'\''s done' ''");
    }
}
