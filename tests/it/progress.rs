//! The progress line while a slow creation works: on a terminal (given by `script`) it says
//! what is under way and is erased before the command's own output; off a terminal stderr
//! holds no trace of it and no escape sequence.

use std::fs;

use crate::harness::{TestEnv, AW};

/// A setup slow enough for the line to appear (it shows after a fraction of a second).
fn slow_setup(env: &TestEnv) {
    let dir = env.path().join("xdg/config/agent-workspace");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("config.toml"), "[setup]\ncommand = \"sleep 1\"\n").unwrap();
}

pub(crate) const ERASE: &str = "\r\x1b[K";
const SETTING_UP: &str = "workspace w: running the setup command...";

#[test]
fn on_a_terminal_a_slow_setup_shows_a_progress_line_erased_before_the_command_s_output() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    slow_setup(&env);
    let text = on_a_terminal(&env, &repo, "run w -- echo from-the-command");
    assert_erased_before(&text, SETTING_UP, "from-the-command");
}

#[test]
fn off_a_terminal_no_progress_line_and_no_escapes_reach_stderr() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    slow_setup(&env);
    let out = env.aw(&repo, ["run", "w", "--", "echo", "from-the-command"]);
    assert_no_line(&out);
    assert_eq!(out.stdout, "from-the-command\n", "{}", out.report());
}

/// `pool fill` prepares workspaces (checkout, copies, setup): on a terminal the same line says
/// so and is erased before the fill's report; off a terminal nothing of it is written.
#[test]
fn pool_fill_shows_the_line_on_a_terminal_only() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    slow_setup(&env);
    let text = on_a_terminal(&env, &repo, "pool fill 1");
    assert_erased_before(&text, "pool: running the setup command...", "prepared /");
    env.aw(&repo, ["pool", "drain"]).assert_ok();
    assert_no_line(&env.aw(&repo, ["pool", "fill", "1"]));
}

/// What agent-workspace `args` showed on a terminal of its own (`script` runs it on one and
/// copies the terminal's output to stdout).
fn on_a_terminal(env: &TestEnv, repo: &std::path::Path, args: &str) -> String {
    let out = env
        .cmd("script", repo)
        .args(["-qec", &format!("{AW} {args}"), "/dev/null"])
        .run();
    out.assert_ok();
    out.stdout.clone()
}

/// `line` was drawn, then erased after its last drawing, with nothing but erasing between
/// that and `output`, the first thing printed after it.
#[track_caller]
fn assert_erased_before(text: &str, line: &str, output: &str) {
    let last = text
        .rfind(line)
        .unwrap_or_else(|| panic!("no progress line:\n{text:?}"));
    let output = text
        .find(output)
        .unwrap_or_else(|| panic!("no output:\n{text:?}"));
    assert!(last < output, "{text:?}");
    let erased = text[last..]
        .find(ERASE)
        .map(|i| last + i)
        .unwrap_or_else(|| panic!("never erased:\n{text:?}"));
    assert!(erased < output, "{text:?}");
    assert_eq!(
        text[erased..output].trim_start_matches(ERASE),
        "",
        "{text:?}"
    );
}

/// Off a terminal: no trace of the line on stderr, and no escape sequence.
#[track_caller]
fn assert_no_line(out: &crate::harness::Outcome) {
    out.assert_ok();
    assert!(!out.stderr.contains("setup command"), "{}", out.report());
    assert!(!out.stderr.contains('\x1b'), "{}", out.report());
    assert!(!out.stderr.contains('\r'), "{}", out.report());
}
