//! What an agent writes is shown, never obeyed by the terminal: a commit description and a
//! file name holding escape sequences (erase the line, set the window title, reverse the
//! text) reach `diff`, `land` and `status` with every control character escaped.

use crate::backends::Backend;
use crate::harness::{Outcome, TestEnv};

/// The agent's commit: a file whose name hides an erase-line sequence, committed with a
/// description that retitles the terminal and erases a line.
fn agent_script(backend: Backend) -> String {
    let commit = match backend {
        Backend::Jj => "jj commit -m \"$msg\" >/dev/null 2>&1",
        Backend::Git => "git add -A && git commit -q -m \"$msg\"",
    };
    format!(
        "name=$(printf 'a\\033[2Kb.txt'); echo x > \"$name\"; \
         msg=$(printf 'fix\\033]0;pwned\\007 it\\033[1A\\033[2K'); {commit}"
    )
}

fn shown_escaped(what: &str, out: &Outcome) {
    for (stream, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}'),
            "{what} printed a raw control character on {stream}:\n{}",
            out.report()
        );
    }
}

fn agent_written_names_are_escaped_on_the_terminal(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(
        &repo,
        ["run", "w", "--", "sh", "-c", &agent_script(backend)],
    )
    .assert_ok();
    let diff = env.aw(&repo, ["diff", "w"]);
    diff.assert_ok();
    shown_escaped("diff", &diff);
    assert!(
        diff.stdout.contains("a\\x1b[2Kb.txt"),
        "the file is not named, escaped:\n{}",
        diff.report()
    );
    let status = env.aw(&repo, ["status", "w"]);
    status.assert_ok();
    shown_escaped("status", &status);
    let land = env.aw(&repo, ["land", "w"]);
    land.assert_ok();
    shown_escaped("land", &land);
    assert!(
        land.stdout.contains("fix\\x1b]0;pwned\\x07 it"),
        "the landed commit's description is not shown, escaped:\n{}",
        land.report()
    );
    let table = env.aw(&repo, ["status"]);
    table.assert_ok();
    shown_escaped("status (table)", &table);
}

crate::both_backends!(agent_written_names_are_escaped_on_the_terminal);
