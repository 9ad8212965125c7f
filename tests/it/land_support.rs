//! Helpers the jj `land` tests share: the operation log, the commit graph and its shape,
//! subjects, a land's printed undo, and a repository whose workspace `w1` committed work,
//! with main-side commits to conflict.

use std::fs;
use std::path::Path;

use crate::harness::TestEnv;

/// The ids of the current operations, newest first.
pub(crate) fn op_ids(env: &TestEnv, repo: &Path) -> Vec<String> {
    let out = env.jj_ok(repo, ["op", "log", "--no-graph", "-T", r#"id ++ "\n""#]);
    out.lines().map(str::to_string).collect()
}

/// Every visible commit with its parents, description and working copies: the commit graph.
pub(crate) fn graph(env: &TestEnv, repo: &Path) -> String {
    let template = r#"commit_id ++ " <- " ++ parents.map(|p| p.commit_id()).join(",") ++ " " ++ description.first_line() ++ " " ++ working_copies ++ "\n""#;
    env.jj_ok(
        repo,
        [
            "--ignore-working-copy",
            "log",
            "--no-graph",
            "-r",
            "all()",
            "-T",
            template,
        ],
    )
}

/// The first lines of the descriptions of the commits `revset` names in `repo`.
pub(crate) fn subjects(env: &TestEnv, repo: &Path, revset: &str) -> String {
    env.jj_ok(
        repo,
        [
            "log",
            "--no-graph",
            "-r",
            revset,
            "-T",
            "description.first_line()",
        ],
    )
}

/// A jj repo with workspace `w1` whose run committed `a.txt` = `text` and `new.txt` inside
/// it (`jj commit`), so the land itself records nothing; every working copy snapshotted.
pub(crate) fn repo_with_work(env: &TestEnv, text: &str) -> std::path::PathBuf {
    let repo = env.jj_repo("repo");
    let script = format!("printf '{text}' > a.txt && echo new > new.txt && jj commit -m work");
    env.aw(&repo, ["run", "w1", "--", "sh", "-c", &script])
        .assert_ok();
    snapshot(env, &repo);
    repo
}

/// Lets jj snapshot the main working copy and `w1`'s, so the next land adds only its own
/// operations.
pub(crate) fn snapshot(env: &TestEnv, repo: &Path) {
    env.jj_ok(repo, ["status"]);
    env.jj_ok(&env.ws_path(repo, "w1"), ["status"]);
}

/// Commits `a.txt` = `text` in the main working copy (the target's side of a conflict).
pub(crate) fn main_commits_a(env: &TestEnv, repo: &Path, text: &str) {
    main_commits(env, repo, "a.txt", text);
}

pub(crate) fn main_commits(env: &TestEnv, repo: &Path, file: &str, text: &str) {
    fs::write(repo.join(file), text).unwrap();
    env.jj_ok(repo, ["commit", "-m", "main edit"]);
}

/// Every visible commit's subject, parents' subjects, working copies and conflict flag:
/// the commit graph up to rewritten ids (an undo moves commits back, as new commits).
pub(crate) fn shape(env: &TestEnv, repo: &Path) -> String {
    let template = r#"description.first_line() ++ " <- " ++ parents.map(|p| p.description().first_line()).join(",") ++ " " ++ working_copies ++ if(conflict, " conflict") ++ "\n""#;
    let out = env.jj_ok(
        repo,
        ["log", "--no-graph", "-r", "all() ~ root()", "-T", template],
    );
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort_unstable();
    lines.join("\n")
}

/// The command after `Undo: ` in a land's output.
pub(crate) fn undo_of(out: &crate::harness::Outcome) -> String {
    out.stdout
        .lines()
        .find_map(|l| l.strip_prefix("Undo: "))
        .unwrap_or_else(|| panic!("{}", out.report()))
        .to_string()
}
