//! The test environment: a temp dir holding HOME, the XDG dirs (direnv's trust db among them)
//! and JJ_CONFIG, with the paths the tool uses inside it and the repositories tests start from.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use serde_json::Value;

use super::command::{Cmd, Outcome};
use super::report::listing;
use super::system::which;

/// The binary under test.
pub const AW: &str = env!("CARGO_BIN_EXE_agent-workspace");

/// The text an `.envrc` made by [`TestEnv::jj_repo`] exports.
pub const ENVRC: &str = "export AW_TEST_VAR=from-envrc\n";

/// A temp dir with its own HOME, XDG dirs and jj config.
pub struct TestEnv {
    pub(super) tmp: tempfile::TempDir,
    /// The canonical path of `tmp`: the form the tool prints.
    pub(super) root: PathBuf,
    pub(super) vars: BTreeMap<String, OsString>,
    pub(super) io_count: AtomicU32,
    /// How many commands the test has set up: each one's seed and clock (see [`seed`]).
    command_number: AtomicU32,
    /// Set by [`TestEnv::use_real_time`]: commands get no fixed clock.
    real_time: AtomicBool,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        let tmp = tempfile::Builder::new()
            .prefix("aw-it-")
            .tempdir()
            .expect("create a temp dir");
        let root = fs::canonicalize(tmp.path()).expect("canonicalize the temp dir");
        let dirs = [
            ("HOME", "home"),
            ("XDG_CONFIG_HOME", "xdg/config"),
            ("XDG_DATA_HOME", "xdg/data"),
            ("XDG_CACHE_HOME", "xdg/cache"),
            ("XDG_STATE_HOME", "xdg/state"),
        ];
        let mut vars = BTreeMap::new();
        for (key, rel) in dirs {
            let dir = root.join(rel);
            fs::create_dir_all(&dir).expect("create an XDG dir");
            vars.insert(key.to_string(), dir.into_os_string());
        }
        let jj_config = root.join("jj-config.toml");
        fs::write(
            &jj_config,
            "[user]\nname = \"Test User\"\nemail = \"test.user@example.com\"\n",
        )
        .expect("write the jj config");
        vars.insert("JJ_CONFIG".into(), jj_config.into_os_string());
        vars.insert("LANG".into(), "C.UTF-8".into());
        vars.insert(
            "PATH".into(),
            path_with_tool_first(std::env::var_os("PATH")),
        );
        fs::create_dir_all(root.join(".io")).expect("create the output dir");
        TestEnv {
            tmp,
            root,
            vars,
            io_count: AtomicU32::new(0),
            command_number: AtomicU32::new(0),
            real_time: AtomicBool::new(false),
        }
    }

    /// The environment every command of the test starts with (and nothing else).
    pub fn vars(&self) -> &BTreeMap<String, OsString> {
        &self.vars
    }

    /// The canonical temp dir.
    pub fn path(&self) -> &Path {
        &self.root
    }

    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    pub fn xdg_cache(&self) -> PathBuf {
        self.root.join("xdg/cache")
    }

    /// The default workspace root: `$XDG_CACHE_HOME/ai-workspaces`.
    pub fn ws_root(&self) -> PathBuf {
        self.xdg_cache().join("ai-workspaces")
    }

    /// `<basename>-<first 10 hex of sha256(canonical repo root)>`, computed independently of
    /// the tool.
    pub fn namespace(&self, repo: &Path) -> String {
        let canonical = fs::canonicalize(repo).expect("canonicalize the repo");
        let base = canonical.file_name().unwrap().to_string_lossy();
        let digest = crate::sha256::hex(canonical.as_os_str().as_encoded_bytes());
        format!("{base}-{}", &digest[..10])
    }

    pub fn namespace_dir(&self, repo: &Path) -> PathBuf {
        self.ws_root().join(self.namespace(repo))
    }

    /// Where workspace `id` of `repo` lives under the default root.
    pub fn ws_path(&self, repo: &Path, id: &str) -> PathBuf {
        self.namespace_dir(repo).join(id)
    }

    /// A command run in `dir` with the test environment, seeded as [`seed`] says.
    pub fn cmd(&self, program: impl AsRef<OsStr>, dir: &Path) -> Cmd<'_> {
        let program = program.as_ref().to_os_string();
        let mut vars = self.vars.clone();
        let n = self.command_number.fetch_add(1, Ordering::SeqCst) + 1;
        seed(
            &mut vars,
            &program,
            n,
            self.real_time.load(Ordering::SeqCst),
        );
        Cmd {
            env: self,
            program,
            args: vec![],
            dir: dir.to_path_buf(),
            vars,
            stdin: vec![],
        }
    }

    /// Gives every later command of this test the real clock instead of the fixed one, for a
    /// test whose story needs time to pass between commands (its comment says why). Ids stay
    /// seeded.
    pub fn use_real_time(&self) {
        self.real_time.store(true, Ordering::SeqCst);
    }

    /// agent-workspace in `dir`.
    pub fn aw_cmd(&self, dir: &Path) -> Cmd<'_> {
        self.cmd(AW, dir)
    }

    /// Runs agent-workspace in `dir` with `args`.
    pub fn aw<I, S>(&self, dir: &Path, args: I) -> Outcome
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.aw_cmd(dir).args(args).run()
    }

    /// Runs jj in `dir` with `args`.
    pub fn jj<I, S>(&self, dir: &Path, args: I) -> Outcome
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.cmd("jj", dir)
            .args(["--no-pager", "--color=never"])
            .args(args)
            .run()
    }

    /// Runs jj, asserts it succeeded and returns its stdout.
    pub fn jj_ok<I, S>(&self, dir: &Path, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.jj(dir, args).assert_ok().stdout.clone()
    }

    /// A colocated jj repo at `<tmp>/<name>` with `a.txt`, `sub/b.txt` and an `.envrc`, all
    /// in a commit "initial"; the working copy is an empty commit on top. Returns its
    /// canonical path.
    pub fn jj_repo(&self, name: &str) -> PathBuf {
        self.jj(&self.root, ["git", "init", name]).assert_ok();
        let repo = self.root.join(name);
        fs::write(repo.join("a.txt"), "hello\n").unwrap();
        fs::create_dir_all(repo.join("sub")).unwrap();
        fs::write(repo.join("sub/b.txt"), "b\n").unwrap();
        fs::write(repo.join(".envrc"), ENVRC).unwrap();
        self.jj(&repo, ["commit", "-m", "initial"]).assert_ok();
        fs::canonicalize(repo).unwrap()
    }

    /// [`TestEnv::jj_repo`] `repo` with the project's `justfile` and `agents.just` committed
    /// (its `agents::` recipes).
    pub fn recipes_repo(&self) -> PathBuf {
        let repo = self.jj_repo("repo");
        for name in ["justfile", "agents.just"] {
            let project = Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
            fs::copy(project, repo.join(name)).unwrap();
        }
        self.jj_ok(&repo, ["commit", "-m", "add the justfiles"]);
        repo
    }

    /// `just agents::<recipe> ARGS...` in `repo`, calling the binary under test.
    pub fn recipe(&self, repo: &Path, recipe: &str, args: &[&str]) -> Outcome {
        self.cmd("just", repo)
            .env("AGENT_WORKSPACE_BIN", AW)
            .arg(format!("agents::{recipe}"))
            .args(args)
            .run()
    }

    /// The commit id `rev` names in `repo`.
    pub fn commit_id(&self, repo: &Path, rev: &str) -> String {
        self.jj_ok(repo, ["log", "--no-graph", "-r", rev, "-T", "commit_id"])
    }

    /// The change id `rev` names in `repo`.
    pub fn change_id(&self, repo: &Path, rev: &str) -> String {
        self.jj_ok(repo, ["log", "--no-graph", "-r", rev, "-T", "change_id"])
    }

    /// The names of the workspaces jj knows in `repo`.
    pub fn workspace_names(&self, repo: &Path) -> Vec<String> {
        let out = self.jj_ok(repo, ["workspace", "list", "-T", r#"name ++ "\n""#]);
        out.lines().map(str::to_string).collect()
    }

    /// A directory holding symlinks to `tools` (found on the inherited PATH) and nothing else;
    /// returns a PATH of the tool's directory followed by it.
    pub fn path_with_only(&self, tools: &[&str]) -> OsString {
        let n = self.io_count.fetch_add(1, Ordering::SeqCst);
        let dir = self.root.join(format!("bin-{n}"));
        fs::create_dir_all(&dir).unwrap();
        for tool in tools {
            let found = which(tool).unwrap_or_else(|| panic!("{tool} is not on PATH"));
            std::os::unix::fs::symlink(found, dir.join(tool)).unwrap();
        }
        let aw_dir = Path::new(AW).parent().unwrap();
        std::env::join_paths([aw_dir, &dir]).unwrap()
    }

    /// A PATH with `dir` in front of the test environment's PATH.
    pub fn path_with_first(&self, dir: &Path) -> OsString {
        let mut paths = vec![dir.to_path_buf()];
        paths.extend(std::env::split_paths(&self.vars["PATH"]));
        std::env::join_paths(paths).unwrap()
    }

    /// Writes the user's configuration file (`$XDG_CONFIG_HOME/agent-workspace/config.toml`).
    pub fn user_config(&self, text: &str) {
        let dir = self.path().join("xdg/config/agent-workspace");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("config.toml"), text).unwrap();
    }

    /// The workspace record at `<ws>/.agent-workflow.json`.
    pub fn metadata(&self, ws: &Path) -> Value {
        let file = ws.join(".agent-workflow.json");
        let text = fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("read {}: {e}\n{}", file.display(), self.listing()));
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("parse {}: {e}\n{text}", file.display()))
    }

    /// The workspace root's files, for failure reports.
    pub fn listing(&self) -> String {
        listing(&self.ws_root())
    }

    pub(super) fn io_paths(&self) -> (PathBuf, PathBuf) {
        let n = self.io_count.fetch_add(1, Ordering::SeqCst);
        let dir = self.root.join(".io");
        (
            dir.join(format!("{n}.stdout")),
            dir.join(format!("{n}.stderr")),
        )
    }
}

/// The fixed clock's start: command `n` of a test runs `n` seconds after it.
const EPOCH: (&str, u32) = ("2001-02-03T", 4 * 3600 + 5 * 60 + 6);

/// The fixed clock's offset from UTC.
const OFFSET: &str = "+07:00";

/// Seeds command `n` of a test, as jj's own test environment does, so the ids and times of
/// what the test makes with jj and git are the same on every run:
///
/// - every command gets `GIT_AUTHOR_DATE` and `GIT_COMMITTER_DATE`, `n` seconds after a fixed
///   date, so the commits git makes (the test's and the tool's) have fixed ids. The tool reads
///   no git commit's date.
/// - jj itself also gets `JJ_RANDOMNESS_SEED=n` and `JJ_TIMESTAMP`/`JJ_OP_TIMESTAMP` at that
///   time. Commands that start jj themselves (the tool, just, a shell) do not: every jj they
///   start would inherit one seed, and two jj processes with one seed make the same change
///   id, so a tool command running `jj commit` then `jj duplicate` (a checkpoint) would make
///   two commits with one change id where it makes two changes. And the tool compares the
///   times jj writes with the clock (a run's start against a workspace's last snapshot), so
///   a fixed jj clock would change what it reports.
///
/// With `real_time` (see [`TestEnv::use_real_time`]) no clock is fixed; ids stay seeded.
fn seed(vars: &mut BTreeMap<String, OsString>, program: &OsStr, n: u32, real_time: bool) {
    let is_jj = Path::new(program).file_name() == Some(OsStr::new("jj"));
    if is_jj {
        vars.insert("JJ_RANDOMNESS_SEED".into(), n.to_string().into());
    }
    if real_time {
        return;
    }
    let time = seeded_time(n);
    let mut keys = vec!["GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"];
    if is_jj {
        keys.extend(["JJ_TIMESTAMP", "JJ_OP_TIMESTAMP"]);
    }
    for key in keys {
        vars.insert(key.into(), time.clone().into());
    }
}

/// The fixed clock's time for command `n`, in RFC 3339 (which jj and git both read).
fn seeded_time(n: u32) -> String {
    let (date, start) = EPOCH;
    let secs = start + n;
    assert!(
        secs < 24 * 3600,
        "a test ran more commands than the fixed clock has seconds"
    );
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    format!("{date}{h:02}:{m:02}:{s:02}{OFFSET}")
}

/// The inherited PATH with the directory of the binary under test first.
fn path_with_tool_first(inherited: Option<OsString>) -> OsString {
    let mut paths = vec![Path::new(AW).parent().unwrap().to_path_buf()];
    if let Some(inherited) = inherited {
        paths.extend(std::env::split_paths(&inherited));
    }
    std::env::join_paths(paths).unwrap()
}

#[test]
fn seeded_commands_make_the_same_ids_in_every_test() {
    let ids = || {
        let env = TestEnv::new();
        let jj = env.jj_repo("repo");
        let git = crate::backends::git_repo(&env, "plain");
        let head = crate::backends::git_ok(&env, &git, &["rev-parse", "HEAD"]);
        (
            env.change_id(&jj, "@-"),
            env.commit_id(&jj, "@-"),
            head.trim().to_string(),
        )
    };
    let first = ids();
    assert_eq!(ids(), first);
    insta::assert_debug_snapshot!(first, @r#"
    (
        "qpvuntsmwlqtpsluzzsnyyzlmlwvmlnu",
        "cb41f3aa799f7808dc02d2a722d958a845e035ba",
        "1d2047a01244e18aa7dd8a4a3ca9253421aaec04",
    )
    "#);
}

#[test]
fn the_fixed_clock_counts_one_second_a_command() {
    assert_eq!(seeded_time(1), "2001-02-03T04:05:07+07:00");
    assert_eq!(seeded_time(60), "2001-02-03T04:06:06+07:00");
}
