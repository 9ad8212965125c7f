//! The stories of a sandboxed workspace's own store that read the same on both backends:
//! configuration the agent writes into its store never runs outside the sandbox, work a
//! killed run left is brought back by `clean`, a store whose export fails is kept
//! and named, and work outside what comes back is kept aside when the store goes (made
//! again, or removed by `run --cleanup`). Only what the agent types and where its store
//! lives differ: [`Agent`] holds them per backend.

use std::fs;
use std::path::{Path, PathBuf};

use crate::backends::{git_ok, Backend};
use crate::harness::{Outcome, TestEnv};
use crate::sandbox_support::setup;

/// What the agent types, and what the tool says, in each backend's words.
struct Agent {
    /// Commits a new file `kept.txt` as "killed work".
    commit_killed: &'static str,
    /// Commits `w.txt` as "unexported", then breaks its store's export.
    break_export: &'static str,
    /// The store's directory under `.private/w/`.
    store: &'static str,
    /// What the refusal calls the store.
    store_called: &'static str,
    /// An entry a whole store holds.
    store_entry: &'static str,
    /// Leaves a commit "side" outside what comes back.
    leave_side: &'static str,
    /// Prints the commit "side" when the agent's store has it.
    find_side: &'static str,
    /// How a removal (or a store made again) names that work.
    side_named: &'static str,
    /// `clean` of the workspace after a killed or broken run.
    clean: &'static [&'static str],
    /// Commits, then leaves a FIFO in its own store where the store's tool would open it.
    fifo_in_store: &'static str,
    /// Commits `hung.txt` as "hung work", then has its store's git configuration include a
    /// FIFO of the workspace (which no store check sees): git waits on it for ever.
    hang_export: &'static str,
}

fn agent(backend: Backend) -> Agent {
    match backend {
        Backend::Jj => Agent {
            commit_killed: "echo kept > kept.txt && jj commit -m 'killed work'",
            break_export: "echo w > w.txt && jj commit -m 'unexported' && \
                 printf /nowhere > .jj/repo/store/git_target",
            store: "wc",
            store_called: "own store",
            store_entry: ".jj",
            leave_side: "echo s > s.txt && jj describe -m side && jj new @-",
            find_side: "jj log --no-graph -r 'description(substring:side)' -T description",
            side_named: "holds 1 commit outside @ and its ancestors",
            clean: &["clean", "w"],
            fifo_in_store: "echo w > w.txt && jj commit -m fifo && \
                 op=$(ls .jj/repo/op_heads/heads) && \
                 rm .jj/repo/op_store/operations/$op && mkfifo .jj/repo/op_store/operations/$op",
            hang_export:
                "echo h > hung.txt && jj commit -m 'hung work' && mkfifo \"$PWD/hang\" && \
                 git --git-dir=.jj/repo/store/git config include.path \"$PWD/hang\"",
        },
        Backend::Git => Agent {
            commit_killed: "echo kept > kept.txt && git add kept.txt && \
                 git commit -q -m 'killed work'",
            break_export: "echo w > w.txt && git add w.txt && git commit -q -m unexported && \
                 printf 'ref: refs/heads/nowhere\\n' > \"$(git rev-parse --git-dir)/HEAD\"",
            store: "git",
            store_called: "own git directory",
            store_entry: "objects",
            leave_side: "git checkout -q -b side && echo s > s.txt && git add s.txt && \
                 git commit -q -m side && git checkout -q -",
            find_side: "git branch --list side",
            side_named: "holds work outside the HEAD and index that came back: refs/heads/side",
            clean: &["clean", "w", "--force"],
            fifo_in_store: "echo w > w.txt && git add w.txt && git commit -q -m fifo && \
                 d=$(git rev-parse --absolute-git-dir) && rm \"$d/index\" && mkfifo \"$d/index\"",
            hang_export:
                "echo h > hung.txt && git add hung.txt && git commit -q -m 'hung work' && \
                 mkfifo \"$PWD/hang\" && git config include.path \"$PWD/hang\"",
        },
    }
}

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

/// Every commit's subject (jj: description) in the user's repository.
fn all_subjects(env: &TestEnv, repo: &Path, backend: Backend) -> String {
    match backend {
        Backend::Jj => env.jj_ok(
            repo,
            ["log", "--no-graph", "-r", "all()", "-T", "description"],
        ),
        Backend::Git => git_ok(env, repo, &["log", "--all", "--format=%s"]),
    }
}

/// The user's own history (git: `main`; jj: the working copy's ancestors).
fn users_history(env: &TestEnv, repo: &Path, backend: Backend) -> String {
    match backend {
        Backend::Jj => env.jj_ok(repo, ["log", "--no-graph", "-r", "::@-", "-T", "commit_id"]),
        Backend::Git => git_ok(env, repo, &["rev-parse", "main"]),
    }
}

/// The git directory of a store kept at `path` (jj: its backing git store), read as data.
fn kept_git_dir(path: &Path, backend: Backend) -> String {
    let dir = match backend {
        Backend::Jj => path.join(".jj/repo/store/git"),
        Backend::Git => path.to_path_buf(),
    };
    format!("--git-dir={}", dir.display())
}

/// The path a message names after `is kept in `.
fn kept_path(out: &Outcome) -> PathBuf {
    let text = out.stdout.clone() + &out.stderr;
    text.split("is kept in ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("{}", out.report()))
}

/// A sandboxed run killed before its commits came back: `clean` brings them back (in a
/// sandbox) before removing the workspace, so they are in the user's repository (git: on the
/// worktree's branch).
fn a_killed_runs_commits_are_brought_back_by_clean(backend: Backend) {
    let (env, repo) = setup(backend);
    let ws = env.ws_path(&repo, "w");
    let running = env
        .aw_cmd(&repo)
        .args(["run", "--sandbox", "w", "--", "sh", "-c"])
        .arg(format!(
            "{} && touch started && exec sleep 60",
            agent(backend).commit_killed
        ))
        .spawn();
    crate::harness::wait_for_file(&ws.join("started"));
    running.signal("KILL");
    running.wait();
    // The sandbox dies with its supervisor, and the lease with its last process.
    let lease = env.namespace_dir(&repo).join(".locks/w.lock");
    crate::harness::until(
        "the sandbox to end and let go of the lease",
        std::time::Duration::from_secs(10),
        || fs::File::open(&lease).is_ok_and(|f| f.try_lock().is_ok()),
    );
    let clean = env.aw(&repo, agent(backend).clean);
    clean.assert_ok();
    let seen = all_subjects(&env, &repo, backend);
    assert!(seen.contains("killed work"), "{seen}\n{}", clean.report());
    assert!(!env.namespace_dir(&repo).join(".private/w").exists());
}

/// An agent that breaks its own store's export loses nothing silently: the run warns, the
/// next sandboxed run refuses naming where the commits are, `clean` moves the store aside,
/// whole, and names it; the user's history is untouched.
fn a_store_whose_export_fails_is_kept_and_named(backend: Backend) {
    let (env, repo) = setup(backend);
    let agent = agent(backend);
    let history = users_history(&env, &repo, backend);
    let first = sandboxed(&env, &repo, agent.break_export, false);
    first.assert_ok();
    assert!(
        first.stderr.contains("were not brought back"),
        "{}",
        first.report()
    );
    let store = env
        .namespace_dir(&repo)
        .join(".private/w")
        .join(agent.store);
    let second = sandboxed(&env, &repo, "echo ran", false);
    assert_ne!(second.code(), Some(0), "{}", second.report());
    assert!(!second.stdout.contains("ran"), "{}", second.report());
    assert!(
        second.stderr.starts_with("Error: ")
            && second.stderr.contains(&format!(
                "Hint: the command was not run; the agent's commits stay in its {} {}",
                agent.store_called,
                store.display()
            )),
        "{}",
        second.report()
    );
    let clean = clean_keeps_the_store_aside(&env, &repo, &agent);
    assert!(
        (clean.stdout.clone() + &clean.stderr)
            .contains("holds commits that could not be brought back"),
        "{}",
        clean.report()
    );
    assert!(!store.exists());
    assert_eq!(users_history(&env, &repo, backend), history);
}

/// A FIFO the agent leaves in its own store never hangs the user's commands (jj or git
/// would block opening it): the run ends, warning its work was not brought back, and `clean`
/// ends, keeping the store aside and naming it.
fn a_fifo_in_its_own_store_never_hangs_the_user_s_commands(backend: Backend) {
    let (env, repo) = setup(backend);
    let agent = agent(backend);
    let history = users_history(&env, &repo, backend);
    // The harness fails a command that takes more than its limit instead of waiting.
    let run = sandboxed(&env, &repo, agent.fifo_in_store, false);
    run.assert_ok();
    assert!(
        run.stderr.contains("were not brought back"),
        "{}",
        run.report()
    );
    clean_keeps_the_store_aside(&env, &repo, &agent);
    assert_eq!(users_history(&env, &repo, backend), history);
}

/// Runs `clean` of `w`, which must succeed having moved the workspace's own store aside,
/// whole, under the kept-aside directory and named there; its outcome.
fn clean_keeps_the_store_aside(env: &TestEnv, repo: &Path, agent: &Agent) -> Outcome {
    let clean = env.aw(repo, agent.clean);
    clean.assert_ok();
    let named = kept_path(&clean);
    assert!(
        named.starts_with(env.namespace_dir(repo).join(".kept")),
        "{}",
        clean.report()
    );
    assert!(named.join(agent.store_entry).is_dir(), "{}", clean.report());
    clean
}

/// When the user's side moved the workspace (a checkpoint) the next sandboxed run makes its
/// store again; work the agent left outside what came back is not dropped: the old store is
/// kept aside and the run warns where.
fn a_remade_store_keeps_the_old_one_aside_as(backend: Backend, unprivileged: bool) {
    let (env, repo) = setup(backend);
    let agent = agent(backend);
    sandboxed(&env, &repo, agent.leave_side, unprivileged).assert_ok();
    let ws = env.ws_path(&repo, "w");
    fs::write(ws.join("two.txt"), "two\n").unwrap();
    env.aw(&repo, ["checkpoint", "w", "-m", "from the user"])
        .assert_ok();
    let second = sandboxed(&env, &repo, agent.find_side, unprivileged);
    second.assert_ok();
    assert_eq!(second.stdout, "", "{}", second.report());
    // An unprivileged user here may get no cgroup, which a note says first.
    assert!(
        crate::sandbox_support::without_limits_note(&second.stderr).starts_with("Warning: "),
        "{}",
        second.report()
    );
    assert!(
        second.stderr.contains(agent.side_named),
        "{}",
        second.report()
    );
    let path = kept_path(&second);
    assert!(
        path.starts_with(env.namespace_dir(&repo).join(".kept")),
        "{}",
        second.report()
    );
    let git = kept_git_dir(&path, backend);
    let log = git_ok(&env, &repo, &[&git, "log", "--all", "--format=%s"]);
    assert!(log.contains("side"), "{log}");
}

fn a_remade_store_keeps_the_old_one_aside(backend: Backend) {
    a_remade_store_keeps_the_old_one_aside_as(backend, false);
}

fn a_remade_store_keeps_the_old_one_aside_for_an_unprivileged_user(backend: Backend) {
    a_remade_store_keeps_the_old_one_aside_as(backend, true);
}

/// `run --sandbox --cleanup` removes the workspace after a successful run through the same
/// removal: work the agent left outside what came back keeps its store aside, named.
fn run_cleanup_keeps_the_store_aside(backend: Backend) {
    let (env, repo) = setup(backend);
    let agent = agent(backend);
    let out = env
        .aw_cmd(&repo)
        .args(["run", "--sandbox", "--cleanup", "w", "--", "sh", "-c"])
        .arg(agent.leave_side)
        .run();
    out.assert_ok();
    assert!(!env.ws_path(&repo, "w").exists(), "{}", out.report());
    let kept = env.namespace_dir(&repo).join(".kept");
    assert!(
        out.stderr.contains(agent.side_named)
            && out
                .stderr
                .contains(&format!("is kept in {}", kept.display())),
        "{}",
        out.report()
    );
    assert!(kept_path(&out).starts_with(&kept), "{}", out.report());
}

/// `gc` removes a workspace past its retention through the same removal: work the agent left
/// outside what came back keeps its store aside, named in the JSON (`own_store_kept`).
fn gc_keeps_the_store_aside(backend: Backend) {
    let (env, repo) = setup(backend);
    let agent = agent(backend);
    sandboxed(&env, &repo, agent.leave_side, false).assert_ok();
    fs::write(
        repo.join("agent-workspace.toml"),
        "[retention]\ndone = \"1h\"\n",
    )
    .unwrap();
    crate::gc::age(&env, &repo, "w", std::time::Duration::from_secs(7200));
    let out = env.aw(&repo, ["gc", "--json"]);
    let doc = out.assert_ok().json();
    crate::schemas::assert_valid("gc", &doc);
    assert!(!env.ws_path(&repo, "w").exists(), "{}", out.report());
    let kept = &doc["removed"][0]["removal"]["own_store_kept"];
    let path = Path::new(kept["path"].as_str().unwrap_or_else(|| panic!("{doc}")));
    assert!(
        path.starts_with(env.namespace_dir(&repo).join(".kept")),
        "{doc}"
    );
    let holds = kept["holds"].as_str().unwrap_or_default();
    assert!(
        format!("holds {holds}").starts_with(agent.side_named),
        "{doc}"
    );
    let log = git_ok(
        &env,
        &repo,
        &[&kept_git_dir(path, backend), "log", "--all", "--format=%s"],
    );
    assert!(log.contains("side"), "{log}");
}

/// Configuration the agent writes where its own backend reads it never runs outside the
/// sandbox: not by the tool's later calls (diff, status, checkpoint, land, clean), nor (git)
/// by the user's plain `git status` in the worktree or the repository. jj: a legacy workspace
/// or repository configuration with a signing program, which jj adopts. git: its git
/// directory's `config`, and a submodule's git directory `modules/x` with `core.fsmonitor`,
/// named by a gitlink it commits.
fn agent_config_never_runs_outside_as(backend: Backend, unprivileged: bool) {
    let (env, repo) = setup(backend);
    let marker = env.home().join("ran-outside");
    let program = env.path().join("evil-program");
    fs::write(
        &program,
        format!("#!/bin/sh\necho ran >> {}\nexit 1\n", marker.display()),
    )
    .unwrap();
    fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let script = match backend {
        Backend::Jj => {
            let config = format!(
                "[signing]\nbehavior = \"own\"\nbackend = \"gpg\"\n[signing.backends.gpg]\nprogram = \"{}\"\n[ui]\nshow-cryptographic-signatures = true\n",
                program.display()
            );
            format!(
                "echo work > work.txt ; printf '%s' '{config}' > .jj/workspace-config.toml ; \
                 rm -f .jj/workspace-config-id ; \
                 if [ -d .jj/repo ]; then printf '%s' '{config}' > .jj/repo/config.toml ; rm -f .jj/repo/config-id ; \
                 else store=\"$(cat .jj/repo)\" ; printf '%s' '{config}' > \".jj/$store/config.toml\" ; rm -f \".jj/$store/config-id\" ; fi ; \
                 echo agent-done"
            )
        }
        Backend::Git => format!(
            "set -x ; echo work > work.txt ; git add work.txt ; git commit -q -m work ; \
             gd=\"$(git rev-parse --absolute-git-dir)\" ; \
             git init -q x ; git -C x commit -q --allow-empty -m sub ; \
             mkdir -p \"$gd/modules\" ; mv x/.git \"$gd/modules/x\" ; \
             printf 'gitdir: %s\\n' \"$gd/modules/x\" > x/.git ; \
             git --git-dir=\"$gd/modules/x\" config core.worktree \"$PWD/x\" ; \
             git --git-dir=\"$gd/modules/x\" config core.fsmonitor {program} ; \
             git update-index --add --cacheinfo 160000,\"$(git -C x rev-parse HEAD)\",x ; \
             git commit -q -m gitlink ; \
             git config core.fsmonitor {program} ; git config alias.status '!{program}' ; \
             git config core.hooksPath /nowhere ; \
             echo agent-done",
            program = program.display()
        ),
    };
    let out = sandboxed(&env, &repo, &script, unprivileged);
    assert!(out.stdout.contains("agent-done"), "{}", out.report());
    let ws = env.ws_path(&repo, "w");
    // What the user runs themselves in the worktree and the repository (jj has none to run:
    // its configuration is read by the tool's calls below).
    let users_git_status = |dir: &Path| {
        if backend == Backend::Git {
            let _ = env.cmd("git", dir).args(["status"]).run();
        }
    };
    if backend == Backend::Git {
        // The submodule's `.git` the agent made is out of the worktree, kept aside.
        let moved = moved_aside_paths(&out);
        assert_eq!(moved.len(), 1, "{}", out.report());
        assert!(
            moved[0].starts_with(env.namespace_dir(&repo).join(".kept"))
                && moved[0].ends_with("x/.git")
                && moved[0].is_file(),
            "{}",
            out.report()
        );
        assert!(fs::symlink_metadata(ws.join("x/.git")).is_err());
        // The monitor may run inside the sandbox (the agent's own git): only later runs
        // count.
        let _ = fs::remove_file(&marker);
    }
    users_git_status(&ws);
    users_git_status(&repo);
    env.aw(&repo, ["diff", "w"]).assert_ok();
    env.aw(&repo, ["status", "w"]).assert_ok();
    env.aw(&repo, ["checkpoint", "w", "-m", "after the agent"])
        .assert_ok();
    env.aw(&repo, ["land", "w"]).assert_ok();
    users_git_status(&ws);
    env.aw(&repo, ["clean", "w"]).assert_ok();
    users_git_status(&repo);
    if backend == Backend::Jj {
        env.jj_ok(&repo, ["status"]);
    }
    assert!(
        !marker.exists(),
        "the agent's configuration ran a program outside the sandbox"
    );
    assert_eq!(fs::read_to_string(repo.join("work.txt")).unwrap(), "work\n");
}

fn agent_config_never_runs_outside(backend: Backend) {
    agent_config_never_runs_outside_as(backend, false);
}

fn agent_config_never_runs_outside_for_an_unprivileged_user(backend: Backend) {
    agent_config_never_runs_outside_as(backend, true);
}

/// An export that never ends (the agent's store includes a FIFO in its configuration, so git
/// waits on it for ever) is stopped at `sandbox.bring_back_timeout`: the run ends saying
/// where the store, with the agent's commit, is kept; later commands never wait on it.
fn an_export_that_never_ends_is_stopped_and_its_store_kept(backend: Backend) {
    let (env, repo) = setup(backend);
    env.user_config("[sandbox]\nbring_back_timeout = \"3s\"\n");
    let agent = agent(backend);
    let history = users_history(&env, &repo, backend);
    // The harness fails a command that takes more than its limit instead of waiting.
    let run = sandboxed(&env, &repo, agent.hang_export, false);
    assert!(
        run.stderr
            .contains("was not brought back from its sandbox: the export did not end within 3 s"),
        "{}",
        run.report()
    );
    let kept = kept_path(&run);
    // The kept store still includes the FIFO: git would wait on it here too, until it goes.
    fs::remove_file(env.ws_path(&repo, "w").join("hang")).unwrap();
    let subjects = git_ok(
        &env,
        &repo,
        &[&kept_git_dir(&kept, backend), "log", "--all", "--format=%s"],
    );
    assert!(
        subjects.contains("hung work"),
        "{subjects}\n{}",
        run.report()
    );
    assert!(
        !env.namespace_dir(&repo).join(".private/w").exists(),
        "{}",
        env.listing()
    );
    // The next sandboxed run starts from the workspace's files, and the store is not waited on.
    let again = sandboxed(&env, &repo, "cat hung.txt", false);
    assert_eq!(again.assert_ok().stdout, "h\n", "{}", again.report());
    env.aw(&repo, ["status", "w"]).assert_ok();
    assert_eq!(users_history(&env, &repo, backend), history);
}

/// A program that appends to `marker` and fails, for the agent to name in its configuration.
fn marking_program(env: &TestEnv, marker: &Path) -> PathBuf {
    let program = env.path().join("evil-program");
    fs::write(
        &program,
        format!("#!/bin/sh\necho ran >> {}\nexit 1\n", marker.display()),
    )
    .unwrap();
    fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    program
}

/// Repositories the agent nests in its workspace never run anything outside the sandbox: a
/// `src/lib/.git` made by `git init` with `core.fsmonitor` set, and (jj) a `src/.jj` with a
/// legacy configuration naming a signing program, or (git) an untracked `src/.git` file
/// leading elsewhere. Each is moved out of the workspace into the namespace's kept-aside
/// directory (`.kept/w-<stamp>/src/lib/.git`) and named as the run ends; then the tool's `diff`, `checkpoint`, `land --dry-run` and `clean`
/// and the user's own git and jj in `src/lib` and `src` find the workspace's store (or none),
/// never the agent's.
fn nested_repositories_never_run_outside_as(backend: Backend, unprivileged: bool) {
    let (env, repo) = setup(backend);
    let marker = env.home().join("ran-outside");
    let program = marking_program(&env, &marker);
    let nested = match backend {
        Backend::Jj => {
            let config = format!(
                "[signing]\nbehavior = \"own\"\nbackend = \"gpg\"\n[signing.backends.gpg]\nprogram = \"{}\"\n",
                program.display()
            );
            format!(
                "jj git init --no-colocate src >/dev/null 2>&1 ; \
                 printf '%s' '{config}' > src/.jj/repo/config.toml ; rm -f src/.jj/repo/config-id"
            )
        }
        Backend::Git => "printf 'gitdir: /somewhere\\n' > src/.git".to_string(),
    };
    let script = format!(
        "mkdir -p src/lib && echo work > src/work.txt && echo lib > src/lib/lib.txt && \
         git init -q src/lib && git -C src/lib add lib.txt && git -C src/lib -c user.name=agent -c user.email=agent@example.com commit -q -m lib && \
         git -C src/lib config core.fsmonitor {program} && \
         git -C src/lib config alias.status '!{program}' && {nested} && echo agent-done",
        program = program.display()
    );
    let out = sandboxed(&env, &repo, &script, unprivileged);
    assert!(out.stdout.contains("agent-done"), "{}", out.report());
    // The agent's own git may have run it inside: only what runs afterwards counts.
    let _ = fs::remove_file(&marker);
    let ws = env.ws_path(&repo, "w");
    let stamp = regex::Regex::new(r"\b[0-9]{8}T[0-9]{6}Z\b").unwrap();
    let stderr = stamp.replace_all(&out.stderr, "[STAMP]");
    let named: String = crate::sandbox_support::without_limits_note(&env.normalize(&stderr))
        .lines()
        .filter(|l| !l.starts_with("Note: "))
        .map(|l| format!("{l}\n"))
        .collect();
    match backend {
        Backend::Jj => insta::assert_snapshot!(named, @r"
        Warning: moved aside a .git or .jj a sandboxed run made (git or jj would have followed it to a store of the agent's and run its configuration): [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.kept/w-[STAMP]/src/.jj, [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.kept/w-[STAMP]/src/lib/.git
        Hint: look at what each holds, as data, before putting it back; the workspace's other files are unchanged
        "),
        Backend::Git => insta::assert_snapshot!(named, @r"
        Warning: moved aside a .git or .jj a sandboxed run made (git or jj would have followed it to a store of the agent's and run its configuration): [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.kept/w-[STAMP]/src/.git, [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/.kept/w-[STAMP]/src/lib/.git
        Hint: look at what each holds, as data, before putting it back; the workspace's other files are unchanged
        "),
    }
    let src = ws.join("src");
    let moved = moved_aside_paths(&out);
    let aside = |rel: &str| {
        assert!(
            fs::symlink_metadata(ws.join(rel)).is_err(),
            "{rel} is still in {}",
            ws.display()
        );
        let kept = moved.iter().find(|p| p.ends_with(rel));
        assert!(
            kept.is_some_and(|p| fs::symlink_metadata(p).is_ok()),
            "{}",
            out.report()
        );
        let name = Path::new(rel).file_name().unwrap().to_string_lossy();
        let dir = ws.join(rel).parent().unwrap().to_path_buf();
        let names: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.starts_with(&*name)), "{names:?}");
    };
    aside("src/lib/.git");
    match backend {
        Backend::Jj => aside("src/.jj"),
        Backend::Git => aside("src/.git"),
    }
    // The user's own git and jj below the workspace find its store, or none.
    for dir in [src.join("lib"), src.clone()] {
        let found = env
            .cmd("git", &dir)
            .args(["rev-parse", "--absolute-git-dir"])
            .run();
        assert!(
            !found.stdout.trim().starts_with(&*src.to_string_lossy()),
            "{found}"
        );
        let _ = env.cmd("git", &dir).args(["status"]).run();
    }
    if backend == Backend::Jj {
        let root = env.jj_ok(&src, ["root"]);
        assert_eq!(PathBuf::from(root.trim()), ws);
    }
    env.aw(&repo, ["diff", "w"]).assert_ok();
    env.aw(&repo, ["checkpoint", "w", "-m", "after the agent"])
        .assert_ok();
    env.aw(&repo, ["diff", "w"]).assert_ok();
    env.aw(&repo, ["land", "w", "--dry-run"]).assert_ok();
    let _ = env.cmd("git", &src.join("lib")).args(["status"]).run();
    env.aw(&repo, agent(backend).clean).assert_ok();
    assert!(
        !marker.exists(),
        "a nested repository's configuration ran a program outside the sandbox"
    );
}

fn nested_repositories_never_run_outside(backend: Backend) {
    nested_repositories_never_run_outside_as(backend, false);
}

fn nested_repositories_never_run_outside_for_an_unprivileged_user(backend: Backend) {
    nested_repositories_never_run_outside_as(backend, true);
}

/// A killed sandboxed run's nested repository is moved aside before `clean` runs git or jj
/// in the workspace, and named.
fn a_killed_runs_nested_repository_is_moved_aside_by_clean(backend: Backend) {
    let (env, repo) = setup(backend);
    let marker = env.home().join("ran-outside");
    let program = marking_program(&env, &marker);
    let ws = env.ws_path(&repo, "w");
    let running = env
        .aw_cmd(&repo)
        .args(["run", "--sandbox", "w", "--", "sh", "-c"])
        .arg(format!(
            "mkdir -p src/lib && echo lib > src/lib/lib.txt && git init -q src/lib && \
             git -C src/lib config core.fsmonitor {program} && touch started && exec sleep 60",
            program = program.display()
        ))
        .spawn();
    crate::harness::wait_for_file(&ws.join("started"));
    running.signal("KILL");
    running.wait();
    let lease = env.namespace_dir(&repo).join(".locks/w.lock");
    crate::harness::until(
        "the sandbox to end and let go of the lease",
        std::time::Duration::from_secs(10),
        || fs::File::open(&lease).is_ok_and(|f| f.try_lock().is_ok()),
    );
    let _ = fs::remove_file(&marker);
    let out = env.aw(&repo, agent(backend).clean);
    out.assert_ok();
    // Named in what the removal says, and kept aside out of the workspace.
    let moved = moved_aside_paths(&out);
    assert_eq!(moved.len(), 1, "{}", out.report());
    assert!(
        moved[0].starts_with(env.namespace_dir(&repo).join(".kept"))
            && moved[0].ends_with("src/lib/.git")
            && moved[0].join("HEAD").is_file(),
        "{}",
        out.report()
    );
    assert!(
        !marker.exists(),
        "the nested repository's fsmonitor ran outside"
    );
}

/// The files of the commit `land` brought into the user's repository (jj: its working copy;
/// git: `main`), one path a line.
fn landed_files(env: &TestEnv, repo: &Path, backend: Backend) -> String {
    match backend {
        Backend::Jj => env.jj_ok(repo, ["file", "list", "-r", "@"]),
        Backend::Git => git_ok(env, repo, &["ls-tree", "-r", "--name-only", "main"]),
    }
}

/// What a run (or a removal) moved aside, as its warning names it.
fn moved_aside_paths(out: &Outcome) -> Vec<PathBuf> {
    let text = out.stdout.clone() + &out.stderr;
    let line = text
        .lines()
        .find_map(|l| l.split("and run its configuration): ").nth(1))
        .unwrap_or_else(|| panic!("{}", out.report()));
    let line = line.split("; ").next().unwrap_or_default();
    line.split(", ").map(PathBuf::from).collect()
}

/// Nested repositories an agent plants never reach the user's repository (issue 38): a
/// `sub/.git` made by `git init` (with a commit and a configuration of the agent's) and a
/// `deep/er/.jj` are moved out of the workspace into the namespace's kept-aside directory,
/// whole, and named; a checkpoint and `land` then bring the agent's files, never its
/// repositories' data (nothing under a `.git`, a `.jj` or a `*.from-sandbox` path).
fn nested_repositories_never_reach_main(backend: Backend) {
    let (env, repo) = setup(backend);
    let out = sandboxed(
        &env,
        &repo,
        "echo work > work.txt && mkdir -p sub deep/er/.jj/repo && echo s > sub/s.txt && \
         git init -q sub && git -C sub add s.txt && \
         git -C sub -c user.name=agent -c user.email=agent@example.com commit -q -m agent-sub && \
         git -C sub config alias.agent-alias status && \
         echo planted > deep/er/.jj/repo/config.toml && echo agent-done",
        false,
    );
    assert!(out.stdout.contains("agent-done"), "{}", out.report());
    env.aw(&repo, ["checkpoint", "w", "-m", "after the agent"])
        .assert_ok();
    env.aw(&repo, ["land", "w"]).assert_ok();
    let landed = landed_files(&env, &repo, backend);
    assert!(landed.lines().any(|l| l == "work.txt"), "{landed}");
    assert!(landed.lines().any(|l| l == "sub/s.txt"), "{landed}");
    for file in landed.lines() {
        assert!(
            Path::new(file).components().all(|c| {
                let c = c.as_os_str().to_string_lossy();
                c != ".git" && c != ".jj" && !c.contains("from-sandbox")
            }),
            "the agent's repository data reached the user's repository: {file}\n{landed}"
        );
    }
    // Where they went: named, out of the workspace, whole.
    let ws = env.ws_path(&repo, "w");
    let kept_root = env.namespace_dir(&repo).join(".kept");
    let moved = moved_aside_paths(&out);
    assert_eq!(moved.len(), 2, "{}", out.report());
    for path in &moved {
        assert!(path.starts_with(&kept_root), "{}", out.report());
    }
    let kept_git = moved.iter().find(|p| p.ends_with("sub/.git")).unwrap();
    let kept_jj = moved.iter().find(|p| p.ends_with("deep/er/.jj")).unwrap();
    let kept_dir = kept_git.parent().unwrap().parent().unwrap();
    assert_eq!(
        kept_jj.parent().unwrap().parent().unwrap().parent(),
        Some(kept_dir)
    );
    assert!(
        kept_dir
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("w-"),
        "{}",
        kept_dir.display()
    );
    // Kept whole: the agent's commit and configuration, and the planted file.
    let subjects = git_ok(
        &env,
        &repo,
        &[
            &format!("--git-dir={}", kept_git.display()),
            "log",
            "--format=%s",
        ],
    );
    assert_eq!(subjects.trim(), "agent-sub");
    assert!(fs::read_to_string(kept_git.join("config"))
        .unwrap()
        .contains("agent-alias"));
    assert_eq!(
        fs::read_to_string(kept_jj.join("repo/config.toml")).unwrap(),
        "planted\n"
    );
    // Nothing of them is left in the workspace, under any name.
    for dir in [ws.join("sub"), ws.join("deep/er")] {
        let names: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names
                .iter()
                .all(|n| !n.starts_with(".git") && !n.starts_with(".jj")),
            "{}: {names:?}",
            dir.display()
        );
    }
}

crate::both_backends!(
    an_export_that_never_ends_is_stopped_and_its_store_kept,
    agent_config_never_runs_outside,
    agent_config_never_runs_outside_for_an_unprivileged_user,
    a_killed_runs_commits_are_brought_back_by_clean,
    a_store_whose_export_fails_is_kept_and_named,
    a_remade_store_keeps_the_old_one_aside,
    a_remade_store_keeps_the_old_one_aside_for_an_unprivileged_user,
    run_cleanup_keeps_the_store_aside,
    gc_keeps_the_store_aside,
    a_fifo_in_its_own_store_never_hangs_the_user_s_commands,
    nested_repositories_never_run_outside,
    nested_repositories_never_run_outside_for_an_unprivileged_user,
    a_killed_runs_nested_repository_is_moved_aside_by_clean,
    nested_repositories_never_reach_main,
);
