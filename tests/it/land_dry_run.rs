//! `land --dry-run` on jj: it says which commits, files and conflicts the land makes (jj's
//! own result, from operations it never integrates) and changes nothing, not even the
//! operation log, whatever the target working copy is.

use std::fs;

use crate::harness::TestEnv;
use crate::land_support::{graph, main_commits_a, op_ids, repo_with_work, snapshot};

#[test]
fn a_dry_run_reports_commits_files_and_conflicts_and_changes_nothing() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    main_commits_a(&env, &repo, "from main\n");
    snapshot(&env, &repo);
    let (ops, before) = (op_ids(&env, &repo), graph(&env, &repo));
    let out = env.aw(&repo, ["land", "w1", "--dry-run", "--json"]);
    out.assert_code(1);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["dry_run"], true);
    assert_eq!(doc["outcome"], "would_conflict");
    assert_eq!(doc["commits"][0]["subject"], "work");
    assert_eq!(doc["paths"], serde_json::json!(["a.txt", "new.txt"]));
    assert_eq!(doc["conflicts"][0]["path"], "a.txt");
    // Commits, working copies, files and the operation log as before.
    assert_eq!(graph(&env, &repo), before);
    assert_eq!(
        fs::read_to_string(repo.join("a.txt")).unwrap(),
        "from main\n"
    );
    assert!(!repo.join("new.txt").exists());
    assert_eq!(op_ids(&env, &repo), ops);
    assert!(env
        .metadata(&env.ws_path(&repo, "w1"))
        .get("land")
        .is_none());
    // So `jj undo` right after undoes the user's own last operation, never lands the work.
    env.jj_ok(&repo, ["undo"]);
    assert!(!repo.join("new.txt").exists());
}

#[test]
fn a_clean_dry_run_predicts_no_conflict_and_records_no_operation() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    snapshot(&env, &repo);
    let ops = op_ids(&env, &repo);
    let out = env.aw(&repo, ["land", "w1", "--dry-run", "--json"]);
    out.assert_ok();
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["outcome"], "would_land", "{doc}");
    assert_eq!(doc["conflicts"], serde_json::json!([]), "{doc}");
    assert_eq!(op_ids(&env, &repo), ops);
    // The prediction agrees with the land itself.
    let real = env.aw(&repo, ["land", "w1", "--json"]);
    real.assert_ok();
    assert!(repo.join("new.txt").exists());
}

/// A dry run onto a working-copy commit that is a merge says what the land does, and
/// changes nothing.
#[test]
fn a_dry_run_onto_a_merge_working_copy_says_what_the_land_does() {
    let env = TestEnv::new();
    let repo = repo_with_work(&env, "from w1\n");
    env.jj_ok(&repo, ["new", "root()", "-m", "side"]);
    // The main working copy is itself a merge of the initial commit and a side branch.
    env.jj_ok(
        &repo,
        [
            "new",
            "description(exact:\"initial\\n\")",
            "@",
            "-m",
            "merged",
        ],
    );
    let (ops, before) = (op_ids(&env, &repo), graph(&env, &repo));
    let dry = env.aw(&repo, ["land", "w1", "--dry-run", "--json"]);
    dry.assert_ok();
    assert_eq!((op_ids(&env, &repo), graph(&env, &repo)), (ops, before));
    let real = env.aw(&repo, ["land", "w1", "--json"]);
    real.assert_ok();
    let (dry, real) = (dry.json(), real.json());
    assert_eq!(predicted(&dry), real["outcome"], "{dry:#} {real:#}");
    for field in ["files", "conflicts"] {
        assert_eq!(dry[field], real[field], "{field}: {dry:#} {real:#}");
    }
    assert_eq!(fs::read_to_string(repo.join("a.txt")).unwrap(), "from w1\n");
}

/// What a dry run's outcome predicts the land's to be: `would_land` is `landed`,
/// `would_conflict` is `conflicted` (a dry run never says `landed`).
fn predicted(dry: &serde_json::Value) -> serde_json::Value {
    match dry["outcome"].as_str() {
        Some("would_land") => "landed".into(),
        Some("would_conflict") => "conflicted".into(),
        Some("landed" | "conflicted") => panic!("a dry run said {}", dry["outcome"]),
        _ => dry["outcome"].clone(),
    }
}

/// The JSON document of an outcome, whatever its exit code.
fn doc(out: &crate::harness::Outcome) -> serde_json::Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.report()))
}

/// Files of the `conflicts` of a `land --json` document, sorted.
fn conflict_files(doc: &serde_json::Value) -> Vec<String> {
    let mut files: Vec<String> = doc["conflicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap().to_string())
        .collect();
    files.sort();
    files
}

/// The dry run says what the land does, on shapes where git's merge and jj's differ or
/// might: the same line, a rename against an edit, a deletion against an edit, edits on
/// adjacent lines, edits far apart.
#[test]
fn the_dry_run_says_exactly_what_the_land_does() {
    let shapes: [(&str, &str, &str); 5] = [
        ("same line", "printf 'w\\n' > a.txt", "m\n"),
        ("rename", "mv a.txt moved.txt", "m\n"),
        ("delete", "rm a.txt", "m\n"),
        (
            "adjacent",
            "printf '1\\nw\\n3\\n4\\n5\\n' > a.txt",
            "m\n2\n3\n4\n5\n",
        ),
        (
            "apart",
            "printf '1\\n2\\n3\\n4\\nw\\n' > a.txt",
            "m\n2\n3\n4\n5\n",
        ),
    ];
    for (shape, ws_edit, main_text) in shapes {
        let env = TestEnv::new();
        let repo = env.jj_repo("repo");
        fs::write(repo.join("a.txt"), "1\n2\n3\n4\n5\n").unwrap();
        env.jj_ok(&repo, ["commit", "-m", "five lines"]);
        let script = format!("{ws_edit} && echo new > new.txt && jj commit -m work");
        env.aw(&repo, ["run", "w1", "--", "sh", "-c", &script])
            .assert_ok();
        main_commits_a(&env, &repo, main_text);
        snapshot(&env, &repo);
        let before = graph(&env, &repo);
        let dry = doc(&env.aw(&repo, ["land", "w1", "--dry-run", "--json"]));
        assert_eq!(graph(&env, &repo), before, "{shape}");
        let real = doc(&env.aw(&repo, ["land", "w1", "--json"]));
        assert_eq!(
            predicted(&dry),
            real["outcome"],
            "{shape}: {dry:#} {real:#}"
        );
        for field in ["files", "conflicts"] {
            assert_eq!(
                dry[field], real[field],
                "{shape}: {field}: {dry:#} {real:#}"
            );
        }
        // The same commits: as they are (nothing applied), or rewritten by the land.
        let subjects = |doc: &serde_json::Value| -> Vec<String> {
            let commits = doc["commits"].as_array().unwrap();
            commits.iter().map(|c| c["subject"].to_string()).collect()
        };
        assert_eq!(subjects(&dry), subjects(&real), "{shape}");
        if real["applied"] == false {
            assert_eq!(dry["commits"], real["commits"], "{shape}");
        }
        let expected_conflict = !matches!(shape, "apart");
        assert_eq!(
            dry["outcome"],
            if expected_conflict {
                "would_conflict"
            } else {
                "would_land"
            },
            "{shape}: {dry:#}"
        );
        if expected_conflict {
            // What --allow-conflicts then leaves in the landed commits is what was said.
            let allowed = doc(&env.aw(&repo, ["land", "w1", "--allow-conflicts", "--json"]));
            assert_eq!(
                conflict_files(&allowed),
                conflict_files(&dry),
                "{shape}: {allowed:#}"
            );
            assert_eq!(allowed["paths"], dry["paths"], "{shape}");
        }
    }
}
