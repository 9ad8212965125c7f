//! `pool fill|status|drain`: sizes, a failed or untrusted setup, the recipes, and the refill
//! a take starts in the background (one at a time, at idle priority, killed without harm).

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use crate::backends::Backend;
use crate::harness::{eventually, until, TestEnv};
use crate::pool_support::{pool, prepared_repo, ready, workspace_ids};

/// The run that takes an entry does not wait for the refill it starts.
fn the_refill_runs_in_the_background(backend: Backend) {
    let env = TestEnv::new();
    let repo = prepared_repo(&env, backend, 1);
    env.aw(&repo, ["pool", "fill"]).assert_ok();
    let gate = env.path().join("gate");
    let config = env.path().join("xdg/config/agent-workspace/config.toml");
    let text = fs::read_to_string(&config).unwrap();
    // From now on a prepared workspace's setup waits for the gate: the refill cannot finish
    // before it opens.
    let waiting = format!(
        "case $AGENT_WORKSPACE_ID in .pool-*) while ! test -e {}; do sleep 0.05; done;; esac; ",
        gate.display()
    );
    fs::write(
        &config,
        text.replace("command = \"", &format!("command = \"{waiting}")),
    )
    .unwrap();
    env.aw(&repo, ["pool", "drain"]).assert_ok();
    fs::write(&gate, "").unwrap();
    env.aw(&repo, ["pool", "fill"]).assert_ok();
    fs::remove_file(&gate).unwrap();
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    // The run is over while its refill waits on the gate.
    until("a refill to start", Duration::from_secs(60), || {
        pool(&env, &repo)["filling"] == true
    });
    assert_eq!(pool(&env, &repo)["ready"], 0);
    // Runs meanwhile create their workspaces without waiting for it.
    env.aw(&repo, ["run", "w2", "--", "true"]).assert_ok();
    assert_eq!(pool(&env, &repo)["filling"], true);
    // SIGKILL of the refill while its entry's setup runs leaves an incomplete entry, never
    // taken; the next fill removes it and prepares a complete one.
    // (w2's own refill found the pool busy and left the work to the first.)
    let refills = eventually(
        "one refill at a time",
        Duration::from_secs(30),
        || match refill_pids(&env) {
            found if found.len() == 1 => Ok(found),
            found => Err(format!("refills {found:?}")),
        },
    );
    // It yields to the runs: the lowest CPU priority and the idle I/O class.
    let stat = fs::read_to_string(format!("/proc/{}/stat", refills[0])).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    let nice = after_name.split(' ').nth(16).unwrap();
    assert_eq!(nice, "19", "{stat}");
    let ionice = env
        .cmd("ionice", env.path())
        .args(["-p", &refills[0].to_string()])
        .run();
    assert_eq!(
        ionice.assert_ok().stdout.trim(),
        "idle",
        "{}",
        ionice.report()
    );
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &refills[0].to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    until(
        "the killed refill to let go of the pool",
        Duration::from_secs(30),
        || pool(&env, &repo)["filling"] == false,
    );
    let status = pool(&env, &repo);
    assert_eq!(status["entries"][0]["state"], "incomplete", "{status:#}");
    let half = PathBuf::from(status["entries"][0]["path"].as_str().unwrap());
    fs::write(&gate, "").unwrap();
    let filled = env.aw(&repo, ["pool", "fill", "--json"]).assert_ok().json();
    assert_eq!(filled["removed"], serde_json::json!([half]), "{filled:#}");
    assert_eq!(ready(&env, &repo).len(), 1);
    assert_eq!(workspace_ids(&env, &repo), ["w", "w2"]);
}

/// The detached `pool refill` processes started for this test's environment.
fn refill_pids(env: &TestEnv) -> Vec<u32> {
    let home = format!("HOME={}", env.path().join("home").display());
    let mut found = vec![];
    for entry in fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()) {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        let refill = args.windows(2).any(|w| w == [&b"pool"[..], &b"refill"[..]]);
        let environ = fs::read(entry.path().join("environ")).unwrap_or_default();
        let ours = environ.split(|b| *b == 0).any(|v| v == home.as_bytes());
        if refill && ours {
            found.push(pid);
        }
    }
    found
}

crate::both_backends!(the_refill_runs_in_the_background);

#[test]
fn bad_sizes_and_a_missing_size_are_usage_errors() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let out = env.aw(&repo, ["pool", "fill"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: no pool size: pool.size is not configured
    Hint: pass a count (`agent-workspace pool fill 2`), or set pool.size in agent-workspace.toml
    [exit 2]
    ");
    let out = env.aw(&repo, ["pool", "fill", "65"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: cannot prepare 65 workspaces: the pool holds at most 64
    Hint: pass a count of 1 to 64
    [exit 2]
    ");
    for (text, says) in [
        ("[pool]\nsize = 100\n", "pool.size = 100 is more than 64"),
        ("[pool]\nsize = \"two\"\n", "size = \"two\""),
        ("[pool]\ncount = 2\n", "count"),
    ] {
        env.user_config(text);
        let out = env.aw(&repo, ["pool", "status"]);
        out.assert_code(2);
        assert!(out.stderr.contains(says), "{text}: {}", out.report());
        assert!(out.stderr.contains("Hint:"), "{}", out.report());
    }
}

#[test]
fn a_failed_setup_prepares_nothing_and_keeps_its_log() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.user_config("[pool]\nsize = 1\n[setup]\ncommand = \"echo cannot; exit 3\"\n");
    let out = env.aw(&repo, ["pool", "fill"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: the setup command failed (exit code 3); the command was not run. Its output is in [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.state/.pool-[POOL].setup.log
    Caused by: the setup's output is kept in [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.pool/setup.log
    Hint: fix the setup command; `agent-workspace pool fill` prepares the pool again
    [exit 1]
    ");
    let log = env.namespace_dir(&repo).join(".pool/setup.log");
    assert!(
        out.stderr.contains(&log.display().to_string()),
        "{}",
        out.report()
    );
    assert_eq!(fs::read_to_string(&log).unwrap(), "cannot\n");
    assert_eq!(pool(&env, &repo)["entries"], serde_json::json!([]));
    assert_eq!(env.workspace_names(&repo), ["default"]);
}

#[test]
fn a_changed_repository_setup_is_refused_unless_trusted() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    fs::write(
        repo.join("agent-workspace.toml"),
        "[setup]\ncommand = \"true\"\n",
    )
    .unwrap();
    let out = env.aw(&repo, ["pool", "fill", "1"]);
    insta::assert_snapshot!(out, @r#"
    --- stderr ---
    Error: setup.command comes from [TMP]/repo/agent-workspace.toml, which differs from that file at workspace ".pool-[POOL]"'s base revision; not running it
    Hint: review the file, then pass --trust-config to `agent-workspace pool fill` (a setup.command in your own configuration file is always trusted)
    [exit 1]
    "#);
    assert_eq!(pool(&env, &repo)["entries"], serde_json::json!([]));
    env.aw(&repo, ["pool", "fill", "1", "--trust-config"])
        .assert_ok();
    assert_eq!(ready(&env, &repo).len(), 1);
}

#[test]
fn the_pool_recipes_fill_list_and_drain() {
    let env = TestEnv::new();
    let repo = env.recipes_repo();
    let recipe =
        |name: &str, args: &[&str]| env.recipe(&repo, &format!("workspace-pool-{name}"), args);
    let filled = recipe("fill", &["1", "--json"]);
    assert_eq!(filled.assert_ok().json()["ready"], 1);
    let status = recipe("status", &["--json"]);
    assert_eq!(status.assert_ok().json()["entries"][0]["state"], "ready");
    let drained = recipe("drain", &["--json"]);
    assert_eq!(
        drained.assert_ok().json()["removed"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let listed = env.cmd("just", &repo).args(["--list", "agents"]).run();
    for name in ["fill", "status", "drain"] {
        assert!(
            listed.stdout.contains(&format!("workspace-pool-{name}")),
            "{}",
            listed.report()
        );
    }
}

/// A fill and the pool's status count their prepared workspaces in words that agree with the
/// number: "1 prepared workspace", "2 prepared workspaces".
#[test]
fn counts_are_singular_for_one() {
    let env = TestEnv::new();
    let repo = crate::pool_support::prepared_repo(&env, Backend::Git, 1);
    let filled = env.aw(&repo, ["pool", "fill", "1"]);
    insta::assert_snapshot!(filled, @r"
    prepared [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.pool-[POOL]
    1 prepared workspace ready
    [exit 0]
    ");
    let status = env.aw(&repo, ["pool", "status"]);
    assert!(
        status
            .stdout
            .starts_with("1 of pool.size 1 prepared workspace ready\n"),
        "{}",
        status.report()
    );
}
