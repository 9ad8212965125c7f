//! A warm run reuses the environment direnv loaded last time, by direnv's own reload rule:
//! only while the caller's environment, the workspace, the direnv binary and every file the
//! evaluation read (the `.envrc`, its allow file, `watch_file` and `dotenv` targets) are
//! exactly as they were. An `.envrc` that counts its evaluations in a file outside the
//! workspace tells each evaluation apart from a reuse.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::backends::Backend;
use crate::harness::TestEnv;

/// Longer than the time a changed file is not trusted to show its next change (2 s).
const SETTLE: Duration = Duration::from_millis(2200);

/// A workspace `w1` whose (trusted) `.envrc` appends a line to `evals` on every evaluation,
/// exports that count, watches `watched.txt` and loads `.env` when there is one. Everything
/// has settled when it returns: the next run evaluates and keeps what it loaded.
struct Setup {
    env: TestEnv,
    repo: PathBuf,
    ws: PathBuf,
    evals: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let env = TestEnv::new();
        // direnv evaluates again when the caller's environment changed, and the fixed clock
        // gives every command other commit dates (`GIT_AUTHOR_DATE`): these stories need the
        // same environment from run to run.
        env.use_real_time();
        let repo = Backend::Jj.repo(&env);
        env.aw(&repo, ["create", "w1"]).assert_ok();
        let ws = env.ws_path(&repo, "w1");
        let evals = env.path().join("evals");
        fs::write(ws.join(".envrc"), envrc(&evals, "")).unwrap();
        let setup = Setup {
            env,
            repo,
            ws,
            evals,
        };
        setup.run(&["--trust-envrc"], "true").assert_ok();
        std::thread::sleep(SETTLE);
        setup
    }

    /// `run w1 [flags] -- sh -c script`.
    fn run(&self, flags: &[&str], script: &str) -> crate::harness::Outcome {
        self.cmd(flags, script).run()
    }

    fn cmd(&self, flags: &[&str], script: &str) -> crate::harness::Cmd<'_> {
        let mut args = vec!["run", "w1"];
        args.extend(flags);
        args.extend(["--", "sh", "-c", script]);
        self.env.aw_cmd(&self.repo).args(args)
    }

    /// Runs twice, the second reusing what the first kept (checked); the evaluations so far.
    fn warm(&self) -> usize {
        self.run(&[], "true").assert_ok();
        let kept = self.evaluations();
        self.run(&[], "true").assert_ok();
        assert_eq!(
            self.evaluations(),
            kept,
            "not reused: {}",
            self.env.listing()
        );
        kept
    }

    /// How many times the `.envrc` was evaluated.
    fn evaluations(&self) -> usize {
        fs::read_to_string(&self.evals)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    }

    /// The kept environment's file (in the namespace's cache, outside the workspace).
    fn kept(&self) -> PathBuf {
        self.env
            .namespace_dir(&self.repo)
            .join(".cache")
            .join("direnv-env")
            .join("w1.v1")
    }
}

fn envrc(evals: &Path, extra: &str) -> String {
    format!(
        "echo x >> {evals}\nexport EVALS=$(wc -l < {evals})\nexport AW_TEST_VAR=from-envrc\n\
         watch_file watched.txt\ndotenv_if_exists .env\n{extra}",
        evals = evals.display()
    )
}

/// The variables a command sees, sorted (`env` of the shell the run starts).
const ENV: &str = "env | LC_ALL=C sort";

#[test]
fn a_warm_run_reuses_what_direnv_loaded_and_the_command_sees_the_same() {
    let s = Setup::new();
    let before = s.evaluations();
    let evaluated = s.run(&[], ENV);
    evaluated.assert_ok();
    assert_eq!(s.evaluations(), before + 1, "{}", evaluated.report());
    assert!(s.kept().is_file(), "{}", s.env.listing());
    // What an .envrc exports may be secret: only its owner can enter the directory.
    let mode = fs::metadata(s.kept().parent().unwrap())
        .unwrap()
        .permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o700
    );
    let reused = s.run(&[], ENV);
    reused.assert_ok();
    assert_eq!(s.evaluations(), before + 1, "evaluated again");
    assert_eq!(reused.stdout, evaluated.stdout);
    assert_eq!(reused.stderr, evaluated.stderr);
    assert!(evaluated.stdout.contains("\nAW_TEST_VAR=from-envrc\n"));
    assert!(evaluated.stdout.contains("\nDIRENV_WATCHES="));
    assert!(!evaluated.stdout.contains("AGENT_WORKSPACE_GUARD"));
    // Nothing of it in the workspace.
    let names: Vec<_> = fs::read_dir(&s.ws)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains("direnv-env")), "{names:?}");
    // Removing the workspace removes it too.
    s.env.aw(&s.repo, ["clean", "w1"]).assert_ok();
    assert!(!s.kept().exists(), "{}", s.env.listing());
}

#[test]
fn an_edited_envrc_is_refused_or_evaluated_as_before() {
    let s = Setup::new();
    let kept = s.warm();
    fs::write(s.ws.join(".envrc"), envrc(&s.evals, "export MORE=1\n")).unwrap();
    // Changed since it was allowed: refused exactly as without a kept environment.
    let refused = s.run(&[], "echo ran");
    insta::assert_snapshot!(refused, @r"
    --- stderr ---
    Error: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/.envrc differs from the .envrc of the workspace's base revision; not loading it
    Hint: review it, then pass --trust-envrc to allow it (or --no-direnv to skip it)
    [exit 125]
    ");
    assert_eq!(refused.stdout, "");
    assert_eq!(s.evaluations(), kept);
    let trusted = s.run(&["--trust-envrc"], "echo $MORE");
    assert_eq!(trusted.assert_ok().stdout, "1\n");
    assert_eq!(s.evaluations(), kept + 1);
}

#[test]
fn a_changed_watched_or_dotenv_file_evaluates_again_even_at_the_same_size_and_mtime() {
    let s = Setup::new();
    let watched = s.ws.join("watched.txt");
    fs::write(&watched, "aaaa").unwrap();
    std::thread::sleep(SETTLE);
    // A file in the workspace the .envrc loads is allowed like the .envrc (--trust-envrc).
    s.run(&["--trust-envrc"], "true").assert_ok();
    let kept = s.evaluations();
    s.run(&[], "true").assert_ok();
    assert_eq!(s.evaluations(), kept, "reused");
    // Same size, the modification time put back: only the change time tells.
    let mtime = fs::metadata(&watched).unwrap().modified().unwrap();
    fs::write(&watched, "bbbb").unwrap();
    fs::File::options()
        .write(true)
        .open(&watched)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(fs::metadata(&watched).unwrap().modified().unwrap(), mtime);
    // The trust check still runs before anything kept is looked at.
    let refused = s.run(&[], "echo ran");
    insta::assert_snapshot!(refused, @r"
    --- stderr ---
    Error: [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/watched.txt, which [TMP]/xdg/cache/ai-workspaces/repo-[HASH]/w1/.envrc loads, changed since the workspace was created; not loading the environment
    Hint: review it, then pass --trust-envrc to allow it (or --no-direnv to skip it)
    [exit 125]
    ");
    assert_eq!(s.evaluations(), kept);
    s.run(&["--trust-envrc"], "true").assert_ok();
    assert_eq!(s.evaluations(), kept + 1, "a watched file changed");
    // A dotenv file that appears.
    fs::write(s.ws.join(".env"), "FROM_DOTENV=yes\n").unwrap();
    let out = s.run(&["--trust-envrc"], "echo $FROM_DOTENV");
    assert_eq!(out.assert_ok().stdout, "yes\n");
    assert_eq!(s.evaluations(), kept + 2, "the dotenv file appeared");
    // Deleted by the command of a run that evaluated (a deletion leaves no time behind):
    // what that evaluation loaded from it is not kept.
    std::thread::sleep(SETTLE);
    s.run(&["--reload-envrc"], "rm .env").assert_ok();
    assert_eq!(s.evaluations(), kept + 3);
    let out = s.run(&["--trust-envrc"], "echo \"[$FROM_DOTENV]\"");
    assert_eq!(out.assert_ok().stdout, "[]\n", "{}", out.report());
    assert_eq!(s.evaluations(), kept + 4, "the dotenv file went");
}

#[test]
fn a_changed_caller_variable_evaluates_again() {
    let s = Setup::new();
    let kept = s.warm();
    let out = s.cmd(&[], "echo $CALLER").env("CALLER", "one").run();
    assert_eq!(out.assert_ok().stdout, "one\n");
    assert_eq!(s.evaluations(), kept + 1);
}

#[test]
fn a_denied_envrc_is_blocked_as_before() {
    let s = Setup::new();
    let kept = s.warm();
    s.env
        .cmd("direnv", &s.ws)
        .args(["deny", "."])
        .run()
        .assert_ok();
    let out = s.run(&[], "echo ran");
    out.assert_code(125);
    assert_eq!(out.stdout, "", "{}", out.report());
    assert!(out.stderr.contains("is blocked"), "{}", out.report());
    assert!(out.stderr.contains("`direnv exec"), "{}", out.report());
    assert_eq!(s.evaluations(), kept);
}

#[test]
fn the_opt_outs_evaluate_every_time() {
    let s = Setup::new();
    let kept = s.warm();
    s.run(&["--reload-envrc"], "true").assert_ok();
    s.run(&["--reload-envrc"], "true").assert_ok();
    assert_eq!(s.evaluations(), kept + 2);
    s.env.user_config("[direnv]\nreuse = false\n");
    s.run(&[], "true").assert_ok();
    s.run(&[], "true").assert_ok();
    assert_eq!(s.evaluations(), kept + 4);
    // What the last evaluation loaded is what a run that reuses starts from.
    s.env.user_config("");
    let out = s.run(&[], "echo $EVALS");
    assert_eq!(out.assert_ok().stdout, format!("{}\n", kept + 4));
    assert_eq!(s.evaluations(), kept + 4);
}

#[test]
fn a_damaged_kept_environment_is_ignored() {
    let s = Setup::new();
    let kept = s.warm();
    let mut bytes = fs::read(s.kept()).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 1;
    fs::write(s.kept(), &bytes).unwrap();
    let out = s.run(&[], "echo $AW_TEST_VAR");
    assert_eq!(out.assert_ok().stdout, "from-envrc\n");
    assert_eq!(s.evaluations(), kept + 1);
    fs::write(s.kept(), "garbage").unwrap();
    s.run(&[], "true").assert_ok();
    assert_eq!(s.evaluations(), kept + 2);
}

#[test]
fn a_failed_evaluation_is_not_kept() {
    let s = Setup::new();
    let flag = s.env.path().join("fail");
    let extra = format!("[ -e {} ] && exit 3\ntrue\n", flag.display());
    fs::write(s.ws.join(".envrc"), envrc(&s.evals, &extra)).unwrap();
    s.run(&["--trust-envrc"], "true").assert_ok();
    std::thread::sleep(SETTLE);
    let kept = s.warm();
    s.run(&[], "true").assert_ok();
    assert_eq!(s.evaluations(), kept, "reused");
    // Failing now: nothing starts, and the next run evaluates again (nothing kept stands).
    fs::write(&flag, "").unwrap();
    for n in 1..=2 {
        let out = s.run(&["--reload-envrc"], "echo ran");
        out.assert_code(125);
        assert_eq!(out.stdout, "");
        assert_eq!(s.evaluations(), kept + n);
    }
    assert!(!s.kept().exists(), "{}", s.env.listing());
    fs::remove_file(&flag).unwrap();
    s.run(&[], "true").assert_ok();
    assert_eq!(s.evaluations(), kept + 3);
}
