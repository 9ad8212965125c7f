//! The project's `agents.just` recipes, run through the real `just` in a scratch repository.

use std::fs;
use std::path::Path;

use crate::harness::{TestEnv, SUBCOMMANDS};

/// The project's own justfile and agents module.
fn project_file(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

#[test]
fn consolidate_summarises_a_range_in_its_own_workspace() {
    let env = TestEnv::new();
    let repo = env.recipes_repo();
    let start = env.change_id(&repo, "@-");
    fs::write(repo.join("c.txt"), "new file\n").unwrap();
    env.jj(&repo, ["commit", "-m", "add c"]).assert_ok();
    fs::write(repo.join("a.txt"), "hello\nworld\n").unwrap();
    env.jj(&repo, ["commit", "-m", "extend a"]).assert_ok();
    let end = env.change_id(&repo, "@-");

    let out = env.recipe(&repo, "consolidate", &["cons", &start, &end]);
    out.assert_ok();

    let ws = env.ws_path(&repo, "cons");
    let summary = fs::read_to_string(ws.join("consolidation/summary.md"))
        .unwrap_or_else(|e| panic!("no summary: {e}\n{}", out.report()));
    let lines: Vec<&str> = summary.lines().collect();
    for expected in ["M a.txt", "A c.txt"] {
        assert!(
            lines.contains(&expected),
            "{expected:?} missing:\n{summary}"
        );
    }
    for description in ["add c", "extend a"] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("- ") && l.ends_with(description)),
            "{description:?} missing:\n{summary}"
        );
    }
    let nested = format!("nested step ran in: {} (workspace id: cons)", ws.display());
    assert!(
        lines.contains(&nested.as_str()),
        "{nested:?} missing:\n{summary}"
    );

    let status = env.aw(&repo, ["status", "cons", "--json"]);
    let entry = status.json();
    assert_eq!(entry["workflow"], "consolidate", "{entry:#}");
    assert_eq!(entry["status"], "done", "{entry:#}");
    assert_eq!(env.workspace_names(&repo), ["cons", "default"]);
    // The summary is an edit of the workspace, not of the user's working copy.
    assert!(!repo.join("consolidation").exists());
}

/// Every subcommand has a recipe in `agents.just` that calls it, and `just --list agents`
/// lists every recipe with its comment.
#[test]
fn every_subcommand_has_a_listed_and_commented_recipe() {
    let env = TestEnv::new();
    let dir = env.recipes_repo();
    let agents = project_file("agents.just");
    for sub in SUBCOMMANDS {
        let call = format!("{{{{ quote(aw) }}}} {sub} ");
        assert!(
            agents.lines().any(|l| l.trim_start().starts_with(&call)),
            "no recipe in agents.just calls `{sub}`"
        );
    }
    let out = env.cmd("just", &dir).args(["--list", "agents"]).run();
    out.assert_ok();
    let listed: Vec<&str> = out.stdout.lines().collect();
    let recipes = agents
        .lines()
        .filter(|l| !l.starts_with([' ', '#', '[']) && l.contains(':') && !l.contains(":="));
    for line in recipes {
        let name = line.split([' ', ':']).next().unwrap();
        // just puts the comment after the recipe, or on the line above a long one.
        let commented = listed.windows(2).any(|w| {
            let at = w[1].trim_start();
            at.starts_with(&format!("{name} "))
                && (at.contains(" # ") || w[0].trim_start().starts_with("# "))
        });
        assert!(
            commented,
            "{name} is not listed with a comment:\n{}",
            out.stdout
        );
    }
}

/// `workspace-man` writes the pages to the user's manual directory, never into the
/// repository (where a jj working copy would record them): `$XDG_DATA_HOME/man/man1`, else
/// `~/.local/share/man/man1`.
#[test]
fn workspace_man_writes_outside_the_repository() {
    let env = TestEnv::new();
    let repo = env.recipes_repo();
    let before = env.jj_ok(&repo, ["diff", "--summary"]);
    let out = env.recipe(&repo, "workspace-man", &[]);
    out.assert_ok();
    let pages = env.path().join("xdg/data/man/man1");
    assert!(
        pages.join("agent-workspace-pool-fill.1").is_file(),
        "{}",
        out.report()
    );
    assert!(!repo.join("man").exists(), "{}", out.report());
    let after = env.jj_ok(&repo, ["diff", "--summary"]);
    assert_eq!(before, after, "the repository changed");

    let out = env
        .cmd("just", &repo)
        .env("AGENT_WORKSPACE_BIN", crate::harness::AW)
        .env("XDG_DATA_HOME", "")
        .arg("agents::workspace-man")
        .run();
    out.assert_ok();
    assert!(
        env.path()
            .join("home/.local/share/man/man1/agent-workspace.1")
            .is_file(),
        "{}",
        out.report()
    );
}
