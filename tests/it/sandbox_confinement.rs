//! `run --sandbox` and `shell --sandbox` confine: the command writes only its workspace and
//! what is allowed, never the main checkout, even nested, unprivileged or without network.

use std::fs;
use std::path::Path;

use crate::backends::Backend;
use crate::sandbox_support::setup;

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
    let (env, repo) = setup(backend);
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

fn a_nested_run_stays_in_the_sandbox(backend: Backend) {
    let (env, repo) = setup(backend);
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
    let (env, repo) = setup(backend);
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

crate::both_backends!(
    an_unprivileged_user_is_confined_the_same,
    confines_writes_and_hides_the_main_checkout,
    a_nested_run_stays_in_the_sandbox,
);

#[test]
fn no_network_leaves_only_loopback() {
    let (env, repo) = setup(Backend::Git);
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
    let (env, repo) = setup(Backend::Jj);
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
fn shell_sandbox_confines_the_shell() {
    let (env, repo) = setup(Backend::Jj);
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
