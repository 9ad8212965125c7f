//! The walls between the layers that types and folders alone do not hold: backend knowledge
//! stays inside `vcs/` (the callers ask the backend; they never match on which one it is),
//! jj and git run only through the backends' builders in `vcs/` and `exec/`, `vcs/` takes
//! a workspace id as the checked `WorkspaceId`, never as a `&str`, and the record names its
//! workspace and its parent by checked types, never by strings.
//!
//! The first two list the files still to move behind them (none now): a file on a list that
//! no longer needs it fails too, so the lists only shrink. The own store's files run no shell
//! (its jj and git are each a process of their own inside its sandbox), and the layers below
//! the command layer build no user-facing error: they return typed ones the CLI words.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use crate::architecture::{rust_files, src};

/// The text of a source file up to its unit tests (a `#[cfg(test)]` line).
fn code(file: &Path) -> String {
    let text = fs::read_to_string(file).unwrap();
    text.lines()
        .take_while(|line| line.trim() != "#[cfg(test)]")
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every file under `src/` (relative, `/`-separated) outside the folders `inside`, whose code
/// holds one of `needles`.
fn holders(inside: &[&str], needles: &[&str]) -> BTreeSet<String> {
    let root = src();
    rust_files(&root)
        .into_iter()
        .filter_map(|file| {
            let rel = file
                .strip_prefix(&root)
                .ok()?
                .to_string_lossy()
                .replace('\\', "/");
            let outside = !inside.iter().any(|dir| rel.starts_with(dir));
            let text = code(&file);
            (outside && needles.iter().any(|n| text.contains(n))).then_some(rel)
        })
        .collect()
}

/// Asserts that exactly the files of `pending` (still to move) hold what the wall forbids
/// among `found`.
fn assert_wall(wall: &str, found: BTreeSet<String>, pending: &[&str]) {
    let pending: BTreeSet<String> = pending.iter().map(|p| p.to_string()).collect();
    let new: Vec<&String> = found.difference(&pending).collect();
    let moved: Vec<&String> = pending.difference(&found).collect();
    assert!(
        new.is_empty(),
        "{wall}: {new:?} break it (move that knowledge behind the wall)"
    );
    assert!(
        moved.is_empty(),
        "{wall}: {moved:?} no longer break it: take them off its list of files still to move"
    );
}

/// Outside `vcs/` no code asks which backend it has: `Vcs::Jj`/`Vcs::Git`, `as_jj()`/
/// `as_git()` and `Backend::Jj`/`Backend::Git` appear only in `vcs/`, in the `Backend` type's
/// own file (`repo.rs`: its names) and in the configuration's parsing.
#[test]
fn backend_knowledge_stays_inside_vcs() {
    let found = holders(
        &["vcs/", "repo.rs", "config/"],
        &[
            "Vcs::Jj",
            "Vcs::Git",
            "as_jj()",
            "as_git()",
            "Backend::Jj",
            "Backend::Git",
        ],
    );
    assert_wall("backend knowledge inside vcs/", found, &[]);
}

/// jj and git run only through the backends' builders (`vcs/`) and `exec/`: elsewhere a
/// `Call::new` starts another program.
#[test]
fn jj_and_git_run_only_through_the_backends() {
    // direnv (`direnv allow`), and this binary (`pool refill` in the background, a Claude
    // Code session's holder).
    let other_programs = [
        "workspace/direnv.rs",
        "workspace/pool/mod.rs",
        "workspace/session.rs",
    ];
    let found = holders(&["vcs/", "exec/"], &["Call::new"])
        .into_iter()
        .filter(|f| !other_programs.contains(&f.as_str()))
        .collect();
    assert_wall("jj and git through the backends' builders", found, &[]);
}

/// Every command starts from the invocation (`cli/invocation.rs`): no command opens the
/// repository's context or checks a workspace id on its own, so a new command gets both,
/// checked the same way, from one place.
#[test]
fn commands_start_from_the_invocation() {
    let found = holders(
        &[
            "config/",
            "exec/",
            "session/",
            "store/",
            "ui/",
            "vcs/",
            "workspace/",
        ],
        &["Context::open", "check_id("],
    )
    .into_iter()
    .collect();
    // The invocation, and completion (which must never fail, so it opens what it can).
    assert_wall(
        "commands start from the invocation",
        found,
        &["cli/complete.rs", "cli/invocation.rs"],
    );
}

/// The layers below the command layer return typed errors, which the command layer words
/// (`cli/errors/`, one file per family of errors): no file of `vcs/`, `workspace/`,
/// `session/`, `store/` or `exec/` builds the user-facing `CliError` itself (its
/// constructors and `From` conversions, or a struct literal of its kinds), so every message,
/// hint and exit code has one home.
#[test]
fn lower_layers_return_typed_errors() {
    let lower = ["vcs/", "workspace/", "session/", "store/", "exec/"];
    let found = holders(&[], &["CliError::", "Kind::Failure", "Kind::Usage"])
        .into_iter()
        .filter(|f| lower.iter().any(|dir| f.starts_with(dir)))
        .collect();
    assert_wall("errors worded in the command layer", found, &[]);
}

/// What starts a shell, or builds bubblewrap's arguments by hand, in a line of code.
const SHELL_NEEDLES: [&str; 6] = [
    "\"sh\"",
    "\"/bin/sh\"",
    "\"bash\"",
    "sh -c",
    "set -e",
    "sandbox::args(",
];

/// Whether `line` (code, comments taken off) starts a shell or lays out a bubblewrap sandbox
/// by hand.
fn runs_a_shell(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or_default();
    SHELL_NEEDLES.iter().any(|needle| code.contains(needle))
}

/// The own store's files (`workspace/own_store/`, `vcs/own_store.rs`, the backends'
/// `own_store*.rs`), relative to `src/`.
fn own_store_files() -> Vec<(String, std::path::PathBuf)> {
    let root = src();
    rust_files(&root)
        .into_iter()
        .filter_map(|file| {
            let rel = file
                .strip_prefix(&root)
                .ok()?
                .to_string_lossy()
                .replace('\\', "/");
            rel.contains("own_store").then_some((rel, file))
        })
        .collect()
}

/// The own store's export, take-back and look at what it holds are jj and git run one
/// process at a time, each through the backend's builder and wrapped by the sandbox's
/// `Confinement`: no file of the own store runs a shell script (inside bubblewrap or
/// anywhere) or builds bubblewrap's arguments itself.
#[test]
fn the_own_store_runs_no_shell() {
    let files = own_store_files();
    let names: BTreeSet<&str> = files.iter().map(|(rel, _)| rel.as_str()).collect();
    for expected in [
        "workspace/own_store/mod.rs",
        "vcs/own_store.rs",
        "vcs/jj/own_store.rs",
        "vcs/git/own_store.rs",
    ] {
        assert!(names.contains(expected), "{expected} not found: {names:?}");
    }
    let found: Vec<String> = files
        .iter()
        .flat_map(|(rel, file)| {
            code(file)
                .lines()
                .enumerate()
                .filter(|(_, line)| runs_a_shell(line))
                .map(|(n, line)| format!("src/{rel}:{}: {}", n + 1, line.trim()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        found.is_empty(),
        "the own store runs a shell (run each jj or git through the backend's builder, wrapped by `Confinement`):\n{}",
        found.join("\n")
    );
}

#[test]
fn a_shell_is_told_from_other_calls() {
    // The shapes the own store's export had as a script run inside bubblewrap.
    for line in [
        r#"        .args(["sh", "-c", script, "sh"])"#,
        r#"    let script = format!("set -e\n\"#,
        r#"    Call::new("/bin/sh").arg("-c")"#,
        r#"    let args = sandbox::args(&options, &scope, fd)?;"#,
    ] {
        assert!(runs_a_shell(line), "{line}");
    }
    for line in [
        r#"            .args(["-c", "fetch.fsckObjects=true"])"#,
        r#"        in_ws(&["bookmark", "set", bookmark, "-r", "@"])?;"#,
        r#"    // no shell: not "sh -c""#,
        r#"        let jail = confine::confinement(ctx, ws, mounts, bwrap)?;"#,
    ] {
        assert!(!runs_a_shell(line), "{line}");
    }
}

/// The lines of `vcs/`'s code (outside comments) that take a workspace id as a string: a
/// parameter or field `id: &str` (`id: &'a str`) or `ids: &[&str]`, as `path:line: text`.
/// An id is a `WorkspaceId` there as everywhere below the command line, so none is passed
/// to jj or git, or into a path, unchecked; other ids (commits, changes, operations) have
/// other names.
fn string_ids() -> Vec<String> {
    let root = src();
    let mut found = vec![];
    for file in rust_files(&root.join("vcs")) {
        let rel = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        for (n, line) in code(&file).lines().enumerate() {
            let line = line.split("//").next().unwrap_or_default();
            if takes_string_id(line) {
                found.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    found
}

/// Whether `line` names `id` or `ids` (a whole word) with a string type.
fn takes_string_id(line: &str) -> bool {
    ["id: &", "ids: &[&"].iter().any(|name| {
        line.match_indices(name).any(|(at, _)| {
            let word_start = line[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            let ty = line[at + name.len()..].trim_start();
            let ty = ty.strip_prefix('\'').map_or(ty, |t| {
                t.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_')
                    .trim_start()
            });
            word_start
                && ty.strip_prefix("str").is_some_and(|rest| {
                    !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_')
                })
        })
    })
}

/// `vcs/` takes workspace ids as `WorkspaceId` (`store::layout`): no `id: &str`.
#[test]
fn no_string_workspace_ids_in_vcs() {
    let found = string_ids();
    assert!(
        found.is_empty(),
        "workspace ids taken as strings in vcs/ (take `&WorkspaceId`):\n{}",
        found.join("\n")
    );
}

/// The lines of the record's code (`store/metadata/`, outside comments and its tests) whose
/// field naming a workspace (`workspace_id`, `parent`) has a string type, as
/// `path:line: text`. The record is a file an agent may edit: what it names is read as a
/// `WorkspaceId` once (a parent that is none kept as written, as `Parent::Unreadable`), so no
/// caller parses a string from it again, or forgets to.
fn record_string_ids() -> Vec<String> {
    let root = src();
    let mut found = vec![];
    for file in rust_files(&root.join("store/metadata")) {
        if file.file_name().is_some_and(|name| name == "tests.rs") {
            continue;
        }
        let rel = file
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        for (n, line) in code(&file).lines().enumerate() {
            let line = line.split("//").next().unwrap_or_default();
            if names_workspace_as_string(line) {
                found.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    found
}

/// Whether `line` declares `workspace_id` or `parent` (a whole word) as a `String` or `&str`,
/// optional or not.
fn names_workspace_as_string(line: &str) -> bool {
    ["workspace_id: ", "parent: "].iter().any(|name| {
        line.match_indices(name).any(|(at, _)| {
            let word_start = line[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            let ty = line[at + name.len()..].trim_start();
            let ty = ty.strip_prefix("Option<").unwrap_or(ty);
            word_start
                && ["String", "&str", "&'", "Box<str>"]
                    .iter()
                    .any(|string| ty.starts_with(string))
        })
    })
}

/// The record names workspaces by checked types only (`WorkspaceId`, `Parent`).
#[test]
fn the_record_names_workspaces_by_checked_ids() {
    let found = record_string_ids();
    assert!(
        found.is_empty(),
        "workspaces named by strings in the record (use `WorkspaceId`, or `Parent` for a parent):\n{}",
        found.join("\n")
    );
}

#[test]
fn record_string_ids_are_told_from_other_fields() {
    for line in [
        "    pub parent: Option<String>,",
        "    pub workspace_id: String,",
        "    parent: &'a str,",
    ] {
        assert!(names_workspace_as_string(line), "{line}");
    }
    for line in [
        "    pub parent: Option<Parent>,",
        "    pub workspace_id: WorkspaceId,",
        "    pub grandparent: Option<String>,",
        "    pub base_change: Option<String>,",
    ] {
        assert!(!names_workspace_as_string(line), "{line}");
    }
}

#[test]
fn string_ids_are_told_from_other_names() {
    for line in [
        "fn f(&self, id: &str) {",
        "        id: &str,",
        "    pub id: &'a str,",
        "fn g(ids: &[&str], stop: &str)",
    ] {
        assert!(takes_string_id(line), "{line}");
    }
    for line in [
        "fn f(&self, id: &WorkspaceId) {",
        "fn f(commit_id: &str, change_id: &str) {",
        "fn f(ids: &[String]) {",
        "fn f(id: &string::Thing) {",
        "    pub id: &'a WorkspaceId,",
    ] {
        assert!(!takes_string_id(line), "{line}");
    }
}
