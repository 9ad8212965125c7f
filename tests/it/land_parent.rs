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
        let status = crate::backends::git_ok(&env, &parent, &["status", "--porcelain"]);
        assert_eq!(
            status, "",
            "the fork's copy of p.txt is now committed on p's branch"
        );
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
    busy.assert_code(1);
    assert!(
        busy.stderr
            .starts_with("Error: cannot land on the parent: workspace \"p\" is busy"),
        "{}",
        busy.report()
    );
    assert!(busy.stderr.contains("\nHint: "), "{}", busy.report());
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
