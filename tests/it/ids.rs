//! Workspace ids: what is rejected, with which message, and that a rejected id creates nothing.

use crate::backends::Backend;
use crate::harness::TestEnv;

/// Ids that must be refused: 1-64 of [A-Za-z0-9._-], starting with a letter or digit.
fn bad_ids() -> Vec<String> {
    let mut ids: Vec<String> = ["", ".", "..", "a/b", "_x", ".x", "a b", "é", "a\nb", "../x"]
        .map(String::from)
        .to_vec();
    ids.push("x".repeat(65));
    ids
}

fn bad_ids_exit_2_and_create_nothing(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let mut messages = String::new();
    for id in bad_ids() {
        let attempts = [
            env.aw(&repo, ["run", &id, "--", "touch", "ran"]),
            env.aw(&repo, ["status", "--", &id]),
            env.aw(&repo, ["status", "--json", "--", &id]),
            env.aw(&repo, ["shell", "--", &id]),
            env.aw(&repo, ["clean", "--", &id]),
        ];
        for out in &attempts {
            out.assert_code(2);
            assert!(out.stdout.is_empty(), "{}", out.report());
            assert!(
                out.stderr.starts_with("Error: invalid workspace id "),
                "{}",
                out.report()
            );
            assert_eq!(out.stderr, attempts[0].stderr, "{}", out.report());
        }
        messages.push_str(&attempts[0].stderr);
    }
    // The messages come before the backend is involved: one snapshot serves both.
    insta::assert_snapshot!(messages, @r#"
    Error: invalid workspace id "": it is empty
    Hint: use 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit
    Error: invalid workspace id ".": it must start with a letter or digit
    Hint: use 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit
    Error: invalid workspace id "..": it must start with a letter or digit
    Hint: use 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit
    Error: invalid workspace id "a/b": '/' is not allowed
    Hint: use 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit
    Error: invalid workspace id "_x": it must start with a letter or digit
    Hint: use 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit
    Error: invalid workspace id ".x": it must start with a letter or digit
    Hint: use 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit
    Error: invalid workspace id "a b": ' ' is not allowed
    Hint: use 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit
    Error: invalid workspace id "é": it must start with a letter or digit
    Hint: use 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit
    Error: invalid workspace id "a\nb": '\n' is not allowed
    Hint: use 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit
    Error: invalid workspace id "../x": it must start with a letter or digit
    Hint: use 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit
    Error: invalid workspace id "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx": it is longer than 64 characters
    Hint: use 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit
    "#);
    // Nothing under the root, not even the namespace, and the backend knows no new workspace.
    assert!(!env.ws_root().exists(), "{}", env.listing());
    assert_eq!(backend.registered(&env, &repo), ["default"]);
    assert!(!repo.join("ran").exists());
}

fn an_id_starting_with_a_dash_is_refused(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    // After `--` it reaches the id check; in front of `--` clap takes it for a flag.
    insta::assert_snapshot!(env.aw(&repo, ["status", "--", "-x"]), @r#"
    --- stderr ---
    Error: invalid workspace id "-x": it must start with a letter or digit
    Hint: use 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit
    [exit 2]
    "#);
    insta::assert_snapshot!(env.aw(&repo, ["run", "-x", "--", "true"]), @r"
    --- stderr ---
    Error: unexpected argument '-x' found
    Hint: to pass '-x' as a value, use '-- -x'; usage: agent-workspace run [OPTIONS] <ID> -- <CMD>...; see `agent-workspace run --help`
    [exit 2]
    ");
    assert!(!env.ws_root().exists(), "{}", env.listing());
    assert_eq!(backend.registered(&env, &repo), ["default"]);
}

fn good_ids_are_accepted(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let longest = "x".repeat(64);
    for id in ["a", "0", "w-1", "A.b_c-9", &longest] {
        let out = env.aw(
            &repo,
            [
                "run",
                id,
                "--no-direnv",
                "--",
                "sh",
                "-c",
                "echo \"$AGENT_WORKSPACE_ID\"",
            ],
        );
        assert_eq!(out.assert_ok().stdout, format!("{id}\n"));
        assert!(env.ws_path(&repo, id).join("a.txt").is_file());
    }
    let mut names = backend.registered(&env, &repo);
    names.sort();
    let mut expected = vec!["0", "A.b_c-9", "a", "default", "w-1", &longest];
    expected.sort();
    assert_eq!(names, expected);
}

crate::both_backends!(
    bad_ids_exit_2_and_create_nothing,
    an_id_starting_with_a_dash_is_refused,
    good_ids_are_accepted,
);
