//! A run's processes never outlive its supervisor, `clean --force` stops a whole tree, exit
//! codes tell the truth, and a run started in the background resumes with `fg`.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::backends::Backend;
use crate::harness::{eventually, wait_for_file, TestEnv};

/// Processes whose working directory is `dir` (or was, if it was deleted).
fn processes_in(dir: &Path) -> Vec<u32> {
    let mut found = vec![];
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let Ok(cwd) = fs::read_link(entry.path().join("cwd")) else {
            continue;
        };
        let cwd = cwd
            .to_string_lossy()
            .trim_end_matches(" (deleted)")
            .to_string();
        if Path::new(&cwd).starts_with(dir) && !zombie(pid) {
            found.push(pid);
        }
    }
    found
}

fn zombie(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s[s.rfind(')').unwrap_or(0) + 1..]
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(true)
}

/// Polls until no process works in `dir`, failing after `limit`.
fn wait_until_no_process_in(dir: &Path, limit: Duration) {
    let what = format!("no process working in {}", dir.display());
    eventually(&what, limit, || match processes_in(dir) {
        left if left.is_empty() => Ok(()),
        left => Err(format!("{left:?}")),
    })
}

fn size(path: &Path) -> u64 {
    fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// A command that leaves a writing grandchild and a double-forked, setsid daemon behind.
fn spawner(tmp: &Path) -> String {
    format!(
        "(while :; do echo g >> grand.log; sleep 0.02; done) & \
         setsid sh -c '(while :; do echo d >> daemon.log; sleep 0.02; done) &' ; \
         touch {}/started; while :; do sleep 0.05; done",
        tmp.display()
    )
}

fn a_killed_supervisor_leaves_no_process_behind(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let ws = env.ws_path(&repo, "w1");
    let running = env
        .aw_cmd(&repo)
        .args(["run", "w1", "--", "sh", "-c", &spawner(env.path())])
        .spawn();
    wait_for_file(&env.path().join("started"));
    wait_for_file(&ws.join("daemon.log"));
    running.signal("KILL");
    running.wait();
    wait_until_no_process_in(&ws, Duration::from_secs(10));
    let (grand, daemon) = (size(&ws.join("grand.log")), size(&ws.join("daemon.log")));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        size(&ws.join("grand.log")),
        grand,
        "the grandchild kept writing"
    );
    assert_eq!(
        size(&ws.join("daemon.log")),
        daemon,
        "the daemon kept writing"
    );
    let status: Value = env.aw(&repo, ["status", "w1", "--json"]).json();
    assert_eq!(status["status"], "crashed", "{status}");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
}

fn a_run_ends_the_daemons_its_command_left(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let ws = env.ws_path(&repo, "w1");
    // The command ends once the daemon has written (under load its first line can take
    // longer than any fixed sleep: kill loop round 9, `written > 0` failed), or after 30 s
    // without a line (the assertion below then fails instead of the test hanging).
    let script = "setsid sh -c '(while :; do echo d >> daemon.log; sleep 0.02; done) &'; \
                  i=0; while [ ! -s daemon.log ] && [ $i -lt 3000 ]; do \
                  sleep 0.01; i=$((i + 1)); done; exit 4";
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", script])
        .assert_code(4);
    assert!(processes_in(&ws).is_empty(), "{:?}", processes_in(&ws));
    let written = size(&ws.join("daemon.log"));
    assert!(written > 0);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(size(&ws.join("daemon.log")), written);
}

fn while_its_processes_end_a_crashed_run_still_holds_the_workspace(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let ws = env.ws_path(&repo, "w1");
    // A grandchild that ignores SIGTERM keeps the run's processes alive for the guard's
    // grace period after the supervisor dies.
    let script = format!(
        "sh -c 'trap \"\" TERM; while :; do sleep 0.02; done' & touch {}/started; wait",
        env.path().display()
    );
    let running = env
        .aw_cmd(&repo)
        .args(["run", "w1", "--", "sh", "-c", &script])
        .spawn();
    wait_for_file(&env.path().join("started"));
    running.signal("KILL");
    running.wait();
    let status: Value = env.aw(&repo, ["status", "w1", "--json"]).json();
    assert!(
        !processes_in(&ws).is_empty(),
        "the grandchild ended too early"
    );
    assert_eq!(status["status"], "running", "{status}");
    // A new run waits for them to end rather than starting beside them.
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    assert!(processes_in(&ws).is_empty(), "{:?}", processes_in(&ws));
}

fn clean_force_stops_a_tree_that_ignores_sigterm(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let ws = env.ws_path(&repo, "w1");
    let script = format!(
        "trap '' TERM; (while :; do echo z >> busy.log; sleep 0.02; done) & \
         touch {}/started; while :; do sleep 0.05; done",
        env.path().display()
    );
    let running = env
        .aw_cmd(&repo)
        .args(["run", "w1", "--", "sh", "-c", &script])
        .spawn();
    wait_for_file(&env.path().join("started"));
    let out = env.aw(&repo, ["clean", "--force", "w1"]);
    out.assert_ok();
    assert!(!ws.exists(), "{}", out.report());
    assert!(processes_in(&ws).is_empty(), "{:?}", processes_in(&ws));
    running.wait();
}

fn a_failed_final_record_returns_the_commands_own_code(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let out = env.aw(
        &repo,
        [
            "run",
            "w1",
            "--",
            "sh",
            "-c",
            "rm -rf \"$AGENT_WORKSPACE_PATH\"; exit 3",
        ],
    );
    out.assert_code(3);
    assert!(
        out.stderr
            .contains("Warning: the run ended (exit code 3) but its outcome could not be recorded"),
        "{}",
        out.report()
    );
    assert!(out.stderr.contains("\nHint: "), "{}", out.report());
}

fn bulk_clean_skips_a_workspace_another_process_holds(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let lease = env.namespace_dir(&repo).join(".locks/w1.lock");
    // Another agent-workspace process (creating or cleaning it) holds the lease. `-o`: only
    // flock itself holds it (its shell and sleep do not inherit it), so reaping flock below
    // proves the lease is free.
    let holder = env
        .cmd("flock", env.path())
        .arg("-o")
        .arg(&lease)
        .args([
            "-c",
            &format!("touch {}/held; sleep 30", env.path().display()),
        ])
        .spawn();
    wait_for_file(&env.path().join("held"));
    for force in [false, true] {
        let mut args = vec!["clean", "--all", "--json"];
        if force {
            args.push("--force");
        }
        let out = env.aw(&repo, &args);
        let doc = out.json();
        assert_eq!(doc["skipped"][0]["workspace_id"], "w1", "{doc}");
        assert!(env.ws_path(&repo, "w1").exists());
    }
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", holder.pid())])
        .status();
    holder.wait();
    env.aw(&repo, ["clean", "--all"]).assert_ok();
    assert!(!env.ws_path(&repo, "w1").exists());
}

fn a_signal_the_command_ignores_is_recorded_and_exit_0_means_done(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let script = format!(
        "trap '' TERM; touch {}/started; sleep 1; exit 0",
        env.path().display()
    );
    let running = env
        .aw_cmd(&repo)
        .args(["run", "w1", "--", "sh", "-c", &script])
        .spawn();
    wait_for_file(&env.path().join("started"));
    running.signal("TERM");
    running.wait().assert_ok();
    let record = env.aw(&repo, ["status", "w1", "--json"]).json()["record"].clone();
    assert_eq!(record["status"], "done", "{record}");
    assert_eq!(record["exit_code"], 0, "{record}");
    assert_eq!(record["signal"], 15, "{record}");
}

/// A run whose supervisor is dead while its lease is still held (its guard, or anything else,
/// ending slowly) is reported as such after the wait, not as a live run of the dead pid.
#[test]
fn a_crashed_run_whose_lease_stays_held_is_not_named_as_live() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let ws = env.ws_path(&repo, "w1");
    let script = format!("touch {}/started; sleep 60", env.path().display());
    let running = env
        .aw_cmd(&repo)
        .args(["run", "w1", "--", "sh", "-c", &script])
        .spawn();
    wait_for_file(&env.path().join("started"));
    let dead = running.pid().to_string();
    running.signal("KILL");
    running.wait();
    wait_until_no_process_in(&ws, Duration::from_secs(10));
    let lease = env.namespace_dir(&repo).join(".locks/w1.lock");
    let holder = env
        .cmd("flock", env.path())
        .arg("-o")
        .arg(&lease)
        .args([
            "-c",
            &format!("touch {}/held; sleep 60", env.path().display()),
        ])
        .spawn();
    wait_for_file(&env.path().join("held"));
    let out = env.aw(&repo, ["run", "w1", "--", "true"]);
    out.assert_code(125);
    assert!(
        out.stderr.contains(
            "Error: workspace \"w1\" is busy: the processes of its last run are still ending"
        ),
        "{}",
        out.report()
    );
    assert!(!out.stderr.contains(&dead), "{}", out.report());
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", holder.pid())])
        .status();
    holder.wait();
}

crate::both_backends!(
    a_killed_supervisor_leaves_no_process_behind,
    a_run_ends_the_daemons_its_command_left,
    while_its_processes_end_a_crashed_run_still_holds_the_workspace,
    clean_force_stops_a_tree_that_ignores_sigterm,
    a_failed_final_record_returns_the_commands_own_code,
    bulk_clean_skips_a_workspace_another_process_holds,
    a_signal_the_command_ignores_is_recorded_and_exit_0_means_done,
);

/// Drives an interactive bash in a pseudo-terminal: starts a run that reads the terminal in
/// the background, brings it to the foreground with `fg`, and types its input.
const PTY_DRIVER: &str = r#"
import os, pty, sys, time, select
aw, repo, out = sys.argv[1], sys.argv[2], sys.argv[3]
pid, fd = pty.fork()
if pid == 0:
    os.chdir(repo)
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
def send(text):
    os.write(fd, text.encode())
def drain(seconds):
    end = time.time() + seconds
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                os.read(fd, 4096)
            except OSError:
                return
drain(0.5)
send(f"{aw} run w1 --no-direnv -- sh -c 'read x; echo got-$x > {out}' &\n")
drain(3)
send("fg\n")
drain(1)
send("hello\n")
def written():
    # The redirection creates the file before echo writes its line: wait for the whole line.
    return open(out).read() if os.path.exists(out) else ""
end = time.time() + 20
while time.time() < end and not written().endswith("\n"):
    drain(0.1)
send("exit\n")
drain(0.5)
print(written().strip() or "no output")
"#;

#[test]
fn a_background_run_that_reads_the_terminal_resumes_with_fg() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let out: PathBuf = env.path().join("out.txt");
    let driver = env
        .cmd("python3", env.path())
        .args(["-c", PTY_DRIVER])
        .arg(crate::harness::AW)
        .arg(&repo)
        .arg(&out)
        .run();
    driver.assert_ok();
    assert_eq!(driver.stdout.trim(), "got-hello", "{}", driver.report());
}
