//! `man --dir DIR`: `agent-workspace.1` and a page per subcommand, valid roff.

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
    let mut expected: Vec<String> = SUBCOMMANDS
        .iter()
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
    assert!(!names.iter().any(|n| n.contains("complete-ids")));
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
