//! `clean` keeps aside every file no commit holds (big, ignored, untracked by config, inside a
//! nested repository), discards only disposable build output or what the user asked, says
//! which; and git commits made on a detached HEAD or another branch stay reachable.

use std::fs;
use std::path::{Path, PathBuf};

use crate::backends::{git_ok, Backend};
use crate::harness::TestEnv;

/// Writes the files an agent leaves behind that no commit holds (for jj; git commits the big
/// ones), and a disposable `target/`. Returns the symlink target outside the workspace.
fn write_hostile_files(env: &TestEnv, ws: &Path) -> PathBuf {
    fs::write(ws.join(".gitignore"), ".env\n*.log\ntarget/\n").unwrap();
    fs::write(ws.join(".env"), "SECRET=1\n").unwrap();
    fs::write(ws.join("app.log"), "log\n").unwrap();
    fs::create_dir_all(ws.join("deep/er")).unwrap();
    fs::write(ws.join("deep/er/trace.log"), "deep\n").unwrap();
    fs::write(ws.join("big.bin"), vec![7u8; 2 * 1024 * 1024]).unwrap();
    fs::write(ws.join("deep/huge.bin"), vec![9u8; 5 * 1024 * 1024]).unwrap();
    let outside = env.path().join("outside.txt");
    fs::write(&outside, "outside\n").unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("deep/link")).unwrap();
    let nested = ws.join("vendor/lib");
    fs::create_dir_all(&nested).unwrap();
    env.cmd("git", &nested)
        .args(["init", "-q"])
        .run()
        .assert_ok();
    fs::write(nested.join("lib.rs"), "fn lib() {}\n").unwrap();
    git_ok(env, &nested, &["add", "-A"]);
    git_ok(
        env,
        &nested,
        &[
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@e",
            "commit",
            "-q",
            "-m",
            "nested work",
        ],
    );
    fs::create_dir_all(ws.join("target/debug")).unwrap();
    fs::write(ws.join("target/debug/out.bin"), vec![1u8; 1000]).unwrap();
    outside
}

fn kept_dir(env: &TestEnv, repo: &Path, id: &str) -> PathBuf {
    let root = env.namespace_dir(repo).join(".kept");
    let dirs: Vec<_> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", root.display(), env.listing()))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("{id}-"))
        })
        .collect();
    assert_eq!(dirs.len(), 1, "{}", env.listing());
    dirs[0].clone()
}

fn clean_keeps_aside_what_no_commit_holds(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    let outside = write_hostile_files(&env, &ws);
    let out = env.aw(&repo, ["clean", "w1"]);
    out.assert_ok();
    assert!(!ws.exists(), "{}", env.listing());
    let kept = kept_dir(&env, &repo, "w1");
    assert!(
        out.stdout
            .contains(&format!("that no commit holds in {}", kept.display())),
        "{}",
        out.report()
    );
    assert!(
        out.stdout
            .contains("; discarded 1 file (1000 B) of disposable build output (target/)"),
        "{}",
        out.report()
    );
    assert_eq!(fs::read_to_string(kept.join(".env")).unwrap(), "SECRET=1\n");
    assert_eq!(fs::read_to_string(kept.join("app.log")).unwrap(), "log\n");
    assert_eq!(
        fs::read_to_string(kept.join("deep/er/trace.log")).unwrap(),
        "deep\n"
    );
    assert_eq!(
        fs::read_to_string(kept.join("vendor/lib/lib.rs")).unwrap(),
        "fn lib() {}\n"
    );
    let log = git_ok(&env, &kept.join("vendor/lib"), &["log", "--format=%s"]);
    assert_eq!(log, "nested work\n");
    assert!(!kept.join("target").exists());
    assert!(
        !kept.join(".gitignore").exists(),
        "a committed file is not kept aside"
    );
    assert_eq!(fs::read_to_string(&outside).unwrap(), "outside\n");
    match backend {
        // jj refuses new files over 1 MiB: they are kept aside, and the symlink (which jj
        // records) is not.
        Backend::Jj => {
            assert_eq!(fs::metadata(kept.join("big.bin")).unwrap().len(), 2 << 20);
            assert_eq!(
                fs::metadata(kept.join("deep/huge.bin")).unwrap().len(),
                5 << 20
            );
            // .env, app.log, trace.log, 2 big files, nested repo's files
            assert!(out.stdout.contains("; kept "), "{}", out.report());
        }
        Backend::Git => {
            assert!(!kept.join("big.bin").exists());
            assert!(!kept.join("deep/link").exists());
        }
    }
}

#[test]
fn jj_clean_keeps_aside_what_no_commit_holds() {
    clean_keeps_aside_what_no_commit_holds(Backend::Jj);
}

#[test]
fn git_clean_keeps_aside_what_no_commit_holds() {
    clean_keeps_aside_what_no_commit_holds(Backend::Git);
}

#[test]
fn jj_clean_keeps_a_symlink_jj_does_not_track_as_a_symlink() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    fs::write(ws.join(".gitignore"), "ignored-link\n").unwrap();
    std::os::unix::fs::symlink("/etc/hostname", ws.join("ignored-link")).unwrap();
    env.aw(&repo, ["clean", "w1"]).assert_ok();
    let kept = kept_dir(&env, &repo, "w1");
    assert_eq!(
        fs::read_link(kept.join("ignored-link")).unwrap(),
        Path::new("/etc/hostname")
    );
}

#[test]
fn jj_clean_keeps_files_auto_track_excludes() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    env.jj_ok(
        &repo,
        [
            "config",
            "set",
            "--repo",
            "snapshot.auto-track",
            "'glob:\"*.rs\"'",
        ],
    );
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    fs::write(ws.join("code.rs"), "tracked\n").unwrap();
    fs::write(ws.join("notes.md"), "untracked by config\n").unwrap();
    let out = env.aw(&repo, ["clean", "w1", "--json"]);
    out.assert_ok();
    let kept = kept_dir(&env, &repo, "w1");
    assert_eq!(
        fs::read_to_string(kept.join("notes.md")).unwrap(),
        "untracked by config\n"
    );
    assert!(!kept.join("code.rs").exists());
    let untracked = &out.json()["removed"][0]["untracked"];
    assert_eq!(untracked["kept_files_count"], 1, "{}", out.report());
    assert_eq!(untracked["kept_bytes"], 20);
    assert_eq!(untracked["kept_dir"], kept.display().to_string());
}

fn discard_untracked_and_purge(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    for id in ["w1", "w2"] {
        env.aw(&repo, ["run", id, "--", "true"]).assert_ok();
        let ws = env.ws_path(&repo, id);
        fs::write(ws.join(".gitignore"), ".env\n").unwrap();
        fs::write(ws.join(".env"), "x\n").unwrap();
    }
    let out = env.aw(&repo, ["clean", "w1", "--discard-untracked", "--json"]);
    out.assert_ok();
    let untracked = &out.json()["removed"][0]["untracked"];
    assert_eq!(untracked["discarded_files_count"], 1, "{}", out.report());
    assert_eq!(untracked["discarded_bytes"], 2);
    assert_eq!(untracked["kept_files_count"], 0);
    assert!(!env.namespace_dir(&repo).join(".kept").exists());
    env.aw(&repo, ["clean", "w2"]).assert_ok();
    let kept = kept_dir(&env, &repo, "w2");
    let out = env.aw(&repo, ["clean", "--purge-kept", "w2"]);
    out.assert_ok();
    assert_eq!(out.stdout, format!("Purged {}\n", kept.display()));
    assert!(!kept.exists());
}

#[test]
fn jj_discard_untracked_and_purge_kept() {
    discard_untracked_and_purge(Backend::Jj);
}

#[test]
fn git_discard_untracked_and_purge_kept() {
    discard_untracked_and_purge(Backend::Git);
}

#[test]
fn an_empty_disposable_list_keeps_target_too() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    fs::write(ws.join(".gitignore"), "target/\n").unwrap();
    fs::create_dir_all(ws.join("target")).unwrap();
    fs::write(ws.join("target/out"), "o\n").unwrap();
    env.aw_cmd(&repo)
        .args(["clean", "w1"])
        .env("AGENT_WORKSPACE_DISPOSABLE", "")
        .run()
        .assert_ok();
    let kept = kept_dir(&env, &repo, "w1");
    assert_eq!(fs::read_to_string(kept.join("target/out")).unwrap(), "o\n");
}

#[test]
fn run_cleanup_keeps_ignored_files_aside() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    let out = env.aw(
        &repo,
        [
            "run",
            "w1",
            "--cleanup",
            "--",
            "sh",
            "-c",
            "echo '*.log' > .gitignore; echo x > run.log",
        ],
    );
    out.assert_ok();
    let kept = kept_dir(&env, &repo, "w1");
    assert_eq!(fs::read_to_string(kept.join("run.log")).unwrap(), "x\n");
    assert!(
        out.stderr.contains(&format!(
            "kept 1 file (2 B) that no commit holds in {}",
            kept.display()
        )),
        "{}",
        out.report()
    );
}

#[test]
fn git_commits_on_a_detached_head_stay_reachable() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    let script = "git checkout -q --detach && echo d > d.txt && git add d.txt && \
                  git commit -q -m detached && git rev-parse HEAD";
    let out = env.aw(&repo, ["run", "w1", "--", "sh", "-c", script]);
    out.assert_ok();
    let detached = out.stdout.trim().to_string();
    let out = env.aw(&repo, ["clean", "w1", "--json"]);
    out.assert_ok();
    let head = &out.json()["removed"][0]["head"];
    let keeper = format!("agent-workspace/w1-detached-{}", &detached[..12]);
    assert_eq!(head["branch"], keeper, "{}", out.report());
    assert_eq!(head["created"], true);
    git_ok(&env, &repo, &["cat-file", "-e", &detached]);
    let containing = git_ok(
        &env,
        &repo,
        &[
            "branch",
            "--format=%(refname:short)",
            "--contains",
            &detached,
        ],
    );
    assert_eq!(containing, format!("{keeper}\n"));
}

#[test]
fn git_commits_on_another_branch_are_named() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    env.aw(
        &repo,
        ["run", "w1", "--", "git", "checkout", "-q", "-b", "other"],
    )
    .assert_ok();
    let ws = env.ws_path(&repo, "w1");
    fs::write(ws.join("o.txt"), "o\n").unwrap();
    let out = env.aw(&repo, ["clean", "w1"]);
    out.assert_ok();
    let tip = git_ok(&env, &repo, &["rev-parse", "other"]);
    assert!(
        out.stdout
            .contains(&format!("its HEAD was on branch other ({})", &tip[..12])),
        "{}",
        out.report()
    );
    assert_eq!(git_ok(&env, &repo, &["show", "other:o.txt"]), "o\n");
}

#[test]
fn jj_clean_names_earlier_commits_of_the_workspace() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    let script = "echo 1 > one.txt && jj commit -m 'first step' && echo 2 > two.txt && \
                  jj commit -m 'second step' && jj new";
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", script])
        .assert_ok();
    let first = env.commit_id(&repo, "description(exact:\"first step\n\")");
    let second = env.commit_id(&repo, "description(exact:\"second step\n\")");
    let out = env.aw(&repo, ["clean", "w1"]);
    out.assert_ok();
    assert!(
        out.stdout.contains(&format!(
            "; commits holding its work: {} \"second step\", {} \"first step\"",
            &second[..12],
            &first[..12]
        )),
        "{}",
        out.report()
    );
    assert!(!out.stdout.contains("no edits to keep"), "{}", out.report());
}

#[test]
fn git_clean_names_earlier_commits_of_the_branch() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    let script = "echo 1 > one.txt && git add one.txt && git commit -q -m 'first step' && \
                  echo 2 > two.txt";
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", script])
        .assert_ok();
    let first = git_ok(&env, &repo, &["rev-parse", "agent-workspace/w1"]);
    let out = env.aw(&repo, ["clean", "w1", "--json"]);
    out.assert_ok();
    let commits = &out.json()["removed"][0]["commits"];
    assert_eq!(commits[0]["commit_id"], first.trim(), "{}", out.report());
    assert_eq!(commits[0]["subject"], "first step");
    assert_eq!(commits.as_array().unwrap().len(), 1);
}

#[test]
fn clean_refuses_to_delete_what_it_cannot_keep_aside() {
    let env = TestEnv::new();
    let repo = Backend::Jj.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w1");
    fs::write(ws.join(".gitignore"), ".env\n").unwrap();
    fs::write(ws.join(".env"), "x\n").unwrap();
    // `.kept` is a file: nothing can be moved under it.
    fs::write(env.namespace_dir(&repo).join(".kept"), "").unwrap();
    let out = env.aw(&repo, ["clean", "w1"]);
    insta::assert_snapshot!(out, @r#"
    --- stderr ---
    Error: did not remove workspace "w1": could not keep [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/.env aside in [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.kept/w1-[STAMP]/.env: Not a directory (os error 20)
    Hint: files already kept aside are in [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.kept/w1-[STAMP]; free the problem, then clean again
    [exit 1]
    "#);
    assert_eq!(fs::read_to_string(ws.join(".env")).unwrap(), "x\n");
}

#[test]
fn purge_kept_refuses_a_symlinked_kept_directory() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let elsewhere = env.path().join("elsewhere");
    fs::create_dir_all(elsewhere.join("w1-20260101T000000Z")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, env.namespace_dir(&repo).join(".kept")).unwrap();
    let out = env.aw(&repo, ["clean", "--purge-kept", "--all"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.kept is not a directory
    Hint: remove it by hand; agent-workspace does not follow symlinks
    [exit 1]
    ");
    assert!(elsewhere.join("w1-20260101T000000Z").exists());
}
