//! A crash or a failure at any step of a take or a fill leaves a pool entry or a complete
//! workspace, never a half-taken entry; the next run or fill cleans up after it.

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use crate::backends::{git_ok, Backend};
use crate::harness::{eventually, TestEnv};
use crate::pool_support::{pool, prepared_repo, ready, wait_filled, workspace_ids};

/// A wrapper of `tool` first on PATH that runs the real one, then, when its arguments
/// contain `trigger`, kills agent-workspace (its parent) with SIGKILL.
pub(crate) fn killing_wrapper(
    env: &TestEnv,
    tool: &str,
    trigger: &str,
    before: bool,
) -> std::ffi::OsString {
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
        let status = eventually(
            "the fill to let go",
            Duration::from_secs(30),
            || match pool(&env, &repo) {
                status if status["filling"] == false => Ok(status),
                status => Err(format!("{status:#}")),
            },
        );
        assert_eq!(
            status["entries"][0]["state"], "incomplete",
            "{how}: {status:#}"
        );
        let half = PathBuf::from(status["entries"][0]["path"].as_str().unwrap());
        env.user_config(
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
    a_crash_at_each_step_of_a_take_leaves_a_consistent_state,
    a_crash_during_a_fill_leaves_no_takeable_half,
    a_journal_of_a_saved_take_is_finished_not_discarded,
);
