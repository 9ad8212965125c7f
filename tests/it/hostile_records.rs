//! An agent rewriting its own record: nothing in `.agent-workflow.json` decides where the next
//! run runs or what it trusts; a changed view is reported and rewritten from the state, and
//! files the `.envrc` loads need `--trust-envrc` once changed.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::backends::{git_ok, Backend};
use crate::harness::TestEnv;
use crate::sha256::hex;

fn view(ws: &Path) -> PathBuf {
    ws.join(".agent-workflow.json")
}

fn state_file(env: &TestEnv, repo: &Path, id: &str) -> PathBuf {
    env.namespace_dir(repo)
        .join(".state")
        .join(format!("{id}.json"))
}

/// Writes workspace `id`'s record as agent-workspace keeps it: its state, and the view in the
/// workspace matching it. Text that is not JSON goes to both, as a torn write would leave them.
pub fn write_record(env: &TestEnv, repo: &Path, id: &str, text: &str) {
    fs::write(view(&env.ws_path(repo, id)), text).unwrap();
    let state = match serde_json::from_str::<Value>(text) {
        Ok(record) => serde_json::json!({
            "state_version": 1,
            "view_sha256": hex(text.as_bytes()),
            "record": record,
        })
        .to_string(),
        Err(_) => text.to_string(),
    };
    fs::write(state_file(env, repo, id), state).unwrap();
}

/// Rewrites fields of the view in `ws`.
fn tamper(ws: &Path, edit: impl FnOnce(&mut serde_json::Map<String, Value>)) {
    let mut record: Value = serde_json::from_slice(&fs::read(view(ws)).unwrap()).unwrap();
    edit(record.as_object_mut().unwrap());
    fs::write(view(ws), serde_json::to_vec_pretty(&record).unwrap()).unwrap();
}

/// Commits what the main workspace's working copy holds, so new workspaces start from it.
fn commit_base(backend: Backend, env: &TestEnv, repo: &Path) {
    match backend {
        Backend::Jj => {
            env.jj_ok(repo, ["commit", "-m", "base"]);
        }
        Backend::Git => {
            git_ok(env, repo, &["add", "-A"]);
            git_ok(env, repo, &["commit", "-q", "-m", "base"]);
        }
    }
}

fn a_tampered_view_decides_nothing_and_is_reported_then_restored(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let outside = env.path().join("outside");
    fs::create_dir(&outside).unwrap();
    let evil = b"export AW_TEST_VAR=hijacked\n";
    fs::write(ws.join(".envrc"), evil).unwrap();
    let other = match backend {
        Backend::Jj => "git",
        Backend::Git => "jj",
    };
    tamper(&ws, |r| {
        r.insert("workspace_path".into(), outside.to_str().unwrap().into());
        r.insert("envrc_sha256".into(), hex(evil).into());
        r.insert("base_envrc_sha256".into(), hex(evil).into());
        r.insert("direnv_allowed".into(), true.into());
        r.insert("backend".into(), other.into());
        r.insert("branch".into(), "elsewhere".into());
        r.insert("pid".into(), 1.into());
    });

    let status = env.aw(&repo, ["status", "--json"]);
    let entries = status.assert_ok().json();
    let entry = &entries["workspaces"]
        .as_array()
        .or(entries.as_array())
        .unwrap()
        .iter()
        .find(|e| e["workspace_id"] == "w1")
        .cloned()
        .unwrap();
    assert_eq!(entry["problem"], "tampered-record", "{}", status.report());
    assert!(
        entry["hint"].as_str().unwrap().contains("run w1"),
        "{entry}"
    );
    assert_eq!(entry["backend"], backend.name(), "{entry}");

    let refused = env.aw(&repo, ["run", "w1", "--", "pwd"]);
    insta::assert_snapshot!(refused, @r"
    --- stderr ---
    Warning: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/.agent-workflow.json was changed outside agent-workspace; rewrote it from [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.state/w1.json
    Error: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/.envrc differs from the .envrc of the workspace's base revision; not loading it
    Hint: review it, then pass --trust-envrc to allow it (or --no-direnv to skip it)
    [exit 125]
    ");
    let restored: Value = serde_json::from_slice(&fs::read(view(&ws)).unwrap()).unwrap();
    assert_eq!(restored["workspace_path"], ws.to_str().unwrap());
    assert_eq!(restored["backend"], backend.name());
    assert_ne!(restored["envrc_sha256"], hex(evil).as_str());

    let out = env.aw(&repo, ["run", "w1", "--no-direnv", "--", "pwd"]);
    assert_eq!(out.assert_ok().stdout.trim(), ws.to_str().unwrap());
    assert!(!out.stderr.contains("changed outside"), "{}", out.report());
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        0,
        "wrote outside the root"
    );
    let status = env.aw(&repo, ["status", "w1"]);
    assert!(
        !status.assert_ok().stdout.contains("tampered"),
        "{}",
        status.report()
    );
}

fn files_the_envrc_loads_need_trust_once_changed(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    fs::write(
        repo.join(".envrc"),
        "dotenv\nsource_env_if_exists .envrc.local\n",
    )
    .unwrap();
    fs::write(repo.join(".env"), "AW_TEST_VAR=from-dotenv\n").unwrap();
    commit_base(backend, &env, &repo);
    let out = env.aw(&repo, ["run", "w1", "--", "printenv", "AW_TEST_VAR"]);
    assert_eq!(out.assert_ok().stdout, "from-dotenv\n", "{}", out.report());
    let ws = env.ws_path(&repo, "w1");

    // The agent edits the .env its .envrc loads.
    fs::write(ws.join(".env"), "AW_TEST_VAR=evil\n").unwrap();
    let refused = env.aw(&repo, ["run", "w1", "--", "printenv", "AW_TEST_VAR"]);
    refused.assert_code(125);
    assert!(
        refused.stderr.contains(&format!("{}/.env,", ws.display())),
        "{}",
        refused.report()
    );
    assert!(
        refused.stderr.contains("--trust-envrc"),
        "{}",
        refused.report()
    );
    assert!(!refused.stdout.contains("evil"));
    let trusted = env.aw(
        &repo,
        [
            "run",
            "w1",
            "--trust-envrc",
            "--",
            "printenv",
            "AW_TEST_VAR",
        ],
    );
    assert_eq!(trusted.assert_ok().stdout, "evil\n");
    // Once trusted, it stays trusted until it changes again.
    let again = env.aw(&repo, ["run", "w1", "--", "printenv", "AW_TEST_VAR"]);
    assert_eq!(again.assert_ok().stdout, "evil\n");

    // A file that was absent at the base counts too.
    fs::write(ws.join(".envrc.local"), "export AW_TEST_VAR=local\n").unwrap();
    let refused = env.aw(&repo, ["run", "w1", "--", "printenv", "AW_TEST_VAR"]);
    insta::assert_snapshot!(refused, @r"
    --- stderr ---
    Error: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/.envrc.local, which [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/.envrc loads, changed since the workspace was created; not loading the environment
    Hint: review it, then pass --trust-envrc to allow it (or --no-direnv to skip it)
    [exit 125]
    ");
}

fn a_changed_flake_lock_needs_trust(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    fs::write(repo.join(".envrc"), "use flake\n").unwrap();
    fs::write(repo.join("flake.nix"), "{ outputs = _: {}; }\n").unwrap();
    fs::write(repo.join("flake.lock"), "{}\n").unwrap();
    commit_base(backend, &env, &repo);
    env.aw(
        &repo,
        [
            "run",
            "w1",
            "--no-direnv",
            "--",
            "sh",
            "-c",
            "echo '{\"x\":1}' >flake.lock",
        ],
    )
    .assert_ok();
    let refused = env.aw(&repo, ["run", "w1", "--", "true"]);
    insta::assert_snapshot!(refused, @r"
    --- stderr ---
    Error: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/flake.lock, which [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/.envrc loads, changed since the workspace was created; not loading the environment
    Hint: review it, then pass --trust-envrc to allow it (or --no-direnv to skip it)
    [exit 125]
    ");
}

fn a_legacy_record_is_migrated_without_its_trust(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    // As an older version left it: only the in-workspace record, here claiming trust for a
    // changed .envrc.
    let state = state_file(&env, &repo, "w1");
    assert!(state.is_file(), "no state at {}", state.display());
    fs::remove_file(&state).unwrap();
    let evil = b"export AW_TEST_VAR=hijacked\n";
    fs::write(ws.join(".envrc"), evil).unwrap();
    tamper(&ws, |r| {
        r.insert("envrc_sha256".into(), hex(evil).into());
        r.insert("base_envrc_sha256".into(), hex(evil).into());
        r.insert("direnv_allowed".into(), true.into());
        r.insert("workspace_path".into(), env.path().to_str().unwrap().into());
    });
    let refused = env.aw(&repo, ["run", "w1", "--", "printenv", "AW_TEST_VAR"]);
    insta::assert_snapshot!(refused, @r"
    --- stderr ---
    Note: moved the record of [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1 into [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.state/w1.json; its .envrc trust is checked anew against the base revision
    Error: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/.envrc differs from the .envrc of the workspace's base revision; not loading it
    Hint: review it, then pass --trust-envrc to allow it (or --no-direnv to skip it)
    [exit 125]
    ");
    assert!(state.is_file(), "state not created from the legacy record");
    let kept: Value = serde_json::from_slice(&fs::read(&state).unwrap()).unwrap();
    assert_eq!(kept["record"]["workspace_path"], ws.to_str().unwrap());
    assert_eq!(kept["record"]["status"], "done");
    let out = env.aw(&repo, ["run", "w1", "--no-direnv", "--", "pwd"]);
    assert_eq!(out.assert_ok().stdout.trim(), ws.to_str().unwrap());
}

fn a_symlinked_state_directory_is_refused(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let state_dir = env.namespace_dir(&repo).join(".state");
    let _ = fs::remove_dir_all(&state_dir);
    let outside = env.path().join("outside");
    fs::create_dir(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, &state_dir).unwrap();
    let out = env.aw(&repo, ["run", "w2", "--", "true"]);
    assert_ne!(out.code(), Some(0), "{}", out.report());
    assert!(out.stderr.contains("symlink"), "{}", out.report());
    assert!(out.stderr.contains("Hint:"), "{}", out.report());
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        0,
        "wrote through the symlink"
    );
}

fn a_view_changed_during_the_run_is_reported_and_rewritten(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let script = r##"sed 's|"workspace_path": "[^"]*"|"workspace_path": "/tmp"|' "$AGENT_WORKSPACE_METADATA" >x && mv x "$AGENT_WORKSPACE_METADATA""##;
    let out = env.aw(&repo, ["run", "w1", "--", "sh", "-c", script]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Warning: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/.agent-workflow.json was changed during the run; rewrote it from agent-workspace's state
    [exit 0]
    ");
    let ws = env.ws_path(&repo, "w1");
    let restored: Value = serde_json::from_slice(&fs::read(view(&ws)).unwrap()).unwrap();
    assert_eq!(restored["workspace_path"], ws.to_str().unwrap());
    assert_eq!(restored["status"], "done");
    let status = env.aw(&repo, ["status", "w1", "--json"]);
    assert_eq!(
        status.assert_ok().json()["problem"],
        Value::Null,
        "{}",
        status.report()
    );
}

fn clean_and_run_never_act_through_a_symlinked_state_directory(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let state_dir = env.namespace_dir(&repo).join(".state");
    let outside = env.path().join("outside");
    fs::rename(&state_dir, &outside).unwrap();
    std::os::unix::fs::symlink(&outside, &state_dir).unwrap();
    let before = fs::read(outside.join("w1.json")).unwrap();
    let run = env.aw(&repo, ["run", "w1", "--", "true"]);
    assert_ne!(run.code(), Some(0), "{}", run.report());
    assert!(run.stderr.contains("symlink"), "{}", run.report());
    let clean = env.aw(&repo, ["clean", "--force", "w1"]);
    assert_ne!(clean.code(), Some(0), "{}", clean.report());
    assert!(clean.stderr.contains("symlink"), "{}", clean.report());
    assert!(
        env.ws_path(&repo, "w1").is_dir(),
        "removed half: {}",
        clean.report()
    );
    assert_eq!(fs::read(outside.join("w1.json")).unwrap(), before);
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        1,
        "touched {}",
        outside.display()
    );
}

fn a_symlinked_state_file_is_refused(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let state = state_file(&env, &repo, "w1");
    let outside = env.path().join("outside.json");
    fs::copy(&state, &outside).unwrap();
    let before = fs::read(&outside).unwrap();
    fs::remove_file(&state).unwrap();
    std::os::unix::fs::symlink(&outside, &state).unwrap();
    let out = env.aw(&repo, ["run", "w1", "--", "true"]);
    assert_ne!(out.code(), Some(0), "{}", out.report());
    assert!(out.stderr.contains("symlink"), "{}", out.report());
    assert!(out.stderr.contains("Hint:"), "{}", out.report());
    assert_eq!(
        fs::read(&outside).unwrap(),
        before,
        "wrote through the symlink"
    );
    assert!(fs::symlink_metadata(&state)
        .unwrap()
        .file_type()
        .is_symlink());
}

/// A legacy record (no state: read from the view in the workspace, which an agent can write)
/// naming a parent that is no workspace id: `land` refuses it, never joining it into a path.
fn a_record_s_parent_that_is_no_id_is_refused_by_land(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w", "--", "sh", "-c", "echo x > x.txt"])
        .assert_ok();
    let ws = env.ws_path(&repo, "w");
    fs::remove_file(state_file(&env, &repo, "w")).unwrap();
    tamper(&ws, |record| {
        record.insert("parent".into(), Value::from("../escape"));
    });
    let out = env.aw(&repo, ["land", "w"]);
    insta::assert_snapshot!(out, @r#"
    --- stderr ---
    Error: invalid workspace id "../escape": it must start with a letter or digit
    Hint: use 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit
    [exit 2]
    "#);
    assert!(
        fs::read_to_string(ws.join("x.txt")).is_ok(),
        "{}",
        env.listing()
    );
    assert!(!repo.join("x.txt").exists(), "landed: {}", env.listing());
}

/// A legacy record naming as its parent "." (no id, though the namespace joined with it is a
/// directory): `status` shows it as written and the child as orphaned, never looking for it
/// on disk, and `run --parent` quotes it as written.
fn a_record_s_parent_that_is_no_id_names_no_workspace(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w");
    fs::remove_file(state_file(&env, &repo, "w")).unwrap();
    tamper(&ws, |record| {
        record.insert("parent".into(), Value::from("."));
    });
    let json = env.aw(&repo, ["status", "w", "--json"]).json();
    assert_eq!(json["parent"], ".", "{json}");
    assert_eq!(json["orphaned"], true, "{json}");
    let out = env.aw(&repo, ["run", "--parent", "p", "w", "--", "true"]);
    insta::assert_snapshot!(out, @r#"
    --- stderr ---
    Error: workspace "w" already exists as a child of "."; --parent only applies when it is created
    Hint: drop --parent to run in it, or pick a new id for the child
    [exit 2]
    "#);
}

/// A `.envrc` that loads a file only when it exists, behind a guard (`[ -f x ] &&`, `if ...;
/// then`, `test -f x ||`), or with the shell's own `source` or `.`: once the agent writes the
/// file, the next run asks for trust again, as for a `source_env` on a line of its own.
fn guarded_and_shell_loads_need_trust_once_written(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    fs::write(
        repo.join(".envrc"),
        "[ -f .envrc.local ] && source_env .envrc.local\n\
         if [ -f .env.dev ]; then dotenv .env.dev; fi\n\
         test -f extra.sh && { source extra.sh; }\n\
         ! [ -e dot.sh ] || . ./dot.sh # the shell's own\n",
    )
    .unwrap();
    commit_base(backend, &env, &repo);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    for (file, text) in [
        (".envrc.local", "export AW_TEST_VAR=local\n"),
        (".env.dev", "AW_TEST_VAR=dev\n"),
        ("extra.sh", "export AW_TEST_VAR=extra\n"),
        ("dot.sh", "export AW_TEST_VAR=dot\n"),
    ] {
        fs::write(ws.join(file), text).unwrap();
        let refused = env.aw(&repo, ["run", "w1", "--", "printenv", "AW_TEST_VAR"]);
        refused.assert_code(125);
        assert!(
            refused
                .stderr
                .contains(&format!("{}/{file}, which", ws.display())),
            "{file}: {}",
            refused.report()
        );
        assert!(refused.stdout.is_empty(), "{file}: {}", refused.report());
        fs::remove_file(ws.join(file)).unwrap();
    }
}

crate::both_backends!(
    guarded_and_shell_loads_need_trust_once_written,
    a_record_s_parent_that_is_no_id_is_refused_by_land,
    a_record_s_parent_that_is_no_id_names_no_workspace,
    clean_and_run_never_act_through_a_symlinked_state_directory,
    a_view_changed_during_the_run_is_reported_and_rewritten,
    a_symlinked_state_file_is_refused,
    a_tampered_view_decides_nothing_and_is_reported_then_restored,
    files_the_envrc_loads_need_trust_once_changed,
    a_changed_flake_lock_needs_trust,
    a_legacy_record_is_migrated_without_its_trust,
    a_symlinked_state_directory_is_refused,
);
