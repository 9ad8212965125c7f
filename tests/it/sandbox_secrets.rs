//! What a sandboxed agent with the network on cannot read: the user's credentials under HOME,
//! the environment variables that carry them, and every other workspace (other
//! repositories' namespaces, other workspaces of its own). What the user's own file passes
//! in (`sandbox.readable`, `sandbox.pass_env`) it can. Each is tried as an agent would, as
//! the invoking user and as an unprivileged one, on both backends.

use std::fs;
use std::path::{Path, PathBuf};

use crate::backends::Backend;
use crate::harness::TestEnv;
use crate::sandbox_support::setup;

/// Credential files under HOME, as the tools that keep them name them.
const SECRETS: &[&str] = &[
    ".ssh/id_ed25519",
    ".aws/credentials",
    ".config/gh/hosts.yml",
    ".netrc",
    ".git-credentials",
    ".docker/config.json",
    ".kube/config",
    ".cargo/credentials.toml",
    ".npmrc",
    ".pypirc",
    ".gnupg/private-keys-v1.d/key.key",
    ".config/gcloud/credentials.db",
    ".azure/msal_token_cache.json",
    ".password-store/bank.gpg",
    ".mozilla/firefox/profile/logins.json",
    ".config/google-chrome/Default/Login Data",
];

/// Variables that carry credentials, set for the run.
const SECRET_VARS: &[&str] = &["GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "NPM_TOKEN"];

fn plant(home: &Path) {
    for file in SECRETS {
        let path = home.join(file);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, "s3cret\n").unwrap();
    }
    // What toolchains read stays readable.
    fs::create_dir_all(home.join(".cargo/registry")).unwrap();
    fs::write(home.join(".cargo/config.toml"), "[net]\n").unwrap();
    fs::create_dir_all(home.join(".claude")).unwrap();
    fs::write(home.join(".claude/settings.json"), "{}\n").unwrap();
}

/// The probe: `read <path>` or `hidden <path>` per file, `env <name>` per variable set.
fn probe(paths: &[PathBuf]) -> String {
    let mut script = String::new();
    for path in paths {
        script.push_str(&format!(
            "if cat '{p}' >/dev/null 2>&1; then echo 'read {p}'; else echo 'hidden {p}'; fi\n",
            p = path.display()
        ));
    }
    script.push_str("env | cut -d= -f1 | sed 's/^/env /'\n");
    script
}

fn secrets_stay_out(backend: Backend, unprivileged: bool) {
    let (env, repo) = setup(backend);
    let home = env.home();
    plant(&home);
    // The root where it lives by default, under HOME, with another repository's workspace.
    let root = home.join(".cache/ai-workspaces");
    let other = backend.repo_named(&env, "other");
    env.aw_cmd(&other)
        .env("AI_WORKSPACES_ROOT", &root)
        .args(["run", "theirs", "--", "sh", "-c", "echo s3cret > notes.txt"])
        .run()
        .assert_ok();
    env.aw_cmd(&repo)
        .env("AI_WORKSPACES_ROOT", &root)
        .args([
            "run",
            "sibling",
            "--",
            "sh",
            "-c",
            "echo s3cret > notes.txt",
        ])
        .run()
        .assert_ok();
    let theirs = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path().join("theirs/notes.txt"))
        .find(|p| p.is_file())
        .expect("the other repository's workspace");
    let sibling = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path().join("sibling/notes.txt"))
        .find(|p| p.is_file())
        .expect("the sibling workspace");
    env.user_config(&format!(
        "[sandbox]\nreadable = [\"{}\"]\npass_env = [\"ANTHROPIC_API_KEY\"]\n",
        home.join(".claude").display()
    ));
    let mut hidden: Vec<PathBuf> = SECRETS.iter().map(|f| home.join(f)).collect();
    hidden.extend([theirs, sibling]);
    let readable = [
        home.join(".cargo/config.toml"),
        home.join(".claude/settings.json"),
    ];
    let script = probe(&hidden.iter().chain(&readable).cloned().collect::<Vec<_>>());
    let mut cmd = env
        .aw_cmd(&repo)
        .env("AI_WORKSPACES_ROOT", &root)
        .env("ANTHROPIC_API_KEY", "model-key");
    for var in SECRET_VARS {
        cmd = cmd.env(var, "s3cret");
    }
    let cmd = cmd.args(["run", "--sandbox", "w", "--", "sh", "-c", &script]);
    let out = match unprivileged {
        true => cmd.run_unprivileged(),
        false => cmd.run(),
    };
    out.assert_ok();
    let lines: Vec<&str> = out.stdout.lines().collect();
    for path in &hidden {
        let line = format!("hidden {}", path.display());
        assert!(
            lines.contains(&line.as_str()),
            "{line:?} not in:\n{}",
            out.stdout
        );
    }
    for path in &readable {
        let line = format!("read {}", path.display());
        assert!(
            lines.contains(&line.as_str()),
            "{line:?} not in:\n{}",
            out.stdout
        );
    }
    for var in SECRET_VARS {
        let line = format!("env {var}");
        assert!(!lines.contains(&line.as_str()), "{var} reached the sandbox");
    }
    assert!(
        lines.contains(&"env ANTHROPIC_API_KEY"),
        "the variable sandbox.pass_env names is missing:\n{}",
        out.stdout
    );
    let record = env.metadata(&root.join(env.namespace(&repo)).join("w"));
    assert_eq!(
        record["sandbox"]["pass_env"][0], "ANTHROPIC_API_KEY",
        "{record}"
    );
}

fn secrets_stay_out_for_the_invoking_user(backend: Backend) {
    secrets_stay_out(backend, false);
}

fn secrets_stay_out_for_an_unprivileged_user(backend: Backend) {
    secrets_stay_out(backend, true);
}

/// A root outside HOME and `/tmp` (`--root`, `AI_WORKSPACES_ROOT`): every other namespace in
/// it is hidden too.
fn other_namespaces_under_a_root_elsewhere_are_hidden_in_a_sandbox(backend: Backend) {
    let (env, repo) = setup(backend);
    let name = env
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let root = Path::new("/var/tmp").join(format!("{name}-root"));
    let _cleanup = Removed(root.clone());
    let other = backend.repo_named(&env, "other");
    env.aw_cmd(&other)
        .env("AI_WORKSPACES_ROOT", &root)
        .args(["run", "theirs", "--", "sh", "-c", "echo s3cret > notes.txt"])
        .run()
        .assert_ok();
    let theirs = root.join(env.namespace(&other)).join("theirs/notes.txt");
    assert!(theirs.is_file());
    let out = env
        .aw_cmd(&repo)
        .env("AI_WORKSPACES_ROOT", &root)
        .args([
            "run",
            "--sandbox",
            "w",
            "--",
            "sh",
            "-c",
            &probe(std::slice::from_ref(&theirs)),
        ])
        .run();
    out.assert_ok();
    let line = format!("hidden {}", theirs.display());
    assert!(
        out.stdout.lines().any(|l| l == line),
        "{line:?} not in:\n{}",
        out.stdout
    );
}

/// Once sandboxed, always sandboxed: a later plain `run` is confined too, and only
/// `--no-sandbox` runs it unconfined, saying so; the mark outlives that run.
fn a_workspace_that_ran_sandboxed_stays_sandboxed(backend: Backend) {
    let (env, repo) = setup(backend);
    let home = env.home();
    plant(&home);
    env.aw(&repo, ["run", "--sandbox", "w", "--", "true"])
        .assert_ok();
    let key = home.join(".ssh/id_ed25519");
    let script = probe(std::slice::from_ref(&key));
    let hidden = format!("hidden {}", key.display());
    let read = format!("read {}", key.display());
    let plain = env.aw(&repo, ["run", "w", "--", "sh", "-c", &script]);
    plain.assert_ok();
    assert!(
        plain.stdout.lines().any(|l| l == hidden),
        "{}",
        plain.report()
    );
    assert!(!plain.stderr.contains("Warning"), "{}", plain.report());
    let unconfined = env.aw(
        &repo,
        ["run", "--no-sandbox", "w", "--", "sh", "-c", &script],
    );
    unconfined.assert_ok();
    assert!(
        unconfined.stdout.lines().any(|l| l == read),
        "{}",
        unconfined.report()
    );
    assert!(
        unconfined.stderr.contains(
            "Warning: workspace \"w\" ran sandboxed before, and this run is not confined (--no-sandbox)"
        ) && unconfined.stderr.contains("Hint: leave out --no-sandbox to keep it confined"),
        "{}",
        unconfined.report()
    );
    let again = env.aw(&repo, ["run", "w", "--", "sh", "-c", &script]);
    again.assert_ok();
    assert!(
        again.stdout.lines().any(|l| l == hidden),
        "{}",
        again.report()
    );
}

crate::both_backends!(
    a_workspace_that_ran_sandboxed_stays_sandboxed,
    secrets_stay_out_for_the_invoking_user,
    secrets_stay_out_for_an_unprivileged_user,
    other_namespaces_under_a_root_elsewhere_are_hidden_in_a_sandbox,
);

/// A repository's file cannot widen what its agents read or are handed.
#[test]
fn a_repository_file_cannot_pass_credentials_or_paths_into_a_sandbox() {
    for key in ["readable = [\"/root\"]", "pass_env = [\"GITHUB_TOKEN\"]"] {
        let env = TestEnv::new();
        let repo = Backend::Git.repo(&env);
        fs::write(
            repo.join("agent-workspace.toml"),
            format!("[sandbox]\n{key}\n"),
        )
        .unwrap();
        let out = env.aw(&repo, ["run", "w", "--", "true"]);
        out.assert_code(2);
        let name = key.split(' ').next().unwrap();
        assert!(
            out.stderr.contains(&format!(
                "sets sandbox.{name}, which only the user's own file may set"
            )),
            "{}",
            out.stderr
        );
        assert!(
            out.stderr
                .contains(&format!("Hint: move sandbox.{name} to ")),
            "{}",
            out.stderr
        );
        assert!(!env.ws_path(&repo, "w").exists());
    }
}

/// A relative `sandbox.readable` entry is an error naming it, and nothing is run.
#[test]
fn a_relative_readable_path_is_refused_in_a_sandbox() {
    let (env, repo) = setup(Backend::Git);
    env.user_config("[sandbox]\nreadable = [\"notes\"]\n");
    let out = env.aw(&repo, ["run", "--sandbox", "w", "--", "touch", "ran"]);
    out.assert_code(2);
    assert!(
        out.stderr
            .contains("Error: sandbox.readable lists notes, which is not an absolute path"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("Hint: list absolute paths"),
        "{}",
        out.stderr
    );
    assert!(!env.ws_path(&repo, "w").join("ran").exists());
}

struct Removed(PathBuf);

impl Drop for Removed {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}
