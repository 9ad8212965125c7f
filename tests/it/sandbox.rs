//! `run --sandbox` and `shell --sandbox`: the command can write only its workspace and what
//! the backend needs, never runs unconfined, and every other guarantee holds. Against the
//! real bubblewrap, jj, git and direnv.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::backends::{git_ok, Backend};
use crate::harness::{wait_for_file, which, TestEnv};

/// Whether bubblewrap can make a sandbox on this machine. Where it cannot (or is missing),
/// the test fails, naming the cause, unless `AW_TEST_NO_SANDBOX=1` asks to leave the sandbox
/// tests out (as the nix build sandbox must): then it says so and stops.
pub(crate) fn sandbox_available() -> bool {
    let works = which("bwrap").is_some_and(|bwrap| {
        Command::new(bwrap)
            .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
            .args(["--unshare-pid", "--cap-drop", "ALL", "--", "true"])
            .status()
            .is_ok_and(|s| s.success())
    });
    if !works {
        assert!(
            std::env::var("AW_TEST_NO_SANDBOX").as_deref() == Ok("1"),
            "bubblewrap is missing or cannot start a sandbox here (scripts/install-tools.sh \
             installs it; user namespaces must be allowed); AW_TEST_NO_SANDBOX=1 leaves the \
             sandbox tests out"
        );
        eprintln!("SKIPPED (AW_TEST_NO_SANDBOX=1): bubblewrap cannot start a sandbox here");
    }
    works
}

/// A test environment with a repository of `backend`, when a sandbox can be made here.
fn setup(backend: Backend) -> Option<(TestEnv, std::path::PathBuf)> {
    if !sandbox_available() {
        return None;
    }
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    Some((env, repo))
}

/// A script that tries each write and read and prints one line per attempt.
fn probe_script(repo: &Path, other: &Path, home: &Path, tmp: &Path) -> String {
    format!(
        r#"
try() {{ if sh -c "$2" 2>/dev/null; then echo "$1 ok"; else echo "$1 denied"; fi; }}
try ws-write 'echo x > inside.txt'
try main-write 'echo x > {repo}/outside.txt'
try main-read 'cat {repo}/a.txt'
try other-write 'echo x > {other}/intruder.txt'
try home-write 'echo x > {home}/intruder.txt'
try etc-write 'echo x > /etc/intruder.txt'
try tmp-write 'echo x > {tmp}'
try remount 'mount -o remount,bind,rw / && echo x > {repo}/outside.txt'
try git-config 'echo "[core]" >> {repo}/.git/config'
try git-hooks 'echo x > {repo}/.git/hooks/pre-commit'
echo "sandbox=$AGENT_WORKSPACE_SANDBOX"
echo "envrc=$AW_TEST_VAR"
"#,
        repo = repo.display(),
        other = other.display(),
        home = home.display(),
        tmp = tmp.display(),
    )
}

fn confines_writes_and_hides_the_main_checkout(backend: Backend) {
    let Some((env, repo)) = setup(backend) else {
        return;
    };
    env.aw(&repo, ["run", "other", "--", "true"]).assert_ok();
    let other = env.ws_path(&repo, "other");
    let name = env
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let tmp = Path::new("/tmp").join(format!("{name}-private.txt"));
    let script = probe_script(&repo, &other, &env.home(), &tmp);
    let out = env.aw(&repo, ["run", "--sandbox", "w", "--", "sh", "-c", &script]);
    out.assert_ok();
    for line in [
        "ws-write ok",
        "main-write denied",
        "main-read denied",
        "other-write denied",
        "home-write denied",
        "etc-write denied",
        "tmp-write ok",
        "remount denied",
        "git-config denied",
        "git-hooks denied",
        "sandbox=bwrap",
        "envrc=from-envrc",
    ] {
        assert!(
            out.stdout.lines().any(|l| l == line),
            "no {line:?} in:\n{}",
            out.stdout
        );
    }
    let ws = env.ws_path(&repo, "w");
    assert!(ws.join("inside.txt").is_file());
    assert!(!repo.join("outside.txt").exists());
    assert!(!other.join("intruder.txt").exists());
    assert!(!env.home().join("intruder.txt").exists());
    assert!(!tmp.exists(), "the private /tmp was the host's");
    let record = env.metadata(&ws);
    assert_eq!(record["sandbox"]["network"], true, "{record}");
    assert_eq!(record["runs"][0]["sandbox"]["network"], true, "{record}");
}

fn commits_made_in_the_sandbox_reach_the_repository(backend: Backend) {
    let Some((env, repo)) = setup(backend) else {
        return;
    };
    let commit = match backend {
        Backend::Jj => "echo new > made.txt && jj commit -m sandboxed-commit && jj log -r @- --no-graph -T description",
        Backend::Git => "echo new > made.txt && git add made.txt && git commit -q -m sandboxed-commit && git log -1 --format=%s",
    };
    let out = env.aw(&repo, ["run", "--sandbox", "w", "--", "sh", "-c", commit]);
    out.assert_ok();
    assert!(out.stdout.contains("sandboxed-commit"), "{}", out.stdout);
    let seen = match backend {
        Backend::Jj => env.jj_ok(
            &repo,
            ["log", "--no-graph", "-r", "all()", "-T", "description"],
        ),
        Backend::Git => git_ok(&env, &repo, &["log", "--all", "--format=%s"]),
    };
    assert!(seen.contains("sandboxed-commit"), "{seen}");
}

fn exit_codes_and_sigterm_are_unchanged(backend: Backend) {
    let Some((env, repo)) = setup(backend) else {
        return;
    };
    env.aw(&repo, ["run", "--sandbox", "w", "--", "sh", "-c", "exit 7"])
        .assert_code(7);
    let record = env.metadata(&env.ws_path(&repo, "w"));
    assert_eq!(record["status"], "error");
    assert_eq!(record["exit_code"], 7);
    // The test's temp dir is under the host's /tmp, which the sandbox replaces: the command
    // marks its start in its workspace.
    let started = env.ws_path(&repo, "w").join("started");
    let script = "touch started; exec sleep 60";
    let running = env
        .aw_cmd(&repo)
        .args(["run", "--sandbox", "w", "--", "sh", "-c", script])
        .spawn();
    wait_for_file(&started);
    std::thread::sleep(std::time::Duration::from_millis(200));
    running.signal("TERM");
    running.wait().assert_code(143);
    let record = env.metadata(&env.ws_path(&repo, "w"));
    assert_eq!(record["status"], "interrupted", "{record}");
}

fn a_nested_run_stays_in_the_sandbox(backend: Backend) {
    let Some((env, repo)) = setup(backend) else {
        return;
    };
    let aw = crate::harness::AW;
    let script = format!(
        "{aw} run w -- sh -c 'echo nested=$AGENT_WORKSPACE_SANDBOX; echo x > {}/escape.txt || echo still-confined'",
        repo.display()
    );
    let out = env.aw(&repo, ["run", "--sandbox", "w", "--", "sh", "-c", &script]);
    out.assert_ok();
    assert!(out.stdout.contains("nested=bwrap"), "{}", out.stdout);
    assert!(out.stdout.contains("still-confined"), "{}", out.stdout);
    assert!(!repo.join("escape.txt").exists());
}

/// The same confinement for a user file permissions apply to (where the tests run as root,
/// an unprivileged user: bubblewrap then makes a user namespace).
fn an_unprivileged_user_is_confined_the_same(backend: Backend) {
    let Some((env, repo)) = setup(backend) else {
        return;
    };
    let script = format!(
        "echo x > inside.txt; echo y > {repo}/outside.txt 2>/dev/null || echo main-denied; \
         cat {repo}/a.txt 2>/dev/null || echo read-denied; \
         echo z >> {repo}/.git/config 2>/dev/null || echo config-denied",
        repo = repo.display()
    );
    let out = env
        .aw_cmd(&repo)
        .args(["run", "--sandbox", "w", "--", "sh", "-c", &script])
        .run_unprivileged();
    out.assert_ok();
    for line in ["main-denied", "read-denied", "config-denied"] {
        assert!(
            out.stdout.lines().any(|l| l == line),
            "no {line:?} in:\n{}",
            out.stdout
        );
    }
    assert!(!repo.join("outside.txt").exists());
    assert!(env.ws_path(&repo, "w").join("inside.txt").is_file());
}

/// While a sandboxed run lives, `status` says so and a second run waits with `--wait`.
fn a_live_sandboxed_run_holds_its_workspace(backend: Backend) {
    let Some((env, repo)) = setup(backend) else {
        return;
    };
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w");
    let release = ws.join("release");
    let running = env
        .aw_cmd(&repo)
        .args(["run", "--sandbox", "w", "--", "sh", "-c"])
        .arg("touch started; while [ ! -e release ]; do sleep 0.05; done")
        .spawn();
    wait_for_file(&ws.join("started"));
    let status = env.aw(&repo, ["status", "--json", "w"]);
    assert!(status.stdout.contains("\"running\""), "{}", status.stdout);
    let busy = env.aw(&repo, ["run", "w", "--", "true"]);
    busy.assert_code(125);
    assert!(
        busy.stderr
            .starts_with("Error: workspace \"w\" is busy: pid "),
        "{}",
        busy.stderr
    );
    let waiting = env
        .aw_cmd(&repo)
        .args(["run", "--wait", "w", "--", "true"])
        .spawn();
    fs::write(&release, "").unwrap();
    running.wait().assert_ok();
    waiting.wait().assert_ok();
}

crate::both_backends!(
    an_unprivileged_user_is_confined_the_same,
    a_live_sandboxed_run_holds_its_workspace,
    confines_writes_and_hides_the_main_checkout,
    commits_made_in_the_sandbox_reach_the_repository,
    exit_codes_and_sigterm_are_unchanged,
    a_nested_run_stays_in_the_sandbox,
);

#[test]
fn a_non_colocated_jj_repository_commits_from_the_sandbox() {
    if !sandbox_available() {
        return;
    }
    let env = TestEnv::new();
    env.jj(env.path(), ["git", "init", "--no-colocate", "plain"])
        .assert_ok();
    let repo = fs::canonicalize(env.path().join("plain")).unwrap();
    fs::write(repo.join("a.txt"), "a\n").unwrap();
    env.jj(&repo, ["commit", "-m", "initial"]).assert_ok();
    assert!(!repo.join(".git").exists());
    let out = env.aw(
        &repo,
        [
            "run",
            "--sandbox",
            "w",
            "--",
            "sh",
            "-c",
            "echo n > n.txt && jj commit -m from-sandbox",
        ],
    );
    out.assert_ok();
    let seen = env.jj_ok(
        &repo,
        ["log", "--no-graph", "-r", "all()", "-T", "description"],
    );
    assert!(seen.contains("from-sandbox"), "{seen}");
}

#[test]
fn no_network_leaves_only_loopback() {
    let Some((env, repo)) = setup(Backend::Git) else {
        return;
    };
    let list = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '";
    let open = env.aw(&repo, ["run", "--sandbox", "w", "--", "sh", "-c", list]);
    open.assert_ok();
    let closed = env.aw(
        &repo,
        [
            "run",
            "--sandbox",
            "--no-network",
            "w",
            "--",
            "sh",
            "-c",
            list,
        ],
    );
    closed.assert_ok();
    assert_eq!(closed.stdout.trim(), "lo", "{}", closed.stdout);
    assert_ne!(
        open.stdout.trim(),
        "lo",
        "the host's interfaces: {}",
        open.stdout
    );
    let record = env.metadata(&env.ws_path(&repo, "w"));
    assert_eq!(record["sandbox"]["network"], false, "{record}");
    let status = env.aw(&repo, ["status", "w"]);
    status.assert_ok();
    assert!(
        status
            .stdout
            .lines()
            .any(|l| l == "sandbox       bwrap, no network"),
        "{}",
        status.stdout
    );
}

#[test]
fn allowed_paths_are_writable_and_others_not() {
    let Some((env, repo)) = setup(Backend::Jj) else {
        return;
    };
    let allowed = env.home().join("agent-state");
    fs::create_dir_all(&allowed).unwrap();
    let script = format!(
        "echo x > {}/ok.txt && echo y > {}/no.txt",
        allowed.display(),
        env.home().display()
    );
    let out = env
        .aw_cmd(&repo)
        .args(["run", "--sandbox", "--allow-write"])
        .arg(&allowed)
        .args(["w", "--", "sh", "-c", &script])
        .run();
    out.assert_code(2);
    assert!(allowed.join("ok.txt").is_file());
    assert!(!env.home().join("no.txt").exists());
    let record = env.metadata(&env.ws_path(&repo, "w"));
    assert_eq!(
        record["sandbox"]["writable"][0],
        allowed.to_str().unwrap(),
        "{record}"
    );
}

#[test]
fn without_bubblewrap_nothing_runs_and_the_error_says_why() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    let marker = env.path().join("ran");
    let out = env
        .aw_cmd(&repo)
        .env("PATH", env.path_with_only(&["jj", "git", "direnv"]))
        .args(["run", "--sandbox", "w", "--", "touch"])
        .arg(&marker)
        .run();
    out.assert_code(125);
    assert!(!marker.exists(), "the command ran unconfined");
    assert!(!env.ws_path(&repo, "w").exists(), "a workspace was created");
    insta::assert_snapshot!(out.stderr, @r"
    Error: --sandbox needs bubblewrap (bwrap), which is not on PATH
    Hint: install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or run without --sandbox
    ");
}

#[test]
fn sandbox_options_need_sandbox() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    let out = env.aw(&repo, ["run", "--no-network", "w", "--", "true"]);
    out.assert_code(2);
    assert!(out.stderr.starts_with("Error: "), "{}", out.stderr);
    assert!(out.stderr.contains("--sandbox"), "{}", out.stderr);
    assert!(!env.ws_path(&repo, "w").exists());
}

#[test]
fn shell_sandbox_confines_the_shell() {
    let Some((env, repo)) = setup(Backend::Jj) else {
        return;
    };
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let out = env
        .aw_cmd(&repo)
        .env("SHELL", "/bin/sh")
        .args(["shell", "--sandbox", "w"])
        .stdin(&format!(
            "echo sandbox=$AGENT_WORKSPACE_SANDBOX\necho x > {}/outside.txt || echo confined\n",
            repo.display()
        ))
        .run();
    out.assert_ok();
    assert!(out.stdout.contains("sandbox=bwrap"), "{}", out.stdout);
    assert!(out.stdout.contains("confined"), "{}", out.stdout);
    assert!(!repo.join("outside.txt").exists());
}

/// Inside a container that dropped every capability (here: an outer bubblewrap with
/// `--cap-drop ALL`), bubblewrap cannot make a sandbox: the probe says so and why, and the
/// command does not run.
#[test]
fn an_unusable_bubblewrap_stops_the_run_with_the_known_cause() {
    let Some((env, repo)) = setup(Backend::Jj) else {
        return;
    };
    let marker = env.path().join("ran");
    let root = env.path().display().to_string();
    let out = env
        .cmd("bwrap", &repo)
        .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
        .args(["--bind", &root, &root, "--cap-drop", "ALL", "--"])
        .arg(crate::harness::AW)
        .args(["run", "--sandbox", "w", "--", "touch"])
        .arg(&marker)
        .run();
    out.assert_code(125);
    assert!(!marker.exists(), "the command ran unconfined");
    assert!(!env.ws_path(&repo, "w").exists(), "a workspace was created");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(
        lines[0].starts_with("Error: bubblewrap cannot create a sandbox here: ")
            && lines[0].contains("Operation not permitted"),
        "{}",
        out.stderr
    );
    assert!(
        lines.iter().any(
            |l| l.starts_with("Hint: the container drops the capabilities")
                && l.ends_with("agent-workspace never runs a --sandbox command unconfined")
        ),
        "{}",
        out.stderr
    );
}
