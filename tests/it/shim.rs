//! `contrib/agent-workspace.sh`: the shim that takes the old shell script's command line, run
//! as the script was, from an `agents.just` of the script's recipe shape calling
//! `scripts/agent-workspace.sh` (the shim copied in).

use std::fs;
use std::path::{Path, PathBuf};

use crate::backends::{git_ok, Backend};
use crate::harness::{Outcome, TestEnv, AW};

/// The script's recipes, as its users wrote them in `agents.just` (loaded by `mod agents`):
/// the outer recipe runs the inner one in the workspace, whose nested step calls another inner
/// recipe directly.
const AGENTS_JUST: &str = r#"
consolidate workspace-id start end:
    scripts/agent-workspace.sh run {{workspace-id}} --workflow consolidate -- just agents::consolidate-inner {{workspace-id}} {{start}} {{end}}

consolidate-inner workspace-id start end:
    echo "range {{start}}..{{end}} in $AGENT_WORKSPACE_ID" > summary.txt
    just agents::consolidate-record

consolidate-record:
    pwd -P >> summary.txt

workspace-status id="":
    scripts/agent-workspace.sh status {{id}}

workspace-shell id:
    scripts/agent-workspace.sh shell {{id}}

workspace-clean id:
    scripts/agent-workspace.sh clean {{id}}
"#;

/// The script's fields in its JSON of one workspace.
const SCRIPT_FIELDS: [&str; 10] = [
    "workspace_id",
    "repo_root",
    "workspace_path",
    "status",
    "direnv_allowed",
    "command",
    "created_at",
    "updated_at",
    "workflow",
    "base_change",
];

fn shim_source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/agent-workspace.sh")
}

/// A repository of `backend` with the script's justfile and the shim as
/// `scripts/agent-workspace.sh`, committed.
fn script_repo(env: &TestEnv, backend: Backend) -> PathBuf {
    let repo = backend.repo(env);
    fs::write(repo.join("justfile"), "mod agents\n").unwrap();
    fs::write(repo.join("agents.just"), AGENTS_JUST).unwrap();
    fs::create_dir_all(repo.join("scripts")).unwrap();
    fs::copy(shim_source(), repo.join("scripts/agent-workspace.sh")).unwrap();
    match backend {
        Backend::Jj => {
            env.jj_ok(&repo, ["commit", "-m", "the script's recipes"]);
        }
        Backend::Git => {
            git_ok(env, &repo, &["add", "-A"]);
            git_ok(env, &repo, &["commit", "-q", "-m", "the script's recipes"]);
        }
    }
    repo
}

fn just(env: &TestEnv, repo: &Path, args: &[&str]) -> Outcome {
    env.cmd("just", repo)
        .env("AGENT_WORKSPACE_BIN", AW)
        .args(args)
        .run()
}

fn shim(env: &TestEnv, repo: &Path, args: &[&str]) -> Outcome {
    env.cmd(repo.join("scripts/agent-workspace.sh"), repo)
        .env("AGENT_WORKSPACE_BIN", AW)
        .args(args)
        .run()
}

fn the_script_s_recipes_run_through_the_shim(backend: Backend) {
    let env = TestEnv::new();
    let repo = script_repo(&env, backend);
    let out = just(&env, &repo, &["agents::consolidate", "cons", "s1", "e1"]);
    out.assert_ok();
    let ws = env.ws_path(&repo, "cons");
    let summary = fs::read_to_string(ws.join("summary.txt"))
        .unwrap_or_else(|e| panic!("no summary: {e}\n{}", out.report()));
    // The nested step ran in the same working copy.
    assert_eq!(
        summary,
        format!("range s1..e1 in cons\n{}\n", ws.display()),
        "{}",
        out.report()
    );
    assert!(!repo.join("summary.txt").exists());

    // The table stays agent-workspace's.
    let table = just(&env, &repo, &["agents::workspace-status"]);
    table.assert_ok();
    assert!(
        table
            .stdout
            .lines()
            .any(|l| l.starts_with("cons") && l.contains("done") && l.contains("consolidate")),
        "{}",
        table.report()
    );

    // One workspace: the script's JSON object.
    let one = just(&env, &repo, &["agents::workspace-status", "cons"]);
    let record = one.assert_ok().json();
    crate::schemas::assert_valid("record", &record);
    for field in SCRIPT_FIELDS {
        assert!(record.get(field).is_some(), "no {field}: {record:#}");
    }
    assert_eq!(record["workspace_id"], "cons");
    assert_eq!(record["status"], "done");
    assert_eq!(record["workflow"], "consolidate");
    assert_eq!(record["workspace_path"], ws.to_str().unwrap());
    assert_eq!(record["repo_root"], repo.to_str().unwrap());
    assert_eq!(
        record["command"],
        serde_json::json!(["just", "agents::consolidate-inner", "cons", "s1", "e1"])
    );
    assert_eq!(record["direnv_allowed"], true, "{record:#}");

    let shell = env
        .cmd("just", &repo)
        .env("AGENT_WORKSPACE_BIN", AW)
        .env("SHELL", "/bin/sh")
        .args(["agents::workspace-shell", "cons"])
        .stdin("echo \"in $AGENT_WORKSPACE_ID\"; pwd -P\n")
        .run();
    shell.assert_ok();
    assert!(
        shell
            .stdout
            .contains(&format!("in cons\n{}\n", ws.display())),
        "{}",
        shell.report()
    );

    just(&env, &repo, &["agents::workspace-clean", "cons"]).assert_ok();
    assert!(!ws.exists(), "the workspace is still there");
    let gone = shim(&env, &repo, &["status", "cons"]);
    assert_eq!(gone.code(), Some(1), "{}", gone.report());
    assert!(gone.stderr.contains("Error:"), "{}", gone.report());
}

fn run_flags_map_and_the_command_s_exit_code_passes_through(backend: Backend) {
    let env = TestEnv::new();
    let repo = script_repo(&env, backend);
    let base = backend.base_of(&env, &repo);
    let out = shim(
        &env,
        &repo,
        &[
            "run",
            "w",
            "--workflow",
            "wf",
            "--base-change",
            &base,
            "--no-direnv",
            "--",
            "sh",
            "-c",
            "echo \"${AW_TEST_VAR-unset}\"; exit 3",
        ],
    );
    out.assert_code(3);
    assert_eq!(out.stdout, "unset\n", "{}", out.report());
    let record = shim(&env, &repo, &["status", "w"]).assert_ok().json();
    assert_eq!(record["status"], "error");
    assert_eq!(record["workflow"], "wf");
    assert_eq!(record["base_change"], base.as_str());
    // `--cleanup` removes the workspace after a successful run only.
    shim(&env, &repo, &["run", "w2", "--cleanup", "--", "true"]).assert_ok();
    assert!(!env.ws_path(&repo, "w2").exists());
    shim(&env, &repo, &["run", "w3", "--cleanup", "--", "false"]).assert_code(1);
    assert!(env.ws_path(&repo, "w3").is_dir());
}

fn bad_usage_is_an_error_with_a_hint(backend: Backend) {
    let env = TestEnv::new();
    let repo = script_repo(&env, backend);
    for args in [
        &[][..],
        &["frobnicate"],
        &["run"],
        &["run", "w"],
        &["run", "w", "--"],
        &["run", "w", "--checkpoint", "--", "true"],
        &["run", "w", "--workflow"],
        &["run", "--cleanup", "--", "true"],
        &["status", "a", "b"],
        &["shell"],
        &["clean"],
        &["clean", "a", "b"],
    ] {
        let out = shim(&env, &repo, args);
        assert_eq!(out.code(), Some(2), "{args:?}: {}", out.report());
        assert!(
            out.stderr.starts_with("Error: "),
            "{args:?}: {}",
            out.report()
        );
        assert!(
            out.stderr.contains("\nHint: "),
            "{args:?}: {}",
            out.report()
        );
        assert_eq!(out.stdout, "", "{args:?}");
    }
    // agent-workspace's own refusals keep its Error/Hint and exit code (a bad id: 2).
    let bad_id = shim(&env, &repo, &["run", "..", "--", "true"]);
    assert_eq!(bad_id.code(), Some(2), "{}", bad_id.report());
    assert!(bad_id.stderr.contains("Error:"), "{}", bad_id.report());
    // Nothing was made.
    assert_eq!(
        fs::read_dir(env.namespace_dir(&repo))
            .map(|d| d
                .filter_map(Result::ok)
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .count())
            .unwrap_or(0),
        0
    );
    // No agent-workspace to call: 127 with a hint.
    let missing = env
        .cmd(repo.join("scripts/agent-workspace.sh"), &repo)
        .env("AGENT_WORKSPACE_BIN", env.path().join("no-such-binary"))
        .args(["status"])
        .run();
    assert_eq!(missing.code(), Some(127), "{}", missing.report());
    assert!(missing.stderr.contains("Hint: "), "{}", missing.report());
}

/// A workspace the script made (its record only, at `.agent-tools/.agent-workflow.json`):
/// `status` shows the script's `direnv_allowed: true`, and the next run still checks the
/// `.envrc` anew (a changed one is refused, exit 125).
fn a_script_record_s_direnv_allowed_is_shown_and_trusts_nothing(backend: Backend) {
    let env = TestEnv::new();
    let repo = script_repo(&env, backend);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w");
    fs::remove_file(env.namespace_dir(&repo).join(".state/w.json")).unwrap();
    fs::remove_file(ws.join(".agent-workflow.json")).unwrap();
    fs::create_dir_all(ws.join(".agent-tools")).unwrap();
    let script_record = serde_json::json!({
        "workspace_id": "w",
        "repo_root": repo,
        "workspace_path": ws,
        "status": "done",
        "direnv_allowed": true,
        "command": ["just", "consolidate-inner"],
        "created_at": "2025-06-01T10:00:00Z",
        "updated_at": "2025-06-01T11:00:00Z",
        "workflow": "consolidate",
        "base_change": null
    });
    fs::write(
        ws.join(".agent-tools/.agent-workflow.json"),
        script_record.to_string(),
    )
    .unwrap();
    let record = shim(&env, &repo, &["status", "w"]).assert_ok().json();
    crate::schemas::assert_valid("record", &record);
    assert_eq!(record["direnv_allowed"], true, "{record:#}");
    assert_eq!(record["status"], "done", "{record:#}");
    assert_eq!(record["created_at"], "2025-06-01T10:00:00Z");
    let text = env.aw(&repo, ["status", "w"]);
    assert!(
        text.assert_ok()
            .stdout
            .lines()
            .any(|l| l.starts_with("direnv") && l.ends_with("allowed")),
        "{}",
        text.report()
    );
    // The flag alone trusts nothing: a changed .envrc is refused.
    fs::write(ws.join(".envrc"), "export AW_TEST_VAR=changed\n").unwrap();
    let refused = shim(&env, &repo, &["run", "w", "--", "printenv", "AW_TEST_VAR"]);
    insta::assert_snapshot!(refused, @r"
    --- stderr ---
    Note: moved the record of [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w into [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.state/w.json; its .envrc trust is checked anew against the base revision
    Error: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w/.envrc differs from the .envrc of the workspace's base revision; not loading it
    Hint: review it, then pass --trust-envrc to allow it (or --no-direnv to skip it)
    [exit 125]
    ");
}

/// `status --record` needs an id and `--json`; a workspace without a record is an error with a
/// hint, not an empty object.
fn status_record_refuses_what_it_cannot_print(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    for args in [&["status", "--record"][..], &["status", "w", "--record"]] {
        let out = env.aw(&repo, args);
        assert_eq!(out.code(), Some(2), "{args:?}: {}", out.report());
        assert!(
            out.stderr.contains("--json") || out.stderr.contains("<ID>"),
            "{}",
            out.report()
        );
    }
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w");
    fs::remove_file(env.namespace_dir(&repo).join(".state/w.json")).unwrap();
    fs::remove_file(ws.join(".agent-workflow.json")).unwrap();
    let out = env.aw(&repo, ["status", "w", "--json", "--record"]);
    assert_eq!(out.code(), Some(1), "{}", out.report());
    assert!(
        out.stderr
            .contains("Error: workspace \"w\" has no record (missing-metadata)"),
        "{}",
        out.report()
    );
    assert!(out.stderr.contains("Hint: "), "{}", out.report());
}

crate::both_backends!(
    status_record_refuses_what_it_cannot_print,
    a_script_record_s_direnv_allowed_is_shown_and_trusts_nothing,
    the_script_s_recipes_run_through_the_shim,
    run_flags_map_and_the_command_s_exit_code_passes_through,
    bad_usage_is_an_error_with_a_hint,
);
