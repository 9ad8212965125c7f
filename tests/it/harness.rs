//! The test environment: a temp dir holding HOME, the XDG dirs (direnv's trust db among them)
//! and JJ_CONFIG, and runners that start the tool, jj, just and direnv inside it with a cleared
//! environment, so nothing from the developer's shell leaks in.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The binary under test.
pub const AW: &str = env!("CARGO_BIN_EXE_agent-workspace");

/// No single command of a test may take longer than this.
const TIMEOUT: Duration = Duration::from_secs(120);

/// The text an `.envrc` made by [`TestEnv::jj_repo`] exports.
pub const ENVRC: &str = "export AW_TEST_VAR=from-envrc\n";

/// A temp dir with its own HOME, XDG dirs and jj config.
pub struct TestEnv {
    tmp: tempfile::TempDir,
    /// The canonical path of `tmp`: the form the tool prints.
    root: PathBuf,
    vars: BTreeMap<String, OsString>,
    io_count: AtomicU32,
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
        }
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

    /// A command run in `dir` with the test environment.
    pub fn cmd(&self, program: impl AsRef<OsStr>, dir: &Path) -> Cmd<'_> {
        Cmd {
            env: self,
            program: program.as_ref().to_os_string(),
            args: vec![],
            dir: dir.to_path_buf(),
            vars: self.vars.clone(),
            stdin: vec![],
        }
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

    /// Replaces what differs between runs and machines with placeholders: the temp dir
    /// (`[TMP]`), timestamps (`[TIME]`), the namespace hash (`[HASH]`), jj change ids
    /// (`[CHANGE]`), commit ids (`[COMMIT]`) and pids (`[PID]`).
    pub fn normalize(&self, text: &str) -> String {
        let mut text = text.replace(&*self.root.to_string_lossy(), "[TMP]");
        let raw = self.tmp.path().to_string_lossy().into_owned();
        if raw != self.root.to_string_lossy() {
            text = text.replace(&raw, "[TMP]");
        }
        let text = replace_timestamps(&text);
        let text = replace_tokens(&text);
        let mut text = text;
        for prefix in ["pid ", "\"pid\": ", "\"pid_start\": "] {
            text = replace_number_after(&text, prefix, "[PID]");
        }
        replace_number_after(&text, "\"duration_ms\": ", "[MS]")
    }

    /// [`TestEnv::normalize`] applied to pretty-printed JSON.
    pub fn normalize_json(&self, value: &Value) -> String {
        self.normalize(&serde_json::to_string_pretty(value).unwrap())
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

    fn io_paths(&self) -> (PathBuf, PathBuf) {
        let n = self.io_count.fetch_add(1, Ordering::SeqCst);
        let dir = self.root.join(".io");
        (
            dir.join(format!("{n}.stdout")),
            dir.join(format!("{n}.stderr")),
        )
    }
}

/// The files under `dir`, three levels deep (not inside `.jj` or `.git`).
fn listing(dir: &Path) -> String {
    let mut out = format!("files under {}:\n", dir.display());
    list_dir(dir, 0, 3, &mut out);
    out
}

fn list_dir(dir: &Path, depth: usize, max: usize, out: &mut String) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        let kind = match entry.file_type() {
            Ok(t) if t.is_symlink() => "@",
            Ok(t) if t.is_dir() => "/",
            _ => "",
        };
        let _ = writeln!(
            out,
            "{}{}{kind}",
            "  ".repeat(depth + 1),
            name.to_string_lossy()
        );
        if kind == "/" && depth + 1 < max && name != ".jj" && name != ".git" {
            list_dir(&entry.path(), depth + 1, max, out);
        }
    }
}

/// The inherited PATH with the directory of the binary under test first.
fn path_with_tool_first(inherited: Option<OsString>) -> OsString {
    let mut paths = vec![Path::new(AW).parent().unwrap().to_path_buf()];
    if let Some(inherited) = inherited {
        paths.extend(std::env::split_paths(&inherited));
    }
    std::env::join_paths(paths).unwrap()
}

/// Finds `tool` on the inherited PATH.
pub fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(tool))
        .find(|p| p.is_file())
}

/// Whether the tests run as root, where file permissions do not stop writes.
pub fn running_as_root() -> bool {
    let out = Command::new("id").arg("-u").output().expect("run id -u");
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

/// A command about to run in a [`TestEnv`].
pub struct Cmd<'a> {
    env: &'a TestEnv,
    program: OsString,
    args: Vec<OsString>,
    dir: PathBuf,
    vars: BTreeMap<String, OsString>,
    stdin: Vec<u8>,
}

impl Cmd<'_> {
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_os_string());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    /// Sets (or replaces) one environment variable.
    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Self {
        self.vars.insert(key.into(), value.as_ref().to_os_string());
        self
    }

    pub fn env_remove(mut self, key: &str) -> Self {
        self.vars.remove(key);
        self
    }

    /// Text fed to the command's stdin (empty by default; stdin is never inherited).
    pub fn stdin(mut self, text: &str) -> Self {
        self.stdin = text.as_bytes().to_vec();
        self
    }

    fn cmdline(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(|a| {
                let a = a.to_string_lossy();
                if !a.is_empty()
                    && a.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+".contains(c))
                {
                    a.into_owned()
                } else {
                    format!("'{}'", a.replace('\'', r"'\''"))
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Starts the command in a process group of its own, its output going to files.
    pub fn spawn(self) -> Running {
        let (out_path, err_path) = self.env.io_paths();
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .current_dir(&self.dir)
            .env_clear()
            .envs(&self.vars)
            .stdin(Stdio::piped())
            .stdout(fs::File::create(&out_path).unwrap())
            .stderr(fs::File::create(&err_path).unwrap())
            .process_group(0);
        let cmdline = self.cmdline();
        let mut child = command.spawn().unwrap_or_else(|e| {
            panic!("could not start `{cmdline}` in {}: {e}", self.dir.display())
        });
        let mut stdin = child.stdin.take().unwrap();
        // Small inputs fit the pipe buffer; a command that does not read them gets EPIPE.
        let _ = stdin.write_all(&self.stdin);
        drop(stdin);
        Running {
            child,
            cmdline,
            dir: self.dir,
            out_path,
            err_path,
            started: Instant::now(),
            ws_root: self.env.ws_root(),
        }
    }

    /// Runs the command to completion (killing it after [`TIMEOUT`]).
    pub fn run(self) -> Outcome {
        self.spawn().wait()
    }
}

/// A command started with [`Cmd::spawn`].
pub struct Running {
    child: Child,
    cmdline: String,
    dir: PathBuf,
    out_path: PathBuf,
    err_path: PathBuf,
    started: Instant,
    ws_root: PathBuf,
}

impl Running {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` (a name such as TERM) to the command's process.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.pid().to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{signal} {} failed", self.pid());
    }

    /// Waits for the command to end; after [`TIMEOUT`], kills its process group and fails.
    pub fn wait(mut self) -> Outcome {
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for the command") {
                break status;
            }
            if self.started.elapsed() > TIMEOUT {
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{}", self.pid())])
                    .status();
                let _ = self.child.wait();
                panic!(
                    "`{}` in {} did not finish within {TIMEOUT:?}\nstdout:\n{}\nstderr:\n{}",
                    self.cmdline,
                    self.dir.display(),
                    fs::read_to_string(&self.out_path).unwrap_or_default(),
                    fs::read_to_string(&self.err_path).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        Outcome {
            cmdline: self.cmdline,
            dir: self.dir,
            status,
            stdout: fs::read_to_string(&self.out_path).unwrap_or_default(),
            stderr: fs::read_to_string(&self.err_path).unwrap_or_default(),
            ws_root: self.ws_root,
        }
    }
}

/// A finished command: what ran, where, and what it printed.
pub struct Outcome {
    pub cmdline: String,
    pub dir: PathBuf,
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    ws_root: PathBuf,
}

impl Outcome {
    /// The exit code, or `None` when the command was killed by a signal.
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Everything needed to understand a failure.
    pub fn report(&self) -> String {
        let how = match (self.status.code(), self.status.signal()) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            _ => self.status.to_string(),
        };
        format!(
            "command: {}\ncwd: {}\nstatus: {how}\n--- stdout ---\n{}\n--- stderr ---\n{}\n--- {}",
            self.cmdline,
            self.dir.display(),
            self.stdout,
            self.stderr,
            listing(&self.ws_root)
        )
    }

    /// Stdout parsed as JSON, after asserting the command succeeded.
    #[track_caller]
    pub fn json(&self) -> Value {
        self.assert_ok();
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON: {e}\n{}", self.report()))
    }

    #[track_caller]
    pub fn assert_ok(&self) -> &Self {
        assert!(self.status.success(), "expected success\n{}", self.report());
        self
    }

    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.status.code(),
            Some(code),
            "expected exit code {code}\n{}",
            self.report()
        );
        self
    }
}

/// Polls until `path` exists (a command's "I am running" marker), failing after a minute.
pub fn wait_for_file(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Replaces RFC 3339 timestamps (`2026-01-02T03:04:05Z`, optional fraction and offset).
fn replace_timestamps(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match timestamp_len(&b[i..]) {
            Some(n) => {
                out.extend_from_slice(b"[TIME]");
                i += n;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
}

fn timestamp_len(b: &[u8]) -> Option<usize> {
    const SHAPE: &[u8] = b"dddd-dd-ddTdd:dd:dd";
    if b.len() < SHAPE.len() {
        return None;
    }
    for (c, s) in b.iter().zip(SHAPE) {
        let ok = if *s == b'd' {
            c.is_ascii_digit()
        } else {
            c == s
        };
        if !ok {
            return None;
        }
    }
    let mut n = SHAPE.len();
    if b.get(n) == Some(&b'.') {
        n += 1;
        while b.get(n).is_some_and(u8::is_ascii_digit) {
            n += 1;
        }
    }
    match b.get(n) {
        Some(b'Z') => Some(n + 1),
        Some(b'+' | b'-') if b.len() >= n + 6 => Some(n + 6),
        _ => None,
    }
}

/// Replaces whole alphanumeric words: 40 hex digits (commit ids), 32 letters k-z (change
/// ids) and 10 hex digits after a `-` (the namespace hash).
fn replace_tokens(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_alphanumeric() {
            let start = i;
            while i < b.len() && !b[i].is_ascii_alphanumeric() {
                i += 1;
            }
            out.push_str(&text[start..i]);
            continue;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_alphanumeric() {
            i += 1;
        }
        let word = &text[start..i];
        let hex = word
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c));
        let after_dash = start > 0 && b[start - 1] == b'-';
        let replaced = match word.len() {
            40 if hex => "[COMMIT]",
            32 if word.bytes().all(|c| (b'k'..=b'z').contains(&c)) => "[CHANGE]",
            10 if hex && after_dash => "[HASH]",
            _ => word,
        };
        out.push_str(replaced);
    }
    out
}

/// Replaces the number right after each occurrence of `prefix`.
fn replace_number_after(text: &str, prefix: &str, placeholder: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        let (head, tail) = rest.split_at(at + prefix.len());
        out.push_str(head);
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            out.push_str(placeholder);
        }
        rest = &tail[digits..];
    }
    out.push_str(rest);
    out
}

#[test]
fn normalize_replaces_what_varies() {
    let env = TestEnv::new();
    let text = format!(
        "{}/x repo-0123abcdef 2026-11-22T13:16:19Z pid 4242 {} {} {}",
        env.path().display(),
        "a".repeat(40),
        "k".repeat(32),
        "\"pid\": 17,"
    );
    assert_eq!(
        env.normalize(&text),
        "[TMP]/x repo-[HASH] [TIME] pid [PID] [COMMIT] [CHANGE] \"pid\": [PID],"
    );
}
