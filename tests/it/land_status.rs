//! After a `land`, both backends: `status` shows it, `clean --landed` selects fully landed
//! workspaces; bad input is refused; the `workspace-land` recipe.

use std::fs;

use crate::backends::Backend;
use crate::harness::TestEnv;

fn status_shows_landed(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", "echo x > x.txt"])
        .assert_ok();
    env.aw(&repo, ["land", "w1"]).assert_ok();
    let status = env.aw(&repo, ["status", "w1", "--json"]).json();
    assert_eq!(status["status"], "landed");
    assert_eq!(status["record"]["land"]["outcome"], "landed");
    assert_eq!(status["land_state"], "verified");
    let text = env.aw(&repo, ["status"]);
    assert!(
        text.stdout.contains("w1         landed"),
        "{}",
        text.report()
    );
    // A run after the land is newer: its status shows again.
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let after = env.aw(&repo, ["status", "w1", "--json"]).json();
    assert_eq!(after["status"], "done");
    assert_eq!(after["land_state"], serde_json::Value::Null);
    assert_eq!(fs::read_to_string(repo.join("x.txt")).unwrap(), "x\n");
}

fn land_refuses_bad_input(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    let unknown = env.aw(&repo, ["land", "nope"]);
    unknown.assert_code(1);
    assert!(
        unknown.stderr.starts_with("Error: no workspace \"nope\""),
        "{}",
        unknown.report()
    );
    assert!(unknown.stderr.contains("\nHint: "), "{}", unknown.report());
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", "echo x > x.txt"])
        .assert_ok();
    let onto = env.aw(&repo, ["land", "w1", "--onto", "no-such-rev"]);
    onto.assert_code(1);
    assert!(
        onto.stderr
            .starts_with("Error: cannot land onto \"no-such-rev\""),
        "{}",
        onto.report()
    );
    assert!(
        onto.stderr.contains("\nHint: pass --onto"),
        "{}",
        onto.report()
    );
    let bad_side = env.aw(&repo, ["land", "w1", "--prefer", "mine"]);
    bad_side.assert_code(2);
    assert!(!repo.join("x.txt").exists());
    assert!(env
        .metadata(&env.ws_path(&repo, "w1"))
        .get("land")
        .is_none());
}

fn clean_landed_selects_only_fully_landed_workspaces(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    for id in ["w1", "w2", "w3"] {
        let script = format!("echo {id} > {id}.txt");
        env.aw(&repo, ["run", id, "--", "sh", "-c", &script])
            .assert_ok();
    }
    env.aw(&repo, ["land", "w1"]).assert_ok();
    env.aw(&repo, ["land", "w3"]).assert_ok();
    // w3 goes on working after its land: that work is in no target.
    fs::write(env.ws_path(&repo, "w3").join("later.txt"), "later\n").unwrap();
    let dry = env.aw(&repo, ["clean", "--landed", "--dry-run"]);
    dry.assert_ok();
    assert_eq!(
        env.normalize(&dry.stdout),
        "Would remove w1 ([TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1)\n"
    );
    let none = env.aw(&repo, ["clean", "--landed", "--status", "error"]);
    none.assert_ok();
    assert_eq!(none.stdout, "");
    // `--status landed` goes by the status alone: w3 too.
    let by_status = env.aw(&repo, ["clean", "--status", "landed", "--dry-run"]);
    by_status.assert_ok();
    assert_eq!(
        by_status.stdout.lines().count(),
        2,
        "{}",
        by_status.report()
    );
    env.aw(&repo, ["clean", "--landed"]).assert_ok();
    assert!(!env.ws_path(&repo, "w1").exists());
    assert!(env.ws_path(&repo, "w2").exists());
    assert!(env.ws_path(&repo, "w3").join("later.txt").exists());
}

crate::both_backends!(
    status_shows_landed,
    land_refuses_bad_input,
    clean_landed_selects_only_fully_landed_workspaces,
);

#[test]
fn the_workspace_land_recipe_passes_the_id_and_flags() {
    let env = TestEnv::new();
    let repo = env.recipes_repo();
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", "echo x > x.txt"])
        .assert_ok();
    let recipe = |args: &[&str]| env.recipe(&repo, "workspace-land", args);
    let dry = recipe(&["w1", "--dry-run", "--json"]);
    assert_eq!(dry.json()["dry_run"], true);
    assert!(!repo.join("x.txt").exists());
    recipe(&["w1"]).assert_ok();
    assert_eq!(fs::read_to_string(repo.join("x.txt")).unwrap(), "x\n");
}
