//! The sandbox's walls toward the machine: the kernel's writable interfaces (`/proc/sys`,
//! `/proc/sysrq-trigger`, `/sys`), the host's IPC, UTS, cgroup and user namespaces, its unix
//! sockets, agent-workspace's lock files and the system calls a seccomp filter denies. Each
//! is checked as root and as an unprivileged user, on both backends.

use std::fs;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

use crate::backends::Backend;
use crate::harness::{Outcome, TestEnv};
use crate::sandbox_support::setup;

/// Sockets made outside `/tmp` (which the sandbox replaces anyway), removed when dropped.
struct Sockets {
    dir: PathBuf,
    run: Option<PathBuf>,
    _listeners: Vec<UnixListener>,
}

impl Sockets {
    fn new(env: &TestEnv) -> Sockets {
        let name = env
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let dir = Path::new("/var/tmp").join(format!("{name}-sockets"));
        let mut listeners = vec![];
        for sub in [
            "xdg",
            "ssh",
            "docker",
            "allowed",
            "tmux-0",
            "nix/daemon-socket",
        ] {
            fs::create_dir_all(dir.join(sub)).unwrap();
        }
        for path in [
            "xdg/bus",
            "ssh/agent",
            "docker/docker.sock",
            "allowed/ok.sock",
            // Named by no variable: a tmux server's and a nix daemon's, found by listening.
            "tmux-0/default",
            "nix/daemon-socket/socket",
        ] {
            listeners.push(UnixListener::bind(dir.join(path)).unwrap());
        }
        // `/run` is writable by root only: as root (CI) a socket there too.
        let run = Path::new("/run").join(format!("{name}.sock"));
        let run = match UnixListener::bind(&run) {
            Ok(listener) => {
                listeners.push(listener);
                Some(run)
            }
            Err(_) => {
                assert!(
                    !crate::harness::running_as_root(),
                    "root cannot make a socket in /run"
                );
                None
            }
        };
        Sockets {
            dir,
            run,
            _listeners: listeners,
        }
    }
}

impl Drop for Sockets {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
        if let Some(run) = &self.run {
            let _ = fs::remove_file(run);
        }
    }
}

/// The probe: one line per wall, `<what> <state>`.
fn probe_script(sockets: &Sockets, namespace: &Path) -> String {
    let run = sockets
        .run
        .as_ref()
        .map_or(String::new(), |p| p.display().to_string());
    format!(
        r#"
find /proc/sys /sys -maxdepth 3 -writable 2>/dev/null | head -n 3 | sed 's/^/writable /'
if [ -e /proc/sysrq-trigger ] && [ -w /proc/sysrq-trigger ]; then echo "writable /proc/sysrq-trigger"; fi
for ns in ipc uts cgroup user; do echo "ns $ns $(readlink /proc/self/ns/$ns)"; done
for s in {dir}/xdg/bus {dir}/ssh/agent {dir}/docker/docker.sock {dir}/allowed/ok.sock {dir}/tmux-0/default {dir}/nix/daemon-socket/socket {run}; do
  if [ -S "$s" ]; then echo "socket visible $s"; else echo "socket hidden $s"; fi
done
if [ -e {namespace}/.locks ]; then echo "locks visible"; else echo "locks hidden"; fi
grep '^Seccomp:' /proc/self/status | tr -s '\t ' ' '
{python} -c '
import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
keyctl = {{"x86_64": 250, "aarch64": 219, "riscv64": 219}}[platform.machine()]
for name, call in [("ptrace", lambda: libc.ptrace(0, 0, 0, 0)),
                   ("keyctl", lambda: libc.syscall(keyctl, 0, -3, 0))]:
    ctypes.set_errno(0)
    r = call()
    print("syscall", name, "denied" if r == -1 and ctypes.get_errno() == 1 else "allowed")
'
"#,
        dir = sockets.dir.display(),
        namespace = namespace.display(),
        python = python().display(),
    )
}

/// A python every user may run (the probe's system calls need one).
fn python() -> PathBuf {
    ["/usr/bin/python3", "/usr/local/bin/python3"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .or_else(|| crate::harness::which("python3"))
        .expect("the sandbox probe needs python3 on PATH")
}

fn host_namespace(kind: &str) -> String {
    fs::read_link(format!("/proc/self/ns/{kind}"))
        .unwrap()
        .display()
        .to_string()
}

fn check_walls(out: &Outcome, sockets: &Sockets) {
    out.assert_ok();
    let lines: Vec<&str> = out.stdout.lines().collect();
    let has = |line: &str| lines.contains(&line);
    assert!(
        !lines.iter().any(|l| l.starts_with("writable ")),
        "the kernel's interfaces are writable:\n{}",
        out.stdout
    );
    for kind in ["ipc", "uts", "cgroup", "user"] {
        let host = format!("ns {kind} {}", host_namespace(kind));
        assert!(
            lines.iter().any(|l| l.starts_with(&format!("ns {kind} "))) && !has(&host),
            "the host's {kind} namespace is shared:\n{}",
            out.stdout
        );
    }
    let dir = sockets.dir.display();
    let mut hidden = vec![
        format!("{dir}/xdg/bus"),
        format!("{dir}/ssh/agent"),
        format!("{dir}/docker/docker.sock"),
        format!("{dir}/tmux-0/default"),
        format!("{dir}/nix/daemon-socket/socket"),
    ];
    hidden.extend(sockets.run.iter().map(|p| p.display().to_string()));
    for socket in hidden {
        assert!(
            has(&format!("socket hidden {socket}")),
            "{socket} is reachable:\n{}",
            out.stdout
        );
    }
    assert!(
        has(&format!("socket visible {dir}/allowed/ok.sock")),
        "the allowed socket is missing:\n{}",
        out.stdout
    );
    for line in [
        "locks hidden",
        "Seccomp: 2",
        "syscall ptrace denied",
        "syscall keyctl denied",
    ] {
        assert!(has(line), "no {line:?} in:\n{}", out.stdout);
    }
}

fn walls_hold(backend: Backend, unprivileged: bool) {
    let (env, repo) = setup(backend);
    let sockets = Sockets::new(&env);
    let config = env.path().join("xdg/config/agent-workspace");
    fs::create_dir_all(&config).unwrap();
    fs::write(
        config.join("config.toml"),
        format!(
            "[sandbox]\nsockets = [\"{}/allowed/ok.sock\"]\n",
            sockets.dir.display()
        ),
    )
    .unwrap();
    // The workspace exists before the sandboxed run, so its lock files do too.
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let script = probe_script(&sockets, &env.namespace_dir(&repo));
    let cmd = env
        .aw_cmd(&repo)
        .env("XDG_RUNTIME_DIR", sockets.dir.join("xdg"))
        .env("SSH_AUTH_SOCK", sockets.dir.join("ssh/agent"))
        .env(
            "DOCKER_HOST",
            format!("unix://{}/docker/docker.sock", sockets.dir.display()),
        )
        .args(["run", "--sandbox", "w", "--", "sh", "-c", &script]);
    let out = match unprivileged {
        true => cmd.run_unprivileged(),
        false => cmd.run(),
    };
    check_walls(&out, &sockets);
    let record = env.metadata(&env.ws_path(&repo, "w"));
    assert_eq!(
        record["sandbox"]["sockets"][0],
        format!("{}/allowed/ok.sock", sockets.dir.display()),
        "{record}"
    );
}

fn walls_hold_for_the_invoking_user(backend: Backend) {
    walls_hold(backend, false);
}

fn walls_hold_for_an_unprivileged_user(backend: Backend) {
    walls_hold(backend, true);
}

crate::both_backends!(
    walls_hold_for_the_invoking_user,
    walls_hold_for_an_unprivileged_user,
);

/// A repository's file cannot open a host socket to the agents it runs.
#[test]
fn a_repository_file_cannot_allow_a_socket() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    fs::write(
        repo.join("agent-workspace.toml"),
        "[sandbox]\nsockets = [\"/run/docker.sock\"]\n",
    )
    .unwrap();
    let out = env.aw(&repo, ["run", "w", "--", "true"]);
    out.assert_code(2);
    assert!(
        out.stderr
            .contains("sets sandbox.sockets, which only the user's own file may set"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("Hint: move sandbox.sockets to "),
        "{}",
        out.stderr
    );
    assert!(!env.ws_path(&repo, "w").exists());
}

/// jj's `store/git_target` names the git directory a store uses. The repository's is not
/// mounted in a sandbox at all (it cannot be rewritten from there), and the one in the
/// workspace's own store is never read to decide what a later sandbox mounts (it could name
/// `~/.ssh`, or `/etc` as root).
fn a_git_target_the_agent_rewrote_opens_nothing(unprivileged: bool) {
    let (env, repo) = setup(Backend::Jj);
    let outside = env.home().join("secrets");
    fs::create_dir_all(&outside).unwrap();
    let target = repo.join(".jj/repo/store/git_target");
    let before = fs::read_to_string(&target).unwrap();
    let first = env
        .aw_cmd(&repo)
        .args(["run", "--sandbox", "w", "--", "sh", "-c"])
        .arg(format!(
            "printf %s {outside} > {target} 2>/dev/null || echo repository-denied; \
             printf %s {outside} > .jj/repo/store/git_target && echo own-rewritten",
            outside = outside.display(),
            target = target.display()
        ));
    let first = match unprivileged {
        true => first.run_unprivileged(),
        false => first.run(),
    };
    first.assert_ok();
    assert!(
        first.stdout.contains("repository-denied\nown-rewritten"),
        "{}",
        first.report()
    );
    assert_eq!(fs::read_to_string(&target).unwrap(), before);
    let second = env
        .aw_cmd(&repo)
        .args(["run", "--sandbox", "w", "--", "sh", "-c"])
        .arg(format!(
            "echo pwned > {}/planted || true",
            outside.display()
        ));
    let second = match unprivileged {
        true => second.run_unprivileged(),
        false => second.run(),
    };
    assert!(!outside.join("planted").exists(), "{}", second.stderr);
}

#[test]
fn a_git_target_the_agent_rewrote_opens_nothing_for_the_invoking_user() {
    a_git_target_the_agent_rewrote_opens_nothing(false);
}

#[test]
fn a_git_target_the_agent_rewrote_opens_nothing_for_an_unprivileged_user() {
    a_git_target_the_agent_rewrote_opens_nothing(true);
}
