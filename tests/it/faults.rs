//! Faults and hidden state that must not lose work: git index flags that hide edits, ignored
//! build output of workspaces `gc` removes, and commands killed half way (clean, pool fill,
//! a take), finished or rolled back by the next command.

use std::fs;

use crate::backends::{git_ok, Backend};
use crate::harness::TestEnv;

/// git: an edit to a file marked skip-worktree or assume-unchanged is invisible to
/// `git status` and `git add -A`; `clean` still keeps it (committed to the branch).
#[test]
fn git_clean_keeps_edits_hidden_by_index_flags() {
    let env = TestEnv::new();
    let repo = Backend::Git.repo(&env);
    env.aw(&repo, ["run", "w", "--", "true"]).assert_ok();
    let ws = env.ws_path(&repo, "w");
    git_ok(&env, &ws, &["update-index", "--skip-worktree", "a.txt"]);
    git_ok(
        &env,
        &ws,
        &["update-index", "--assume-unchanged", "sub/b.txt"],
    );
    fs::write(ws.join("a.txt"), "skip-worktree edit\n").unwrap();
    fs::write(ws.join("sub/b.txt"), "assume-unchanged edit\n").unwrap();
    let out = env.aw(&repo, ["clean", "w"]);
    out.assert_ok();
    let (branch, _) = Backend::Git.kept(&env, &repo, "w", &out.stdout);
    let kept = |file: &str| Backend::Git.kept_file(&env, &repo, &branch, file);
    assert_eq!(kept("a.txt"), "skip-worktree edit\n", "{}", out.report());
    assert_eq!(
        kept("sub/b.txt"),
        "assume-unchanged edit\n",
        "{}",
        out.report()
    );
}
