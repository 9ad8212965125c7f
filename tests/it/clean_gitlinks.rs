//! git: a commit an agent made inside a submodule or a nested repository of its worktree
//! lives only in the worktree's own git area (or the nested repository's `.git`); removing
//! the worktree first fetches every commit a gitlink names into the user's repository, so a
//! landed or kept gitlink never names a commit that exists nowhere.

use std::fs;
use std::path::{Path, PathBuf};

use crate::backends::{git_ok, git_repo};
use crate::harness::TestEnv;

/// A git repository with a submodule `lib` (cloned from a local repository), initialised in
/// the main worktree as `git submodule add` leaves it. Returns the repository.
fn repo_with_submodule(env: &TestEnv) -> PathBuf {
    let repo = git_repo(env, "repo");
    let upstream = env.path().join("libsrc");
    fs::create_dir_all(&upstream).unwrap();
    git_ok(env, &upstream, &["init", "-q"]);
    fs::write(upstream.join("lib.txt"), "lib\n").unwrap();
    git_ok(env, &upstream, &["add", "-A"]);
    git_ok(env, &upstream, &["commit", "-q", "-m", "lib"]);
    git_ok(
        env,
        &repo,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            upstream.to_str().unwrap(),
            "lib",
        ],
    );
    git_ok(env, &repo, &["commit", "-q", "-m", "add lib"]);
    repo
}

/// The agent's script: initialise the submodule in its worktree and commit inside it.
const COMMIT_IN_SUBMODULE: &str = "git -c protocol.file.allow=always submodule update --init -q \
     && cd lib && echo agent > agent.txt && git add agent.txt \
     && git commit -q -m 'agent work in lib'";

/// Whether `commit` is in the repository at `dir` and reachable from one of its refs (so
/// no `gc` can prune it), after a `gc --prune=now` there.
fn durable(env: &TestEnv, dir: &Path, commit: &str) -> bool {
    git_ok(env, dir, &["gc", "-q", "--prune=now"]);
    let has = env
        .cmd("git", dir)
        .args(["cat-file", "-e", &format!("{commit}^{{commit}}")])
        .run();
    if has.code() != Some(0) {
        return false;
    }
    let refs = git_ok(
        env,
        dir,
        &["for-each-ref", "--format=%(refname)", "--contains", commit],
    );
    !refs.trim().is_empty()
}

#[test]
fn a_landed_submodule_commit_survives_clean_in_the_users_submodule() {
    let env = TestEnv::new();
    let repo = repo_with_submodule(&env);
    let script =
        format!("{COMMIT_IN_SUBMODULE} && cd .. && git add lib && git commit -q -m 'bump lib'");
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", &script])
        .assert_ok();
    env.aw(&repo, ["land", "w1"]).assert_ok();
    let landed = git_ok(&env, &repo, &["rev-parse", "HEAD:lib"]);
    let landed = landed.trim();
    let out = env.aw(&repo, ["clean", "w1"]);
    out.assert_ok();
    assert!(
        durable(&env, &repo.join("lib"), landed),
        "the commit main's gitlink names is gone\n{}\n{}",
        out.report(),
        env.listing()
    );
    assert!(
        out.stdout.contains(&format!(
            "commit {} of submodule lib is kept in {}",
            &landed[..12],
            repo.join(".git/modules/lib").display()
        )),
        "{}",
        out.report()
    );
    // The user's `git submodule update` checks it out with nothing to fetch.
    git_ok(&env, &repo, &["submodule", "update", "-q"]);
    assert_eq!(
        fs::read_to_string(repo.join("lib/agent.txt")).unwrap(),
        "agent\n"
    );
}

#[test]
fn an_unlanded_submodule_commit_survives_clean_with_the_branch() {
    let env = TestEnv::new();
    let repo = repo_with_submodule(&env);
    // The superproject's gitlink is not committed by the agent: `clean` commits it.
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", COMMIT_IN_SUBMODULE])
        .assert_ok();
    let out = env.aw(&repo, ["clean", "w1", "--json"]);
    out.assert_ok();
    let kept = git_ok(&env, &repo, &["rev-parse", "agent-workspace/w1:lib"]);
    let base = git_ok(&env, &repo, &["rev-parse", "HEAD:lib"]);
    assert_ne!(kept, base, "{}", out.report());
    assert_eq!(
        out.json()["removed"][0]["gitlinks"],
        serde_json::json!([{
            "commit_id": kept.trim(),
            "path": "lib",
            "ref": format!("refs/agent-workspace/kept/w1/{}", kept.trim()),
            "repository": repo.join(".git/modules/lib"),
            "submodule": true,
        }]),
        "{}",
        out.report()
    );
    assert!(
        durable(&env, &repo.join("lib"), kept.trim()),
        "the commit branch agent-workspace/w1's gitlink names is gone\n{}\n{}",
        out.report(),
        env.listing()
    );
}

#[test]
fn a_landed_nested_repository_commit_survives_clean_in_the_users_repository() {
    let env = TestEnv::new();
    let repo = git_repo(&env, "repo");
    let script = "mkdir vendor && cd vendor && git init -q && echo v > v.txt \
                  && git add v.txt && git commit -q -m nested && cd .. \
                  && git add -A 2>/dev/null && git commit -q -m 'add vendor'";
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", script])
        .assert_ok();
    env.aw(&repo, ["land", "w1"]).assert_ok();
    let landed = git_ok(&env, &repo, &["rev-parse", "HEAD:vendor"]);
    let landed = landed.trim();
    let out = env.aw(&repo, ["clean", "w1"]);
    out.assert_ok();
    assert!(
        durable(&env, &repo, landed),
        "the commit main's gitlink names is in no repository of the user's\n{}\n{}",
        out.report(),
        env.listing()
    );
    assert!(
        out.stdout.contains(&format!(
            "commit {} of nested repository vendor is kept in {} as refs/agent-workspace/kept/w1/{landed}",
            &landed[..12],
            repo.join(".git").display()
        )),
        "{}",
        out.report()
    );
}

#[test]
fn a_submodule_no_one_initialised_is_not_reported() {
    let env = TestEnv::new();
    let repo = repo_with_submodule(&env);
    git_ok(&env, &repo, &["submodule", "deinit", "-q", "-f", "lib"]);
    fs::remove_dir_all(repo.join(".git/modules/lib")).unwrap();
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", "echo x > x.txt"])
        .assert_ok();
    let out = env.aw(&repo, ["clean", "w1", "--json"]);
    out.assert_ok();
    assert_eq!(
        out.json()["removed"][0]["gitlinks"],
        serde_json::json!([]),
        "{}",
        out.report()
    );
}
