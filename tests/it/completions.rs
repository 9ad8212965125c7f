//! `completions`: a script for every shell; bash loads it and completes subcommands and the
//! repository's workspace ids (through the hidden `__complete-ids`).

use std::fs;
use std::path::Path;

use crate::harness::{which, TestEnv, SUBCOMMANDS};

fn script(env: &TestEnv, shell: &str) -> String {
    let out = env.aw(env.path(), ["completions", shell]);
    out.assert_ok();
    assert_eq!(out.stderr, "", "{}", out.report());
    out.stdout.clone()
}

#[test]
fn every_shell_gets_a_script_naming_every_subcommand() {
    let env = TestEnv::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let text = script(&env, shell);
        for sub in SUBCOMMANDS {
            assert!(text.contains(sub), "{shell} script lacks {sub}:\n{text}");
        }
        assert!(
            !text.contains("__complete-ids\n"),
            "hidden command offered by {shell}"
        );
    }
    let out = env.aw(env.path(), ["completions", "tcsh"]);
    out.assert_code(2);
    assert!(
        out.stderr.starts_with("Error: invalid value 'tcsh'"),
        "{}",
        out.report()
    );
}

#[test]
fn zsh_and_fish_complete_ids_through_the_hidden_command() {
    let env = TestEnv::new();
    let zsh = script(&env, "zsh");
    assert!(
        zsh.starts_with("#compdef agent-workspace\n_agent_workspace_ids() {"),
        "{zsh}"
    );
    let id_args: Vec<&str> = zsh
        .lines()
        .filter(|l| l.contains(":id -- ") || l.contains("::ids -- "))
        .collect();
    assert_eq!(id_args.len(), 10, "{zsh}");
    for line in id_args {
        assert!(line.ends_with(":_agent_workspace_ids' \\"), "{line}");
    }
    let fish = script(&env, "fish");
    assert!(
        fish.contains("-a \"(agent-workspace __complete-ids 2>/dev/null)\""),
        "{fish}"
    );
}

/// zsh and fish parse their scripts without an error.
#[test]
fn zsh_and_fish_parse_their_scripts() {
    let env = TestEnv::new();
    for (shell, check) in [("zsh", "-n"), ("fish", "--no-execute")] {
        let file = env.path().join(format!("completion.{shell}"));
        fs::write(&file, script(&env, shell)).unwrap();
        let program = which(shell).unwrap_or_else(|| panic!("{shell} on PATH"));
        let out = env.cmd(program, env.path()).arg(check).arg(&file).run();
        out.assert_ok();
        assert_eq!(out.stderr, "", "{shell}: {}", out.report());
    }
}

/// A real fish, with the script loaded, completes subcommands and the ids of the repository
/// it is in (`complete -C` prints what fish would offer).
#[test]
fn fish_completes_subcommands_and_workspace_ids() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    let file = env.path().join("completion.fish");
    fs::write(&file, script(&env, "fish")).unwrap();
    let fish = which("fish").expect("fish on PATH");
    let bin_dir = Path::new(crate::harness::AW).parent().unwrap();
    let complete = |line: &str| {
        let driver = format!("source '{}'; complete -C '{line}'", file.display());
        let out = env
            .cmd(&fish, &repo)
            .env("PATH", env.path_with_first(bin_dir))
            .args(["--no-config", "-c", &driver])
            .run();
        out.assert_ok();
        out.stdout
            .lines()
            .map(|l| l.split('\t').next().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let subs = complete("agent-workspace sta");
    assert!(subs.contains(&"status".to_string()), "{subs:?}");
    let ids = complete("agent-workspace status ");
    assert!(ids.contains(&"w1".to_string()), "{ids:?}");
}

/// Loads the bash script in a real bash and runs its completion function for `words` (the
/// last one being completed), in `dir`; returns the sorted candidates.
fn complete_in_bash(env: &TestEnv, dir: &Path, words: &[&str]) -> Vec<String> {
    let file = env.path().join("completion.bash");
    fs::write(&file, script(env, "bash")).unwrap();
    let bash = which("bash").expect("bash on PATH");
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let driver = format!(
        r#"source '{}'
complete -p agent-workspace
COMP_WORDS=({}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
COMP_LINE="${{COMP_WORDS[*]}}"; COMP_POINT=${{#COMP_LINE}}; COMPREPLY=()
_agent_workspace_with_ids agent-workspace "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}""#,
        file.display(),
        quoted.join(" ")
    );
    let out = env
        .cmd(bash, dir)
        .env("PATH", env.path_with_only(&["jj", "git"]))
        .args(["-c", &driver])
        .run();
    out.assert_ok();
    let mut lines = out.stdout.lines();
    assert_eq!(
        lines.next(),
        Some("complete -o bashdefault -o default -F _agent_workspace_with_ids agent-workspace"),
        "{}",
        out.report()
    );
    let mut found: Vec<String> = lines
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    found.sort();
    found
}

#[test]
fn bash_completes_subcommands_and_workspace_ids() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    for id in ["alpha", "beta"] {
        env.aw(&repo, ["run", id, "--", "true"]).assert_ok();
    }
    assert_eq!(
        complete_in_bash(&env, &repo, &["agent-workspace", "st"]),
        ["status"]
    );
    assert_eq!(
        complete_in_bash(&env, &repo, &["agent-workspace", "diff", ""]),
        ["alpha", "beta"]
    );
    assert_eq!(
        complete_in_bash(&env, &repo, &["agent-workspace", "status", "a"]),
        ["alpha"]
    );
    assert_eq!(
        complete_in_bash(&env, &repo, &["agent-workspace", "run", "--parent", "b"]),
        ["beta"]
    );
    assert_eq!(
        complete_in_bash(&env, &repo, &["agent-workspace", "clean", "alpha", ""]),
        ["alpha", "beta"]
    );
    // Not an id position: the command after `run ID`.
    assert!(
        !complete_in_bash(&env, &repo, &["agent-workspace", "run", "alpha", ""])
            .contains(&"beta".to_string())
    );
    // Outside a repository there are no ids, and no error on the terminal.
    assert_eq!(
        complete_in_bash(&env, env.path(), &["agent-workspace", "diff", ""]),
        Vec::<String>::new()
    );
}

#[test]
fn complete_ids_lists_the_repositorys_workspaces_only() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let other = env.jj_repo("other");
    env.aw(&repo, ["run", "w2", "--", "true"]).assert_ok();
    env.aw(&repo, ["run", "w1", "--", "true"]).assert_ok();
    env.aw(&other, ["run", "elsewhere", "--", "true"])
        .assert_ok();
    let out = env.aw(&repo, ["__complete-ids"]);
    out.assert_ok();
    assert_eq!(out.stdout, "w1\nw2\n", "{}", out.report());
    let out = env.aw(env.path(), ["__complete-ids"]);
    out.assert_code(1);
    assert_eq!(out.stdout, "", "{}", out.report());
    assert!(out.stderr.starts_with("Error: "), "{}", out.report());
}
