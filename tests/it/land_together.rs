//! Lands that meet: agents landing at the same moment all land, one at a time, each onto
//! what the one before left; a land waits for one under way (or is refused with
//! `--no-wait`), saying so, and changes nothing while it waits.

use std::fs;
use std::path::Path;
use std::time::Duration;

use crate::backends::{git_ok, Backend};
use crate::harness::until;
use crate::harness::TestEnv;

/// Workspaces `ids` of `repo`, each of whose runs left `<id>.txt` uncommitted.
fn agents_with_work(env: &TestEnv, repo: &Path, ids: &[String]) {
    for id in ids {
        let script = format!("echo {id} > {id}.txt");
        env.aw(repo, ["run", id, "--", "sh", "-c", &script])
            .assert_ok();
    }
}

/// The changes in main's history that jj shows more than one visible commit of.
fn divergent(env: &TestEnv, repo: &Path) -> String {
    env.jj_ok(
        repo,
        [
            "log",
            "--no-graph",
            "-r",
            "all()",
            "-T",
            r#"if(divergent, change_id.short() ++ " " ++ description.first_line() ++ "\n")"#,
        ],
    )
}

/// `file` as the target holds it: in the main working-copy commit (jj) or main's branch (git).
fn in_main(backend: Backend, env: &TestEnv, repo: &Path, file: &str) -> String {
    match backend {
        Backend::Jj => env.jj_ok(repo, ["file", "show", "-r", "@", file]),
        Backend::Git => git_ok(env, repo, &["show", &format!("HEAD:{file}")]),
    }
}

fn eight_agents_landing_at_once_all_land(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let ids: Vec<String> = (1..=8).map(|i| format!("a{i}")).collect();
    agents_with_work(&env, &repo, &ids);
    let lands: Vec<_> = ids
        .iter()
        .map(|id| env.aw_cmd(&repo).args(["land", id]).spawn())
        .collect();
    let outs: Vec<_> = lands.into_iter().map(|land| land.wait()).collect();
    for (id, out) in ids.iter().zip(&outs) {
        out.assert_ok();
        assert!(
            out.stdout
                .starts_with(&format!("Landed 1 commit of {id} onto ")),
            "{}",
            out.report()
        );
        // Every land that said "Landed" has its work in main, on disk and in the target.
        let file = format!("{id}.txt");
        assert_eq!(
            fs::read_to_string(repo.join(&file)).unwrap(),
            format!("{id}\n")
        );
        assert_eq!(in_main(backend, &env, &repo, &file), format!("{id}\n"));
    }
    match backend {
        Backend::Jj => {
            assert_eq!(divergent(&env, &repo), "");
            // Main's working-copy change holds no edit of its own: nothing reverted there.
            assert_eq!(env.jj_ok(&repo, ["diff", "--name-only"]), "");
        }
        Backend::Git => assert_eq!(git_ok(&env, &repo, &["status", "--porcelain"]), ""),
    }
}

/// Holds `repo`'s land lock from outside (as a land under way does) until `release` exists.
fn hold_the_land_lock(env: &TestEnv, repo: &Path) -> (crate::harness::Running, std::path::PathBuf) {
    let locks = env.namespace_dir(repo).join(".locks");
    fs::create_dir_all(&locks).unwrap();
    let held = env.path().join("held");
    let release = env.path().join("release");
    let script = format!(
        "touch {held}; while [ ! -e {release} ]; do sleep 0.05; done",
        held = held.display(),
        release = release.display()
    );
    let holder = env
        .cmd("flock", repo)
        .arg(locks.join(".land.lock"))
        .args(["sh", "-c", &script])
        .spawn();
    until("the lock to be held", Duration::from_secs(20), || {
        held.exists()
    });
    (holder, release)
}

fn a_land_waits_for_the_land_under_way_and_no_wait_refuses(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let ids = vec!["w1".to_string()];
    agents_with_work(&env, &repo, &ids);
    let (holder, release) = hold_the_land_lock(&env, &repo);

    let refused = env.aw(&repo, ["land", "w1", "--no-wait"]);
    refused.assert_code(1);
    assert!(
        refused
            .stderr
            .starts_with("Error: another land of this repository is under way\nHint: "),
        "{}",
        refused.report()
    );
    assert!(!repo.join("w1.txt").exists(), "{}", refused.report());

    let waiting = env.aw_cmd(&repo).args(["land", "w1"]).spawn();
    until("the land to say it waits", Duration::from_secs(60), || {
        waiting
            .stderr_so_far()
            .contains("land of w1: waiting for another land of this repository to finish...")
    });
    // Nothing moves while it waits.
    assert!(!repo.join("w1.txt").exists());
    fs::write(&release, "").unwrap();
    holder.wait().assert_ok();
    let out = waiting.wait();
    out.assert_ok();
    assert!(
        out.stdout.starts_with("Landed 1 commit of w1 onto "),
        "{}",
        out.report()
    );
    assert_eq!(in_main(backend, &env, &repo, "w1.txt"), "w1\n");
}

/// A user commits in main, again and again, while agents land: every land either lands
/// (its file in main) or says nothing was landed (its file nowhere in main); the user's
/// commits all stay; main's change is never divergent.
fn a_user_committing_in_main_during_lands_loses_nothing(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let ids: Vec<String> = (1..=4).map(|i| format!("u{i}")).collect();
    agents_with_work(&env, &repo, &ids);
    let stop = env.path().join("stop");
    // A commit may meet the land's own git call holding the index lock, or (jj) a working
    // copy the land just updated: the user tries again, as a person would.
    let commit = match backend {
        Backend::Jj => "jj commit -m \"user $n\" || { jj workspace update-stale; false; }",
        Backend::Git => "git add user.txt && git commit -q -m \"user $n\"",
    };
    let script = format!(
        "n=0; while [ ! -e {stop} ]; do n=$((n+1)); echo $n >> user.txt; tries=0; until {commit}; do tries=$((tries+1)); [ $tries -lt 100 ] || exit 1; sleep 0.05; done; done; echo $n",
        stop = stop.display()
    );
    let user = env.cmd("sh", &repo).args(["-c", &script]).spawn();
    let lands: Vec<_> = ids
        .iter()
        .map(|id| env.aw_cmd(&repo).args(["land", id]).spawn())
        .collect();
    let outs: Vec<_> = lands.into_iter().map(|land| land.wait()).collect();
    fs::write(&stop, "").unwrap();
    let user = user.wait();
    user.assert_ok();
    let commits: usize = user.stdout.trim().parse().unwrap();
    for (id, out) in ids.iter().zip(&outs) {
        let file = format!("{id}.txt");
        match out.code() {
            Some(0) => {
                assert!(
                    out.stdout.starts_with("Landed 1 commit"),
                    "{}",
                    out.report()
                );
                assert_eq!(in_main(backend, &env, &repo, &file), format!("{id}\n"));
            }
            _ => {
                assert!(
                    out.stderr.contains("nothing was landed"),
                    "{}",
                    out.report()
                );
                assert!(!repo.join(&file).exists(), "{}", out.report());
            }
        }
    }
    // Every line the user committed is in main, in order.
    let expected: String = (1..=commits).map(|n| format!("{n}\n")).collect();
    assert_eq!(fs::read_to_string(repo.join("user.txt")).unwrap(), expected);
    match backend {
        Backend::Jj => {
            assert_eq!(divergent(&env, &repo), "");
            assert_eq!(env.jj_ok(&repo, ["diff", "--name-only"]), "");
        }
        Backend::Git => assert_eq!(git_ok(&env, &repo, &["status", "--porcelain"]), ""),
    }
}

crate::both_backends!(
    eight_agents_landing_at_once_all_land,
    a_land_waits_for_the_land_under_way_and_no_wait_refuses,
    a_user_committing_in_main_during_lands_loses_nothing,
    a_user_commit_racing_the_land_is_kept_and_the_land_planned_again,
);

/// A `tool` first on PATH that, the first time its arguments contain `trigger`, makes a
/// user's commit in main (`commit`, a shell line run there) right after (or, with `before`,
/// right before) it runs the real tool: the user commits at the very moment the land last
/// looked at main, or is about to move it.
fn committing_wrapper(
    env: &TestEnv,
    repo: &Path,
    (tool, trigger, before): (&str, &str, bool),
    commit: &str,
) -> std::ffi::OsString {
    let dir = env.path().join(format!("commit-{tool}"));
    fs::create_dir_all(&dir).unwrap();
    let real = crate::harness::which(tool).unwrap();
    let once = dir.join("done");
    let user = format!(
        "case \"$*\" in *\"{trigger}\"*) if [ ! -e {once} ]; then touch {once}; (cd {repo} && PATH={bin}:$PATH && echo user >> user.txt && {commit}) >/dev/null 2>&1 || exit 99; fi;; esac",
        once = once.display(),
        repo = repo.display(),
        bin = real.parent().unwrap().display(),
    );
    let real = real.display();
    let script = match before {
        true => format!("#!/bin/sh\n{user}\nexec {real} \"$@\"\n"),
        false => format!("#!/bin/sh\n{real} \"$@\"\ncode=$?\n{user}\nexit $code\n"),
    };
    let file = dir.join(tool);
    fs::write(&file, script).unwrap();
    fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.path_with_first(&dir)
}

/// The user commits in main right after the land's last look at it, before the target
/// moves: the land sees that main is not what it planned on and plans again (jj: never
/// integrating onto an operation it did not plan at, which would make main divergent; git:
/// the fast-forward refused, then landed on the user's commit). Both the user's commit and
/// the land are in main.
fn a_user_commit_racing_the_land_is_kept_and_the_land_planned_again(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    agents_with_work(&env, &repo, &["r1".to_string()]);
    let path = match backend {
        Backend::Jj => committing_wrapper(
            &env,
            &repo,
            ("jj", "log --no-graph -r @ -T commit_id", false),
            "jj commit -m user",
        ),
        Backend::Git => committing_wrapper(
            &env,
            &repo,
            ("git", "merge --ff-only", true),
            "git add user.txt && git commit -q -m user",
        ),
    };
    let out = env
        .aw_cmd(&repo)
        .env("PATH", &path)
        .args(["land", "r1"])
        .run();
    out.assert_ok();
    assert!(
        out.stdout.starts_with("Landed 1 commit of r1 onto "),
        "{}",
        out.report()
    );
    assert!(
        env.path()
            .join(match backend {
                Backend::Jj => "commit-jj/done",
                Backend::Git => "commit-git/done",
            })
            .exists(),
        "the user never committed"
    );
    assert_eq!(in_main(backend, &env, &repo, "r1.txt"), "r1\n");
    assert_eq!(in_main(backend, &env, &repo, "user.txt"), "user\n");
    match backend {
        Backend::Jj => {
            assert_eq!(divergent(&env, &repo), "");
            assert_eq!(env.jj_ok(&repo, ["diff", "--name-only"]), "");
        }
        Backend::Git => assert_eq!(git_ok(&env, &repo, &["status", "--porcelain"]), ""),
    }
}
