//! A tree deeper than a path can name (PATH_MAX): an agent nests directories until their
//! path passes 4096 bytes, which jj and git cannot read. `clean` refuses, naming where;
//! `clean --force` keeps that directory aside whole, records the rest, and removes the
//! workspace. Nothing is lost: the deep file is in the kept directory.

use std::fs;
use std::path::Path;

use crate::backends::Backend;
use crate::both_backends;
use crate::harness::TestEnv;

/// The agent's script: `shallow.txt` at the root, `src/ok.txt`, and under `src/` 200
/// directories of 20-letter names (4,200 bytes) holding `deep.txt`.
const DEEP: &str = r#"echo shallow-words > shallow.txt
python3 -c '
import os
os.makedirs("src")
open("src/ok.txt", "w").write("ok-words\n")
os.chdir("src")
for i in range(200):
    os.mkdir("d" * 20)
    os.chdir("d" * 20)
open("deep.txt", "w").write("deep-words\n")
'
"#;
/// Whether `deep.txt` is at the bottom of the chain of `dddd...` directories starting at `dir`
/// (walked by relative steps, as no path can name it).
fn holds_the_deep_file(dir: &Path) -> bool {
    let script = r#"
import os
while os.path.isdir("d" * 20):
    os.chdir("d" * 20)
print(open("deep.txt").read(), end="")
"#;
    std::process::Command::new("python3")
        .args(["-c", script])
        .current_dir(dir)
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout) == "deep-words\n")
}

fn a_tree_deeper_than_a_path_is_kept_aside_by_clean_force(backend: Backend) {
    let env = TestEnv::new();
    let repo = backend.repo(&env);
    env.aw(&repo, ["run", "w", "--", "sh", "-c", DEEP])
        .assert_ok();
    let ws = env.ws_path(&repo, "w");
    // A checkpoint cannot record it, and says why in a line a person reads.
    let checkpoint = env.aw(&repo, ["checkpoint", "w"]);
    assert_eq!(checkpoint.code(), Some(1), "{}", checkpoint.report());
    assert!(
        checkpoint.stderr.starts_with("Error: workspace \"w\" holds a directory nested deeper than a path can name (src/dddddddddddddddddddd/…")
            && checkpoint.stderr.contains("Hint: move that directory out of the workspace")
            && checkpoint.stderr.len() < 2000,
        "{}",
        checkpoint.report()
    );
    let refused = env.aw(&repo, ["clean", "w"]);
    assert_eq!(refused.code(), Some(1), "{}", refused.report());
    assert!(
        refused.stderr.starts_with(
            "Error: workspace \"w\" holds a directory nested deeper than a path can name"
        ) && refused.stderr.contains("src/dddddddddddddddddddd/")
            && refused
                .stderr
                .contains("Hint: `agent-workspace clean --force w` keeps it aside whole"),
        "{}",
        refused.report()
    );
    assert!(refused.stderr.len() < 2000, "{}", refused.report());
    assert!(ws.join("shallow.txt").is_file());
    let forced = env.aw(&repo, ["clean", "--force", "w"]);
    forced.assert_ok();
    assert!(!ws.exists(), "{}", forced.report());
    let said = format!("{}{}", forced.stdout, forced.stderr);
    let kept_line = said
        .lines()
        .find(|l| l.contains("nested deeper than a path can name"))
        .unwrap_or_else(|| panic!("no word of the deep directory: {}", forced.report()));
    let kept = kept_line
        .rsplit(" kept in ")
        .next()
        .and_then(|rest| rest.split_whitespace().next())
        .map(|p| p.trim_end_matches([';', ',', ')']))
        .unwrap_or_else(|| panic!("no kept path in {kept_line:?}"));
    let kept = Path::new(kept);
    assert!(kept.is_dir(), "{kept:?}: {}", forced.report());
    assert!(holds_the_deep_file(kept), "{kept:?} lost the deep file");
    // The rest was recorded as a clean records it.
    let everything = match backend {
        Backend::Jj => env.jj_ok(&repo, ["log", "-r", "all()", "-p", "--no-graph"]),
        Backend::Git => {
            let out = std::process::Command::new("git")
                .args(["log", "--all", "-p"])
                .current_dir(&repo)
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        }
    };
    for words in ["shallow-words", "ok-words"] {
        assert!(
            everything.contains(words),
            "{words} lost: {}",
            forced.report()
        );
    }
    assert!(fs::metadata(kept).is_ok());
}

both_backends!(a_tree_deeper_than_a_path_is_kept_aside_by_clean_force);
