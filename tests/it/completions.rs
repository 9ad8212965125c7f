//! `completions <shell>`: a registration script that calls the binary back on each TAB
//! (clap_complete's dynamic completion). Real bash, zsh and fish load it and complete
//! subcommands, flags, enum values and the repository's workspace ids; hidden commands are
//! never offered.

use std::fs;
use std::path::{Path, PathBuf};

use crate::harness::{which, TestEnv, SUBCOMMANDS};

fn script(env: &TestEnv, shell: &str) -> PathBuf {
    let out = env.aw(env.path(), ["completions", shell]);
    out.assert_ok();
    assert_eq!(out.stderr, "", "{}", out.report());
    let file = env.path().join(format!("completion.{shell}"));
    fs::write(&file, &out.stdout).unwrap();
    file
}

fn single_quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// A real bash loads the script, looks up the function `complete -p` registered for
/// agent-workspace and runs it on `line` (split on spaces; a trailing space starts an empty
/// word), in `dir`: the candidates it leaves in COMPREPLY, sorted.
fn bash(env: &TestEnv, dir: &Path, line: &str) -> Vec<String> {
    let file = script(env, "bash");
    let words: Vec<String> = line.split(' ').map(single_quoted).collect();
    let driver = format!(
        r#"source {file}
spec=$(complete -p agent-workspace) || exit 3
fn=${{spec##*-F }}; fn=${{fn%% *}}
COMP_WORDS=({words}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
COMP_LINE={line}; COMP_POINT=${{#COMP_LINE}}; COMP_TYPE=9; COMPREPLY=()
"$fn" agent-workspace "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}""#,
        file = single_quoted(file.to_str().unwrap()),
        words = words.join(" "),
        line = single_quoted(line),
    );
    let out = env
        .cmd(which("bash").expect("bash on PATH"), dir)
        .env("PATH", env.path_with_only(&["jj", "git"]))
        .args(["--norc", "--noprofile", "-c", &driver])
        .run();
    out.assert_ok();
    assert_eq!(out.stderr, "", "{}", out.report());
    sorted(out.stdout.lines())
}

/// A real fish loads the script and prints what it would offer for `line` (`complete -C`).
fn fish(env: &TestEnv, dir: &Path, line: &str) -> Vec<String> {
    let file = script(env, "fish");
    let driver = format!(
        "source {}; complete -C {}",
        single_quoted(file.to_str().unwrap()),
        single_quoted(line)
    );
    let out = env
        .cmd(which("fish").expect("fish on PATH"), dir)
        .env("PATH", env.path_with_only(&["jj", "git"]))
        .args(["--no-config", "-c", &driver])
        .run();
    out.assert_ok();
    assert_eq!(out.stderr, "", "{}", out.report());
    sorted(out.stdout.lines().map(|l| l.split('\t').next().unwrap()))
}

/// A real zsh loads the script (as `compinit` would autoload it from `fpath`) and runs its
/// completion function with `words` and `CURRENT` set as zsh's completion system sets them;
/// `_describe`, which only works inside a completion widget, is replaced by one printing the
/// candidates it was given.
fn zsh(env: &TestEnv, dir: &Path, line: &str) -> Vec<String> {
    let file = script(env, "zsh");
    let words: Vec<String> = line.split(' ').map(single_quoted).collect();
    let driver = format!(
        r#"compdef() {{ registered=$1 }}
_describe() {{ local name=${{@[-1]}}; print -rl -- ${{(P)name}} }}
source {file}
[[ $registered == _clap_dynamic_completer_agent_workspace ]] || exit 3
words=({words}); CURRENT=${{#words}}
$registered"#,
        file = single_quoted(file.to_str().unwrap()),
        words = words.join(" "),
    );
    let out = env
        .cmd(which("zsh").expect("zsh on PATH"), dir)
        .env("PATH", env.path_with_only(&["jj", "git", "expr"]))
        .args(["-f", "-c", &driver])
        .run();
    out.assert_ok();
    assert_eq!(out.stderr, "", "{}", out.report());
    // Each candidate is `value:description` with `:` in the value escaped.
    sorted(out.stdout.lines().map(|l| l.split(':').next().unwrap()))
}

fn sorted<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut found: Vec<String> = lines
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    found.sort();
    found
}

type Shell = fn(&TestEnv, &Path, &str) -> Vec<String>;
const SHELLS: [(&str, Shell); 3] = [("bash", bash), ("zsh", zsh), ("fish", fish)];

fn has(found: &[String], wanted: &[&str]) -> bool {
    wanted.iter().all(|w| found.iter().any(|f| f == w))
}

#[test]
fn every_shell_completes_subcommands_flags_and_values() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    for (shell, complete) in SHELLS {
        let subs = complete(&env, &repo, "agent-workspace ");
        assert!(has(&subs, SUBCOMMANDS), "{shell}: {subs:?}");
        assert!(
            !subs.iter().any(|s| s.starts_with("__")),
            "{shell}: {subs:?}"
        );
        assert_eq!(
            complete(&env, &repo, "agent-workspace sta"),
            ["status"],
            "{shell}"
        );
        assert_eq!(
            complete(&env, &repo, "agent-workspace pool f"),
            ["fill"],
            "{shell}"
        );
        let flags = complete(&env, &repo, "agent-workspace status --");
        assert!(
            has(
                &flags,
                &[
                    "--json",
                    "--size",
                    "--watch",
                    "--interval",
                    "--root",
                    "--help"
                ]
            ),
            "{shell}: {flags:?}"
        );
        assert_eq!(
            complete(&env, &repo, "agent-workspace land --prefer "),
            ["target", "workspace"],
            "{shell}"
        );
        assert_eq!(
            complete(&env, &repo, "agent-workspace clean --status c"),
            ["conflicted", "crashed"],
            "{shell}"
        );
        // A positional's values come with the flags that may stand there too.
        let shells = complete(&env, &repo, "agent-workspace completions ");
        let values: Vec<&String> = shells.iter().filter(|s| !s.starts_with('-')).collect();
        assert_eq!(
            values,
            ["bash", "elvish", "fish", "powershell", "zsh"],
            "{shell}"
        );
        assert_eq!(
            complete(&env, &repo, "agent-workspace completions z"),
            ["zsh"],
            "{shell}"
        );
        assert_eq!(
            complete(&env, &repo, "agent-workspace --backend "),
            ["git", "jj"],
            "{shell}"
        );
    }
}

/// `pool refill` (started by `run`) and the guard's `__exec` are never offered, not even as the
/// only match of what was typed.
#[test]
fn hidden_commands_are_never_offered() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    for (shell, complete) in SHELLS {
        let pool = complete(&env, &repo, "agent-workspace pool ");
        assert!(
            has(&pool, &["fill", "status", "drain"]),
            "{shell}: {pool:?}"
        );
        assert!(
            !pool.iter().any(|s| s.contains("refill")),
            "{shell}: {pool:?}"
        );
        assert_eq!(
            complete(&env, &repo, "agent-workspace pool r"),
            Vec::<String>::new(),
            "{shell}"
        );
        assert_eq!(
            complete(&env, &repo, "agent-workspace __"),
            Vec::<String>::new(),
            "{shell}"
        );
    }
}

/// Every argument that takes a workspace id completes the repository's ids, read from its
/// namespace directory; outside a repository there are none and nothing is printed.
#[test]
fn every_id_argument_completes_workspace_ids() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    let other = env.jj_repo("other");
    for id in ["alpha", "beta"] {
        env.aw(&repo, ["create", id]).assert_ok();
    }
    env.aw(&other, ["create", "elsewhere"]).assert_ok();
    for (shell, complete) in SHELLS {
        for sub in [
            "run",
            "status",
            "create",
            "path",
            "shell",
            "clean",
            "checkpoint",
            "diff",
            "land",
            "sync-tools",
        ] {
            let found = complete(&env, &repo, &format!("agent-workspace {sub} "));
            assert!(has(&found, &["alpha", "beta"]), "{shell} {sub}: {found:?}");
            assert!(!has(&found, &["elsewhere"]), "{shell} {sub}: {found:?}");
            assert_eq!(
                complete(&env, &repo, &format!("agent-workspace {sub} a")),
                ["alpha"],
                "{shell} {sub}"
            );
        }
        for line in [
            "agent-workspace run w --parent b",
            "agent-workspace create w --parent b",
            "agent-workspace clean alpha b",
        ] {
            assert_eq!(complete(&env, &repo, line), ["beta"], "{shell}: {line}");
        }
        // --repo given on the line: that repository's ids, from anywhere.
        let line = format!("agent-workspace --repo {} diff e", other.display());
        assert_eq!(complete(&env, env.path(), &line), ["elsewhere"], "{shell}");
        let outside = complete(&env, env.path(), "agent-workspace diff ");
        assert!(!has(&outside, &["alpha"]), "{shell}: {outside:?}");
    }
}

#[test]
fn every_shell_gets_a_registration_script() {
    let env = TestEnv::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let text = fs::read_to_string(script(&env, shell)).unwrap();
        assert!(text.contains("AGENT_WORKSPACE_COMPLETE"), "{shell}: {text}");
    }
    let out = env.aw(env.path(), ["completions", "tcsh"]);
    insta::assert_snapshot!(out, @r"
    --- stderr ---
    Error: invalid value 'tcsh' for '<SHELL>' [possible values: bash, zsh, fish, elvish, powershell]
    Hint: a similar value exists: 'zsh'; see `agent-workspace --help`
    [exit 2]
    ");
    let out = env
        .aw_cmd(env.path())
        .env("AGENT_WORKSPACE_COMPLETE", "tcsh")
        .args(["--", "agent-workspace", ""])
        .run();
    insta::assert_snapshot!(out, @r#"
    --- stderr ---
    Error: AGENT_WORKSPACE_COMPLETE="tcsh" is not a shell completion knows
    Hint: use bash, zsh, fish, elvish or powershell
    [exit 2]
    "#);
}

/// zsh and fish parse their scripts without an error.
#[test]
fn zsh_and_fish_parse_their_scripts() {
    let env = TestEnv::new();
    for (shell, check) in [("zsh", "-n"), ("fish", "--no-execute")] {
        let file = script(&env, shell);
        let program = which(shell).unwrap_or_else(|| panic!("{shell} on PATH"));
        let out = env.cmd(program, env.path()).arg(check).arg(&file).run();
        out.assert_ok();
        assert_eq!(out.stderr, "", "{shell}: {}", out.report());
    }
}

/// An interactive zsh on a pseudo-terminal (python's pty), its completion system started by
/// `compinit` with the script autoloaded from `fpath` as `_agent-workspace`, as installed:
/// `keys` are typed after the setup, and what the terminal showed is returned once every
/// `expected` text appeared (or after 20 s).
fn zsh_on_a_terminal(env: &TestEnv, dir: &Path, keys: &str, expected: &[&str]) -> String {
    let functions = env.path().join("zsh-functions");
    fs::create_dir_all(&functions).unwrap();
    fs::copy(script(env, "zsh"), functions.join("_agent-workspace")).unwrap();
    let setup = format!(
        "fpath=({} $fpath); autoload -Uz compinit; compinit -u -D; print RE''ADY",
        single_quoted(functions.to_str().unwrap())
    );
    let driver = r#"
import os, pty, select, sys, time
shell, setup, keys, expected = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
pid, fd = pty.fork()
if pid == 0:
    os.environ["PATH"] = os.environ.pop("SHELL_PATH")
    os.execv(shell, [shell, "-f", "-i"])
def read_until(done):
    out, end = b"", time.time() + 20
    while time.time() < end and not done(out):
        if select.select([fd], [], [], 0.1)[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    return out
os.write(fd, setup.encode() + b"\n")
read_until(lambda out: b"READY" in out)
os.write(fd, keys.encode())
out = read_until(lambda out: all(e.encode() in out for e in expected))
os.write(fd, b"\x03exit\n")
os.kill(pid, 9)
os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
"#;
    let zsh = which("zsh").expect("zsh on PATH");
    let out = env
        .cmd("python3", dir)
        .env("SHELL_PATH", env.path_with_only(&["jj", "git", "expr"]))
        .env("TERM", "xterm")
        .args(["-c", driver, zsh.to_str().unwrap(), &setup, keys])
        .args(expected)
        .run();
    out.assert_ok();
    out.stdout.clone()
}

#[test]
fn zsh_on_a_terminal_completes_subcommands_flags_and_ids() {
    let env = TestEnv::new();
    let repo = env.jj_repo("repo");
    for id in ["alpha", "beta"] {
        env.aw(&repo, ["create", id]).assert_ok();
    }
    let shown = zsh_on_a_terminal(&env, &repo, "agent-workspace pool f\t", &["fill"]);
    assert!(shown.contains("fill"), "{shown:?}");
    let shown = zsh_on_a_terminal(&env, &repo, "agent-workspace status --wa\t", &["watch"]);
    assert!(shown.contains("--watch"), "{shown:?}");
    let shown = zsh_on_a_terminal(&env, &repo, "agent-workspace diff \t", &["alpha", "beta"]);
    assert!(
        shown.contains("alpha") && shown.contains("beta"),
        "{shown:?}"
    );
    // Subcommands come before flags: once `--color` is shown, the list is complete.
    let shown = zsh_on_a_terminal(
        &env,
        &repo,
        "agent-workspace pool \t",
        &["drain", "--color"],
    );
    assert!(
        shown.contains("fill") && shown.contains("drain") && !shown.contains("refill"),
        "{shown:?}"
    );
}
