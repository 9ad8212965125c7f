//! The only module that starts processes: captured helper calls (jj, git, direnv) and the
//! user's command, with its process group, signal forwarding and exit status.

use std::ffi::OsString;
use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::CliError;
use crate::signals;

/// A helper call that could not run or did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("`{program}` was not found on PATH")]
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

    pub fn into_cli_error(self) -> CliError {
        let stderr = self.stderr().to_string();
        CliError::failure(self.to_string()).cause(stderr)
    }
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

    fn cmdline(&self) -> String {
        let name = self.program.file_name().unwrap_or(self.program.as_os_str());
        let mut line = name.to_string_lossy().into_owned();
        for arg in &self.args {
            line.push(' ');
            line.push_str(&arg.to_string_lossy());
        }
        line
    }

    /// Runs the call and returns its stdout when it exits 0.
    pub fn stdout(self) -> Result<String, ProcessError> {
        self.start()?.wait()
    }

    /// Starts the call; [`Started::wait`] collects its outcome.
    pub fn start(self) -> Result<Started, ProcessError> {
        let cmdline = self.cmdline();
        let mut expr = duct::cmd(&self.program, &self.args)
            .stdin_null()
            .stdout_capture()
            .stderr_capture()
            .unchecked();
        if let Some(dir) = &self.dir {
            expr = expr.dir(dir);
        }
        for (k, v) in &self.env {
            expr = expr.env(k, v);
        }
        let handle = expr.start().map_err(|source| match source.kind() {
            io::ErrorKind::NotFound => ProcessError::NotFound {
                program: self.program.display().to_string(),
            },
            _ => ProcessError::Spawn {
                cmdline: cmdline.clone(),
                source,
            },
        })?;
        Ok(Started { handle, cmdline })
    }
}

/// A helper call running in the background.
pub struct Started {
    handle: duct::Handle,
    cmdline: String,
}

impl Started {
    /// Waits for the call and returns its stdout when it exited 0.
    pub fn wait(self) -> Result<String, ProcessError> {
        let output = self
            .handle
            .into_output()
            .map_err(|source| ProcessError::Spawn {
                cmdline: self.cmdline.clone(),
                source,
            })?;
        if output.status.success() {
            return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
        }
        Err(ProcessError::Failed {
            cmdline: self.cmdline,
            status: describe_status(output.status),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            code: output.status.code(),
        })
    }
}

fn describe_status(status: std::process::ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status: {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => status.to_string(),
    }
}

/// The user's command and how to start it.
pub struct Child {
    pub argv: Vec<OsString>,
    pub dir: PathBuf,
    pub env: Vec<(OsString, OsString)>,
    /// Pass the trampoline a pipe to report that it started, proving the wrapper (direnv)
    /// got as far as running it.
    pub mark_start: bool,
}

/// The environment variable naming the pipe the trampoline reports its start on.
pub const STARTED_FD_VAR: &str = "AGENT_WORKSPACE_STARTED_FD";

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
/// When stdin is a terminal we are in the foreground of, the command shares our process group
/// so job control (Ctrl-C, Ctrl-Z) works as in a shell; otherwise it gets a group of its own so
/// a signal sent to agent-workspace reaches the command's whole process tree.
/// Returns how it ended and, when `mark_start` was asked, whether the trampoline started.
pub fn run_child(child: Child) -> io::Result<(Ending, bool)> {
    let own_group = !signals::foreground_terminal();
    let mut cmd = Command::new(&child.argv[0]);
    cmd.args(&child.argv[1..]).current_dir(&child.dir);
    for (k, v) in &child.env {
        cmd.env(k, v);
    }
    let marker = if child.mark_start {
        Some(StartPipe::new()?)
    } else {
        None
    };
    let parent = std::process::id() as libc::pid_t;
    if let Some(pipe) = &marker {
        cmd.env(STARTED_FD_VAR, format!("{}:{parent}", pipe.write));
    }
    // SAFETY: the closure only calls async-signal-safe libc functions.
    unsafe {
        cmd.pre_exec(move || signals::prepare_child(own_group, parent));
    }
    let spawned = cmd.spawn();
    let mut marker = marker;
    if let Some(pipe) = &mut marker {
        pipe.close_write();
    }
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
    Ok((ending, marker.is_some_and(|pipe| pipe.started())))
}

fn not_started(err: io::Error) -> io::Result<Ending> {
    match err.kind() {
        io::ErrorKind::NotFound => Ok(Ending::NotStarted(127)),
        io::ErrorKind::PermissionDenied => Ok(Ending::NotStarted(126)),
        _ if err.raw_os_error() == Some(libc::ENOEXEC) => Ok(Ending::NotStarted(126)),
        _ => Err(err),
    }
}

/// A pipe whose write end the child inherits; the trampoline writes one byte to it.
struct StartPipe {
    read: i32,
    write: i32,
}

impl StartPipe {
    fn new() -> io::Result<StartPipe> {
        let mut fds = [0; 2];
        // SAFETY: fds has room for the two descriptors pipe() writes.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both descriptors were just opened by us.
        unsafe {
            libc::fcntl(fds[0], libc::F_SETFD, libc::FD_CLOEXEC);
            libc::fcntl(fds[0], libc::F_SETFL, libc::O_NONBLOCK);
        }
        Ok(StartPipe {
            read: fds[0],
            write: fds[1],
        })
    }

    fn close_write(&mut self) {
        if self.write >= 0 {
            // SAFETY: we own this descriptor and close it once.
            unsafe { libc::close(self.write) };
            self.write = -1;
        }
    }

    fn started(&self) -> bool {
        let mut byte = 0u8;
        // SAFETY: reads at most one byte into a valid buffer from our own descriptor.
        unsafe { libc::read(self.read, (&mut byte as *mut u8).cast(), 1) == 1 }
    }
}

impl Drop for StartPipe {
    fn drop(&mut self) {
        self.close_write();
        // SAFETY: we own the read end.
        unsafe { libc::close(self.read) };
    }
}

/// In the trampoline: report that the command is about to start, and return the pid of the
/// supervising agent-workspace (the wrapper in between may have lost its parent-death signal).
pub fn report_started() -> Option<libc::pid_t> {
    let value = std::env::var(STARTED_FD_VAR).ok()?;
    std::env::remove_var(STARTED_FD_VAR);
    let (fd, parent) = value.split_once(':')?;
    let (fd, parent) = (fd.parse::<i32>().ok()?, parent.parse::<libc::pid_t>().ok()?);
    // SAFETY: the descriptor was inherited for exactly this write; closing it keeps it out of
    // the command.
    unsafe {
        libc::write(fd, b"1".as_ptr().cast(), 1);
        libc::close(fd);
    }
    Some(parent)
}

/// Replaces this process with `argv` (the trampoline behind `direnv exec`, and nested runs).
/// Returns only on failure, after saying why, with the exit code env(1) uses: 127 not found,
/// 126 otherwise. `parent`, when given, is the supervisor the command must not outlive.
pub fn exec(argv: &[OsString], dir: Option<&Path>, parent: Option<libc::pid_t>) -> i32 {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    let parent = parent.unwrap_or(0);
    // SAFETY: only async-signal-safe calls: restore the default signal mask before exec.
    unsafe {
        cmd.pre_exec(move || signals::prepare_child(false, parent));
    }
    let err = cmd.exec();
    let (code, why) = match err.kind() {
        io::ErrorKind::NotFound => (127, "command not found".to_string()),
        io::ErrorKind::PermissionDenied => (126, "permission denied".to_string()),
        _ => (126, err.to_string()),
    };
    eprintln!("agent-workspace: {}: {why}", argv[0].to_string_lossy());
    code
}
