//! Configuration files: the repository's and the user's, their precedence under environment
//! variables and flags, and clear errors for bad files.

use std::fs;
use std::path::Path;

use crate::backends::{git_ok, Backend};
use crate::harness::TestEnv;

fn branches(env: &TestEnv, repo: &Path) -> String {
    git_ok(env, repo, &["branch", "--format=%(refname:short)"])
}

#[test]
fn the_repository_file_chooses_the_backend_unless_a_variable_or_flag_does() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    fs::write(repo.join("agent-workspace.toml"), "backend = \"git\"\n").unwrap();
    env.aw(&repo, ["run", "from-file", "--", "true"])
        .assert_ok();
    insta::assert_snapshot!(branches(&env, &repo), @r"
    (no branch)
    agent-workspace/from-file
    ");
    env.aw_cmd(&repo)
        .env("AGENT_WORKSPACE_BACKEND", "jj")
        .args(["run", "from-env", "--", "true"])
        .run()
        .assert_ok();
    env.aw(&repo, ["--backend", "jj", "run", "from-flag", "--", "true"])
        .assert_ok();
    insta::assert_snapshot!(env.workspace_names(&repo).join("\n"), @r"
    default
    from-env
    from-flag
    ");
}

#[test]
fn the_user_file_wins_over_the_repository_file_and_the_variable_over_both() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    fs::create_dir_all(repo.join(".config")).unwrap();
    fs::write(
        repo.join(".config/agent-workspace.toml"),
        "[git]\nbranch_prefix = \"team/\"\n",
    )
    .unwrap();
    env.aw(&repo, ["run", "a", "--", "true"]).assert_ok();
    env.user_config("[git]\nbranch_prefix = \"mine/\"\n");
    env.aw(&repo, ["run", "b", "--", "true"]).assert_ok();
    env.aw_cmd(&repo)
        .env("AGENT_WORKSPACE_BRANCH_PREFIX", "env/")
        .args(["run", "c", "--", "true"])
        .run()
        .assert_ok();
    insta::assert_snapshot!(branches(&env, &repo), @r"
    env/c
    main
    mine/b
    team/a
    ");
}

#[test]
fn configured_disposable_output_is_discarded_and_the_rest_kept_aside() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    fs::write(
        repo.join("agent-workspace.toml"),
        "[clean]\ndisposable = [\"out/\"]\n",
    )
    .unwrap();
    fs::write(repo.join(".gitignore"), "out/\ntarget/\n").unwrap();
    env.jj(&repo, ["commit", "-m", "ignore"]).assert_ok();
    let script = "mkdir -p out target && echo o > out/o && echo t > target/t";
    env.aw(&repo, ["run", "w", "--", "sh", "-c", script])
        .assert_ok();
    let out = env.aw(&repo, ["clean", "--json", "w"]);
    out.assert_ok();
    let kept = env.namespace_dir(&repo).join(".kept");
    let kept_files: Vec<String> = walk(&kept);
    assert!(
        kept_files.iter().any(|f| f.ends_with("target/t")),
        "{kept_files:?}"
    );
    assert!(
        !kept_files.iter().any(|f| f.ends_with("out/o")),
        "{kept_files:?}"
    );
}

fn walk(dir: &Path) -> Vec<String> {
    let mut found = vec![];
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path.display().to_string());
        }
    }
    found
}

#[test]
fn sandbox_enabled_in_the_user_file_confines_runs_unless_no_sandbox() {
    crate::sandbox_support::require_sandbox();
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    env.user_config("[sandbox]\nenabled = true\nnetwork = false\n");
    let show = "echo \"sandbox=$AGENT_WORKSPACE_SANDBOX\"";
    let out = env.aw(&repo, ["run", "w", "--", "sh", "-c", show]);
    insta::assert_snapshot!(out, @r"
    sandbox=bwrap,no-network
    [exit 0]
    ");
    let out = env.aw(&repo, ["run", "--no-sandbox", "w", "--", "sh", "-c", show]);
    insta::assert_snapshot!(out, @r#"
    sandbox=
    --- stderr ---
    Warning: workspace "w" ran sandboxed before, and this run is not confined (--no-sandbox): what an agent wrote there (its .envrc, git hooks, nested repositories) runs as you
    Hint: leave out --no-sandbox to keep it confined
    [exit 0]
    "#);
}

/// Each bad file is an error naming the file and what is wrong in it (exit 2 before anything
/// is created).
#[test]
fn bad_configuration_files_are_clear_errors() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    let file = repo.join("agent-workspace.toml");
    let cases = [
        "[git]\nbranch_prefx = \"x/\"\n",
        "[sandbox]\nenabled = \"yes\"\n",
        "[sandbox]\nwritable = [\"/var\"]\n",
    ];
    let refused = cases.map(|text| {
        fs::write(&file, text).unwrap();
        let out = env.aw(&repo, ["run", "w", "--", "true"]);
        assert!(!env.ws_path(&repo, "w").exists());
        out
    });
    insta::assert_snapshot!(refused[0], @r#"
    --- stderr ---
    Error: invalid configuration in [TMP]/repo/agent-workspace.toml: unknown field `branch_prefx`, expected `branch_prefix`, at line 2: branch_prefx = "x/"
    Hint: fix the key or value named above; docs/configuration.md lists every key
    [exit 2]
    "#);
    insta::assert_snapshot!(refused[1], @r#"
    --- stderr ---
    Error: invalid configuration in [TMP]/repo/agent-workspace.toml: invalid type: string "yes", expected a boolean, at line 2: enabled = "yes"
    Hint: fix the key or value named above; docs/configuration.md lists every key
    [exit 2]
    "#);
    insta::assert_snapshot!(refused[2], @r"
    --- stderr ---
    Error: [TMP]/repo/agent-workspace.toml sets sandbox.writable, which only the user's own file may set
    Hint: move sandbox.writable to [TMP]/xdg/config/agent-workspace/config.toml: a repository's file must not widen what a sandboxed agent may reach
    [exit 2]
    ");
    fs::write(&file, "backend = \"jj\"\n").unwrap();
    fs::create_dir_all(repo.join(".config")).unwrap();
    fs::write(
        repo.join(".config/agent-workspace.toml"),
        "backend = \"jj\"\n",
    )
    .unwrap();
    insta::assert_snapshot!(env.aw(&repo, ["status"]), @r"
    --- stderr ---
    Error: [TMP]/repo/agent-workspace.toml and [TMP]/repo/.config/agent-workspace.toml both exist; the repository has one configuration file
    Hint: merge them and remove [TMP]/repo/.config/agent-workspace.toml
    [exit 2]
    ");
    fs::remove_file(&file).unwrap();
    env.user_config("colour = true\n");
    insta::assert_snapshot!(env.aw(&repo, ["status"]), @r"
    --- stderr ---
    Error: invalid configuration in [TMP]/xdg/config/agent-workspace/config.toml: unknown field `colour`, expected one of `backend`, `git`, `jj`, `clean`, `sandbox`, `limits`, `ports`, `tools`, `setup`, `copy`, `retention`, `pool`, `direnv`, at line 1: colour = true
    Hint: fix the key or value named above; docs/configuration.md lists every key
    [exit 2]
    ");
}

/// The complete configuration example of docs/configuration.md parses as the user file and
/// `doctor` accepts it: the documented keys are the ones the code reads.
#[test]
fn the_documented_complete_example_is_accepted() {
    let env = TestEnv::new();
    let repo = crate::backends::Backend::Jj.repo(&env);
    let doc = fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/configuration.md"),
    )
    .unwrap();
    let after = doc
        .split("<!-- complete-config -->\n```toml\n")
        .nth(1)
        .expect("docs/configuration.md has the marked example");
    let example = &after[..after.find("```").expect("the example block ends")];
    assert!(example.contains("[retention]"), "{example}");
    env.user_config(example);
    let out = env.aw(&repo, ["doctor", "--json"]);
    assert_ne!(out.code(), Some(2), "{}", out.report());
    let json = out.json();
    let text = json.to_string();
    assert!(
        !text.contains("config.toml"),
        "the example was refused: {json:#}"
    );
}
