//! What one sandboxed run may take of the machine (`[sandbox.limits]` in the user's file):
//! processes, memory and CPUs through a cgroup, and bounded tmpfs. Each is tried as a runaway
//! agent would, against the built binary and the real bubblewrap; the host stays fine.
//!
//! The cgroup ones need a cgroup agent-workspace can make: as root, a writable cgroup v2 or
//! v1 hierarchy. Where there is none, they fail saying so, never pass unchecked.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::backends::Backend;
use crate::harness::{running_as_root, TestEnv};
use crate::sandbox_support::setup;

/// The cgroup hierarchies a run's cgroup is made in (each with the controller it is for):
/// v1's below this process's own cgroup, v2's below the root of the unified hierarchy.
fn hierarchies() -> Vec<PathBuf> {
    let own = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mut dirs = vec![];
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        for name in ["pids", "memory", "cpu"] {
            if controllers.split(',').any(|c| c == name) {
                dirs.push(
                    Path::new("/sys/fs/cgroup")
                        .join(name)
                        .join(path.trim_start_matches('/')),
                );
            }
        }
    }
    dirs.push("/sys/fs/cgroup/agent-workspace".into());
    dirs
}

/// The cgroups the run supervised by `pid` (its record's `pid`) made that are still there.
fn leftover_cgroups(record: &serde_json::Value) -> Vec<PathBuf> {
    let pid = record["pid"]
        .as_u64()
        .expect("the record names its supervisor");
    let prefix = format!("agent-workspace-{pid}-");
    hierarchies()
        .iter()
        .filter_map(|dir| fs::read_dir(dir).ok())
        .flatten()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

/// Asserts that this host can give a run a cgroup: as root, with a pids and memory
/// controller mounted writable (v1 or v2).
fn require_cgroups() {
    assert!(
        running_as_root(),
        "the cgroup limits of a sandboxed run are tested as root (as CI runs them): run the \
         test suite as root, or leave these tests out: cargo test -- --skip sandbox_limits"
    );
    let v1 = ["pids", "memory"].iter().all(|c| {
        Path::new("/sys/fs/cgroup")
            .join(c)
            .join("cgroup.procs")
            .exists()
    });
    let v2 = fs::read_to_string("/sys/fs/cgroup/cgroup.controllers")
        .is_ok_and(|c| c.contains("memory") && c.contains("pids"));
    assert!(
        v1 || v2,
        "this host has no cgroup v1 pids and memory hierarchies and no cgroup v2 with those \
         controllers at /sys/fs/cgroup: the limits cannot be tested here"
    );
}

/// 300 processes under `pids = 64`: the fork fails inside, the run fails, the host is fine,
/// and nothing of the cgroup is left.
fn a_fork_bomb_is_stopped_by_the_pids_limit_in_a_sandbox(backend: Backend) {
    let (env, repo) = setup(backend);
    require_cgroups();
    env.user_config("[sandbox.limits]\npids = 64\n");
    let began = Instant::now();
    let out = env.aw(
        &repo,
        [
            "run",
            "--sandbox",
            "w",
            "--",
            "sh",
            "-c",
            "i=0; while [ $i -lt 300 ]; do sleep 60 & i=$((i+1)); done; echo all 300 started",
        ],
    );
    assert_ne!(out.code(), Some(0), "{}", out.report());
    assert!(!out.stdout.contains("all 300 started"), "{}", out.report());
    assert!(
        began.elapsed() < Duration::from_secs(50),
        "the run's sleeps outlived it:\n{}",
        out.report()
    );
    let record = env.metadata(&env.ws_path(&repo, "w"));
    assert_eq!(record["status"], "error", "{record}");
    assert_eq!(record["sandbox"]["limits"]["pids"], 64, "{record}");
    assert_eq!(record["limit_hit"], "pids", "{record}");
    // The host still starts processes, and the run's cgroup is gone.
    env.cmd("true", &repo).run().assert_ok();
    assert_eq!(leftover_cgroups(&record), Vec::<PathBuf>::new());
}

/// A command allocating 512 MiB under `memory = "128M"` is killed, and the run is recorded
/// (and shown) as out of memory.
fn a_memory_hog_is_killed_and_recorded_as_out_of_memory_in_a_sandbox(backend: Backend) {
    let (env, repo) = setup(backend);
    require_cgroups();
    env.user_config("[sandbox.limits]\nmemory = \"128M\"\n");
    let out = env.aw(
        &repo,
        [
            "run",
            "--sandbox",
            "w",
            "--",
            "awk",
            "BEGIN { s = \"x\"; for (i = 0; i < 29; i++) s = s s; print length(s) }",
        ],
    );
    out.assert_code(137);
    assert!(!out.stdout.contains("536870912"), "{}", out.report());
    insta::assert_snapshot!(out.stderr, @r"
    Warning: the command was killed for want of memory: it reached the sandbox's memory limit (sandbox.limits.memory = 128 MiB)
    Hint: raise sandbox.limits.memory in your own configuration file if the command needs more
    ");
    let record = env.metadata(&env.ws_path(&repo, "w"));
    assert_eq!(record["status"], "error", "{record}");
    assert_eq!(record["signal"], 9, "{record}");
    assert_eq!(record["limit_hit"], "memory", "{record}");
    assert_eq!(record["runs"][0]["limit_hit"], "memory", "{record}");
    let status = env.aw(&repo, ["status", "w"]);
    status.assert_ok();
    let line = status
        .stdout
        .lines()
        .find(|l| l.starts_with("exit code"))
        .unwrap_or_default()
        .to_string();
    insta::assert_snapshot!(line, @"exit code     137 (out of memory: killed at the sandbox's memory limit)");
    assert_eq!(leftover_cgroups(&record), Vec::<PathBuf>::new());
}

/// Writing past `tmp = "16M"` in `/tmp` or `/dev/shm` fails with ENOSPC.
fn writing_past_the_tmp_limit_fails_with_no_space_in_a_sandbox(backend: Backend) {
    let (env, repo) = setup(backend);
    env.user_config("[sandbox.limits]\ntmp = \"16M\"\n");
    let out = env.aw(
        &repo,
        [
            "run",
            "--sandbox",
            "w",
            "--",
            "sh",
            "-c",
            "for d in /tmp /dev/shm; do head -c 32M /dev/zero > $d/big || echo \"full $d\"; \
             head -c 8M /dev/zero > $d/small 2>/dev/null; rm -f $d/big $d/small; done",
        ],
    );
    out.assert_ok();
    assert_eq!(out.stdout, "full /tmp\nfull /dev/shm\n", "{}", out.report());
    assert!(
        out.stderr.contains("No space left on device"),
        "{}",
        out.report()
    );
}

/// `cpus = 1` on a host with more: `nproc` inside says 1.
fn nproc_inside_matches_the_cpus_limit_in_a_sandbox(backend: Backend) {
    let (env, repo) = setup(backend);
    require_cgroups();
    env.user_config("[sandbox.limits]\ncpus = 0.5\n");
    let out = env.aw(&repo, ["run", "--sandbox", "w", "--", "nproc"]);
    out.assert_ok();
    assert_eq!(out.stdout, "1\n", "{}", out.report());
    let record = env.metadata(&env.ws_path(&repo, "w"));
    assert_eq!(record["sandbox"]["limits"]["cpus"], 0.5, "{record}");
    assert_eq!(leftover_cgroups(&record), Vec::<PathBuf>::new());
}

crate::both_backends!(
    a_fork_bomb_is_stopped_by_the_pids_limit_in_a_sandbox,
    a_memory_hog_is_killed_and_recorded_as_out_of_memory_in_a_sandbox,
    writing_past_the_tmp_limit_fails_with_no_space_in_a_sandbox,
    nproc_inside_matches_the_cpus_limit_in_a_sandbox,
);

/// The defaults apply without any configuration: a cgroup with 4096 processes at most.
#[test]
fn the_default_limits_apply_without_configuration_in_a_sandbox() {
    let (env, repo) = setup(Backend::Git);
    require_cgroups();
    let out = env.aw(&repo, ["run", "--sandbox", "w", "--", "true"]);
    out.assert_ok();
    assert_eq!(out.stderr, "", "{}", out.report());
    let record = env.metadata(&env.ws_path(&repo, "w"));
    let limits = &record["sandbox"]["limits"];
    assert_eq!(limits["pids"], 4096, "{record}");
    assert!(limits["memory"].as_u64().is_some_and(|m| m > 0), "{record}");
    assert!(limits["tmp"].as_u64().is_some_and(|m| m > 0), "{record}");
    assert!(limits["cgroup"].is_string(), "{record}");
    assert_eq!(leftover_cgroups(&record), Vec::<PathBuf>::new());
}

/// As an unprivileged user with no delegated cgroup: an explicit limit is an error that
/// names why, before anything is made; the defaults alone let the run go, said once.
#[test]
fn a_limit_that_cannot_be_applied_is_an_error_in_a_sandbox() {
    let (env, repo) = setup(Backend::Git);
    assert!(
        running_as_root(),
        "this test runs agent-workspace as an unprivileged user, which needs root to start"
    );
    env.user_config("[sandbox.limits]\nmemory = \"1G\"\n");
    let out = env
        .aw_cmd(&repo)
        .args(["run", "--sandbox", "w", "--", "touch", "ran"])
        .run_unprivileged();
    out.assert_code(125);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(
        lines[0].starts_with(
            "Error: sandbox.limits.memory cannot be applied on this host: no cgroup agent-workspace may use ("
        ),
        "{}",
        out.report()
    );
    assert!(
        lines[1].starts_with("Hint: ") && lines[1].contains("sandbox.limits"),
        "{}",
        out.report()
    );
    assert!(!env.ws_path(&repo, "w").exists(), "a workspace was made");
    env.user_config("");
    let out = env
        .aw_cmd(&repo)
        .args(["run", "--sandbox", "w", "--", "touch", "ran"])
        .run_unprivileged();
    out.assert_ok();
    let notes: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("no process or memory limit"))
        .collect();
    assert_eq!(notes.len(), 1, "{}", out.report());
    assert!(
        notes[0].starts_with("Note: this sandboxed run has no process or memory limit: "),
        "{}",
        out.report()
    );
    assert!(env.ws_path(&repo, "w").join("ran").exists());
}

/// A repository's file cannot set (or raise) what its agents may take of the machine.
#[test]
fn a_repository_file_cannot_set_sandbox_limits() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    fs::write(
        repo.join("agent-workspace.toml"),
        "[sandbox.limits]\nmemory = \"64G\"\n",
    )
    .unwrap();
    let out = env.aw(&repo, ["run", "w", "--", "true"]);
    out.assert_code(2);
    let stderr = out.stderr.replace(&repo.display().to_string(), "[REPO]");
    let stderr = stderr.replace(&env.path().display().to_string(), "[TEMP]");
    insta::assert_snapshot!(stderr, @r"
    Error: [REPO]/agent-workspace.toml sets sandbox.limits, which only the user's own file may set
    Hint: move sandbox.limits to [TEMP]/xdg/config/agent-workspace/config.toml: a repository's file must not widen what a sandboxed agent may reach
    ");
    assert!(!env.ws_path(&repo, "w").exists());
}

/// A size that does not parse is a usage error naming the key.
#[test]
fn an_unparseable_limit_is_a_usage_error() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    for (text, key) in [
        ("memory = \"lots\"", "memory = \"lots\" is not a size"),
        ("tmp = \"16 parsecs\"", "tmp = \"16 parsecs\" is not a size"),
        ("cpus = 0", "cpus = 0 is not a number of CPUs above 0"),
        ("pids = 0", "pids = 0 is not a number of processes above 0"),
    ] {
        env.user_config(&format!("[sandbox.limits]\n{text}\n"));
        let out = env.aw(&repo, ["run", "w", "--", "true"]);
        out.assert_code(2);
        assert!(
            out.stderr.starts_with("Error: invalid configuration in ")
                && out.stderr.contains(&format!("sandbox.limits.{key}")),
            "{}",
            out.report()
        );
        assert!(out.stderr.contains("\nHint: "), "{}", out.report());
        assert!(!env.ws_path(&repo, "w").exists());
    }
}
