//! The only module that starts processes: captured helper calls (jj, git, direnv) and the
//! user's command, with its process group, inherited descriptors and exit status.

use std::ffi::OsString;
use std::io;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod child;
mod forward;
mod guard;

pub(crate) use child::*;
pub(crate) use forward::PROXY_VAR;
pub use guard::*;

/// A helper call that could not run or did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("{program} was not found on PATH")]
    NotFound { program: String },
    #[error("could not run `{cmdline}`: {source}")]
    Spawn { cmdline: String, source: io::Error },
    /// The call did not end within its time limit ([`Call::within`]): its process group was
    /// killed.
    #[error("`{cmdline}` did not end within {} s, so it was stopped", after.as_secs())]
    TimedOut {
        cmdline: String,
        after: std::time::Duration,
    },
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
pub(crate) fn find(program: &str) -> Result<PathBuf, ProcessError> {
    which::which(program).map_err(|_| ProcessError::NotFound {
        program: program.to_string(),
    })
}

/// A helper program invocation whose output is captured.
pub(crate) struct Call {
    program: PathBuf,
    args: Vec<OsString>,
    dir: Option<PathBuf>,
    env: Vec<(OsString, OsString)>,
    input: Option<std::fs::File>,
    passed: Option<std::os::fd::OwnedFd>,
    limit: Option<std::time::Duration>,
}

impl Call {
    pub(crate) fn new(program: impl Into<PathBuf>) -> Self {
        Call {
            program: program.into(),
            args: vec![],
            dir: None,
            env: vec![],
            input: None,
            passed: None,
            limit: None,
        }
    }

    /// Gives the call `limit` to end in: it runs in a process group of its own, which is
    /// killed once the time is up ([`ProcessError::TimedOut`]).
    pub(crate) fn within(mut self, limit: std::time::Duration) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Reads the call's stdin from `file` (else /dev/null).
    pub(crate) fn input(mut self, file: std::fs::File) -> Self {
        self.input = Some(file);
        self
    }

    /// Leaves `fd` open, at its number, in the program (bubblewrap's seccomp filter); closed
    /// here once the program started.
    pub(crate) fn pass(mut self, fd: std::os::fd::OwnedFd) -> Self {
        self.passed = Some(fd);
        self
    }

    pub(crate) fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub(crate) fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub(crate) fn dir(mut self, dir: &Path) -> Self {
        self.dir = Some(dir.to_path_buf());
        self
    }

    pub(crate) fn env(mut self, key: &str, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// This call run by `wrapper` (bubblewrap) after `prefix`: the program and its arguments
    /// follow `prefix`; the directory, environment and input stay the call's.
    pub(crate) fn inside(self, wrapper: &Path, prefix: Vec<OsString>) -> Call {
        let mut args = prefix;
        args.push(self.program.into_os_string());
        args.extend(self.args);
        Call {
            program: wrapper.to_path_buf(),
            args,
            ..self
        }
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
    pub(crate) fn stdout(self) -> Result<String, ProcessError> {
        self.start()?.wait()
    }

    /// Runs the call and returns its stdout and stderr when it exits 0 (for calls whose
    /// warnings matter even when they succeed).
    pub(crate) fn output(self) -> Result<(String, String), ProcessError> {
        self.start()?.wait_both()
    }

    /// Runs the call and returns its stdout, byte for byte, when it exits 0.
    pub(crate) fn stdout_bytes(self) -> Result<Vec<u8>, ProcessError> {
        self.start()?.wait_bytes()
    }

    /// Runs the call and returns its exit code and stdout when it exits 0 or with one of
    /// `codes` (e.g. `git merge-tree`, which exits 1 on conflicts and still reports).
    pub(crate) fn stdout_allowing(self, codes: &[i32]) -> Result<(i32, String), ProcessError> {
        let started = self.start()?;
        let cmdline = started.cmdline.clone();
        let output = started.output()?;
        match output.status.code() {
            Some(code) if code == 0 || codes.contains(&code) => {
                Ok((code, String::from_utf8_lossy(&output.stdout).into_owned()))
            }
            code => Err(ProcessError::Failed {
                cmdline,
                status: describe_status(output.status),
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
                code,
            }),
        }
    }

    /// Starts the call; [`Started::wait`] collects its outcome.
    pub(crate) fn start(self) -> Result<Started, ProcessError> {
        use std::os::unix::process::CommandExt;
        let cmdline = self.cmdline();
        let mut cmd = Command::new(&self.program);
        let stdin = match self.input {
            Some(file) => Stdio::from(file),
            None => Stdio::null(),
        };
        cmd.args(&self.args)
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = &self.dir {
            cmd.current_dir(dir);
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        if self.limit.is_some() {
            cmd.process_group(0);
        }
        if let Some(fd) = &self.passed {
            let fd = std::os::fd::AsRawFd::as_raw_fd(fd);
            // SAFETY: fcntl on a descriptor this process owns; async-signal-safe.
            unsafe {
                cmd.pre_exec(move || match libc::fcntl(fd, libc::F_SETFD, 0) {
                    -1 => Err(io::Error::last_os_error()),
                    _ => Ok(()),
                });
            }
        }
        let spawned = cmd.spawn();
        drop(self.passed);
        let child = spawned.map_err(|source| match source.kind() {
            io::ErrorKind::NotFound => ProcessError::NotFound {
                program: self.program.display().to_string(),
            },
            _ => ProcessError::Spawn {
                cmdline: cmdline.clone(),
                source,
            },
        })?;
        Ok(Started {
            child,
            cmdline,
            limit: self.limit,
        })
    }
}

impl Call {
    /// Starts the call detached: in a session of its own, its parent the init process (it is
    /// nobody's child, so stopping a run never reaches it), at the lowest CPU and (on Linux)
    /// I/O priority (background work yields to the runs it prepares for), stdin and stdout
    /// on /dev/null, stderr into `log`. Not waited for.
    pub(crate) fn detach(self, log: std::fs::File) -> Result<(), ProcessError> {
        use std::os::unix::process::CommandExt;
        let cmdline = self.cmdline();
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        if let Some(dir) = &self.dir {
            cmd.current_dir(dir);
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        // The descriptor handed on (`pass`) stays open across the exec.
        let passed = self.passed.as_ref().map(std::os::fd::AsRawFd::as_raw_fd);
        // SAFETY: between fork and exec only async-signal-safe calls: fcntl, fork, _exit, setsid,
        // setpriority and the ioprio_set system call.
        unsafe {
            cmd.pre_exec(
                move || match passed.map(|fd| libc::fcntl(fd, libc::F_SETFD, 0)) {
                    Some(-1) => Err(io::Error::last_os_error()),
                    _ => Ok(()),
                },
            );
            cmd.pre_exec(|| match libc::fork() {
                -1 => Err(io::Error::last_os_error()),
                0 => {
                    libc::setsid();
                    libc::setpriority(libc::PRIO_PROCESS, 0, 19);
                    #[cfg(target_os = "linux")]
                    {
                        // IOPRIO_WHO_PROCESS (1), this process, IOPRIO_CLASS_IDLE (3) << 13.
                        libc::syscall(libc::SYS_ioprio_set, 1, 0, 3 << 13);
                    }
                    Ok(())
                }
                _ => libc::_exit(0),
            });
        }
        let mut child = cmd
            .spawn()
            .map_err(|source| ProcessError::Spawn { cmdline, source })?;
        // The intermediate process exits at once; the detached one lives on.
        let _ = child.wait();
        drop(self.passed);
        Ok(())
    }
}

/// A helper call running in the background.
pub(crate) struct Started {
    child: std::process::Child,
    cmdline: String,
    limit: Option<std::time::Duration>,
}

impl Started {
    /// Waits for the call and returns its stdout when it exited 0.
    pub(crate) fn wait(self) -> Result<String, ProcessError> {
        self.wait_both().map(|(stdout, _)| stdout)
    }

    /// Waits for the call and returns its stdout and stderr when it exited 0.
    pub(crate) fn wait_both(self) -> Result<(String, String), ProcessError> {
        let (stdout, stderr) = self.wait_raw()?;
        Ok((
            String::from_utf8_lossy(&stdout).into_owned(),
            String::from_utf8_lossy(&stderr).into_owned(),
        ))
    }

    /// Waits for the call and returns its stdout as bytes when it exited 0.
    pub(crate) fn wait_bytes(self) -> Result<Vec<u8>, ProcessError> {
        self.wait_raw().map(|(stdout, _)| stdout)
    }

    /// Waits for the call and returns its stdout and stderr as bytes when it exited 0.
    fn wait_raw(self) -> Result<(Vec<u8>, Vec<u8>), ProcessError> {
        let cmdline = self.cmdline.clone();
        let output = self.output()?;
        if output.status.success() {
            return Ok((output.stdout, output.stderr));
        }
        Err(ProcessError::Failed {
            cmdline,
            status: describe_status(output.status),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            code: output.status.code(),
        })
    }

    /// Waits for the call to end and collects what it printed; with a time limit, kills its
    /// process group once the time is up.
    fn output(self) -> Result<std::process::Output, ProcessError> {
        let Started {
            child,
            cmdline,
            limit,
        } = self;
        let spawn_error = |source| ProcessError::Spawn {
            cmdline: cmdline.clone(),
            source,
        };
        let Some(limit) = limit else {
            return child.wait_with_output().map_err(spawn_error);
        };
        // The group is the call's own (`process_group(0)`): its pid is the group's id.
        let group = i32::try_from(child.id()).ok();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || drop(tx.send(child.wait_with_output())));
        match rx.recv_timeout(limit) {
            Ok(output) => return output.map_err(spawn_error),
            Err(_) => {
                if let Some(group) = group {
                    // SAFETY: kill(2) on a process group this process made.
                    unsafe {
                        libc::kill(-group, libc::SIGKILL);
                    }
                }
            }
        }
        // The waiter ends once the call is reaped and its pipes close; one that escaped the
        // group may hold a pipe open, so it is given a moment, not waited for.
        let _ = rx.recv_timeout(std::time::Duration::from_secs(5));
        Err(ProcessError::TimedOut {
            cmdline,
            after: limit,
        })
    }
}

/// `word` as a shell reads it: bare when it holds only safe characters, else single-quoted.
pub(crate) fn quote(word: &str) -> String {
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
