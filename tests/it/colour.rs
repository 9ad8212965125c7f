//! Output conventions: `--color`, `NO_COLOR`, colour only on a terminal, and a reader that
//! goes away (a broken pipe) ending the output quietly.

use std::path::Path;

use crate::harness::{Outcome, TestEnv, AW};

const GREEN_DONE: &str = "\u{1b}[32mdone\u{1b}[0m";

/// Runs agent-workspace with `args` in `dir` on a pseudo-terminal (python's pty) and returns
/// what it printed there.
fn on_a_terminal(env: &TestEnv, dir: &Path, no_color: bool, args: &[&str]) -> Outcome {
    let driver = r#"
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode())
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    let mut cmd = env.cmd("python3", dir).args(["-c", driver, AW]).args(args);
    if no_color {
        cmd = cmd.env("NO_COLOR", "1");
    }
    cmd.run()
}

fn repo_with_a_done_workspace(env: &TestEnv) -> std::path::PathBuf {
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    repo
}

#[test]
fn statuses_are_coloured_on_a_terminal_only() {
    let env = TestEnv::new();
    let repo = repo_with_a_done_workspace(&env);
    let piped = env.aw(&repo, ["status"]);
    piped.assert_ok();
    assert!(!piped.stdout.contains('\u{1b}'), "{}", piped.report());
    let tty = on_a_terminal(&env, &repo, false, &["status"]);
    tty.assert_ok();
    assert!(tty.stdout.contains(GREEN_DONE), "{}", tty.report());
    // The escapes leave the columns aligned: the header's next column starts where it did.
    let header = tty.stdout.lines().next().unwrap();
    let row = tty
        .stdout
        .lines()
        .nth(1)
        .unwrap()
        .replace(GREEN_DONE, "done");
    assert_eq!(header.find("WORKFLOW"), row.find('-'), "{}", tty.stdout);
    let no_color = on_a_terminal(&env, &repo, true, &["status"]);
    no_color.assert_ok();
    assert!(!no_color.stdout.contains('\u{1b}'), "{}", no_color.report());
    let never = on_a_terminal(&env, &repo, false, &["status", "--color", "never"]);
    assert!(!never.stdout.contains('\u{1b}'), "{}", never.report());
    // JSON is never coloured.
    let json = on_a_terminal(
        &env,
        &repo,
        false,
        &["status", "--json", "--color", "always"],
    );
    assert!(!json.stdout.contains('\u{1b}'), "{}", json.report());
}

#[test]
fn color_always_colours_a_pipe_and_beats_no_color() {
    let env = TestEnv::new();
    let repo = repo_with_a_done_workspace(&env);
    let out = env
        .aw_cmd(&repo)
        .env("NO_COLOR", "1")
        .args(["--color", "always", "status"])
        .run();
    out.assert_ok();
    assert!(out.stdout.contains(GREEN_DONE), "{}", out.report());
    let bad = env.aw(&repo, ["--color", "sometimes", "status"]);
    insta::assert_snapshot!(bad, @r"
    --- stderr ---
    Error: invalid value 'sometimes' for '--color <WHEN>' [possible values: auto, always, never]
    Hint: see `agent-workspace --help`
    [exit 2]
    ");
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    let env = TestEnv::new();
    let repo = repo_with_a_done_workspace(&env);
    let driver = r#"
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
done = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE)
sys.stdout.write(f"exit {done.returncode}\n")
sys.stdout.write(done.stderr.decode())
"#;
    for args in [
        vec!["status"],
        vec!["status", "--json"],
        vec!["completions", "bash"],
        vec!["doctor"],
    ] {
        let out = env
            .cmd("python3", &repo)
            .args(["-c", driver, AW])
            .args(&args)
            .run();
        out.assert_ok();
        assert_eq!(out.stdout, "exit 0\n", "{args:?}: {}", out.report());
    }
}
