//! `status --watch`: driven in a tmux pane, it redraws a run's status as it changes, asks the
//! backend only when the backend's state changed, and ends on Ctrl-C with exit code 130 and
//! the terminal restored; off a terminal, and with a bad `--interval` or a flag it cannot go
//! with, it is a usage error with a hint.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::backends::Backend;
use crate::harness::{eventually, wait_for_file, TestEnv, AW};

/// How long a pane may take to show what a test waits for (generous: the machine is shared).
const DEADLINE: Duration = Duration::from_secs(60);

/// A tmux server on a socket of the test's own, killed when dropped (also on a failure).
struct Tmux {
    socket: PathBuf,
    /// Where the command's exit code is written when it ends (`EXIT=<code>`).
    exit_file: PathBuf,
}

impl Tmux {
    /// Starts agent-workspace with `args` in `dir`, with exactly the test's environment plus
    /// `vars`, in a detached 200x50 pane that stays open after it ends.
    fn start(env: &TestEnv, dir: &Path, args: &[&str], vars: &[(&str, OsString)]) -> Tmux {
        let socket = env.path().join("tmux.sock");
        let exit_file = env.path().join("watch.exit");
        let mut all = env.vars().clone();
        all.extend(vars.iter().map(|(k, v)| (k.to_string(), v.clone())));
        let assignments: Vec<String> = all
            .iter()
            .map(|(k, v)| quote(&OsString::from(format!("{k}={}", v.to_string_lossy()))))
            .collect();
        let argv: Vec<String> = std::iter::once(OsStr::new(AW))
            .chain(args.iter().map(OsStr::new))
            .map(quote)
            .collect();
        let script = env.path().join("watch.sh");
        fs::write(
            &script,
            format!(
                // The shell outlives Ctrl-C (a trap, which its child does not inherit) to
                // write the exit code.
                "trap : INT\ncd {} || exit 99\nenv -i {} {}\necho \"EXIT=$?\" > {}\nexec sleep 600\n",
                quote(dir.as_os_str()),
                assignments.join(" "),
                argv.join(" "),
                quote(exit_file.as_os_str()),
            ),
        )
        .unwrap();
        let tmux = Tmux { socket, exit_file };
        tmux.run(&[
            "new-session",
            "-d",
            "-x",
            "200",
            "-y",
            "50",
            "sh",
            script.to_str().unwrap(),
        ]);
        tmux
    }

    /// Runs a tmux command on this server; its stdout.
    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(["-f", "/dev/null"])
            .args(args)
            .output()
            .expect("run tmux (scripts/install-tools.sh installs it)");
        assert!(
            out.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The pane's visible text.
    fn screen(&self) -> String {
        self.run(&["capture-pane", "-p"])
    }

    /// Polls the pane until `ok` holds for its text (which is returned), failing after
    /// [`DEADLINE`] with what it showed last.
    fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let what = format!("the pane to show {what}");
        eventually(&what, DEADLINE, || match self.screen() {
            screen if ok(&screen) => Ok(screen),
            screen => Err(format!("it shows:\n{screen}")),
        })
    }

    /// The exit code line the command left once it ended.
    fn exit(&self) -> String {
        wait_for_file(&self.exit_file);
        eventually(
            "the exit code line",
            DEADLINE,
            || match fs::read_to_string(&self.exit_file).unwrap_or_default() {
                text if text.ends_with('\n') => Ok(text.trim().to_string()),
                text => Err(format!("{text:?}")),
            },
        )
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

fn quote(word: &OsStr) -> String {
    format!("'{}'", word.to_string_lossy().replace('\'', r"'\''"))
}

/// The cells of workspace `id`'s row in the table on `screen`.
fn row<'a>(screen: &'a str, id: &str) -> Option<Vec<&'a str>> {
    screen
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .find(|cells| cells.first() == Some(&id))
}

fn status_of(screen: &str, id: &str) -> Option<String> {
    row(screen, id).and_then(|cells| cells.get(1).map(|s| s.to_string()))
}

fn shows_the_table(screen: &str) -> bool {
    screen.contains("WORKSPACE") && screen.contains("RUN TIME") && screen.contains("EXIT")
}

fn watch_shows_a_run_change_status_and_ends_on_ctrl_c_with_130(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let tmux = Tmux::start(
        &env,
        &repo,
        &["status", "--watch", "--interval", "0.2"],
        &[],
    );
    tmux.wait_for("the table", shows_the_table);
    let run = env
        .aw_cmd(&repo)
        .args(["run", "w", "--", "sleep", "2"])
        .spawn();
    tmux.wait_for("w running", |s| {
        status_of(s, "w").as_deref() == Some("running")
    });
    run.wait().assert_ok();
    let screen = tmux.wait_for("w done", |s| status_of(s, "w").as_deref() == Some("done"));
    // WORKSPACE STATUS WORKFLOW RUN TIME EXIT ...: the run's time and exit code.
    let cells = row(&screen, "w").unwrap();
    assert!(cells[3].ends_with('s'), "{screen}");
    assert_eq!(cells[4], "0", "{screen}");
    tmux.run(&["send-keys", "C-c"]);
    assert_eq!(tmux.exit(), "EXIT=130");
    // The terminal is restored: the alternate screen left, the cursor shown.
    let flags = tmux.run(&["display-message", "-p", "#{alternate_on} #{cursor_flag}"]);
    assert_eq!(flags.trim(), "0 1");
}

/// `q` ends watching with exit 0 and the terminal restored (keys echo again).
#[test]
fn q_quits_with_0() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    let tmux = Tmux::start(&env, &repo, &["status", "--watch", "--interval", "5"], &[]);
    tmux.wait_for("the table", |s| s.contains("q or Ctrl-C to stop"));
    tmux.run(&["send-keys", "q"]);
    assert_eq!(tmux.exit(), "EXIT=0");
    let flags = tmux.run(&["display-message", "-p", "#{alternate_on} #{cursor_flag}"]);
    assert_eq!(flags.trim(), "0 1");
}

/// A wrapper first on PATH that counts the backend's calls, then runs the real tool.
fn counting_backend(env: &TestEnv, backend: Backend) -> (OsString, PathBuf) {
    let name = backend.name();
    let real = std::env::split_paths(&env.vars()["PATH"])
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} is not on PATH"));
    let dir = env.path().join("counting-bin");
    fs::create_dir_all(&dir).unwrap();
    let count = env.path().join("calls");
    let wrapper = dir.join(name);
    fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$*\" >> {}\nexec {} \"$@\"\n",
            quote(count.as_os_str()),
            quote(real.as_os_str())
        ),
    )
    .unwrap();
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
    (env.path_with_first(&dir), count)
}

fn calls(count: &Path) -> usize {
    fs::read_to_string(count).map_or(0, |t| t.lines().count())
}

fn a_tick_asks_the_backend_only_when_its_state_changed(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let started = env.path().join("started");
    let run = env
        .aw_cmd(&repo)
        .args(["run", "w", "--", "sh", "-c"])
        .arg(format!("touch {}; exec sleep 30", started.display()))
        .spawn();
    wait_for_file(&started);
    let (path, count) = counting_backend(&env, backend);
    let args = ["status", "--watch", "--interval", "0.1"];
    let tmux = Tmux::start(&env, &repo, &args, &[("PATH", path)]);
    let first = tmux.wait_for("w running", |s| {
        status_of(s, "w").as_deref() == Some("running")
    });
    let at_start = calls(&count);
    // The run time counts up twice: at least a second of ticks (ten or more) has passed.
    let time = |s: &str| row(s, "w").map(|cells| cells[3].to_string());
    let second = tmux.wait_for("the run time counting", |s| time(s) != time(&first));
    tmux.wait_for("the run time counting on", |s| time(s) != time(&second));
    let logged = fs::read_to_string(&count).unwrap_or_default();
    assert_eq!(
        calls(&count),
        at_start,
        "calls while nothing changed:\n{logged}"
    );
    assert!(at_start <= 3, "{} calls to start with:\n{logged}", at_start);
    // A new workspace changes the backend's state: the watch knows w2 (git is asked again;
    // jj's workspaces are read from jj's own files, no process).
    env.aw(&repo, ["run", "w2", "--", "true"]).assert_ok();
    tmux.wait_for("w2 done", |s| status_of(s, "w2").as_deref() == Some("done"));
    if backend == Backend::Git {
        assert!(calls(&count) > at_start, "the backend was not asked again");
    }
    tmux.run(&["send-keys", "C-c"]);
    assert_eq!(tmux.exit(), "EXIT=130");
    run.signal("TERM");
    run.wait();
}

crate::both_backends!(
    watch_shows_a_run_change_status_and_ends_on_ctrl_c_with_130,
    a_tick_asks_the_backend_only_when_its_state_changed,
);

#[test]
fn off_a_terminal_watch_is_a_usage_error_naming_json() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let out = env.aw(&repo, ["status", "--watch"]);
    out.assert_code(2);
    assert!(out.stderr.contains("--json"), "{}", out.report());
    assert!(out.stderr.contains("\nHint: "), "{}", out.report());
    assert!(out.stdout.is_empty(), "{}", out.report());
    assert!(!out.stderr.contains('\x1b'), "{}", out.report());
}

#[test]
fn a_bad_interval_or_a_flag_watch_cannot_go_with_is_a_usage_error() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let refused: &[(&[&str], &str)] = &[
        (&["--watch", "--interval", "0"], "--interval"),
        (&["--watch", "--interval", "-1"], "--interval"),
        (&["--watch", "--interval", "abc"], "--interval"),
        (&["--watch", "--interval", "0.01"], "--interval"),
        (&["--watch", "--interval", "NaN"], "--interval"),
        (&["--watch", "--interval", "99999"], "--interval"),
        (&["--interval", "2"], "--watch"),
        (&["--watch", "--json"], "--json"),
        (&["--watch", "--size"], "--size"),
        (&["--watch", "w"], "--watch"),
    ];
    for (args, named) in refused {
        let out = env.aw_cmd(&repo).arg("status").args(*args).run();
        out.assert_code(2);
        let first = out.stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("Error: ") && first.contains(named),
            "{args:?}: {}",
            out.report()
        );
        assert!(
            out.stderr.contains("\nHint: "),
            "{args:?}: {}",
            out.report()
        );
    }
}
