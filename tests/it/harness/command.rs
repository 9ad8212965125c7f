//! Running a command in a [`TestEnv`]: [`Cmd`] to set it up, [`Running`] while it runs,
//! [`Outcome`] once it has ended.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::Write as _;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::report::listing;
use super::TestEnv;

/// No single command of a test may take longer than this.
const TIMEOUT: Duration = Duration::from_secs(120);

/// A command about to run in a [`TestEnv`].
pub struct Cmd<'a> {
    pub(super) env: &'a TestEnv,
    pub(super) program: OsString,
    pub(super) args: Vec<OsString>,
    pub(super) dir: PathBuf,
    pub(super) vars: BTreeMap<String, OsString>,
    pub(super) stdin: Vec<u8>,
}

impl Cmd<'_> {
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_os_string());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    /// Sets (or replaces) one environment variable.
    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Self {
        self.vars.insert(key.into(), value.as_ref().to_os_string());
        self
    }

    pub fn env_remove(mut self, key: &str) -> Self {
        self.vars.remove(key);
        self
    }

    /// Text fed to the command's stdin (empty by default; stdin is never inherited).
    pub fn stdin(mut self, text: &str) -> Self {
        self.stdin = text.as_bytes().to_vec();
        self
    }

    fn cmdline(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|a| {
                let a = a.to_string_lossy();
                if !a.is_empty()
                    && a.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+".contains(c))
                {
                    a.into_owned()
                } else {
                    format!("'{}'", a.replace('\'', r"'\''"))
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Starts the command in a process group of its own, its output going to files.
    pub fn spawn(self) -> Running {
        let (out_path, err_path) = self.env.io_paths();
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .current_dir(&self.dir)
            .env_clear()
            .envs(&self.vars)
            .stdin(Stdio::piped())
            .stdout(fs::File::create(&out_path).unwrap())
            .stderr(fs::File::create(&err_path).unwrap())
            .process_group(0);
        // Start from the default dispositions a terminal gives, whatever the test runner got
        // (a runner started with `nohup`, or as a background job of a script, ignores SIGHUP
        // or SIGINT and SIGQUIT, and an ignored signal stays ignored across exec).
        // SAFETY: signal() is async-signal-safe and acts on the child only.
        unsafe {
            command.pre_exec(|| {
                for sig in [libc::SIGHUP, libc::SIGINT, libc::SIGQUIT, libc::SIGTERM] {
                    libc::signal(sig, libc::SIG_DFL);
                }
                Ok(())
            });
        }
        let cmdline = self.cmdline();
        let mut child = command.spawn().unwrap_or_else(|e| {
            panic!("could not start `{cmdline}` in {}: {e}", self.dir.display())
        });
        let mut stdin = child.stdin.take().unwrap();
        // Small inputs fit the pipe buffer; a command that does not read them gets EPIPE.
        let _ = stdin.write_all(&self.stdin);
        drop(stdin);
        Running {
            child,
            cmdline,
            dir: self.dir,
            out_path,
            err_path,
            started: Instant::now(),
            ws_root: self.env.ws_root(),
            filters: self.env.outcome_filters(),
        }
    }

    /// Runs the command to completion (killing it after [`TIMEOUT`]).
    pub fn run(self) -> Outcome {
        self.spawn().wait()
    }
}

/// A command started with [`Cmd::spawn`].
pub struct Running {
    child: Child,
    cmdline: String,
    dir: PathBuf,
    out_path: PathBuf,
    err_path: PathBuf,
    started: Instant,
    ws_root: PathBuf,
    filters: Vec<(String, String)>,
}

impl Running {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the command has written to stderr so far.
    pub fn stderr_so_far(&self) -> String {
        fs::read_to_string(&self.err_path).unwrap_or_default()
    }

    /// Sends `signal` (a name such as TERM) to the command's process.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.pid().to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{signal} {} failed", self.pid());
    }

    /// Waits for the command to end; after [`TIMEOUT`], kills its process group and fails.
    pub fn wait(mut self) -> Outcome {
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for the command") {
                break status;
            }
            if self.started.elapsed() > TIMEOUT {
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{}", self.pid())])
                    .status();
                let _ = self.child.wait();
                panic!(
                    "`{}` in {} did not finish within {TIMEOUT:?}\nstdout:\n{}\nstderr:\n{}",
                    self.cmdline,
                    self.dir.display(),
                    fs::read_to_string(&self.out_path).unwrap_or_default(),
                    fs::read_to_string(&self.err_path).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        Outcome {
            cmdline: self.cmdline,
            dir: self.dir,
            status,
            stdout: fs::read_to_string(&self.out_path).unwrap_or_default(),
            stderr: fs::read_to_string(&self.err_path).unwrap_or_default(),
            ws_root: self.ws_root,
            filters: self.filters,
        }
    }
}

/// A finished command: what ran, where, and what it printed.
///
/// Displayed, it is the whole outcome as a snapshot holds it, through the test environment's
/// filters ([`TestEnv::outcome_filters`]): stdout, then `--- stderr ---` and stderr (when there is
/// any), then `[exit N]` (or `[killed by signal N]`).
pub struct Outcome {
    pub cmdline: String,
    pub dir: PathBuf,
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    ws_root: PathBuf,
    /// [`TestEnv::outcome_filters`] of the environment it ran in.
    filters: Vec<(String, String)>,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut text = self.stdout.clone();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push_str("\n[no newline at the end of stdout]\n");
        }
        if !self.stderr.is_empty() {
            text.push_str("--- stderr ---\n");
            text.push_str(&self.stderr);
            if !self.stderr.ends_with('\n') {
                text.push_str("\n[no newline at the end of stderr]\n");
            }
        }
        text.push_str(&match (self.status.code(), self.status.signal()) {
            (Some(code), _) => format!("[exit {code}]"),
            (None, Some(sig)) => format!("[killed by signal {sig}]"),
            _ => format!("[{}]", self.status),
        });
        f.write_str(&super::filters::apply(&self.filters, &text))
    }
}

impl Outcome {
    /// The exit code, or `None` when the command was killed by a signal.
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Everything needed to understand a failure.
    pub fn report(&self) -> String {
        let how = match (self.status.code(), self.status.signal()) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            _ => self.status.to_string(),
        };
        format!(
            "command: {}\ncwd: {}\nstatus: {how}\n--- stdout ---\n{}\n--- stderr ---\n{}\n--- {}",
            self.cmdline,
            self.dir.display(),
            self.stdout,
            self.stderr,
            listing(&self.ws_root)
        )
    }

    /// Stdout parsed as JSON, after asserting the command succeeded.
    #[track_caller]
    pub fn json(&self) -> Value {
        self.assert_ok();
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON: {e}\n{}", self.report()))
    }

    #[track_caller]
    pub fn assert_ok(&self) -> &Self {
        assert!(self.status.success(), "expected success\n{}", self.report());
        self
    }

    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.status.code(),
            Some(code),
            "expected exit code {code}\n{}",
            self.report()
        );
        self
    }
}

/// Polls until `path` exists (a command's "I am running" marker), failing after a minute.
pub fn wait_for_file(path: &Path) {
    let what = format!("{} to appear", path.display());
    super::until(&what, Duration::from_secs(60), || path.exists());
}

#[test]
fn an_outcome_shows_stdout_stderr_and_exit_code_through_the_filters() {
    let env = TestEnv::new();
    let dir = env.path();
    let both = env
        .cmd("sh", dir)
        .args(["-c", "echo out; echo \"err in $PWD\" >&2; exit 3"])
        .run();
    insta::assert_snapshot!(both, @r"
    out
    --- stderr ---
    err in [TMP]
    [exit 3]
    ");
    let quiet = env.cmd("true", dir).run();
    insta::assert_snapshot!(quiet, @"[exit 0]");
    let killed = env
        .cmd("sh", dir)
        .args(["-c", "printf x; kill -9 $$"])
        .run();
    insta::assert_snapshot!(killed, @r"
    x
    [no newline at the end of stdout]
    [killed by signal 9]
    ");
}
