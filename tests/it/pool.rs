//! The pool of prepared workspaces (`pool.size`, `pool fill|status|drain`): a run that
//! creates a workspace takes a prepared one, equivalent to a normal creation; entries are
//! never workspaces; concurrent takes get distinct entries; a crash at any step of a take or
//! a fill leaves a pool entry or a complete workspace; the pool refills in the background.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::backends::{git_ok, Backend};
use crate::harness::TestEnv;

fn user_config(env: &TestEnv, text: &str) {
    let dir = env.path().join("xdg/config/agent-workspace");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("config.toml"), text).unwrap();
}

/// `pool status --json`.
fn pool(env: &TestEnv, repo: &Path) -> Value {
    env.aw(repo, ["pool", "status", "--json"])
        .assert_ok()
        .json()
}

fn ready(env: &TestEnv, repo: &Path) -> Vec<PathBuf> {
    let status = pool(env, repo);
    status["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["state"] == "ready")
        .map(|e| PathBuf::from(e["path"].as_str().unwrap()))
        .collect()
}

/// Waits until no fill runs and `size` entries are ready (a background refill finished).
fn wait_filled(env: &TestEnv, repo: &Path, size: usize) {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let status = pool(env, repo);
        if status["filling"] == false && status["ready"] == size {
            return;
        }
        let log = fs::read_to_string(env.namespace_dir(repo).join(".pool/refill.log"));
        assert!(
            Instant::now() < deadline,
            "pool never refilled: {status:#}\nrefill.log: {log:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The workspace ids `status --json` lists.
fn workspace_ids(env: &TestEnv, repo: &Path) -> Vec<String> {
    let out = env.aw(repo, ["status", "--json"]).assert_ok().json();
    out["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["workspace_id"].as_str().unwrap().to_string())
        .collect()
}

/// What a workspace holds besides the backend's directory and the record view.
fn files(dir: &Path) -> Vec<String> {
    let mut found = vec![];
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for entry in fs::read_dir(dir.join(&rel)).unwrap() {
            let entry = entry.unwrap();
            let name = rel.join(entry.file_name());
            let text = name.display().to_string();
            if [".jj", ".git", ".agent-workflow.json", ".direnv"].contains(&text.as_str()) {
                continue;
            }
            match entry.file_type().unwrap().is_dir() {
                true => stack.push(name),
                false => found.push(format!(
                    "{text}={}",
                    fs::read_to_string(entry.path()).unwrap_or_default()
                )),
            }
        }
    }
    found.sort();
    found
}

/// A repository whose new workspaces get a copied `.env`, a tools bundle and a setup that
/// counts its runs in `<tmp>/setups`.
fn prepared_repo(env: &TestEnv, backend: Backend, size: usize) -> PathBuf {
    let repo = backend.repo(env);
    fs::write(repo.join(".gitignore"), ".env\n").unwrap();
    fs::write(repo.join("agents.just"), "hello:\n\techo hello\n").unwrap();
    match backend {
        Backend::Jj => {
            env.jj_ok(&repo, ["commit", "-m", "tools"]);
        }
        Backend::Git => {
            git_ok(env, &repo, &["add", "-A"]);
            git_ok(env, &repo, &["commit", "-q", "-m", "tools"]);
        }
    }
    fs::write(repo.join(".env"), "SECRET=1\n").unwrap();
    let setups = env.path().join("setups");
    user_config(
        env,
        &format!(
            "[pool]\nsize = {size}\n[copy]\ninclude = [\".env\"]\n[setup]\ncommand = \"echo \\\"$AGENT_WORKSPACE_ID $AW_TEST_VAR\\\" >> {}\"\n",
            setups.display()
        ),
    );
    repo
}

/// How many setups ran in workspaces whose id starts with `id` (`.pool-`: prepared ones),
/// each with the environment its `.envrc` gives.
fn setups(env: &TestEnv, id: &str) -> usize {
    let text = fs::read_to_string(env.path().join("setups")).unwrap_or_default();
    assert!(text.lines().all(|l| l.ends_with(" from-envrc")), "{text}");
    text.lines().filter(|l| l.starts_with(id)).count()
}

fn a_pooled_creation_is_a_normal_one(backend: Backend) {
    let env = TestEnv::new();
    let repo = prepared_repo(&env, backend, 1);
    let out = env.aw(&repo, ["pool", "fill"]);
    out.assert_ok();
    let entry = ready(&env, &repo).pop().expect("one ready entry");
    assert_eq!(setups(&env, ".pool-"), 1, "the setup ran while preparing");
    // A run takes it: the same files, base, environment and record as a normal creation.
    let show = "echo \"$AGENT_WORKSPACE_ID $AGENT_WORKSPACE_PATH $AW_TEST_VAR $PWD\"";
    let pooled = env.aw(&repo, ["run", "w", "--", "sh", "-c", show]);
    pooled.assert_ok();
    let ws = env.ws_path(&repo, "w");
    assert!(!entry.exists(), "the entry became the workspace");
    assert_eq!(
        setups(&env, "w "),
        0,
        "not set up again:\n{}",
        pooled.report()
    );
    wait_filled(&env, &repo, 1);
    env.aw(&repo, ["pool", "drain"]).assert_ok();
    user_config(
        &env,
        &fs::read_to_string(env.path().join("xdg/config/agent-workspace/config.toml"))
            .unwrap()
            .replace("size = 1", "size = 0"),
    );
    let normal = env.aw(&repo, ["run", "n", "--", "sh", "-c", show]);
    normal.assert_ok();
    assert_eq!(setups(&env, "n "), 1, "a normal creation sets up");
    let n = env.ws_path(&repo, "n");
    for (out, id, path) in [(&pooled, "w", &ws), (&normal, "n", &n)] {
        let real = fs::canonicalize(path).unwrap();
        let expected = format!("{id} {} from-envrc {}\n", path.display(), real.display());
        assert_eq!(out.stdout, expected, "{}", out.report());
    }
    assert_eq!(files(&ws), files(&n));
    let (a, b) = (env.metadata(&ws), env.metadata(&n));
    for key in [
        "base_commits",
        "status",
        "direnv_allowed",
        "base_envrc_sha256",
        "envrc_loads_base",
    ] {
        assert_eq!(a[key], b[key], "{key}: {a:#}\n{b:#}");
    }
    assert_eq!(a["setup"]["status"], "done", "{a:#}");
    assert_eq!(a["tools"]["version"], b["tools"]["version"]);
    assert_eq!(a["copied"]["files"], b["copied"]["files"], "{a:#}");
    let log = a["setup"]["log"].as_str().unwrap();
    assert!(
        log.ends_with("/.state/w.setup.log") && Path::new(log).exists(),
        "{log}"
    );
    match backend {
        Backend::Jj => {
            let names = env.workspace_names(&repo);
            assert!(names.contains(&"w".to_string()), "{names:?}");
            assert!(!names.iter().any(|n| n.starts_with(".pool-")), "{names:?}");
        }
        Backend::Git => {
            let head = git_ok(&env, &ws, &["symbolic-ref", "HEAD"]);
            assert_eq!(head.trim(), "refs/heads/agent-workspace/w");
        }
    }
    env.aw(&repo, ["status", "w"]).assert_ok();
    let doctor = env.aw(&repo, ["doctor", "--json"]).json();
    let checks = doctor["checks"].as_array().unwrap();
    let troubled = |name: &str| {
        checks
            .iter()
            .any(|c| c["name"] == name && c["level"] != "ok")
    };
    assert!(
        !troubled("workspaces") && !troubled("leftovers"),
        "{doctor:#}"
    );
    // jj keeps the root recorded when the entry was prepared (its `.pool-` directory, gone
    // since the rename): the taken workspace is still matched as ours, and clean forgets it.
    let one = env.aw(&repo, ["status", "w", "--json"]).assert_ok().json();
    assert!(one["problem"].is_null(), "{one:#}");
    env.aw(&repo, ["clean", "--force", "w"]).assert_ok();
    assert!(!ws.exists());
    if backend == Backend::Jj {
        let names = env.workspace_names(&repo);
        assert!(!names.contains(&"w".to_string()), "{names:?}");
    }
}

fn pool_entries_are_never_workspaces(backend: Backend) {
    let env = TestEnv::new();
    let repo = prepared_repo(&env, backend, 2);
    env.aw(&repo, ["pool", "fill"]).assert_ok();
    assert_eq!(ready(&env, &repo).len(), 2);
    assert!(workspace_ids(&env, &repo).is_empty());
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    wait_filled(&env, &repo, 2);
    assert_eq!(workspace_ids(&env, &repo), ["w"]);
    // `clean --all` leaves them; `pool drain` removes them, registrations included.
    env.aw(&repo, ["clean", "--all"]).assert_ok();
    let entries = ready(&env, &repo);
    assert_eq!(entries.len(), 2);
    let drained = env
        .aw(&repo, ["pool", "drain", "--json"])
        .assert_ok()
        .json();
    assert_eq!(
        drained["removed"].as_array().unwrap().len(),
        2,
        "{drained:#}"
    );
    assert!(entries.iter().all(|e| !e.exists()));
    assert_eq!(pool(&env, &repo)["entries"], serde_json::json!([]));
    match backend {
        Backend::Jj => assert_eq!(env.workspace_names(&repo), ["default"]),
        Backend::Git => {
            let list = git_ok(&env, &repo, &["worktree", "list", "--porcelain"]);
            assert_eq!(list.matches("worktree ").count(), 1, "{list}");
        }
    }
}

/// Concurrent runs each take their own entry.
fn concurrent_takes_get_distinct_entries(backend: Backend) {
    let env = TestEnv::new();
    let repo = prepared_repo(&env, backend, 4);
    env.aw(&repo, ["pool", "fill"]).assert_ok();
    let entries = ready(&env, &repo);
    let runs: Vec<_> = ["a", "b", "c", "d"]
        .iter()
        .map(|id| env.aw_cmd(&repo).args(["run", id, "--", "true"]).spawn())
        .collect();
    for run in runs {
        run.wait().assert_ok();
    }
    assert!(entries.iter().all(|e| !e.exists()), "all four were taken");
    for id in ["a ", "b ", "c ", "d "] {
        assert_eq!(setups(&env, id), 0, "{id}: not set up again");
    }
    wait_filled(&env, &repo, 4);
    let status = env.aw(&repo, ["status", "--json"]).assert_ok().json();
    for w in status["workspaces"].as_array().unwrap() {
        assert!(w["problem"].is_null(), "{status:#}");
    }
    assert_eq!(workspace_ids(&env, &repo), ["a", "b", "c", "d"]);
}

/// On a base other than the entry's, only the files that differ are checked out.
fn another_base_rewrites_only_what_differs(backend: Backend) {
    let env = TestEnv::new();
    let repo = prepared_repo(&env, backend, 1);
    env.aw(&repo, ["pool", "fill"]).assert_ok();
    let entry = ready(&env, &repo).pop().unwrap();
    let inode = fs::metadata(entry.join("sub/b.txt")).unwrap().ino();
    fs::write(repo.join("a.txt"), "moved on\n").unwrap();
    match backend {
        Backend::Jj => {
            env.jj_ok(&repo, ["commit", "-m", "moved"]);
        }
        Backend::Git => {
            git_ok(&env, &repo, &["commit", "-q", "-am", "moved"]);
        }
    }
    let base = backend.base_of(&env, &repo);
    let out = env.aw(&repo, ["run", "w", "--", "cat", "a.txt"]);
    out.assert_ok();
    assert_eq!(out.stdout, "moved on\n");
    let ws = env.ws_path(&repo, "w");
    assert!(!entry.exists());
    assert_eq!(
        fs::metadata(ws.join("sub/b.txt")).unwrap().ino(),
        inode,
        "b.txt untouched"
    );
    assert_eq!(env.metadata(&ws)["base_commits"], serde_json::json!([base]));
    assert_eq!(setups(&env, "w "), 1, "set up again for the other base");
    assert!(
        backend.changes(&env, &ws).is_empty(),
        "{}",
        backend.changes(&env, &ws)
    );
    wait_filled(&env, &repo, 1);
}

/// A wrapper of `tool` first on PATH that runs the real one, then, when its arguments
/// contain `trigger`, kills agent-workspace (its parent) with SIGKILL.
fn killing_wrapper(env: &TestEnv, tool: &str, trigger: &str, before: bool) -> std::ffi::OsString {
    let dir = env.path().join(format!(
        "kill-{tool}-{}-{before}",
        trigger.trim().replace(' ', "-")
    ));
    fs::create_dir_all(&dir).unwrap();
    let real = crate::harness::which(tool).unwrap();
    let kill = "case \"$*\" in *\"$TRIGGER\"*) kill -9 $PPID; exit 137;; esac";
    let script = match before {
        true => format!("#!/bin/sh\n{kill}\nexec {} \"$@\"\n", real.display()),
        false => format!(
            "#!/bin/sh\n{} \"$@\"\ncode=$?\n{kill}\nexit $code\n",
            real.display()
        ),
    };
    let file = dir.join(tool);
    fs::write(&file, script).unwrap();
    fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.path_with_first(&dir)
}

/// SIGKILL at each step of a take: afterwards the id is no workspace and no entry is half
/// taken; the next run of the id creates it properly.
fn a_crash_at_each_step_of_a_take_leaves_a_consistent_state(backend: Backend) {
    // On the default base (jj: the rename runs while the base is asked for), and on another
    // base than the entry's, so the checkout step runs too.
    let other = match backend {
        Backend::Jj => Some("root()"),
        Backend::Git => Some("HEAD"),
    };
    let steps: &[(&str, &str, bool, Option<&str>)] = match backend {
        Backend::Jj => &[
            ("jj", "workspace rename", true, None),
            ("jj", "workspace rename", false, None),
            ("jj", "--revisions=@-", false, None),
            ("jj", "workspace rename", true, other),
            ("jj", "workspace rename", false, other),
            ("jj", " new ", true, other),
            ("jj", " new ", false, other),
        ],
        Backend::Git => &[
            ("git", "worktree repair", true, other),
            ("git", "worktree repair", false, other),
            ("git", " switch ", false, other),
        ],
    };
    for (n, (tool, trigger, before, base)) in steps.iter().enumerate() {
        let env = TestEnv::new();
        let repo = prepared_repo(&env, backend, 1);
        env.aw(&repo, ["pool", "fill"]).assert_ok();
        let entry = ready(&env, &repo).pop().unwrap();
        let id = format!("w{n}");
        let path = killing_wrapper(&env, tool, trigger, *before);
        let mut args = vec!["run", id.as_str()];
        if let Some(base) = base {
            args.extend(["--base-change", base]);
        }
        args.extend(["--", "true"]);
        let out = env
            .aw_cmd(&repo)
            .env("PATH", &path)
            .env("TRIGGER", trigger)
            .args(args)
            .run();
        let step = format!("{tool} {trigger} (before: {before}, base: {base:?})");
        assert_eq!(out.code(), None, "{step}: killed\n{}", out.report());
        // Neither a workspace nor a takeable entry now.
        let listed = env.aw(&repo, ["status", "--json"]).stdout.clone();
        assert!(workspace_ids(&env, &repo).is_empty(), "{step}: {listed}");
        assert!(!ready(&env, &repo).contains(&entry), "{step}");
        // The next run discards the half-taken entry and creates the workspace.
        let again = env.aw(&repo, ["run", &id, "--", "true"]);
        again.assert_ok();
        assert_eq!(workspace_ids(&env, &repo), [id.as_str()], "{step}");
        assert!(!entry.exists(), "{step}");
        wait_filled(&env, &repo, 1);
        let ns = env.namespace_dir(&repo);
        let dirs: Vec<String> = fs::read_dir(&ns)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with(".pool-") || !n.starts_with('.'))
            .collect();
        assert_eq!(
            dirs.len(),
            2,
            "{step}: the workspace and one entry: {dirs:?}"
        );
        if backend == Backend::Jj {
            let names = env.workspace_names(&repo);
            assert_eq!(
                names.len(),
                3,
                "{step}: default, {id}, one entry: {names:?}"
            );
        } else {
            let list = git_ok(&env, &repo, &["worktree", "list", "--porcelain"]);
            assert_eq!(list.matches("worktree ").count(), 3, "{step}: {list}");
        }
    }
}

/// SIGKILL while a fill prepares an entry (right after the backend checked it out, and while
/// its setup runs): it is incomplete, never taken, and the next fill removes it.
fn a_crash_during_a_fill_leaves_no_takeable_half(backend: Backend) {
    for during_setup in [false, true] {
        let env = TestEnv::new();
        let repo = prepared_repo(&env, backend, 1);
        let out = match during_setup {
            false => {
                let (tool, trigger) = match backend {
                    Backend::Jj => ("jj", "workspace add"),
                    Backend::Git => ("git", "worktree add"),
                };
                let path = killing_wrapper(&env, tool, trigger, false);
                env.aw_cmd(&repo)
                    .env("PATH", &path)
                    .env("TRIGGER", trigger)
                    .args(["pool", "fill"])
                    .run()
            }
            true => {
                let config = env.path().join("xdg/config/agent-workspace/config.toml");
                let marker = env.path().join("setting-up");
                let text = fs::read_to_string(&config).unwrap().replace(
                    "command = \"",
                    &format!("command = \"touch {}; sleep 30; ", marker.display()),
                );
                fs::write(&config, text).unwrap();
                let fill = env.aw_cmd(&repo).args(["pool", "fill"]).spawn();
                crate::harness::wait_for_file(&marker);
                fill.signal("KILL");
                fill.wait()
            }
        };
        let how = format!("during the setup: {during_setup}");
        assert_eq!(out.code(), None, "{how}: {}", out.report());
        // The setup's guard holds the pool lock until it has ended the setup's processes.
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            let status = pool(&env, &repo);
            if status["filling"] == false || Instant::now() > deadline {
                break status;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(
            status["entries"][0]["state"], "incomplete",
            "{how}: {status:#}"
        );
        let half = PathBuf::from(status["entries"][0]["path"].as_str().unwrap());
        user_config(
            &env,
            &fs::read_to_string(env.path().join("xdg/config/agent-workspace/config.toml"))
                .unwrap()
                .replace("size = 1", "size = 0")
                .replace("sleep 30; ", ""),
        );
        env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
        assert!(half.exists(), "{how}: an incomplete entry is never taken");
        let filled = env
            .aw(&repo, ["pool", "fill", "1", "--json"])
            .assert_ok()
            .json();
        assert_eq!(
            filled["removed"],
            serde_json::json!([half]),
            "{how}: {filled:#}"
        );
        assert!(!half.exists(), "{how}");
        assert_eq!(ready(&env, &repo).len(), 1, "{how}");
        if backend == Backend::Jj {
            assert_eq!(
                env.workspace_names(&repo).len(),
                3,
                "{how}: default, w, one entry"
            );
        }
    }
}

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
    let deadline = Instant::now() + Duration::from_secs(60);
    while pool(&env, &repo)["filling"] != true {
        assert!(Instant::now() < deadline, "no refill started");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(pool(&env, &repo)["ready"], 0);
    // Runs meanwhile create their workspaces without waiting for it.
    env.aw(&repo, ["run", "w2", "--", "true"]).assert_ok();
    assert_eq!(pool(&env, &repo)["filling"], true);
    // SIGKILL of the refill while its entry's setup runs leaves an incomplete entry, never
    // taken; the next fill removes it and prepares a complete one.
    // (w2's own refill found the pool busy and left the work to the first.)
    let deadline = Instant::now() + Duration::from_secs(30);
    let refills = loop {
        let found = refill_pids(&env);
        if found.len() == 1 || Instant::now() > deadline {
            break found;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(refills.len(), 1, "one refill at a time: {refills:?}");
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
    let deadline = Instant::now() + Duration::from_secs(30);
    while pool(&env, &repo)["filling"] != false {
        assert!(
            Instant::now() < deadline,
            "the killed refill still holds the pool"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = pool(&env, &repo);
    assert_eq!(status["entries"][0]["state"], "incomplete", "{status:#}");
    let half = PathBuf::from(status["entries"][0]["path"].as_str().unwrap());
    fs::write(&gate, "").unwrap();
    let filled = env.aw(&repo, ["pool", "fill", "--json"]).assert_ok().json();
    assert_eq!(filled["removed"], serde_json::json!([half]), "{filled:#}");
    assert_eq!(ready(&env, &repo).len(), 1);
    assert_eq!(workspace_ids(&env, &repo), ["w", "w2"]);
}

/// With jj and the default base, a take begins before jj is asked for the base: when that
/// question fails, the run fails with jj's error, the begun take is discarded (no workspace,
/// no half-taken entry) and the next run creates the workspace.
#[test]
fn a_failed_base_query_during_a_begun_take_discards_it() {
    let env = TestEnv::new();
    let repo = prepared_repo(&env, Backend::Jj, 0);
    env.aw(&repo, ["pool", "fill", "1"]).assert_ok();
    let entry = ready(&env, &repo).pop().unwrap();
    let dir = env.path().join("failing-jj");
    fs::create_dir_all(&dir).unwrap();
    let real = crate::harness::which("jj").unwrap();
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in *--revisions=@-*) echo 'jj: cannot load the repository' >&2; exit 1;; esac\nexec {} \"$@\"\n",
        real.display()
    );
    fs::write(dir.join("jj"), script).unwrap();
    fs::set_permissions(
        dir.join("jj"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let out = env
        .aw_cmd(&repo)
        .env("PATH", env.path_with_first(&dir))
        .args(["run", "w", "--", "true"])
        .run();
    assert_ne!(out.code(), Some(0), "{}", out.report());
    assert!(out.stderr.starts_with("Error: "), "{}", out.report());
    assert!(
        out.stderr.contains("cannot load the repository"),
        "{}",
        out.report()
    );
    assert!(out.stderr.contains("\nHint: "), "{}", out.report());
    assert!(workspace_ids(&env, &repo).is_empty());
    assert!(
        !entry.exists() && !env.ws_path(&repo, "w").exists(),
        "{}",
        env.listing()
    );
    assert!(ready(&env, &repo).is_empty());
    let journals = fs::read_dir(env.namespace_dir(&repo).join(".pool"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".taking")
        })
        .count();
    assert_eq!(journals, 0, "{}", env.listing());
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    assert_eq!(env.workspace_names(&repo).len(), 2, "default and w");
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

/// A crash after a take saved the new workspace's state and before it removed the take's
/// journal: the workspace is complete and listed, a run in it works, and the next creation
/// finishes the take (removes the journal) without touching the workspace.
fn a_journal_of_a_saved_take_is_finished_not_discarded(backend: Backend) {
    let env = TestEnv::new();
    let repo = prepared_repo(&env, backend, 0);
    env.aw(&repo, ["pool", "fill", "1"]).assert_ok();
    let entry = ready(&env, &repo).pop().unwrap();
    let name = entry.file_name().unwrap().to_str().unwrap().to_string();
    let token = name.strip_prefix(".pool-").unwrap();
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w");
    fs::write(ws.join("work.txt"), "the agent's work\n").unwrap();
    let journal = env
        .namespace_dir(&repo)
        .join(".pool")
        .join(format!("{token}.taking"));
    fs::write(&journal, "w\n\n").unwrap();
    let listed = env.aw(&repo, ["status", "--json"]).assert_ok().json();
    assert_eq!(workspace_ids(&env, &repo), ["w"], "{listed:#}");
    assert!(listed["workspaces"][0]["problem"].is_null(), "{listed:#}");
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    env.aw(&repo, ["run", "w2", "--", "true"]).assert_ok();
    assert!(!journal.exists(), "the take is finished");
    assert_eq!(
        fs::read_to_string(ws.join("work.txt")).unwrap(),
        "the agent's work\n"
    );
    assert_eq!(workspace_ids(&env, &repo), ["w", "w2"]);
}

crate::both_backends!(
    a_pooled_creation_is_a_normal_one,
    pool_entries_are_never_workspaces,
    concurrent_takes_get_distinct_entries,
    another_base_rewrites_only_what_differs,
    a_crash_at_each_step_of_a_take_leaves_a_consistent_state,
    a_crash_during_a_fill_leaves_no_takeable_half,
    the_refill_runs_in_the_background,
    a_journal_of_a_saved_take_is_finished_not_discarded,
);

#[test]
fn bad_sizes_and_a_missing_size_are_usage_errors() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let out = env.aw(&repo, ["pool", "fill"]);
    out.assert_code(2);
    assert!(
        out.stderr.contains("Error: no pool size"),
        "{}",
        out.report()
    );
    assert!(
        out.stderr.contains("Hint: pass a count"),
        "{}",
        out.report()
    );
    let out = env.aw(&repo, ["pool", "fill", "65"]);
    out.assert_code(2);
    assert!(out.stderr.contains("at most 64"), "{}", out.report());
    for (text, says) in [
        ("[pool]\nsize = 100\n", "pool.size = 100 is more than 64"),
        ("[pool]\nsize = \"two\"\n", "size = \"two\""),
        ("[pool]\ncount = 2\n", "count"),
    ] {
        user_config(&env, text);
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
    user_config(
        &env,
        "[pool]\nsize = 1\n[setup]\ncommand = \"echo cannot; exit 3\"\n",
    );
    let out = env.aw(&repo, ["pool", "fill"]);
    out.assert_code(1);
    assert!(
        out.stderr
            .contains("the setup command failed (exit code 3)"),
        "{}",
        out.report()
    );
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
    out.assert_code(1);
    assert!(out.stderr.contains("--trust-config"), "{}", out.report());
    assert_eq!(pool(&env, &repo)["entries"], serde_json::json!([]));
    env.aw(&repo, ["pool", "fill", "1", "--trust-config"])
        .assert_ok();
    assert_eq!(ready(&env, &repo).len(), 1);
}

#[test]
fn git_refuses_a_branch_elsewhere_and_leaves_the_entry() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    user_config(&env, "[pool]\nsize = 1\n");
    env.aw(&repo, ["pool", "fill"]).assert_ok();
    let entry = ready(&env, &repo).pop().unwrap();
    git_ok(
        &env,
        &repo,
        &["commit", "-q", "--allow-empty", "-m", "second"],
    );
    git_ok(&env, &repo, &["branch", "agent-workspace/w", "HEAD"]);
    let out = env.aw(&repo, ["run", "w", "--base-change", "HEAD~1", "--", "true"]);
    out.assert_code(125);
    assert!(out.stderr.contains("already exists at"), "{}", out.report());
    assert_eq!(ready(&env, &repo), [entry]);
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
