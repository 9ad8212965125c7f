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
    /// The command's kind, for the profile.
    what: String,
}

/// Starts `program args` in `dir` with the test environment, in a process group of its own.
pub fn spawn(env: &TestEnv, dir: &Path, program: &str, args: &[String]) -> Started {
    spawn_with(env, dir, program, args, None)
}

/// [`spawn`], with `input` (if any) as the command's standard input.
fn spawn_with(
    env: &TestEnv,
    dir: &Path,
    program: &str,
    args: &[String],
    input: Option<&str>,
) -> Started {
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let io = env.path().join(".stress-io");
    fs::create_dir_all(&io).expect("create the output dir");
    let out = io.join(format!("{n}.out"));
    let err = io.join(format!("{n}.err"));
    let stdin = match input {
        Some(text) => {
            let path = io.join(format!("{n}.in"));
            fs::write(&path, text).expect("write the input file");
            let file = fs::File::open(&path).expect("open the input file");
            // The open file stays readable once its name is gone.
            let _ = fs::remove_file(&path);
            Stdio::from(file)
        }
        None => Stdio::null(),
    };
    let child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .envs(env.vars())
        .stdin(stdin)
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
        what: profile::what(program, args),
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
            // Most commands of a round end within milliseconds: poll finely at first.
            let waited = self.started.elapsed();
            std::thread::sleep(if waited < Duration::from_millis(20) {
                Duration::from_micros(300)
            } else {
                Duration::from_millis(3)
            });
        };
        profile::add(&self.what, self.started.elapsed());
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

/// Runs `program args` in `dir` to completion with `input` on its standard input.
pub fn run_input(env: &TestEnv, dir: &Path, program: &str, args: &[String], input: &str) -> Out {
    spawn_with(env, dir, program, args, Some(input)).wait()
}

/// With `STRESS_PROFILE=1`, where a round's time goes: the commands it ran by kind (program
/// and subcommand) and the oracle's own work, as a table printed with the figures.
pub mod profile {
    use std::collections::BTreeMap;
    use std::sync::Mutex;
    use std::time::Duration;

    static TIMES: Mutex<BTreeMap<String, (u64, Duration)>> = Mutex::new(BTreeMap::new());

    pub fn on() -> bool {
        std::env::var("STRESS_PROFILE").is_ok_and(|v| v == "1")
    }

    /// A command's kind: the program and its first argument that is no option.
    pub fn what(program: &str, args: &[String]) -> String {
        let program = program.rsplit('/').next().unwrap_or(program);
        let sub = args
            .iter()
            .find(|a| !a.starts_with('-'))
            .map(String::as_str)
            .unwrap_or("");
        format!("{program} {sub}")
    }

    /// Adds `took` to the time of `what`.
    pub fn add(what: &str, took: Duration) {
        if !on() {
            return;
        }
        let mut times = TIMES.lock().unwrap_or_else(|e| e.into_inner());
        let entry = times.entry(what.to_string()).or_default();
        entry.0 += 1;
        entry.1 += took;
    }

    /// The times so far, longest first, and clears them.
    pub fn take() -> String {
        let mut times = TIMES.lock().unwrap_or_else(|e| e.into_inner());
        let mut rows: Vec<(String, (u64, Duration))> =
            std::mem::take(&mut *times).into_iter().collect();
        rows.sort_by_key(|(_, (_, d))| std::cmp::Reverse(*d));
        rows.iter()
            .map(|(what, (n, d))| {
                format!(
                    "  {:>8.1} s {:>7} x {:>7.1} ms  {what}\n",
                    d.as_secs_f64(),
                    n,
                    d.as_secs_f64() * 1000.0 / (*n).max(1) as f64
                )
            })
            .collect()
    }
}

/// `args` as owned strings.
pub fn argv(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}
