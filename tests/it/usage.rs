//! Bad usage is reported like every other error: `Error:`, `Hint:`, exit 2, nothing touched.

use crate::backends::Backend;
use crate::harness::TestEnv;

/// Runs the tool with `args` outside any repository and returns its stderr, asserting exit 2
/// and an empty stdout.
fn usage_error(env: &TestEnv, args: &[&str]) -> String {
    let out = env.aw(env.path(), args);
    out.assert_code(2);
    assert_eq!(out.stdout, "", "{}", out.report());
    assert!(!env.ws_root().exists(), "{}", env.listing());
    out.stderr
}

#[test]
fn clap_errors_go_through_the_renderer() {
    let env = TestEnv::new();
    insta::assert_snapshot!(usage_error(&env, &["no-such-subcommand"]), @r"
    Error: unrecognized subcommand 'no-such-subcommand'
    Hint: usage: agent-workspace [OPTIONS] <COMMAND>; see `agent-workspace --help`
    ");
    insta::assert_snapshot!(usage_error(&env, &["run", "w1"]), @r"
    Error: the following required arguments were not provided: <CMD>...
    Hint: usage: agent-workspace run <ID> -- <CMD>...; see `agent-workspace run --help`
    ");
    insta::assert_snapshot!(usage_error(&env, &["run", "w1", "--no-such-flag", "--", "true"]), @r"
    Error: unexpected argument '--no-such-flag' found
    Hint: to pass '--no-such-flag' as a value, use '-- --no-such-flag'; usage: agent-workspace run <ID> -- <CMD>...; see `agent-workspace run --help`
    ");
    insta::assert_snapshot!(usage_error(&env, &["--backend", "svn", "status"]), @r"
    Error: invalid value 'svn' for '--backend <BACKEND>' [possible values: jj, git]
    Hint: see `agent-workspace --help`
    ");
    insta::assert_snapshot!(usage_error(&env, &[]), @r"
    Error: no subcommand given
    Hint: usage: agent-workspace [OPTIONS] <run|status|create|path|shell|clean|gc|pool|diff|checkpoint|land|sync-tools|doctor|mcp|completions|man> ...; see `agent-workspace --help`
    ");
}

#[test]
fn help_and_version_go_to_stdout_with_exit_0() {
    let env = TestEnv::new();
    let out = env.aw(env.path(), ["--version"]);
    out.assert_ok();
    assert_eq!(
        out.stdout,
        format!("agent-workspace {}\n", env!("CARGO_PKG_VERSION"))
    );
    let out = env.aw(env.path(), ["run", "--help"]);
    insta::assert_snapshot!(out, @r"
    Run a command in a workspace, creating it if needed

    Usage: agent-workspace run [OPTIONS] <ID> -- <CMD>...

    Arguments:
      <ID>
              Workspace id: 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit

      <CMD>...
              The command and its arguments

    Options:
          --workflow <NAME>
              Workflow name recorded with the workspace and its runs

          --base-change <REV>
              Start a new workspace on a new commit on top of this revision

          --parent <PARENT_ID>
              Start a new workspace from this workspace's exact current state, unrecorded edits included, leaving that workspace as it was

          --no-direnv
              Do not load the workspace's .envrc (the command runs directly)

          --trust-envrc
              Allow the workspace's .envrc even if it differs from its base revision's

          --reload-envrc
              Evaluate the workspace's .envrc with direnv even when nothing it watches changed since the environment it loaded last time

          --trust-config
              Run the setup command of the repository's configuration file even if that file differs from the one at the workspace's base revision

          --wait
              Wait for a live run in this workspace to finish instead of failing

          --sandbox
              Confine the command (direnv included) with bubblewrap: it can write only this workspace, what jj or git needs, a private /tmp and --allow-write paths

          --no-sandbox
              Run unconfined although the configuration sets sandbox.enabled

          --no-network
              With --sandbox: remove the network (only loopback remains)

          --allow-write <PATH>
              With --sandbox: also let the command write PATH (repeatable; also $AGENT_WORKSPACE_SANDBOX_WRITE, separated like PATH)

          --checkpoint
              After the run, record the workspace's state as a checkpoint commit

          --cleanup
              Remove the workspace after a successful run (keep it after a failure)

      -h, --help
              Print help (see a summary with '-h')

    Global Options:
          --root <DIR>
              Directory holding all workspaces [default: $AI_WORKSPACES_ROOT, else $XDG_CACHE_HOME/ai-workspaces, else ~/.cache/ai-workspaces]

          --repo <PATH>
              Repository to act on [default: the one containing the current directory]

          --backend <BACKEND>
              Version-control backend [default: $AGENT_WORKSPACE_BACKEND, else jj when the repository has .jj, else git]
              
              [possible values: jj, git]

          --color <WHEN>
              When to colour the output: auto (on a terminal, unless NO_COLOR is set), always, never
              
              [default: auto]
              [possible values: auto, always, never]

    Examples:
      Run an agent in workspace fix-login, created from the current change if new:
        agent-workspace run fix-login -- claude
      Build in a confined workspace started from main, checkpointing afterwards:
        agent-workspace run --base-change main --sandbox --checkpoint ci -- cargo test
      Start a child workspace from the exact state of fix-login:
        agent-workspace run --parent fix-login fix-login-tests -- cargo test
    [exit 0]
    ");
    assert_eq!(out.stderr, "", "{}", out.report());
}

#[test]
fn errors_in_json_output_are_structured() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let out = env.aw(&repo, ["clean", "--json", "nope"]);
    out.assert_code(1);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON on stdout");
    let error = &doc["failed"][0]["error"];
    assert_eq!(doc["failed"][0]["workspace_id"], "nope");
    assert_eq!(error["kind"], "failure", "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("no workspace \"nope\""),
        "{error}"
    );
    assert!(
        error["hint"]
            .as_str()
            .unwrap()
            .contains("agent-workspace status"),
        "{error}"
    );
    assert!(error["causes"].is_array(), "{error}");
}

/// Inside a repository of either backend, bad usage says the same as outside any, and
/// creates nothing.
fn usage_errors_inside_a_repository_are_the_same(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let cases: [&[&str]; 5] = [
        &["run", "w1"],
        &["run", "w1", "--"],
        &["no-such-subcommand"],
        &["run", "w1", "--no-such-flag", "--", "true"],
        &["--backend", "svn", "status"],
    ];
    for args in cases {
        let inside = env.aw(&repo, args);
        inside.assert_code(2);
        assert_eq!(
            inside.stderr,
            usage_error(&env, args),
            "{}",
            inside.report()
        );
        assert!(!env.ws_root().exists(), "{}", env.listing());
    }
    // `--` with nothing after it is no command either.
    insta::assert_snapshot!(usage_error(&env, &["run", "w1", "--"]), @r"
    Error: the following required arguments were not provided: <CMD>...
    Hint: usage: agent-workspace run <ID> -- <CMD>...; see `agent-workspace run --help`
    ");
    assert_eq!(backend.registered(&env, &repo), ["default"]);
}

crate::both_backends!(usage_errors_inside_a_repository_are_the_same);

/// `run w echo hi`, the command without the `--` before it, says to put `--` there.
#[test]
fn a_command_without_the_separator_is_told_where_it_goes() {
    let env = TestEnv::new();
    insta::assert_snapshot!(usage_error(&env, &["run", "w1", "echo", "hi"]), @r"
    Error: unexpected argument 'echo' found
    Hint: put `--` before the command: `agent-workspace run <ID> -- echo ...`; usage: agent-workspace run [OPTIONS] <ID> -- <CMD>...; see `agent-workspace run --help`
    ");
}
