//! Running the commands of a round: to completion, or started and SIGKILLed at a moment.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::TestEnv;

/// No command of a round may take longer than this.
const TIMEOUT: Duration = Duration::from_secs(300);

/// How a command ended and what it printed.
pub struct Out {
    /// The exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// Whether the round killed it.
    pub killed: bool,
}

impl Out {
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }

    /// The exit status as the step log shows it.
    pub fn how(&self) -> String {
        match (self.killed, self.code) {
            (true, _) => "SIGKILLed".into(),
            (false, Some(c)) => format!("exit {c}"),
            (false, None) => "killed by a signal".into(),
        }
    }

    /// Stdout and stderr, for matching messages.
    pub fn text(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

/// A command started by [`spawn`].
pub struct Started {
    child: Child,
    out: std::path::PathBuf,
    err: std::path::PathBuf,
    started: Instant,
}

/// Starts `program args` in `dir` with the test environment, in a process group of its own.
pub fn spawn(env: &TestEnv, dir: &Path, program: &str, args: &[String]) -> Started {
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let io = env.path().join(".stress-io");
    fs::create_dir_all(&io).expect("create the output dir");
    let out = io.join(format!("{n}.out"));
    let err = io.join(format!("{n}.err"));
    let child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .envs(env.vars())
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out).expect("create the stdout file"))
        .stderr(fs::File::create(&err).expect("create the stderr file"))
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("could not start {program} {args:?}: {e}"));
    Started {
        child,
        out,
        err,
        started: Instant::now(),
    }
}

impl Started {
    fn finish(mut self, killed: bool) -> Out {
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for a command") {
                break status;
            }
            if self.started.elapsed() > TIMEOUT {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "a command did not finish within {TIMEOUT:?}:\n{}",
                    fs::read_to_string(&self.err).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(3));
        };
        let pgid = self.child.id() as i32;
        if killed {
            // What the killed command started may still run for a moment: wait for its group.
            let deadline = Instant::now() + Duration::from_secs(5);
            // SAFETY: kill with signal 0 only asks whether the group still has a process.
            while unsafe { libc::kill(-pgid, 0) } == 0 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let out = Out {
            code: status.code(),
            stdout: fs::read_to_string(&self.out).unwrap_or_default(),
            stderr: fs::read_to_string(&self.err).unwrap_or_default(),
            killed,
        };
        // A long round runs hundreds of thousands of commands: keep no file per command.
        let _ = fs::remove_file(&self.out);
        let _ = fs::remove_file(&self.err);
        out
    }

    /// Waits for the command to end.
    pub fn wait(self) -> Out {
        self.finish(false)
    }

    /// SIGKILLs the command (its own process, as a crash would) after `delay`, unless it ended
    /// before; the outcome says which.
    pub fn kill_after(mut self, delay: Duration) -> Out {
        let until = Instant::now() + delay;
        while Instant::now() < until {
            if self.child.try_wait().expect("poll a command").is_some() {
                return self.finish(false);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        if self.child.try_wait().expect("poll a command").is_some() {
            return self.finish(false);
        }
        // SAFETY: the pid is our own child's, not yet reaped (try_wait said it runs).
        unsafe { libc::kill(self.child.id() as i32, libc::SIGKILL) };
        self.finish(true)
    }
}

/// Runs `program args` in `dir` to completion.
pub fn run(env: &TestEnv, dir: &Path, program: &str, args: &[String]) -> Out {
    spawn(env, dir, program, args).wait()
}

/// `args` as owned strings.
pub fn argv(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}
