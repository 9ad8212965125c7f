//! `man --dir DIR`: `agent-workspace.1` and a page per subcommand (nested ones too), with
//! examples, EXIT STATUS, ENVIRONMENT and FILES and the version in the footer; valid roff.

use std::fs;

use crate::harness::{which, TestEnv, SUBCOMMANDS};

#[test]
fn man_writes_a_page_for_the_tool_and_each_subcommand() {
    let env = TestEnv::new();
    let dir = env.path().join("share/man/man1");
    let out = env.aw(env.path(), ["man", "--dir", dir.to_str().unwrap()]);
    out.assert_ok();
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let nested = ["pool-fill", "pool-status", "pool-drain"];
    let mut expected: Vec<String> = SUBCOMMANDS
        .iter()
        .chain(&nested)
        .map(|s| format!("agent-workspace-{s}.1"))
        .chain(["agent-workspace.1".to_string()])
        .collect();
    expected.sort();
    assert_eq!(names, expected);
    assert_eq!(
        out.stdout.lines().count(),
        expected.len(),
        "{}",
        out.report()
    );
    let main = fs::read_to_string(dir.join("agent-workspace.1")).unwrap();
    assert!(main.starts_with(".ie \\n(.g .ds Aq"), "{main}");
    assert!(main.contains(".TH agent-workspace 1"), "{main}");
    for sub in SUBCOMMANDS {
        assert!(
            main.contains(&format!(
                "agent\\-workspace\\-{}(1)",
                sub.replace('-', "\\-")
            )),
            "{sub} not named:\n{main}"
        );
        let page = fs::read_to_string(dir.join(format!("agent-workspace-{sub}.1"))).unwrap();
        assert!(
            page.contains(&format!(".TH agent-workspace-{sub} 1")),
            "{page}"
        );
    }
    let pool = fs::read_to_string(dir.join("agent-workspace-pool.1")).unwrap();
    for sub in nested {
        let reference = format!("agent\\-workspace\\-{}(1)", sub.replace('-', "\\-"));
        assert!(pool.contains(&reference), "{sub} not named:\n{pool}");
    }
    assert!(!names.iter().any(|n| n.contains("refill")));
}

/// Every page: its examples, the exit status, the environment and the files, and the version
/// in the footer (the `.TH` line's source).
#[test]
fn every_page_has_examples_exit_status_environment_files_and_the_version() {
    let env = TestEnv::new();
    let dir = env.path().join("man");
    env.aw(env.path(), ["man", "--dir", dir.to_str().unwrap()])
        .assert_ok();
    let version = env.aw(env.path(), ["--version"]);
    version.assert_ok();
    let version = version.stdout.trim().to_string();
    for entry in fs::read_dir(&dir).unwrap() {
        let page = entry.unwrap().path();
        let text = fs::read_to_string(&page).unwrap();
        let name = page.file_stem().unwrap().to_str().unwrap();
        let title = text.lines().find(|l| l.starts_with(".TH ")).unwrap_or("");
        assert!(
            title.starts_with(&format!(".TH {name} 1 "))
                && title.contains(&format!("\"{version}\"")),
            "{name}: {title}"
        );
        let mut sections = vec![".SH \"EXIT STATUS\"", ".SH ENVIRONMENT", ".SH FILES"];
        if name != "agent-workspace" {
            sections.push(".SH EXAMPLES");
        }
        for section in sections {
            assert!(text.contains(section), "{name} lacks {section}:\n{text}");
        }
        assert!(text.contains("AI_WORKSPACES_ROOT"), "{name}");
        assert_eq!(text.matches(".ds Aq").count(), 2, "{name}: one preamble");
    }
}

#[test]
fn the_pages_render_without_warnings() {
    let env = TestEnv::new();
    let dir = env.path().join("man");
    env.aw(env.path(), ["man", "--dir", dir.to_str().unwrap()])
        .assert_ok();
    let groff = which("groff").expect("groff on PATH (the man pages are checked with it)");
    for entry in fs::read_dir(&dir).unwrap() {
        let page = entry.unwrap().path();
        let out = env
            .cmd(&groff, env.path())
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(&page)
            .run();
        out.assert_ok();
        assert_eq!(out.stderr, "", "{}: {}", page.display(), out.report());
    }
    let out = env
        .cmd(&groff, env.path())
        .args(["-man", "-Tutf8"])
        .arg(dir.join("agent-workspace-diff.1"))
        .run();
    assert!(
        out.stdout.contains("agent-workspace-diff"),
        "{}",
        out.report()
    );
}

#[test]
fn an_unwritable_directory_is_an_error_with_nothing_written() {
    let env = TestEnv::new();
    let file = env.path().join("a-file");
    fs::write(&file, "not a directory").unwrap();
    let out = env.aw(
        env.path(),
        ["man", "--dir", file.join("man").to_str().unwrap()],
    );
    out.assert_code(1);
    assert_eq!(out.stdout, "", "{}", out.report());
    assert!(
        out.stderr
            .starts_with("Error: could not create the manual directory"),
        "{}",
        out.report()
    );
    assert!(
        out.stderr
            .contains("\nHint: pass --dir a writable directory"),
        "{}",
        out.report()
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), "not a directory");
}
