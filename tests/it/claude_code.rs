//! Claude Code's own isolation through agent-workspace: the real client (from npm, pinned by
//! scripts/install-tools.sh) driven offline by a scripted model (`claude_model.py`), with
//! agent-workspace's hook answering its `WorktreeCreate`/`WorktreeRemove` events. `claude -w
//! NAME` then works in an agent-workspace workspace, on jj (where Claude Code cannot isolate
//! by itself) and on git (with no `.claude/worktrees/` in the repository).

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::backends::Backend;
use crate::both_backends;
use crate::harness::TestEnv;

/// The Claude Code release the suite drives, as scripts/install-tools.sh installs it.
const CLAUDE_CODE_VERSION: &str = "2.1.328";

/// The real Claude Code binary: `$AGENT_WORKSPACE_TEST_CLAUDE`, else where
/// scripts/install-tools.sh puts it. Missing, the test fails saying how to install it.
fn claude_code() -> PathBuf {
    if let Some(bin) = std::env::var_os("AGENT_WORKSPACE_TEST_CLAUDE") {
        return PathBuf::from(bin);
    }
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))
        .expect("HOME or CARGO_HOME");
    let packages = cargo_home
        .join(format!("claude-code-{CLAUDE_CODE_VERSION}"))
        .join("node_modules/@anthropic-ai");
    fs::read_dir(&packages)
        .ok()
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("claude"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "Claude Code {CLAUDE_CODE_VERSION} is not installed under {}: run scripts/install-tools.sh (or set AGENT_WORKSPACE_TEST_CLAUDE)",
                packages.display()
            )
        })
}

/// The scripted model, serving on a port of its own until dropped.
struct Model {
    child: Child,
    port: u16,
}

impl Model {
    /// A model that answers the first request offering Bash with `bash`, then "done".
    fn start(env: &TestEnv, bash: &str) -> Model {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/claude_model.py");
        let mut child = Command::new("python3")
            .arg(script)
            .env("MODEL_BASH", bash)
            .env("MODEL_LOG", env.path().join("model.log"))
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the scripted model");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the model's port");
        Model { child, port }
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn claude_w_works_in_an_agent_workspace_workspace(backend: Backend) {
    let env = TestEnv::new();
    env.use_real_time();
    let repo = backend.repo(&env);
    let model = Model::start(&env, "echo claude-words > made.txt && pwd");
    env.aw(&repo, ["integrate", "claude-code"]).assert_ok();
    let out = env
        .cmd(claude_code(), &repo)
        .env(
            "ANTHROPIC_BASE_URL",
            format!("http://127.0.0.1:{}", model.port),
        )
        .env("ANTHROPIC_API_KEY", "scripted")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .args([
            "-w",
            "fix-1",
            "-p",
            "write the file",
            "--allowedTools",
            "Bash",
            "--output-format",
            "json",
        ])
        .run();
    out.assert_ok();
    let ws = env.ws_path(&repo, "fix-1");
    assert_eq!(
        fs::read_to_string(ws.join("made.txt")).unwrap_or_default(),
        "claude-words\n",
        "the session did not work in {}: {}",
        ws.display(),
        out.report()
    );
    assert!(
        !repo.join(".claude/worktrees").exists() && !repo.join("made.txt").exists(),
        "Claude Code isolated by itself: {}",
        out.report()
    );
    let status = env.aw(&repo, ["status", "fix-1", "--json"]);
    status.assert_ok();
    let doc: serde_json::Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(doc["record"]["workflow"], "claude-code", "{doc:#}");
    env.aw(&repo, ["land", "fix-1"]).assert_ok();
    assert_eq!(
        fs::read_to_string(repo.join("made.txt")).unwrap_or_default(),
        "claude-words\n"
    );
    // The skill `integrate` installed was offered to the model.
    let log = fs::read_to_string(env.path().join("model.log")).unwrap_or_default();
    assert!(
        log.lines().any(|l| l.contains("\"skill_offered\": true")),
        "the model was never offered the skill: {log}"
    );
}

/// The hook's answers as Claude Code's contract wants them: `WorktreeCreate` prints the
/// directory and nothing else; `WorktreeRemove` removes the workspace keeping its edits in
/// a commit; a path that is no workspace of ours, or no event at all, fails with a reason.
fn the_hook_answers_create_and_remove(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    // The hook's caller is this test process, which other tests share: a session id of
    // this test's own keeps their holds apart (Claude Code's are UUIDs).
    let session = format!(
        "{}-session",
        env.path().file_name().unwrap().to_string_lossy()
    );
    let event = |name: &str| {
        format!(
            r#"{{"session_id":"{session}","transcript_path":"/tmp/t.jsonl","cwd":"{}","hook_event_name":"WorktreeCreate","name":"{name}"}}"#,
            repo.display()
        )
    };
    let made = env
        .aw_cmd(&repo)
        .args(["hook", "claude-code"])
        .stdin(&event("feature/login page"))
        .run();
    made.assert_ok();
    let ws = env.ws_path(&repo, "feature-login-page");
    assert_eq!(
        made.stdout,
        format!("{}\n", ws.display()),
        "{}",
        made.report()
    );
    fs::write(ws.join("edit.txt"), "session-words\n").unwrap();
    let again = env
        .aw_cmd(&repo)
        .args(["hook", "claude-code"])
        .stdin(&event("feature/login page"))
        .run();
    again.assert_ok();
    assert_eq!(again.stdout, made.stdout);
    let remove = |path: &Path| {
        env.aw_cmd(&repo)
            .args(["hook", "claude-code"])
            .stdin(&format!(
                r#"{{"session_id":"{session}","hook_event_name":"WorktreeRemove","worktree_path":"{}"}}"#,
                path.display()
            ))
            .run()
    };
    let foreign = remove(&env.path().join("elsewhere"));
    assert_eq!(foreign.code(), Some(1), "{}", foreign.report());
    assert!(
        foreign.stderr.starts_with("Error: ") && foreign.stderr.contains("Hint: "),
        "{}",
        foreign.report()
    );
    let removed = remove(&ws);
    removed.assert_ok();
    assert!(!ws.exists(), "{}", removed.report());
    let everything = match backend {
        Backend::Jj => env.jj_ok(&repo, ["log", "-r", "all()", "-p", "--no-graph"]),
        Backend::Git => {
            let out = Command::new("git")
                .args(["log", "--all", "-p"])
                .current_dir(&repo)
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        }
    };
    assert!(everything.contains("session-words"), "{}", removed.report());
    let garbage = env
        .aw_cmd(&repo)
        .args(["hook", "claude-code"])
        .stdin("not json")
        .run();
    assert_eq!(garbage.code(), Some(2), "{}", garbage.report());
    assert!(garbage.stderr.contains("Hint: "), "{}", garbage.report());
    let other = env
        .aw_cmd(&repo)
        .args(["hook", "claude-code"])
        .stdin(r#"{"hook_event_name":"SessionStart"}"#)
        .run();
    other.assert_ok();
    assert_eq!(other.stdout, "");
}

/// `claude -w fix-1` with the scripted model's Bash call `bash`, started and left running.
fn start_session(env: &TestEnv, repo: &Path, model: &Model) -> crate::harness::Running {
    env.aw(repo, ["integrate", "claude-code"]).assert_ok();
    env.cmd(claude_code(), repo)
        .env(
            "ANTHROPIC_BASE_URL",
            format!("http://127.0.0.1:{}", model.port),
        )
        .env("ANTHROPIC_API_KEY", "scripted")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .args(["-w", "fix-1", "-p", "work", "--allowedTools", "Bash"])
        .spawn()
}

/// Waits up to `limit` for `fix-1`'s recorded status to be `want` (`what` names the wait).
fn wait_for_status(env: &TestEnv, repo: &Path, what: &str, want: &str, limit: Duration) {
    crate::harness::eventually(what, limit, || match status_of(env, repo)? {
        s if s == want => Ok(()),
        s => Err(s),
    });
}

/// The recorded status of `fix-1`, as `status --json` says it.
fn status_of(env: &TestEnv, repo: &Path) -> Result<String, String> {
    let out = env.aw(repo, ["status", "fix-1", "--json"]);
    let doc: serde_json::Value =
        serde_json::from_str(&out.stdout).map_err(|e| format!("{e}: {}", out.report()))?;
    Ok(doc["status"].as_str().unwrap_or_default().to_string())
}

/// While the session lives, its workspace is `running` and `clean` leaves it alone; once
/// the session has ended, it is `done` and the lease is free.
fn a_live_session_holds_its_workspace(backend: Backend) {
    let env = TestEnv::new();
    env.use_real_time();
    let repo = backend.repo(&env);
    let model = Model::start(&env, "sleep 5");
    let session = start_session(&env, &repo, &model);
    wait_for_status(
        &env,
        &repo,
        "the session's workspace running",
        "running",
        Duration::from_secs(60),
    );
    let refused = env.aw(&repo, ["clean", "fix-1"]);
    assert_ne!(refused.code(), Some(0), "{}", refused.report());
    assert!(env.ws_path(&repo, "fix-1").is_dir(), "{}", refused.report());
    session.wait().assert_ok();
    wait_for_status(
        &env,
        &repo,
        "the ended session's workspace done",
        "done",
        Duration::from_secs(20),
    );
    env.aw(&repo, ["clean", "fix-1"]).assert_ok();
}

/// A Claude Code process killed in the middle releases its workspace: the next `status`
/// says `interrupted`, and `clean` removes it.
fn a_killed_session_releases_its_workspace(backend: Backend) {
    let env = TestEnv::new();
    env.use_real_time();
    let repo = backend.repo(&env);
    let model = Model::start(&env, "sleep 120");
    let session = start_session(&env, &repo, &model);
    wait_for_status(
        &env,
        &repo,
        "the session's workspace running",
        "running",
        Duration::from_secs(60),
    );
    let pid = session.pid();
    session.signal("KILL");
    let _ = session.wait();
    // The Bash call's `sleep` outlives the client: end its group.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .status();
    wait_for_status(
        &env,
        &repo,
        "the killed session's workspace released",
        "interrupted",
        Duration::from_secs(20),
    );
    env.aw(&repo, ["clean", "fix-1"]).assert_ok();
}

both_backends!(
    claude_w_works_in_an_agent_workspace_workspace,
    the_hook_answers_create_and_remove,
    a_live_session_holds_its_workspace,
    a_killed_session_releases_its_workspace,
);

/// `integrate claude-code` adds exactly its two hooks, keeps the rest of the file, changes
/// nothing the second time, shows without writing under `--dry-run`, takes out exactly its
/// own under `--remove`, and refuses a file that is no JSON, leaving it as it was.
#[test]
fn integrate_adds_and_removes_only_its_own_hooks() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    let file = repo.join(".claude/settings.local.json");
    fs::create_dir_all(repo.join(".claude")).unwrap();
    let mine = r#"{"permissions":{"allow":["Bash(ls)"]},"hooks":{"WorktreeCreate":[{"hooks":[{"type":"command","command":"mine.sh"}]}]}}"#;
    fs::write(&file, mine).unwrap();
    let dry = env.aw(&repo, ["integrate", "claude-code", "--dry-run"]);
    dry.assert_ok();
    assert!(dry.stdout.starts_with("Would write "), "{}", dry.report());
    assert_eq!(fs::read_to_string(&file).unwrap(), mine);
    let added = env.aw(&repo, ["integrate", "claude-code"]);
    added.assert_ok();
    assert!(
        added
            .stdout
            .starts_with("Added WorktreeCreate, WorktreeRemove, SessionEnd hooks"),
        "{}",
        added.report()
    );
    let value: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(value["permissions"]["allow"][0], "Bash(ls)");
    assert_eq!(
        value["hooks"]["WorktreeCreate"][0]["hooks"][0]["command"],
        "mine.sh"
    );
    let ours = value["hooks"]["WorktreeCreate"][1]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(ours.ends_with("agent-workspace hook claude-code"), "{ours}");
    assert_eq!(
        value["hooks"]["WorktreeRemove"][0]["hooks"][0]["command"],
        ours
    );
    let skill = repo.join(".claude/skills/agent-workspace/SKILL.md");
    let written = fs::read_to_string(&skill).unwrap_or_default();
    assert_eq!(
        written,
        env.aw(&repo, ["skill"]).stdout,
        "{}",
        added.report()
    );
    assert!(written.starts_with("---\nname: agent-workspace\n"));
    let again = env.aw(&repo, ["integrate", "claude-code"]);
    again.assert_ok();
    assert!(again.stdout.contains("already runs"), "{}", again.report());
    let removed = env.aw(&repo, ["integrate", "claude-code", "--remove"]);
    removed.assert_ok();
    assert!(!skill.exists(), "{}", removed.report());
    let left: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        left,
        serde_json::from_str::<serde_json::Value>(mine).unwrap()
    );
    fs::write(&file, "{ not json").unwrap();
    let bad = env.aw(&repo, ["integrate", "claude-code"]);
    assert_eq!(bad.code(), Some(1), "{}", bad.report());
    assert!(
        bad.stderr.starts_with("Error: ")
            && bad.stderr.contains("is not valid JSON")
            && bad.stderr.contains("Hint: "),
        "{}",
        bad.report()
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), "{ not json");
    let user = env.aw(&repo, ["integrate", "claude-code", "--scope", "user"]);
    user.assert_ok();
    assert!(
        env.home().join(".claude/settings.json").is_file(),
        "{}",
        user.report()
    );
}
