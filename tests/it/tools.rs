//! The tools bundle: the repository's current `agents.just`, `rules/`, `scripts/` and
//! `AGENTS.md` (or `tools.paths`) copied into `<workspace>/.agent-tools/`, its variables,
//! `sync-tools`, records of the shell script read and migrated, and the script's recipe shape.

use std::fs;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::backends::{git_ok, Backend};
use crate::harness::TestEnv;

const RECIPES: &str = "inner:\n    echo inner-ran\n";

/// Writes the default tools into the main workspace (not committed: the bundle is what the
/// main workspace holds now).
fn write_tools(repo: &Path) {
    fs::write(repo.join("agents.just"), RECIPES).unwrap();
    fs::create_dir_all(repo.join("rules")).unwrap();
    fs::write(repo.join("rules/style.md"), "be brief\n").unwrap();
    fs::write(repo.join("AGENTS.md"), "# agents\n").unwrap();
}

fn commit_all(env: &TestEnv, backend: Backend, repo: &Path, message: &str) {
    match backend {
        Backend::Jj => {
            env.jj(repo, ["commit", "-m", message]).assert_ok();
        }
        Backend::Git => {
            git_ok(env, repo, &["add", "-A"]);
            git_ok(env, repo, &["commit", "-q", "-m", message]);
        }
    }
}

fn bundle(env: &TestEnv, repo: &Path, id: &str) -> PathBuf {
    env.ws_path(repo, id).join(".agent-tools")
}

const PRINT_VARS: &str =
    "printf '%s\\n' \"$AGENT_TOOL_COPY_ROOT\" \"$AGENT_TOOLS_VERSION\" \"$AGENT_TOOLS_SOURCE\"";

fn the_bundle_is_copied_at_creation_with_its_variables_and_kept_out_of_history(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    write_tools(&repo);
    let out = env.aw(&repo, ["run", "w", "--", "sh", "-c", PRINT_VARS]);
    out.assert_ok();
    let tools = bundle(&env, &repo, "w");
    let lines: Vec<&str> = out.stdout.lines().collect();
    let record = env.metadata(&env.ws_path(&repo, "w"));
    assert_eq!(lines[0], tools.to_str().unwrap(), "{}", out.report());
    assert_eq!(lines[1].len(), 64, "{}", out.report());
    assert_eq!(record["tools"]["version"], lines[1], "{record:#}");
    assert_eq!(lines[2], repo.to_str().unwrap());
    assert_eq!(
        fs::read_to_string(tools.join("agents.just")).unwrap(),
        RECIPES
    );
    assert_eq!(
        fs::read_to_string(tools.join("rules/style.md")).unwrap(),
        "be brief\n"
    );
    assert!(tools.join("AGENTS.md").is_file());
    // `scripts/` does not exist: the defaults that exist are copied.
    assert!(!tools.join("scripts").exists());
    assert_eq!(
        record["tools"]["paths"],
        serde_json::json!(["agents.just", "rules", "AGENTS.md"])
    );
    // Not in `jj diff` / `git status`.
    assert_eq!(backend.changes(&env, &env.ws_path(&repo, "w")), "");
}

fn a_changed_source_is_copied_again_and_an_unchanged_one_is_not(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    write_tools(&repo);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let tools = bundle(&env, &repo, "w");
    let ws = env.ws_path(&repo, "w");
    let before = fs::metadata(tools.join("agents.just")).unwrap().ino();
    let version = env.metadata(&ws)["tools"]["version"].clone();
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    assert_eq!(
        fs::metadata(tools.join("agents.just")).unwrap().ino(),
        before,
        "an unchanged bundle was rewritten"
    );
    fs::write(repo.join("rules/style.md"), "be briefer\n").unwrap();
    fs::remove_file(repo.join("AGENTS.md")).unwrap();
    let out = env.aw(&repo, ["run", "w", "--", "sh", "-c", PRINT_VARS]);
    out.assert_ok();
    assert_eq!(
        fs::read_to_string(tools.join("rules/style.md")).unwrap(),
        "be briefer\n"
    );
    assert!(!tools.join("AGENTS.md").exists());
    let record = env.metadata(&ws);
    assert_ne!(record["tools"]["version"], version);
    assert_eq!(
        out.stdout.lines().nth(1),
        record["tools"]["version"].as_str()
    );
}

#[test]
fn a_symlink_leading_out_of_the_repository_is_not_followed() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    let secret = env.path().join("secret");
    fs::write(&secret, "secret\n").unwrap();
    fs::write(repo.join("agents.just"), RECIPES).unwrap();
    fs::create_dir_all(repo.join("scripts")).unwrap();
    std::os::unix::fs::symlink(&secret, repo.join("scripts/out")).unwrap();
    std::os::unix::fs::symlink("../agents.just", repo.join("scripts/in")).unwrap();
    let out = env.aw(&repo, ["run", "w", "--", "true"]);
    out.assert_ok();
    let tools = bundle(&env, &repo, "w");
    assert!(
        fs::symlink_metadata(tools.join("scripts/out")).is_err(),
        "{}",
        out.report()
    );
    // A link inside the repository is copied as the file it names.
    assert_eq!(
        fs::read_to_string(tools.join("scripts/in")).unwrap(),
        RECIPES
    );
    assert!(!fs::symlink_metadata(tools.join("scripts/in"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(
        out.stderr.contains(
            "Warning: not copied into the tools bundle (symlinks leading out of the repository): scripts/out"
        ),
        "{}",
        out.report()
    );
}

#[test]
fn a_symlinked_bundle_directory_is_refused_and_nothing_is_written_through_it() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    fs::write(repo.join("agents.just"), RECIPES).unwrap();
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let tools = bundle(&env, &repo, "w");
    let outside = env.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::remove_dir_all(&tools).unwrap();
    std::os::unix::fs::symlink(&outside, &tools).unwrap();
    let out = env.aw(&repo, ["run", "w", "--", "true"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w/.agent-tools is a symlink; refusing to follow it
    Hint: agent-workspace never follows symlinks in its own directories; remove [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w/.agent-tools (after checking where it points) and try again
    [exit 125]
    ");
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
}

fn sync_tools_refreshes_the_bundle_on_demand(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    write_tools(&repo);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w");
    let version = env.metadata(&ws)["tools"]["version"].clone();
    fs::write(repo.join("agents.just"), "inner:\n    echo v2\n").unwrap();
    let out = env.aw(&repo, ["sync-tools", "w", "--json"]);
    let doc = out.json();
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["workspace_id"], "w");
    assert_eq!(doc["dir"], bundle(&env, &repo, "w").to_str().unwrap());
    assert_ne!(doc["version"], version);
    assert_eq!(env.metadata(&ws)["tools"]["version"], doc["version"]);
    assert_eq!(
        fs::read_to_string(bundle(&env, &repo, "w").join("agents.just")).unwrap(),
        "inner:\n    echo v2\n"
    );
    let text = env.aw(&repo, ["sync-tools", "w"]);
    insta::assert_snapshot!(text, @r"
    tools of workspace w: version 59d2074090e2aa4a11324845395040892e45799e7da7c570b0c732d02ab9c149 in [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w/.agent-tools (agents.just, rules, AGENTS.md)
    [exit 0]
    ");
    let unknown = env.aw(&repo, ["sync-tools", "nope"]);
    insta::assert_snapshot!(unknown, @r#"
    --- stderr ---
    Error: no workspace "nope" (looked for [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/nope)
    Hint: list workspaces with `agent-workspace status`; create one with `agent-workspace run`
    [exit 1]
    "#);
}

/// A record as the shell script wrote it: no schema_version, no backend.
fn script_record(repo: &Path, ws: &Path) -> String {
    serde_json::json!({
        "workspace_id": "w",
        "repo_root": repo,
        "workspace_path": ws,
        "status": "done",
        "direnv_allowed": true,
        "command": ["just", "consolidate-inner"],
        "created_at": "2025-06-01T10:00:00Z",
        "updated_at": "2025-06-01T11:00:00Z",
        "workflow": "consolidate",
        "base_change": null,
        "tools_version": "abc123"
    })
    .to_string()
}

fn a_record_of_the_shell_script_is_read_and_migrated(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w");
    // Make it a workspace of the script: its record in `.agent-tools/`, none of ours.
    fs::remove_file(env.namespace_dir(&repo).join(".state/w.json")).unwrap();
    fs::remove_file(ws.join(".agent-workflow.json")).unwrap();
    fs::create_dir_all(ws.join(".agent-tools")).unwrap();
    let legacy = ws.join(".agent-tools/.agent-workflow.json");
    fs::write(&legacy, script_record(&repo, &ws)).unwrap();
    let out = env.aw(&repo, ["status", "--json"]);
    let doc = out.json();
    let entry = &doc["workspaces"][0];
    assert_eq!(entry["status"], "done", "{doc:#}");
    assert_eq!(entry["workflow"], "consolidate", "{doc:#}");
    let table = env.aw(&repo, ["status"]);
    table.assert_ok();
    assert!(
        table
            .stdout
            .lines()
            .any(|l| l.starts_with('w') && l.contains("done") && l.contains("consolidate")),
        "{}",
        table.report()
    );
    // A run migrates it into agent-workspace's state, every field kept.
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let record: Value = env.metadata(&ws);
    assert_eq!(record["schema_version"], 1);
    assert_eq!(record["backend"], backend.name());
    assert_eq!(record["created_at"], "2025-06-01T10:00:00Z");
    assert_eq!(record["tools_version"], "abc123");
    assert_eq!(record["migrated_from"], ".agent-tools/.agent-workflow.json");
    assert_eq!(record["runs"].as_array().unwrap().len(), 1, "{record:#}");
    assert!(env.namespace_dir(&repo).join(".state/w.json").is_file());
    // The script's file itself is left where it was.
    assert!(legacy.is_file());
    assert_eq!(backend.changes(&env, &ws), "");
}

fn the_script_s_recipe_shape_works_on_an_old_change_without_agents_just(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let old = backend.base_of(&env, &repo);
    fs::write(
        repo.join("agents.just"),
        "inner:\n    test ! -e agents.just\n    echo inner-ran\n",
    )
    .unwrap();
    commit_all(&env, backend, &repo, "add recipes");
    let out = env.aw(
        &repo,
        [
            "run",
            "consolidate-1",
            "--workflow",
            "consolidate",
            "--base-change",
            &old,
            "--",
            "just",
            "-d",
            ".",
            "--justfile",
            ".agent-tools/agents.just",
            "inner",
        ],
    );
    insta::assert_snapshot!(out, @r"
    inner-ran
    --- stderr ---
    test ! -e agents.just
    echo inner-ran
    [exit 0]
    ");
    let ws = env.ws_path(&repo, "consolidate-1");
    assert!(!ws.join("agents.just").exists());
}

#[test]
fn configured_paths_and_dir_are_used_and_bad_ones_refused() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    fs::write(
        repo.join("agent-workspace.toml"),
        "[tools]\npaths = [\"sub/b.txt\", \"a.txt\"]\ndir = \".tools\"\n",
    )
    .unwrap();
    git_ok(&env, &repo, &["add", "-A"]);
    git_ok(&env, &repo, &["commit", "-q", "-m", "config"]);
    let out = env.aw(&repo, ["run", "w", "--", "sh", "-c", PRINT_VARS]);
    out.assert_ok();
    let tools = env.ws_path(&repo, "w").join(".tools");
    assert_eq!(out.stdout.lines().next(), tools.to_str());
    assert_eq!(fs::read_to_string(tools.join("sub/b.txt")).unwrap(), "b\n");
    assert_eq!(fs::read_to_string(tools.join("a.txt")).unwrap(), "hello\n");
    assert_eq!(Backend::Git.changes(&env, &env.ws_path(&repo, "w")), "");
    for (text, key) in [
        (
            "[tools]\npaths = [\"../outside\"]\n",
            "tools.paths entry \"../outside\"",
        ),
        ("[tools]\ndir = \"/abs\"\n", "tools.dir = \"/abs\""),
        ("[tools]\npath = []\n", "unknown field `path`"),
    ] {
        fs::write(repo.join("agent-workspace.toml"), text).unwrap();
        let out = env.aw(&repo, ["run", "w2", "--", "true"]);
        out.assert_code(2);
        assert!(out.stderr.contains(key), "{}", out.report());
        assert!(out.stderr.contains("Hint: "), "{}", out.report());
        assert!(!env.ws_path(&repo, "w2").exists());
    }
}

crate::both_backends!(
    the_bundle_is_copied_at_creation_with_its_variables_and_kept_out_of_history,
    a_changed_source_is_copied_again_and_an_unchanged_one_is_not,
    sync_tools_refreshes_the_bundle_on_demand,
    a_record_of_the_shell_script_is_read_and_migrated,
    the_script_s_recipe_shape_works_on_an_old_change_without_agents_just,
    a_same_size_rewrite_with_its_old_mtime_is_copied_again,
    clean_does_not_keep_the_bundle_as_the_tool_copied_it,
);

/// A source rewritten in place with the same size and its old mtime put back (as `rsync
/// --inplace -t` does, or a write within the file system's timestamp step leaves it) is seen
/// as changed: the stamp holds the ctime, which no one can set back. Both stamps are taken
/// once the sources are over a second old, so neither is racy.
fn a_same_size_rewrite_with_its_old_mtime_is_copied_again(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    write_tools(&repo);
    let source = repo.join("rules/style.md");
    let mtime = fs::metadata(&source).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let mut file = fs::OpenOptions::new().write(true).open(&source).unwrap();
    file.write_all(b"be BRIEF\n").unwrap();
    file.set_modified(mtime).unwrap();
    drop(file);
    assert_eq!(fs::metadata(&source).unwrap().modified().unwrap(), mtime);
    // Old enough again that only the stamp's ctime can tell.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    assert_eq!(
        fs::read_to_string(bundle(&env, &repo, "w").join("rules/style.md")).unwrap(),
        "be BRIEF\n"
    );
}

/// `clean` (and its dry run) does not keep the tools bundle aside as files no commit holds
/// while it is what the tool copied; a bundle the agent changed, and a file it added to the
/// bundle directory, are kept aside as before.
fn clean_does_not_keep_the_bundle_as_the_tool_copied_it(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    write_tools(&repo);
    commit_all(&env, backend, &repo, "tools");
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let dry = env.aw(&repo, ["clean", "w", "--dry-run"]);
    dry.assert_ok();
    assert!(
        dry.stdout.starts_with("Would remove w "),
        "{}",
        dry.report()
    );
    assert!(!dry.stdout.contains("no commit holds"), "{}", dry.report());
    let out = env.aw(&repo, ["clean", "w"]);
    out.assert_ok();
    assert!(out.stdout.starts_with("Removed w "), "{}", out.report());
    assert!(!out.stdout.contains("kept"), "{}", out.report());
    assert!(
        !env.namespace_dir(&repo).join(".kept").exists(),
        "{}",
        env.listing()
    );

    env.aw(
        &repo,
        [
            "run",
            "w2",
            "--",
            "sh",
            "-c",
            "echo mine >> .agent-tools/AGENTS.md && echo new > .agent-tools/notes.txt",
        ],
    )
    .assert_ok();
    let out = env.aw(&repo, ["clean", "w2"]);
    out.assert_ok();
    assert!(
        out.stdout.contains("that no commit holds in"),
        "{}",
        out.report()
    );
    let kept: Vec<_> = fs::read_dir(env.namespace_dir(&repo).join(".kept"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let agents = fs::read_to_string(kept[0].join(".agent-tools/AGENTS.md")).unwrap();
    assert!(agents.ends_with("mine\n"), "{agents}");
    assert!(kept[0].join(".agent-tools/notes.txt").exists());
}
