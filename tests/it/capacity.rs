//! Limits on new workspaces (`limits.*`) and each workspace's TCP ports (`ports.count`).

use std::fs;
use std::net::TcpListener;

use crate::backends::Backend;
use crate::harness::TestEnv;

fn port_of(env: &TestEnv, repo: &std::path::Path, id: &str) -> (String, String) {
    let out = env.aw(
        repo,
        [
            "run",
            id,
            "--",
            "sh",
            "-c",
            "echo \"$AGENT_WORKSPACE_PORT $AGENT_WORKSPACE_PORTS\"",
        ],
    );
    out.assert_ok();
    let mut words = out.stdout.split_whitespace().map(str::to_string);
    (
        words.next().unwrap_or_default(),
        words.next().unwrap_or_default(),
    )
}

fn max_workspaces_refuses_one_more_and_touches_nothing(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    fs::write(
        repo.join("agent-workspace.toml"),
        "[limits]\nmax_workspaces = 2\n",
    )
    .unwrap();
    env.aw(&repo, ["run", "a", "--", "true"]).assert_ok();
    env.aw(&repo, ["run", "b", "--", "true"]).assert_ok();
    let out = env.aw(&repo, ["run", "c", "--", "true"]);
    out.assert_code(125);
    insta::assert_snapshot!(out.stderr, @r"
    Error: the repository already has 2 workspaces, the configured limits.max_workspaces
    Hint: clean workspaces you no longer need (`agent-workspace status` lists them; `agent-workspace clean --status done` removes finished ones), or raise limits.max_workspaces
    ");
    assert!(!env.ws_path(&repo, "c").exists());
    let status = env.aw(&repo, ["status"]);
    assert!(!status.stdout.contains("\nc "), "{}", status.stdout);
    // Existing workspaces still run.
    env.aw(&repo, ["run", "a", "--", "true"]).assert_ok();
}

fn ports_are_unique_stable_and_recorded(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let (a, _) = port_of(&env, &repo, "a");
    let (b, _) = port_of(&env, &repo, "b");
    assert!(
        a.parse::<u16>().is_ok() && b.parse::<u16>().is_ok(),
        "{a} {b}"
    );
    assert_ne!(a, b);
    assert_eq!(
        port_of(&env, &repo, "a").0,
        a,
        "the port changed between runs"
    );
    let record = env.metadata(&env.ws_path(&repo, "a"));
    assert_eq!(record["ports"][0].to_string(), a, "{record}");
}

crate::both_backends!(
    max_workspaces_refuses_one_more_and_touches_nothing,
    ports_are_unique_stable_and_recorded,
);

#[test]
fn min_free_disk_refuses_a_new_workspace() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    fs::write(
        repo.join("agent-workspace.toml"),
        "[limits]\nmin_free_disk = \"1000000TiB\"\n",
    )
    .unwrap();
    let out = env.aw(&repo, ["run", "w", "--", "true"]);
    out.assert_code(125);
    let first = out.stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("Error: ")
            && first.contains("less than the configured limits.min_free_disk of"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("\nHint: "), "{}", out.stderr);
    assert!(!env.ws_path(&repo, "w").exists());
    assert!(!env.workspace_names(&repo).contains(&"w".to_string()));
}

#[test]
fn a_bad_size_is_a_configuration_error() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    fs::write(
        repo.join("agent-workspace.toml"),
        "[limits]\nmin_free_disk = \"lots\"\n",
    )
    .unwrap();
    let out = env.aw(&repo, ["run", "w", "--", "true"]);
    insta::assert_snapshot!(out, @r#"
    --- stderr ---
    Error: invalid configuration in [TMP]/repo/agent-workspace.toml: limits.min_free_disk = "lots" is not a size (e.g. "5GiB", "500MB")
    Hint: fix the key or value named above; docs/configuration.md lists every key
    [exit 2]
    "#);
    assert!(!env.ws_path(&repo, "w").exists());
}

#[test]
fn a_port_range_skips_ports_in_use() {
    // The search starts where the namespace and the id point: learn it, remove the
    // workspace, hold that port, and create the same id again.
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    fs::write(repo.join("agent-workspace.toml"), "[ports]\ncount = 3\n").unwrap();
    let (port, all) = port_of(&env, &repo, "p");
    let ports: Vec<u16> = all.split(',').map(|p| p.parse().unwrap()).collect();
    let start: u16 = port.parse().unwrap();
    assert_eq!(ports, vec![start, start + 1, start + 2], "{all}");
    env.aw(&repo, ["clean", "p"]).assert_ok();
    let _held = TcpListener::bind(("127.0.0.1", start + 1)).expect("bind the port to hold");
    let (_, all) = port_of(&env, &repo, "p");
    let got: Vec<u16> = all.split(',').map(|p| p.parse().unwrap()).collect();
    assert_eq!(got.len(), 3, "{all}");
    assert!(
        !got.contains(&(start + 1)),
        "a port in use was handed out: {all}"
    );
}

/// `ports.count = 0` turns ports off: no ports recorded, none in the command's environment.
#[test]
fn a_port_count_of_zero_gives_no_ports() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    fs::write(repo.join("agent-workspace.toml"), "[ports]\ncount = 0\n").unwrap();
    let out = env.aw(
        &repo,
        [
            "run",
            "w",
            "--",
            "sh",
            "-c",
            "echo \"port=${AGENT_WORKSPACE_PORT-unset} ports=${AGENT_WORKSPACE_PORTS-unset}\"",
        ],
    );
    out.assert_ok();
    assert_eq!(out.stdout, "port=unset ports=unset\n", "{}", out.report());
    let record = env.metadata(&env.ws_path(&repo, "w"));
    assert!(record.get("ports").is_none(), "{record:#}");
}

/// A server on `[::1]` only holds its port as surely as one on 127.0.0.1.
#[test]
fn a_port_in_use_on_ipv6_loopback_is_skipped() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    let (port, _) = port_of(&env, &repo, "p");
    env.aw(&repo, ["clean", "p"]).assert_ok();
    let start: u16 = port.parse().unwrap();
    let _held = TcpListener::bind(("::1", start))
        .expect("bind the port on ::1 (the machine needs IPv6 loopback for this test)");
    let (again, _) = port_of(&env, &repo, "p");
    assert_ne!(again, port, "a port in use on ::1 was handed out");
}

/// The same id in two repositories starts its search at different ports.
#[test]
fn the_first_port_depends_on_the_repository_too() {
    let first = TestEnv::new();
    let one = Backend::Git.repo(&first);
    let second = TestEnv::new();
    let two = Backend::Git.repo(&second);
    let pairs: Vec<(String, String)> = ["p", "q"]
        .iter()
        .map(|id| (port_of(&first, &one, id).0, port_of(&second, &two, id).0))
        .collect();
    assert!(
        pairs.iter().any(|(a, b)| a != b),
        "the same ids got the same ports in two repositories: {pairs:?}"
    );
}
