//! A sandboxed run whose network is allowed host by host (`sandbox.allowed_hosts`): its only
//! way out is agent-workspace's proxy, which lets through the hosts listed (by CONNECT and by
//! plain HTTP) and refuses every other, recording the refusal where `status` shows it. Tried
//! as an agent would, with curl against servers on the host's loopback, as the invoking user
//! and as an unprivileged one, on both backends.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::backends::Backend;
use crate::sandbox_support::{setup, without_limits_note};

/// A server on the host's `address` answering every request with `body`; counts the
/// connections it took.
struct Server {
    port: u16,
    taken: Arc<AtomicUsize>,
}

impl Server {
    fn start(address: &str, body: &'static str) -> Server {
        let listener = TcpListener::bind((address, 0)).expect("a loopback port");
        let port = listener.local_addr().unwrap().port();
        let taken = Arc::new(AtomicUsize::new(0));
        let counter = taken.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                counter.fetch_add(1, Ordering::SeqCst);
                let mut stream = stream;
                let mut head = vec![];
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                    head.push(byte[0]);
                }
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        Server { port, taken }
    }

    fn taken(&self) -> usize {
        self.taken.load(Ordering::SeqCst)
    }
}

/// The agent's probe: the allowed host by plain HTTP and through a tunnel, the other host,
/// the allowed host directly (no proxy), and the proxy the run was told of.
fn probe(allowed: &Server, other: &Server) -> String {
    format!(
        "curl -sS --max-time 20 http://127.0.0.2:{a}/; echo \" plain=$?\"
curl -sS --max-time 20 --proxytunnel http://127.0.0.2:{a}/; echo \" tunnel=$?\"
curl -sS --max-time 20 http://127.0.0.3:{o}/; echo \" other=$?\"
curl -sS --max-time 20 --proxytunnel http://127.0.0.3:{o}/; echo \" other-tunnel=$?\"
curl -sS --max-time 5 --noproxy '*' http://127.0.0.2:{a}/ 2>/dev/null; echo \" direct=$?\"
echo \"proxy=$HTTPS_PROXY sandbox=$AGENT_WORKSPACE_SANDBOX\"
",
        a = allowed.port,
        o = other.port
    )
}

fn only_the_allowed_host_is_reached(backend: Backend, unprivileged: bool) {
    let (env, repo) = setup(backend);
    let allowed = Server::start("127.0.0.2", "allowed-ok");
    let other = Server::start("127.0.0.3", "leaked");
    env.user_config("[sandbox]\nallowed_hosts = [\"127.0.0.2\"]\n");
    let cmd = env.aw_cmd(&repo).args([
        "run",
        "--sandbox",
        "w",
        "--",
        "sh",
        "-c",
        &probe(&allowed, &other),
    ]);
    let out = match unprivileged {
        true => cmd.run_unprivileged(),
        false => cmd.run(),
    };
    out.assert_ok();
    let stdout = &out.stdout;
    assert!(stdout.contains("allowed-ok plain=0"), "{}", out.report());
    assert!(stdout.contains("allowed-ok tunnel=0"), "{}", out.report());
    let refusal = format!(
        "agent-workspace: 127.0.0.3:{} is not in sandbox.allowed_hosts",
        other.port
    );
    assert!(stdout.contains(&refusal), "{}", out.report());
    assert!(!stdout.contains("leaked"), "{}", out.report());
    assert_eq!(
        other.taken(),
        0,
        "the other host was reached: {}",
        out.report()
    );
    assert!(
        !stdout.contains("direct=0"),
        "the allowed host was reached without the proxy: {}",
        out.report()
    );
    assert!(
        stdout.contains("proxy=http://127.0.0.1:")
            && stdout.contains("sandbox=bwrap,allowed-hosts"),
        "{}",
        out.report()
    );
    assert!(allowed.taken() >= 2, "{}", out.report());
    let said = without_limits_note(&out.stderr);
    assert!(
        said.contains(&format!(
            "Warning: the sandbox's proxy refused the run 2 connections (not in sandbox.allowed_hosts): 127.0.0.3:{} (2 times, first at ",
            other.port
        )) && said.contains("Hint: if the run needs them, add them to sandbox.allowed_hosts"),
        "{}",
        out.report()
    );
    let ws = env.ws_path(&repo, "w");
    let record = env.metadata(&ws);
    assert_eq!(
        record["refused_hosts"][0]["host"],
        format!("127.0.0.3:{}", other.port),
        "{record}"
    );
    assert_eq!(record["refused_hosts"][0]["times"], 2, "{record}");
    assert_eq!(
        record["sandbox"]["allowed_hosts"][0], "127.0.0.2",
        "{record}"
    );
    let status = env.aw(&repo, ["status", "w"]);
    status.assert_ok();
    assert!(
        status
            .stdout
            .lines()
            .any(|l| l == "sandbox       bwrap, network to 127.0.0.2 only"),
        "{}",
        status.stdout
    );
    assert!(
        status
            .stdout
            .lines()
            .any(|l| l.starts_with("refused hosts ")
                && l.contains(&format!("127.0.0.3:{} (2 times, first at ", other.port))),
        "{}",
        status.stdout
    );
    // A later run that is refused nothing clears the list.
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    assert!(env.metadata(&ws).get("refused_hosts").is_none());
}

fn only_the_allowed_host_is_reached_by_the_invoking_user(backend: Backend) {
    only_the_allowed_host_is_reached(backend, false);
}

fn only_the_allowed_host_is_reached_by_an_unprivileged_user(backend: Backend) {
    only_the_allowed_host_is_reached(backend, true);
}

crate::both_backends!(
    only_the_allowed_host_is_reached_by_the_invoking_user,
    only_the_allowed_host_is_reached_by_an_unprivileged_user,
);

/// A repository's file may narrow the user's list, never widen it: a host only it names is
/// refused.
#[test]
fn a_repository_file_only_narrows_the_sandbox_hosts() {
    let (env, repo) = setup(Backend::Jj);
    let allowed = Server::start("127.0.0.2", "allowed-ok");
    let other = Server::start("127.0.0.3", "leaked");
    env.user_config("[sandbox]\nallowed_hosts = [\"127.0.0.2\"]\n");
    std::fs::write(
        repo.join("agent-workspace.toml"),
        "[sandbox]\nallowed_hosts = [\"127.0.0.3\", \"127.0.0.2\"]\n",
    )
    .unwrap();
    let out = env.aw(
        &repo,
        [
            "run",
            "--sandbox",
            "w",
            "--",
            "sh",
            "-c",
            &probe(&allowed, &other),
        ],
    );
    out.assert_ok();
    assert!(
        out.stdout.contains("allowed-ok plain=0"),
        "{}",
        out.report()
    );
    assert!(!out.stdout.contains("leaked"), "{}", out.report());
    assert_eq!(other.taken(), 0, "{}", out.report());
    // Narrowed to nothing: every host is refused.
    std::fs::write(
        repo.join("agent-workspace.toml"),
        "[sandbox]\nallowed_hosts = [\"127.0.0.3\"]\n",
    )
    .unwrap();
    let out = env.aw(
        &repo,
        ["run", "w", "--", "sh", "-c", &probe(&allowed, &other)],
    );
    out.assert_ok();
    assert!(!out.stdout.contains("allowed-ok"), "{}", out.report());
    assert!(!out.stdout.contains("leaked"), "{}", out.report());
    let status = env.aw(&repo, ["status", "w"]);
    assert!(
        status
            .stdout
            .lines()
            .any(|l| l == "sandbox       bwrap, no host allowed"),
        "{}",
        status.stdout
    );
}

/// A host that is no host is a configuration error, said before anything runs.
#[test]
fn a_bad_allowed_host_is_an_error_with_a_hint() {
    let (env, repo) = setup(Backend::Jj);
    env.user_config("[sandbox]\nallowed_hosts = [\"*\"]\n");
    let out = env.aw(&repo, ["run", "--sandbox", "w", "--", "true"]);
    assert_eq!(out.code(), Some(2), "{}", out.report());
    assert!(
        out.stderr.starts_with("Error: ")
            && out
                .stderr
                .contains("sandbox.allowed_hosts: \"*\" is not a host such as")
            && out.stderr.contains("Hint: "),
        "{}",
        out.report()
    );
    assert!(!env.ws_path(&repo, "w").exists(), "{}", out.report());
}
