//! A sandboxed jj run owns a store of its own: whatever the agent does to it (abandoning
//! commits, dropping operations, collecting garbage, writing jj configuration) never reaches
//! the user's repository, the user's uncommitted files are not in it, and its work comes
//! back through the tool as commits with their change ids. Each as the invoking user and,
//! where the tests run as root, as an unprivileged one. That the jj configuration it writes
//! never runs outside is told for both backends in `sandbox_store_both.rs`.

use std::fs;
use std::path::Path;

use crate::backends::Backend;
use crate::harness::{Outcome, TestEnv};
use crate::sandbox_support::setup;

/// Runs `script` in workspace `w`, sandboxed, as the invoking or an unprivileged user.
fn sandboxed(env: &TestEnv, repo: &Path, script: &str, unprivileged: bool) -> Outcome {
    let cmd = env
        .aw_cmd(repo)
        .args(["run", "--sandbox", "w", "--", "sh", "-c", script]);
    match unprivileged {
        true => cmd.run_unprivileged(),
        false => cmd.run(),
    }
}

/// The user's commit that exists nowhere else survives an agent that abandons everything it
/// sees, drops the operations, collects garbage and deletes what it finds of the store.
fn the_users_unpushed_commit_survives(unprivileged: bool) {
    let (env, repo) = setup(Backend::Jj);
    fs::write(repo.join("mine.txt"), "only here\n").unwrap();
    env.jj_ok(&repo, ["commit", "-m", "unpushed work"]);
    let store = repo.join(".jj/repo");
    let script = format!(
        "jj abandon --ignore-immutable 'all() ~ root() ~ @' ; \
         jj op abandon '..@-' ; jj util gc --expire=now ; \
         git --git-dir={git} update-ref -d HEAD ; rm -rf {store}/op_heads {store}/op_store ; \
         echo agent-done",
        git = repo.join(".git").display(),
        store = store.display(),
    );
    let out = sandboxed(&env, &repo, &script, unprivileged);
    out.assert_ok();
    assert!(out.stdout.contains("agent-done"), "{}", out.report());
    let seen = env.jj_ok(
        &repo,
        ["log", "--no-graph", "-r", "all()", "-T", "description"],
    );
    assert!(seen.contains("unpushed work"), "{seen}");
    assert_eq!(
        env.jj_ok(&repo, ["file", "show", "-r", "@-", "mine.txt"]),
        "only here\n"
    );
}

#[test]
fn the_users_unpushed_commit_survives_for_the_invoking_user() {
    the_users_unpushed_commit_survives(false);
}

#[test]
fn the_users_unpushed_commit_survives_for_an_unprivileged_user() {
    the_users_unpushed_commit_survives(true);
}

/// What the user has not committed (snapshotted into the user's working-copy commit) and
/// another workspace's draft are not in the agent's store.
fn uncommitted_files_are_not_readable(unprivileged: bool) {
    let (env, repo) = setup(Backend::Jj);
    env.aw(
        &repo,
        [
            "run",
            "other",
            "--",
            "sh",
            "-c",
            "echo draft-words > draft.txt",
        ],
    )
    .assert_ok();
    fs::write(repo.join(".env"), "DB_PASSWORD=hunter2\n").unwrap();
    env.jj_ok(&repo, ["status"]);
    // The words searched for are spelled apart, so the command line never holds them.
    let script = "s=\"hun\"\"ter2\\|dra\"\"ft-words\" ; \
                  jj file show -r 'default@' .env ; jj file show -r 'other@' draft.txt ; \
                  jj log -r 'all()' -p --no-graph ; \
                  git --git-dir=.jj/repo/store/git cat-file --batch-all-objects --batch | grep -a -o \"$s\" ; \
                  grep -r -a -o \"$s\" .jj ; echo agent-done";
    let out = sandboxed(&env, &repo, script, unprivileged);
    out.assert_ok();
    assert!(out.stdout.contains("agent-done"), "{}", out.report());
    for secret in ["hunter2", "draft-words"] {
        assert!(
            !out.stdout.contains(secret) && !out.stderr.contains(secret),
            "{secret} was readable:\n{}",
            out.report()
        );
    }
}

#[test]
fn uncommitted_files_are_not_readable_for_the_invoking_user() {
    uncommitted_files_are_not_readable(false);
}

#[test]
fn uncommitted_files_are_not_readable_for_an_unprivileged_user() {
    uncommitted_files_are_not_readable(true);
}

/// What the agent commits comes back into the user's repository with its change id and
/// description, and what `diff` shows is what `land` brings.
#[test]
fn the_agents_commits_come_back_with_their_change_ids() {
    let (env, repo) = setup(Backend::Jj);
    let out = sandboxed(
        &env,
        &repo,
        "echo one > one.txt && jj commit -m 'first from agent' && \
         jj log --no-graph -r @- -T change_id",
        false,
    );
    out.assert_ok();
    let change = out.stdout.trim().to_string();
    assert_eq!(change.len(), 32, "{}", out.report());
    let seen = env.jj_ok(
        &repo,
        ["log", "--no-graph", "-r", &change, "-T", "description"],
    );
    assert_eq!(seen.trim(), "first from agent");
    let diff = env.aw(&repo, ["diff", "w"]);
    diff.assert_ok();
    assert!(diff.stdout.contains("one.txt"), "{}", diff.stdout);
    // A second run reuses the agent's store: its operation log goes on.
    let again = sandboxed(
        &env,
        &repo,
        "jj op log --no-graph -T 'description ++ \"\\n\"' | grep -c commit",
        false,
    );
    again.assert_ok();
    env.aw(&repo, ["land", "w"]).assert_ok();
    assert_eq!(fs::read_to_string(repo.join("one.txt")).unwrap(), "one\n");
    assert!(
        env.jj_ok(&repo, ["log", "--no-graph", "-r", "::@", "-T", "change_id"])
            .contains(&change),
        "the landed commit lost its change id"
    );
    // The user's side moved the workspace (a checkpoint): the next sandboxed run starts from
    // there, not from what its store last held.
    fs::write(env.ws_path(&repo, "w").join("two.txt"), "two\n").unwrap();
    env.aw(&repo, ["checkpoint", "w", "-m", "from the user"])
        .assert_ok();
    let seen = sandboxed(
        &env,
        &repo,
        "jj log --no-graph -r @- -T description && cat two.txt && jj diff --summary",
        false,
    );
    seen.assert_ok();
    assert_eq!(
        seen.stdout,
        "[workspace w] from the user\ntwo\n",
        "{}",
        seen.report()
    );
}

/// The user's bookmarks (the base revisions trust is checked against) cannot be moved,
/// rewritten or deleted from a sandbox: the agent's store is its own.
#[test]
fn the_users_bookmarks_stay_where_the_user_put_them() {
    let (env, repo) = setup(Backend::Jj);
    env.jj_ok(&repo, ["bookmark", "create", "main", "-r", "@-"]);
    let before = env.commit_id(&repo, "main");
    let script = format!(
        "jj bookmark set main -r @ --allow-backwards ; \
         jj describe -r 'root()+' -m rewritten --ignore-immutable ; jj git export ; \
         git --git-dir={git} update-ref -d refs/heads/main ; \
         git --git-dir=.jj/repo/store/git update-ref -d refs/heads/main ; echo agent-done",
        git = repo.join(".git").display()
    );
    let out = sandboxed(&env, &repo, &script, false);
    out.assert_ok();
    assert!(out.stdout.contains("agent-done"), "{}", out.report());
    assert_eq!(env.commit_id(&repo, "main"), before);
    let described = env.jj_ok(
        &repo,
        ["log", "--no-graph", "-r", "main", "-T", "description"],
    );
    assert_eq!(described, "initial\n");
}

/// Work the agent made in its own store beyond what comes back (`@` and its ancestors) is
/// never removed silently: `clean` keeps the store aside, names where (text and JSON) and
/// what it holds, and the work is readable there. A bookmark on a commit that came back
/// holds nothing more: that store goes.
fn other_work_keeps_the_store_aside(unprivileged: bool) {
    // What the agent leaves, the description of the commit only the store holds, and the
    // bookmark naming it (the store's report names it).
    let scenarios = [
        ("a head left by jj new @-", "echo s > s.txt && jj describe -m side && jj new @-", "side", ""),
        ("a head left by jj new root()", "echo r > r.txt && jj describe -m rooted && jj new 'root()'", "rooted", ""),
        (
            "a bookmark on a side commit",
            "jj new @- -m marked && echo m > m.txt && jj bookmark create keepme -r @ && jj new 'description(substring:back)'",
            "marked",
            "keepme",
        ),
        ("a bookmark where @- is", "jj bookmark create alias -r @-", "", ""),
    ];
    for (what, extra, description, bookmark) in scenarios {
        let (env, repo) = setup(Backend::Jj);
        let script =
            format!("echo back > back.txt && jj commit -m back && {extra} && echo agent-done");
        let out = sandboxed(&env, &repo, &script, unprivileged);
        assert!(
            out.stdout.contains("agent-done"),
            "{what}: {}",
            out.report()
        );
        let cmd = env.aw_cmd(&repo).args(["clean", "w", "--json"]);
        let clean = match unprivileged {
            true => cmd.run_unprivileged(),
            false => cmd.run(),
        };
        clean.assert_ok();
        assert!(
            !env.namespace_dir(&repo).join(".private/w").exists(),
            "{what}: {}",
            clean.report()
        );
        let kept = &clean.json()["removed"][0]["own_store_kept"];
        if description.is_empty() {
            assert!(kept.is_null(), "{what}: {}", clean.report());
            continue;
        }
        let path = kept["path"]
            .as_str()
            .unwrap_or_else(|| panic!("{what}: {}", clean.report()));
        let path = Path::new(path);
        assert!(
            path.starts_with(env.namespace_dir(&repo).join(".kept")),
            "{what}: {}",
            clean.report()
        );
        assert!(
            kept["holds"]
                .as_str()
                .is_some_and(|h| h.contains("commit") && h.contains(bookmark)),
            "{what}: {}",
            clean.report()
        );
        // The work is there, whole (its base's objects too), read as data by git.
        let git = format!("--git-dir={}", path.join(".jj/repo/store/git").display());
        let log = crate::backends::git_ok(&env, &repo, &[&git, "log", "--all", "--format=%s"]);
        assert!(log.contains(description), "{what}: {log}");
        crate::backends::git_ok(&env, &repo, &[&git, "fsck", "--no-dangling"]);
        assert!(path.join(".jj/repo/op_heads").is_dir(), "{what}");
    }
}

#[test]
fn other_work_keeps_the_store_aside_for_the_invoking_user() {
    other_work_keeps_the_store_aside(false);
}

#[test]
fn other_work_keeps_the_store_aside_for_an_unprivileged_user() {
    other_work_keeps_the_store_aside(true);
}
