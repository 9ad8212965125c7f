//! `doctor`: each check ok, a warning or an error with its fix; exit 1 only on an error.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use serde_json::Value;

use crate::backends::Backend;
use crate::harness::{Outcome, TestEnv};

/// The checks of `doctor --json` named `name`, as (level, message, fix).
fn named(doc: &Value, name: &str) -> Vec<(String, String, String)> {
    doc["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["name"] == name)
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            (text("level"), text("message"), text("fix"))
        })
        .collect()
}

/// The checks of `doctor --json` named `name`, one `<level>: <message>` line each, then its
/// `fix: ` line if it has one, through the test environment's filters: what a snapshot holds.
fn shown(env: &TestEnv, doc: &Value, name: &str) -> String {
    let text: String = named(doc, name)
        .iter()
        .map(|(level, message, fix)| match fix.as_str() {
            "" => format!("{level}: {message}\n"),
            fix => format!("{level}: {message}\nfix: {fix}\n"),
        })
        .collect();
    env.normalize(&text)
}

fn parse(out: &Outcome) -> Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON: {e}\n{}", out.report()))
}

fn a_healthy_setup_is_all_ok(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let out = env.aw(&repo, ["doctor", "--json"]);
    out.assert_ok();
    let doc = parse(&out);
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["ok"], true);
    for name in [
        "jj",
        "git",
        "direnv",
        "just",
        "repository",
        "root",
        "free space",
        "namespace",
        "direnv trust",
        "leftovers",
        "sandbox network",
        "sandbox limits",
        "workspaces",
    ] {
        let found = named(&doc, name);
        assert_eq!(found.len(), 1, "{name}: {doc:#}");
        assert_eq!(found[0].0, "ok", "{name}: {doc:#}");
    }
    match backend {
        Backend::Jj => {
            insta::assert_snapshot!(shown(&env, &doc, "repository"), @"ok: jj repository at [TMP]/repo, namespace repo-[HASH]; [TMP]/repo/.git/info/exclude lists the workspace files")
        }
        Backend::Git => {
            insta::assert_snapshot!(shown(&env, &doc, "repository"), @"ok: git repository at [TMP]/repo, namespace repo-[HASH]; [TMP]/repo/.git/info/exclude lists the workspace files")
        }
    }
    // The tools' lines (checked "ok" above) name where this machine keeps them, and the free
    // space is this disk's: the rest is the same on every machine, for either backend.
    let text = env.aw(&repo, ["doctor"]);
    text.assert_ok();
    // The limits name this machine's memory: `sandbox_network_and_limits_are_said` reads them.
    let tools = [
        "jj:",
        "git:",
        "direnv:",
        "just:",
        "bubblewrap:",
        "sandbox limits:",
    ];
    let free = regex::Regex::new(r"[0-9.]+ [KMGT]iB free").unwrap();
    let shown: Vec<String> = text
        .to_string()
        .lines()
        .filter(|line| {
            !tools
                .iter()
                .any(|t| line.starts_with(&format!("ok       {t}")))
        })
        .map(|line| {
            let repository = format!("{} repository", backend.name());
            free.replace(line, "[SIZE] free")
                .replace(&repository, "[BACKEND] repository")
        })
        .collect();
    insta::allow_duplicates! { insta::assert_snapshot!(shown.join("\n"), @r"
    ok       repository: [BACKEND] repository at [TMP]/repo, namespace repo-[HASH]; [TMP]/repo/.git/info/exclude lists the workspace files
    ok       root: [TMP]/xdg/cache/ai-workspaces is a writable directory
    ok       free space: [SIZE] free under [TMP]/xdg/cache/ai-workspaces
    ok       namespace: [TMP]/xdg/cache/ai-workspaces/repo-[HASH] is on the root's file system
    ok       direnv trust: [TMP]/xdg/data/direnv/allow is readable
    ok       sandbox network: sandboxed runs reach the network (sandbox.network, the default): an agent in one can send what it can read there (its workspace, what the sandbox shows of HOME, the variables passed in) to any host
    ok       leftovers: no stale lock or scratch file
    ok       workspaces: no workspace has a problem
    0 errors, 0 warnings
    [exit 0]
    ") };
}

#[test]
fn a_healthy_setup_is_all_ok_jj() {
    a_healthy_setup_is_all_ok(Backend::Jj);
}

#[test]
fn a_healthy_setup_is_all_ok_git() {
    a_healthy_setup_is_all_ok(Backend::Git);
}

/// What a sandboxed run gets is said: a networked sandbox can send what it reads (a warning
/// where every run is sandboxed), and the limits its cgroup holds it to, or why there are
/// none (an unprivileged user where only root may make cgroups), or an error for a limit
/// the user set that cannot be applied.
#[test]
fn sandbox_network_and_limits_are_said() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    let doc = |env: &TestEnv| parse(&env.aw(&repo, ["doctor", "--json"]));
    env.user_config("[sandbox]\nenabled = true\n");
    let found = doc(&env);
    insta::assert_snapshot!(shown(&env, &found, "sandbox network"), @r"
    warning: sandboxed runs reach the network (sandbox.network, the default): an agent in one can send what it can read there (its workspace, what the sandbox shows of HOME, the variables passed in) to any host
    fix: set sandbox.allowed_hosts to the hosts the agent needs (its model's API), or sandbox.network = false (or pass --no-network) where it needs none, in your own file
    ");
    let limits = named(&found, "sandbox limits");
    assert_eq!(limits.len(), 1, "{found:#}");
    let (level, message, _) = &limits[0];
    // Not root: whether this user may make a cgroup is the host's; either answer is said.
    let unlimited = "a sandboxed run gets no process or memory limit here: ";
    if !crate::harness::running_as_root() {
        assert!(
            (level == "ok" && message.ends_with(" of memory, through a cgroup"))
                || (level == "warning" && message.starts_with(unlimited)),
            "{found:#}"
        );
    } else {
        assert_eq!(level, "ok", "{found:#}");
        assert!(
            message.starts_with("a sandboxed run gets at most 4096 processes and ")
                && message.ends_with(" of memory, through a cgroup"),
            "{found:#}"
        );
        // An unprivileged user cannot make a cgroup here: no limit, said as a warning.
        let out = env
            .aw_cmd(&repo)
            .args(["doctor", "--json"])
            .run_unprivileged();
        let found = parse(&out);
        let limits = named(&found, "sandbox limits");
        assert_eq!(limits[0].0, "warning", "{found:#}");
        assert!(limits[0].1.starts_with(unlimited), "{found:#}");
    }
    env.user_config("[sandbox]\nenabled = true\nnetwork = false\n");
    insta::assert_snapshot!(shown(&env, &doc(&env), "sandbox network"), @"ok: sandboxed runs have no network (sandbox.network = false)");
    env.user_config(
        "[sandbox]\nenabled = true\nallowed_hosts = [\"api.example.com\", \"*.example.org:443\"]\n",
    );
    insta::assert_snapshot!(shown(&env, &doc(&env), "sandbox network"), @"ok: sandboxed runs reach only api.example.com, *.example.org:443 (sandbox.allowed_hosts), through a proxy: an agent in one can send what it can read there to those hosts");
}

#[test]
fn missing_jj_is_an_error_in_a_jj_repository_and_a_warning_in_a_git_one() {
    let env = TestEnv::new();
    let jj_repo = Backend::Jj.repo(&env);
    let git_repo = Backend::Git.repo_named(&env, "git-repo");
    let path = env.path_with_only(&["git", "direnv", "just"]);
    let out = env
        .aw_cmd(&jj_repo)
        .env("PATH", &path)
        .args(["doctor", "--json"])
        .run();
    out.assert_code(1);
    let doc = parse(&out);
    assert_eq!(doc["ok"], false);
    insta::assert_snapshot!(shown(&env, &doc, "jj"), @r"
    error: jj is not on PATH
    fix: install jj 0.45.1 with `cargo install --locked jj-cli@0.45.1` (0.38 or newer is supported)
    ");
    insta::assert_snapshot!(shown(&env, &doc, "bubblewrap"), @r"
    warning: bubblewrap (bwrap) is not on PATH: --sandbox runs are refused
    fix: install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or run without --sandbox
    ");
    // Without jj the backend cannot say which workspaces it knows: said, not hidden.
    insta::assert_snapshot!(shown(&env, &doc, "workspaces"), @r"
    warning: could not ask the backend which workspaces it knows: jj was not found on PATH
    fix: install jj 0.45.1 with `cargo install --locked jj-cli@0.45.1`
    ");
    let out = env
        .aw_cmd(&git_repo)
        .env("PATH", &path)
        .args(["doctor", "--json"])
        .run();
    out.assert_ok();
    insta::assert_snapshot!(shown(&env, &parse(&out), "jj"), @r"
    warning: jj is not on PATH (needed for jj repositories)
    fix: install jj 0.45.1 with `cargo install --locked jj-cli@0.45.1` (0.38 or newer is supported)
    ");
    let text = env
        .aw_cmd(&jj_repo)
        .env("PATH", &path)
        .args(["doctor"])
        .run();
    insta::assert_snapshot!(text, @r"
    error    jj: jj is not on PATH
             fix: install jj 0.45.1 with `cargo install --locked jj-cli@0.45.1` (0.38 or newer is supported)
    ok       git: [TMP]/bin-5/git found
    ok       direnv: [TMP]/bin-5/direnv found
    ok       just: [TMP]/bin-5/just found
    warning  bubblewrap: bubblewrap (bwrap) is not on PATH: --sandbox runs are refused
             fix: install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or run without --sandbox
    ok       repository: jj repository at [TMP]/repo, namespace repo-[HASH]; [TMP]/repo/.git/info/exclude lacks /.agent-workflow.json /.agent-workflow.json.* /.direnv/ /.agent-tools/ (added with the first workspace)
    ok       root: [TMP]/xdg/cache/ai-workspaces does not exist yet (the first run creates it)
    ok       direnv trust: [TMP]/xdg/data/direnv/allow does not exist yet (direnv creates it on the first allow)
    ok       sandbox network: sandboxed runs reach the network (sandbox.network, the default): an agent in one can send what it can read there (its workspace, what the sandbox shows of HOME, the variables passed in) to any host
    ok       sandbox limits: a sandboxed run gets at most 4096 processes and [SIZE] of memory, through a cgroup
    ok       leftovers: no stale lock or scratch file
    warning  workspaces: could not ask the backend which workspaces it knows: jj was not found on PATH
             fix: install jj 0.45.1 with `cargo install --locked jj-cli@0.45.1`
    1 error, 2 warnings
    [exit 1]
    ");
}

#[test]
fn an_old_jj_is_an_error_naming_the_minimum() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    let bin = env.path().join("old-jj");
    fs::create_dir_all(&bin).unwrap();
    fs::write(bin.join("jj"), "#!/bin/sh\necho 'jj 0.30.0'\n").unwrap();
    fs::set_permissions(bin.join("jj"), fs::Permissions::from_mode(0o755)).unwrap();
    let out = env
        .aw_cmd(&repo)
        .env("PATH", env.path_with_first(&bin))
        .args(["doctor", "--json"])
        .run();
    out.assert_code(1);
    insta::assert_snapshot!(shown(&env, &parse(&out), "jj"), @r"
    error: jj 0.30.0 at [TMP]/old-jj/jj is older than 0.38, the oldest supported
    fix: install jj 0.45.1 with `cargo install --locked jj-cli@0.45.1` (0.38 or newer is supported)
    ");
}

#[test]
fn an_unwritable_root_is_an_error() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    let root = env.path().join("read-only");
    fs::create_dir_all(&root).unwrap();
    fs::set_permissions(&root, fs::Permissions::from_mode(0o555)).unwrap();
    let out = env
        .aw_cmd(&repo)
        .args(["--root", root.to_str().unwrap(), "doctor", "--json"])
        .run_unprivileged();
    fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
    out.assert_code(1);
    insta::assert_snapshot!(shown(&env, &parse(&out), "root"), @r"
    error: [TMP]/read-only is not writable
    fix: pass --root DIR or set AI_WORKSPACES_ROOT to a writable directory
    ");
    assert!(
        !root.join(env.namespace(&repo)).exists(),
        "{}",
        env.listing()
    );
}

#[test]
fn stale_locks_scratch_files_and_troubled_workspaces_are_warnings() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ns = env.namespace_dir(&repo);
    fs::write(ns.join(".locks/ghost.lock"), "").unwrap();
    fs::write(ns.join(".state/.w1.json.tmp.999999999"), "{").unwrap();
    fs::create_dir(ns.join(".recovering-w1")).unwrap();
    fs::create_dir(ns.join("stray")).unwrap();
    let out = env.aw(&repo, ["doctor", "--json"]);
    out.assert_ok();
    let doc = parse(&out);
    assert_eq!(doc["ok"], true);
    insta::assert_snapshot!(shown(&env, &doc, "leftovers"), @r"
    warning: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.recovering-w1 is a partial copy an interrupted repair of workspace w1 left (the workspace itself was not changed)
    fix: `agent-workspace run w1 -- true` removes it and repairs the workspace
    warning: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.state/.w1.json.tmp.999999999 is a temporary file of a command that died
    fix: remove it: rm [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.state/.w1.json.tmp.999999999
    warning: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.locks/ghost.lock is the lease of workspace ghost, which is gone
    fix: remove it: rm [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.locks/ghost.lock
    ");
    insta::assert_snapshot!(shown(&env, &doc, "workspaces"), @r#"
    warning: workspace stray has a problem: unregistered
    fix: the backend no longer knows workspace "stray", so its files may hold edits no commit has; inspect [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/stray, then `agent-workspace clean --force stray` removes it, keeping its files aside
    "#);
    // doctor changed nothing.
    assert!(ns.join(".locks/ghost.lock").exists() && ns.join(".recovering-w1").exists());
}

#[test]
fn outside_a_repository_the_repository_check_is_an_error() {
    let env = TestEnv::new();
    let out = env.aw(env.path(), ["doctor", "--json"]);
    out.assert_code(1);
    let doc = parse(&out);
    insta::assert_snapshot!(shown(&env, &doc, "repository"), @r"
    error: [TMP] is not inside a jj or git repository
    fix: run from inside the repository or pass --repo PATH
    ");
    assert_eq!(named(&doc, "jj")[0].0, "ok", "{doc:#}");
    assert_eq!(named(&doc, "root")[0].0, "ok", "{doc:#}");
}

#[test]
fn free_space_below_the_configured_minimum_is_an_error() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    fs::write(
        repo.join("agent-workspace.toml"),
        "[limits]\nmin_free_disk = \"999999TB\"\n",
    )
    .unwrap();
    fs::create_dir_all(env.ws_root()).unwrap();
    let out = env.aw(&repo, ["doctor", "--json"]);
    out.assert_code(1);
    let space = &named(&parse(&out), "free space")[0];
    assert_eq!(space.0, "error", "{}", out.report());
    assert!(space.1.contains("below limits.min_free_disk"), "{space:?}");
    // The figures are the machine's: only the fix is the same everywhere.
    insta::assert_snapshot!(space.2, @"free space on that file system (`agent-workspace clean` removes finished workspaces)");
}

#[test]
fn the_workspace_doctor_recipe_reports() {
    let env = TestEnv::new();
    let repo = env.recipes_repo();
    let out = env.recipe(&repo, "workspace-doctor", &["--json"]);
    assert_eq!(out.assert_ok().json()["ok"], true, "{}", out.report());
    let list = env.cmd("just", &repo).args(["--list", "agents"]).run();
    assert!(
        list.assert_ok()
            .stdout
            .lines()
            .any(|l| l.trim().starts_with("workspace-doctor format=\"\"")
                && l.ends_with("# Check the tools, the workspace root, the repository and its workspaces (--json for JSON)")),
        "{}",
        list.report()
    );
}
