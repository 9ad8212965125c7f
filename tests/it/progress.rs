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

const ERASE: &str = "\r\x1b[K";
const SETTING_UP: &str = "workspace w: running the setup command...";

#[test]
fn on_a_terminal_a_slow_setup_shows_a_progress_line_erased_before_the_command_s_output() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    slow_setup(&env);
    let command = format!("{AW} run w -- echo from-the-command");
    // `script` runs the command on a terminal of its own and copies what it showed to stdout.
    let out = env
        .cmd("script", &repo)
        .args(["-qec", &command, "/dev/null"])
        .run();
    out.assert_ok();
    let text = &out.stdout;
    let last = text
        .rfind(SETTING_UP)
        .unwrap_or_else(|| panic!("no progress line:\n{text:?}"));
    let output = text
        .find("from-the-command")
        .unwrap_or_else(|| panic!("no output:\n{text:?}"));
    assert!(last < output, "{text:?}");
    // Erased after its last drawing, before the command printed anything.
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

#[test]
fn off_a_terminal_no_progress_line_and_no_escapes_reach_stderr() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    slow_setup(&env);
    let out = env.aw(&repo, ["run", "w", "--", "echo", "from-the-command"]);
    out.assert_ok();
    assert_eq!(out.stdout, "from-the-command\n", "{}", out.report());
    assert!(!out.stderr.contains("setup command"), "{}", out.report());
    assert!(!out.stderr.contains('\x1b'), "{}", out.report());
    assert!(!out.stderr.contains('\r'), "{}", out.report());
}

/// `pool fill` prepares workspaces (checkout, copies, setup): on a terminal the same line says
/// so and is erased before the fill's report; off a terminal nothing of it is written.
#[test]
fn pool_fill_shows_the_line_on_a_terminal_only() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    slow_setup(&env);
    let command = format!("{AW} pool fill 1");
    let out = env
        .cmd("script", &repo)
        .args(["-qec", &command, "/dev/null"])
        .run();
    out.assert_ok();
    let text = &out.stdout;
    let last = text
        .rfind("pool: running the setup command...")
        .unwrap_or_else(|| panic!("no progress line:\n{text:?}"));
    let report = text
        .find("1 prepared workspaces ready")
        .unwrap_or_else(|| panic!("no report:\n{text:?}"));
    let erased = text[last..]
        .find(ERASE)
        .map(|i| last + i)
        .unwrap_or_else(|| panic!("never erased:\n{text:?}"));
    assert!(erased < report, "{text:?}");
    env.aw(&repo, ["pool", "drain"]).assert_ok();
    let out = env.aw(&repo, ["pool", "fill", "1"]);
    out.assert_ok();
    assert!(!out.stderr.contains("setup command"), "{}", out.report());
    assert!(!out.stderr.contains('\x1b'), "{}", out.report());
}
