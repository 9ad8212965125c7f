//! `land` and live runs, both backends: a child lands on its parent by default; a workspace
//! or parent a run holds is busy unless the land comes from inside that run.

use std::fs;
use std::path::Path;

use crate::backends::Backend;
use crate::harness::{wait_for_file, TestEnv};

fn land_refuses_a_live_run_unless_nested(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let started = env.path().join("started");
    let release = env.path().join("release");
    let script = format!(
        "echo x > x.txt; touch '{}'; while [ ! -e '{}' ]; do sleep 0.02; done; agent-workspace land w1 > landed.out",
        started.display(),
        release.display()
    );
    let run = env
        .aw_cmd(&repo)
        .args(["run", "w1", "--", "sh", "-c", &script])
        .spawn();
    wait_for_file(&started);
    let out = env.aw(&repo, ["land", "w1"]);
    fs::write(&release, "").unwrap();
    let ran = run.wait();
    ran.assert_ok();
    // The record the nested land saved is the run's own record's, not a changed view.
    assert!(
        !ran.stderr.contains("was changed during the run"),
        "{}",
        ran.report()
    );
    out.assert_code(1);
    assert!(
        out.stderr
            .starts_with("Error: workspace \"w1\" is busy: a run holds it (pid "),
        "{}",
        out.report()
    );
    assert!(out.stderr.contains("\nHint: "), "{}", out.report());
    // From inside the run, the land went through, and the run's end kept its record.
    let ws = env.ws_path(&repo, "w1");
    let said = fs::read_to_string(ws.join("landed.out")).unwrap();
    assert!(said.starts_with("Landed 1 commit of w1 onto "), "{said}");
    assert_eq!(fs::read_to_string(repo.join("x.txt")).unwrap(), "x\n");
    assert_eq!(env.metadata(&ws)["land"]["outcome"], "landed");
}

crate::both_backends!(
    a_child_lands_on_its_parent_by_default,
    land_refuses_a_live_run_unless_nested,
);

/// Gives workspace `id` the parent `parent` in its record (as a child made from it has).
fn set_parent(env: &TestEnv, repo: &Path, id: &str, parent: &str) {
    let mut record = env.metadata(&env.ws_path(repo, id));
    record["parent"] = parent.into();
    crate::hostile_records::write_record(
        env,
        repo,
        id,
        &serde_json::to_string_pretty(&record).unwrap(),
    );
}

fn a_child_lands_on_its_parent_by_default(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "p", "--", "sh", "-c", "echo p > p.txt"])
        .assert_ok();
    // The child starts from the parent's exact state, its unrecorded p.txt included.
    let child = [
        "run",
        "c",
        "--parent",
        "p",
        "--",
        "sh",
        "-c",
        "echo c > c.txt",
    ];
    env.aw(&repo, child).assert_ok();
    let out = env.aw(&repo, ["land", "c", "--json"]);
    let doc = out.json();
    let expected = match backend {
        Backend::Jj => "p@",
        Backend::Git => "agent-workspace/p",
    };
    assert_eq!(doc["target"], expected);
    // The parent's working copy has the child's work and keeps its own; the repository's
    // main working copy has neither.
    let parent = env.ws_path(&repo, "p");
    assert_eq!(fs::read_to_string(parent.join("c.txt")).unwrap(), "c\n");
    assert_eq!(fs::read_to_string(parent.join("p.txt")).unwrap(), "p\n");
    assert!(!repo.join("c.txt").exists());
    if backend == Backend::Git {
        // Only the child's own work is committed on p's branch: p.txt stays p's own,
        // uncommitted edit (the copy of p's state the child started from never lands).
        let status = crate::backends::git_ok(&env, &parent, &["status", "--porcelain"]);
        assert_eq!(status, "?? p.txt\n");
    }
    // A parent with a live run is not changed under it, unless the land is asked from inside
    // that run.
    let started = env.path().join("started");
    let release = env.path().join("release");
    let script = format!(
        "touch '{}'; while [ ! -e '{}' ]; do sleep 0.02; done; agent-workspace land c",
        started.display(),
        release.display()
    );
    let run = env
        .aw_cmd(&repo)
        .args(["run", "p", "--", "sh", "-c", &script])
        .spawn();
    wait_for_file(&started);
    fs::write(env.ws_path(&repo, "c").join("c2.txt"), "c2\n").unwrap();
    let busy = env.aw(&repo, ["land", "c"]);
    assert!(!parent.join("c2.txt").exists());
    fs::write(&release, "").unwrap();
    run.wait().assert_ok();
    insta::assert_snapshot!(busy, @r#"
    --- stderr ---
    Error: cannot land on the parent: workspace "p" is busy: a run holds it (pid [PID], workflow -)
    Hint: wait for the run to end, or do this from inside that run (`run --checkpoint` checkpoints after every run)
    [exit 1]
    "#);
    assert_eq!(fs::read_to_string(parent.join("c2.txt")).unwrap(), "c2\n");
    // A parent that is gone leaves no default: --onto is asked for.
    set_parent(&env, &repo, "c", "gone");
    let orphan = env.aw(&repo, ["land", "c"]);
    orphan.assert_code(1);
    assert!(
        orphan
            .stderr
            .starts_with("Error: the parent workspace \"gone\" is gone"),
        "{}",
        orphan.report()
    );
    assert!(
        orphan.stderr.contains("\nHint: pass --onto REV"),
        "{}",
        orphan.report()
    );
}

/// git: a child lands only its own work into its parent, as jj does: the commit holding the
/// copy of the parent's uncommitted state the child started from brings none of its changes
/// (the merge takes the child's own changes only, on top of the parent's branch), and the
/// parent's staged and unstaged edits stay exactly as they were, its index included.
#[test]
fn a_git_child_lands_only_its_own_work_and_the_parent_keeps_its_index() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    let parent_edits =
        "echo staged >> a.txt && git add a.txt && echo unstaged >> a.txt && echo p > p.txt";
    env.aw(&repo, ["run", "p", "--", "sh", "-c", parent_edits])
        .assert_ok();
    let parent = env.ws_path(&repo, "p");
    let git = |dir: &Path, args: &[&str]| crate::backends::git_ok(&env, dir, args);
    let index_before = git(&parent, &["show", ":a.txt"]);
    let a_before = fs::read_to_string(parent.join("a.txt")).unwrap();
    let tip_before = git(&repo, &["rev-parse", "agent-workspace/p"]);
    env.aw(
        &repo,
        [
            "run",
            "c",
            "--parent",
            "p",
            "--",
            "sh",
            "-c",
            "echo c > c.txt",
        ],
    )
    .assert_ok();
    let fork = env.metadata(&env.ws_path(&repo, "c"))["base_commits"][0]
        .as_str()
        .unwrap()
        .to_string();

    let out = env.aw(&repo, ["land", "c", "--json"]);
    out.assert_ok();
    let doc = out.json();
    let landed: Vec<&str> = doc["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["commit_id"].as_str().unwrap())
        .collect();
    assert!(!landed.contains(&fork.as_str()), "{doc:#}");
    assert_eq!(landed.len(), 1, "{doc:#}");
    // p's branch: the child's file, none of p's uncommitted state, and the fork commit not
    // in its history.
    assert_eq!(git(&repo, &["show", "agent-workspace/p:c.txt"]), "c\n");
    let tree = git(&repo, &["ls-tree", "--name-only", "agent-workspace/p"]);
    assert!(!tree.lines().any(|f| f == "p.txt"), "{tree}");
    assert_eq!(
        git(&repo, &["show", "agent-workspace/p:a.txt"]),
        git(&repo, &["show", &format!("{}:a.txt", tip_before.trim())])
    );
    assert_eq!(
        git(
            &repo,
            &[
                "diff",
                "--name-only",
                tip_before.trim(),
                "agent-workspace/p"
            ]
        ),
        "c.txt\n"
    );
    // p keeps its edits: staged, unstaged and untracked, its index as it was.
    assert_eq!(git(&parent, &["show", ":a.txt"]), index_before);
    assert_eq!(fs::read_to_string(parent.join("a.txt")).unwrap(), a_before);
    assert_eq!(fs::read_to_string(parent.join("p.txt")).unwrap(), "p\n");
    assert_eq!(fs::read_to_string(parent.join("c.txt")).unwrap(), "c\n");
    assert_eq!(
        git(&parent, &["status", "--porcelain"]),
        "MM a.txt\n?? p.txt\n"
    );
    // The child's work is in its target: `clean --landed` takes it.
    let clean = env.aw(&repo, ["clean", "--landed"]);
    clean.assert_ok();
    assert!(!env.ws_path(&repo, "c").exists(), "{}", clean.report());
}

/// git: a child that changed a file its parent holds uncommitted edits in (edits the child
/// started from) is refused whatever `--prefer` says, naming the file, with nothing changed:
/// landed onto the parent's branch, the parent's edits would look undone by the target (so
/// `--prefer target` dropped the child's line) or be committed with the child's work
/// (`--prefer workspace`). Once the parent is checkpointed, the child lands.
#[test]
fn a_git_child_that_changed_its_parent_s_uncommitted_file_is_refused_until_the_parent_checkpoints()
{
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    env.aw(
        &repo,
        [
            "run",
            "p",
            "--",
            "sh",
            "-c",
            "mkdir -p sub && echo p1 >> sub/s.txt",
        ],
    )
    .assert_ok();
    env.aw(
        &repo,
        [
            "run",
            "c",
            "--parent",
            "p",
            "--",
            "sh",
            "-c",
            "echo c1 >> sub/s.txt",
        ],
    )
    .assert_ok();
    let parent = env.ws_path(&repo, "p");
    let git = |args: &[&str]| crate::backends::git_ok(&env, &repo, args);
    let tip_before = git(&["rev-parse", "agent-workspace/p"]);
    for prefer in [None, Some("target"), Some("workspace")] {
        let mut args = vec!["land", "c"];
        if let Some(side) = prefer {
            args.extend(["--prefer", side]);
        }
        let out = env.aw(&repo, &args);
        out.assert_code(1);
        assert!(
            out.stderr.starts_with("Error: ") && out.stderr.contains("sub/s.txt"),
            "{prefer:?}: {}",
            out.stderr
        );
        assert!(out.stderr.contains("checkpoint p"), "{}", out.stderr);
        assert_eq!(
            git(&["rev-parse", "agent-workspace/p"]),
            tip_before,
            "{prefer:?}"
        );
        assert_eq!(
            fs::read_to_string(parent.join("sub/s.txt")).unwrap(),
            "p1\n"
        );
    }
    env.aw(&repo, ["checkpoint", "p"]).assert_ok();
    env.aw(&repo, ["land", "c"]).assert_ok();
    assert_eq!(
        fs::read_to_string(parent.join("sub/s.txt")).unwrap(),
        "p1\nc1\n"
    );
}
