//! jj invocations, one method per call, each parser beside its call.

use std::cell::OnceCell;
use std::fs;
use std::path::{Path, PathBuf};

use super::{Kept, Registered};
use crate::error::{CliError, Result};
use crate::process::{Call, ProcessError};
use crate::recovery;
use crate::repo::Repo;
use crate::tree;

/// The name jj gives the repository's main workspace.
pub const MAIN_WORKSPACE: &str = "default";

/// The oldest jj whose templates and workspace listing this tool relies on.
pub const MIN_VERSION: (u32, u32) = (0, 38);

const INSTALL_HINT: &str = "install jj 0.45.1 with `cargo install --locked jj-cli@0.45.1`";

/// Change id, commit id, and whether forgetting the workspace abandons its commit.
const KEEP_TEMPLATE: &str = r#"change_id ++ "\t" ++ commit_id ++ "\t" ++ if(empty && description == "", "abandon", "keep") ++ "\n""#;

/// What querying a workspace's working copy found.
enum Probe {
    Fresh(String),
    Stale,
    /// jj has no working-copy commit for it: the workspace was forgotten.
    Unknown,
}

/// A jj repository, addressed through its main workspace.
pub struct Jj {
    main: PathBuf,
    store: PathBuf,
    cache_dir: PathBuf,
    binary: OnceCell<PathBuf>,
}

impl Jj {
    /// `cache_dir` is where workspace lists may be kept between calls.
    pub fn new(repo: &Repo, cache_dir: PathBuf) -> Jj {
        Jj {
            main: repo.root.clone(),
            store: repo.store.clone(),
            cache_dir,
            binary: OnceCell::new(),
        }
    }

    /// The jj binary on PATH.
    fn binary(&self) -> Result<&Path> {
        if let Some(path) = self.binary.get() {
            return Ok(path);
        }
        let path = which::which("jj")
            .map_err(|_| CliError::failure("jj was not found on PATH").hint(INSTALL_HINT))?;
        Ok(self.binary.get_or_init(|| path))
    }

    /// Explains a failed call: a jj older than [`MIN_VERSION`] is named as the cause. The
    /// version is only asked when something failed, so working calls cost no extra process.
    fn explain(&self, err: ProcessError) -> CliError {
        let Ok(path) = self.binary() else {
            return err.into();
        };
        let out = Call::new(path)
            .arg("--version")
            .stdout()
            .unwrap_or_default();
        match parse_version(&out) {
            Some(v) if v >= MIN_VERSION => err.into(),
            _ => CliError::failure(format!(
                "{} is {}; agent-workspace needs jj {}.{} or newer",
                path.display(),
                if out.trim().is_empty() {
                    "of an unknown version"
                } else {
                    out.trim()
                },
                MIN_VERSION.0,
                MIN_VERSION.1
            ))
            .hint(INSTALL_HINT),
        }
    }

    /// A jj call on `repo` with the flags every scripted call needs.
    fn call(&self, repo: &Path) -> Result<Call> {
        Ok(Call::new(self.binary()?)
            .args(["--no-pager", "--color=never", "--quiet", "-R"])
            .arg(repo)
            .dir(&self.main)
            // Without a terminal jj asks `tput` for the size on every call; tell it instead.
            .env("COLUMNS", "200")
            .env("LINES", "50"))
    }

    /// A read-only query on the main workspace that never snapshots anything.
    fn query(&self) -> Result<Call> {
        Ok(self.call(&self.main)?.arg("--ignore-working-copy"))
    }

    /// Every registered workspace with the root jj recorded for it.
    pub fn list(&self) -> Result<Vec<Registered>> {
        // NUL-separated: a root path may hold any other byte, a newline included.
        let template = r#"name ++ "\0" ++ if(root, root.absolute(), "") ++ "\0""#;
        self.cached_list(template, "jj-workspaces.v2.cache")
    }

    /// Every registered workspace's name. Much cheaper than [`Jj::list`] with many
    /// workspaces: jj 0.45 re-reads its workspace index for each `root` it prints.
    pub fn names(&self) -> Result<Vec<Registered>> {
        self.cached_list(r#"name ++ "\0\0""#, "jj-workspace-names.v2.cache")
    }

    /// Runs `workspace list -T template`, keeping the answer in the cache file `name` under
    /// the ids of the operation heads it was read at: every change to the set of workspaces
    /// is a new operation, so while the heads are the same, so is the list.
    fn cached_list(&self, template: &str, name: &str) -> Result<Vec<Registered>> {
        let cache = self.cache_dir.join(name);
        // Read the key before asking jj, so an answer is never filed under a newer key.
        let key = self.op_heads_key();
        if let (Some(key), Ok(cached)) = (&key, fs::read_to_string(&cache)) {
            if let Some(body) = cached
                .strip_prefix(key.as_str())
                .and_then(|r| r.strip_prefix('\n'))
            {
                return Ok(parse_list(body));
            }
        }
        let out = self
            .query()?
            .args(["workspace", "list", "-T", template])
            .stdout()
            .map_err(|e| self.explain(e))?;
        if let Some(key) = key {
            store_atomically(&cache, &format!("{key}\n{out}"));
        }
        Ok(parse_list(&out))
    }

    /// The ids of the current operation heads, sorted and joined: names the repository's
    /// state exactly (used to key caches and to remember freshness checks).
    pub fn op_heads_key(&self) -> Option<String> {
        let heads = fs::read_dir(self.store.join("op_heads").join("heads")).ok()?;
        let mut ids: Vec<String> = heads
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        ids.sort();
        (!ids.is_empty()).then(|| ids.join(","))
    }

    pub fn resolve_base(&self, rev: Option<&str>) -> Result<Vec<String>> {
        // The default base is every parent of the main workspace's working copy.
        let revset = rev.unwrap_or("@-");
        let mut call = self
            .query()?
            .args(["log", "--no-graph", "-T", r#"commit_id ++ "\n""#]);
        if rev.is_some() {
            call = call.args(["--limit", "2"]);
        }
        let out = call
            .arg(format!("--revisions={revset}"))
            .stdout()
            .map_err(|e| {
                CliError::failure(format!("cannot resolve revision {revset:?}"))
                    .cause(e.stderr().to_string())
                    .hint("pass --base-change a change id, commit id or bookmark that exists")
            })?;
        let commits: Vec<String> = out.lines().map(str::to_string).collect();
        match commits.len() {
            0 => Err(
                CliError::failure(format!("revision {revset:?} names no commit"))
                    .hint("pass --base-change a revision that names one commit"),
            ),
            n if n > 1 && rev.is_some() => Err(CliError::failure(format!(
                "revision {revset:?} names more than one commit"
            ))
            .hint("pass --base-change a single revision")),
            _ => Ok(commits),
        }
    }

    pub fn workspace_add(&self, id: &str, path: &Path, base: &[String]) -> Result<()> {
        let mut call = self
            .call(&self.main)?
            .args(["workspace", "add", "--name", id]);
        for commit in base {
            call = call.arg(format!("--revision={commit}"));
        }
        call.arg(path).stdout().map_err(|e| {
            CliError::failure(format!(
                "could not create jj workspace {id:?} at {}",
                path.display()
            ))
            .cause(e.to_string())
            .cause(e.stderr().to_string())
            .hint(crate::error::creation_hint(&e))
        })?;
        Ok(())
    }

    /// Starts `workspace forget`, which touches only the repository, so the directory can be
    /// removed meanwhile.
    pub fn start_forget(&self, id: &str) -> Result<crate::process::Started> {
        Ok(self
            .call(&self.main)?
            .args(["workspace", "forget", id])
            .start()?)
    }

    pub fn workspace_forget(&self, id: &str) -> Result<()> {
        self.call(&self.main)?
            .args(["workspace", "forget", id])
            .stdout()?;
        Ok(())
    }

    pub fn keep_edits(&self, id: &str, path: Option<&Path>) -> Result<Kept> {
        if let Some(ws) = path {
            self.resume_recovery(ws, &recovery_dir(ws))?;
        }
        let out = match path {
            // Querying from the workspace snapshots its latest edits first.
            Some(ws) => match self.probe(ws, KEEP_TEMPLATE)? {
                Probe::Fresh(out) => out,
                Probe::Unknown => return Ok(Kept::Unregistered),
                Probe::Stale => {
                    self.carry_across_update(ws, &recovery_dir(ws))?;
                    self.call(ws)?
                        .args(["log", "--no-graph", "-r", "@", "-T", KEEP_TEMPLATE])
                        .stdout()?
                }
            },
            None => self
                .query()?
                .args(["log", "--no-graph", "-T", KEEP_TEMPLATE])
                .arg(format!("--revisions=present({})", workspace_revset(id)))
                .stdout()?,
        };
        Ok(parse_kept(&out))
    }

    /// The files the working-copy commit of workspace `id` holds, relative to its root; call
    /// it after [`Jj::keep_edits`] snapshotted the workspace.
    pub fn tracked(&self, id: &str) -> Result<Vec<PathBuf>> {
        let out = self
            .query()?
            .args(["file", "list", "-T", "path ++ \"\\0\""])
            .arg(format!("--revision={}", workspace_revset(id)))
            .stdout()?;
        Ok(super::split_nul(&out))
    }

    /// The commits of workspace `id` below its working-copy commit that hold work (non-empty
    /// or described), newest first: those in `::<id>@` but not in `::base` (when no base was
    /// recorded, not in `::(trunk() | default@)`).
    pub fn work_commits(&self, id: &str, base: &[String]) -> Result<Vec<super::Commit>> {
        // Only commit ids reach the revset: the base comes from a file the workspace can write.
        let ids: Vec<String> = base
            .iter()
            .filter(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_hexdigit()))
            .map(|c| format!("present({c})"))
            .collect();
        let base = match ids.is_empty() {
            true => "trunk() | present(default@)".to_string(),
            false => ids.join(" | "),
        };
        let ws = workspace_revset(id);
        let revset = format!("(::{ws} ~ ::({base}) ~ {ws}) ~ (empty() & description(exact:\"\"))");
        let out = self
            .query()?
            .args(["log", "--no-graph", "-T", super::COMMIT_TEMPLATE_JJ])
            .arg(format!("--revisions={revset}"))
            .stdout()?;
        Ok(super::parse_commits(&out))
    }

    /// Queries the working-copy commit of `ws` with `template`; like every jj command run
    /// there, this snapshots the working copy first.
    fn probe(&self, ws: &Path, template: &str) -> Result<Probe> {
        let out = self
            .call(ws)?
            .args(["log", "--no-graph", "-r", "@", "-T", template])
            .stdout();
        match out {
            Ok(out) => Ok(Probe::Fresh(out)),
            Err(e) if e.stderr().contains("working copy is stale") => Ok(Probe::Stale),
            Err(e) if e.stderr().contains("doesn't have a working-copy commit") => {
                Ok(Probe::Unknown)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Runs `workspace update-stale` when the working copy is stale, keeping its edits.
    pub fn update_stale(&self, ws: &Path, scratch: &Path) -> Result<bool> {
        match self.probe(ws, "''")? {
            Probe::Fresh(_) => Ok(false),
            Probe::Stale => self.carry_across_update(ws, scratch).map(|()| true),
            Probe::Unknown => Err(CliError::failure(format!(
                "jj no longer knows the workspace at {}",
                ws.display()
            ))
            .hint(format!(
                "its files may hold unrecorded edits: inspect them, then `agent-workspace clean --force {}`",
                ws.file_name().unwrap_or_default().to_string_lossy()
            ))),
        }
    }

    /// Updates a stale working copy. The user's files are copied to `scratch` first and put
    /// back afterwards, so edits jj never recorded survive the update; if putting them back
    /// fails, the error names where they are kept.
    fn carry_across_update(&self, ws: &Path, scratch: &Path) -> Result<()> {
        let kept = |e: std::io::Error| {
            CliError::io("carry the edits of the stale working copy", ws, &e).hint(format!(
                "its files are kept in {}",
                recovery::files(scratch).display()
            ))
        };
        if !recovery::is_complete(scratch) {
            // A partial copy from an interrupted repair: the workspace was not touched yet.
            recovery::discard(scratch).map_err(kept)?;
            tree::copy(ws, &recovery::files(scratch)).map_err(kept)?;
            recovery::mark_complete(scratch).map_err(kept)?;
        }
        self.finish_recovery(ws, scratch)
    }

    /// Puts back a whole copy at `scratch`: `update-stale` (a no-op when already done; it
    /// waits for a still-running one through jj's working-copy lock), the copy mirrored over
    /// the workspace, a snapshot, and only then the copy removed. Safe to repeat.
    fn finish_recovery(&self, ws: &Path, scratch: &Path) -> Result<()> {
        let named = |e: CliError| {
            e.hint(format!(
                "the workspace's files are kept in {}; the next run or clean of it resumes",
                recovery::files(scratch).display()
            ))
        };
        let io = |e: std::io::Error| {
            named(CliError::io(
                "carry the edits of the stale working copy",
                ws,
                &e,
            ))
        };
        self.call(ws)?
            .args(["workspace", "update-stale"])
            .stdout()
            .map_err(|e| named(e.into()))?;
        tree::mirror(&recovery::files(scratch), ws).map_err(io)?;
        // Record the carried edits now, on top of the updated working-copy commit.
        self.call(ws)?
            .args(["log", "--no-graph", "-r", "@", "-T", "''"])
            .stdout()
            .map_err(|e| named(e.into()))?;
        recovery::discard(scratch).map_err(io)
    }

    /// Finishes a repair a killed run left at `scratch` (or drops its partial copy).
    /// Returns whether files were put back.
    pub fn resume_recovery(&self, ws: &Path, scratch: &Path) -> Result<bool> {
        if recovery::is_complete(scratch) {
            return self.finish_recovery(ws, scratch).map(|()| true);
        }
        if recovery::exists(scratch) {
            recovery::discard(scratch).map_err(|e| {
                CliError::io("remove the partial copy", scratch, &e)
                    .hint("remove it by hand; the workspace itself was not touched")
            })?;
        }
        Ok(false)
    }

    /// Cheap check: has any operation happened since the working copy was last updated, or
    /// since `checked` (the [`Jj::op_heads_key`] of the last check)?
    pub fn may_be_stale(&self, ws: &Path, checked: Option<&str>) -> bool {
        let checkout = ws.join(".jj").join("working_copy").join("checkout");
        let heads = self.store.join("op_heads").join("heads");
        let modified = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
        match (modified(&checkout), modified(&heads)) {
            (Some(wc), Some(op)) if op <= wc => false,
            _ => checked.is_none() || checked != self.op_heads_key().as_deref(),
        }
    }

    pub fn file_at(&self, commit: &str, file: &str) -> Result<Option<Vec<u8>>> {
        let out = self
            .query()?
            .args(["file", "show", "-r", commit])
            .arg(format!("root-file:{file:?}"))
            .stdout();
        match out {
            Ok(text) => Ok(Some(text.into_bytes())),
            Err(e @ ProcessError::Failed { .. }) if e.stderr().contains("No such path") => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    pub fn exclude_file(&self) -> Option<PathBuf> {
        let store = self.store.join("store");
        let target = fs::read_to_string(store.join("git_target")).ok()?;
        Some(store.join(target.trim()).join("info").join("exclude"))
    }
}

/// Writes a cache file atomically, never through a symlink; a cache that cannot be written
/// is simply not kept (the namespace's directories were checked when the command started).
fn store_atomically(path: &Path, text: &str) {
    let Some(dir) = path.parent() else { return };
    if crate::fsutil::create_dir_nofollow(dir).is_ok() {
        let _ = crate::fsutil::write_atomic(path, text.as_bytes());
    }
}

/// The revset naming workspace `id`'s working-copy commit; ids never need escaping inside a
/// string literal because they hold no quotes or backslashes.
/// Where the files of the workspace at `ws` are carried across `update-stale`: beside it, in
/// the namespace directory, named after its directory (a dot-name, so never a workspace).
pub fn recovery_dir(ws: &Path) -> PathBuf {
    let id = ws.file_name().unwrap_or_default().to_string_lossy();
    ws.with_file_name(format!(".recovering-{id}"))
}

pub fn workspace_revset(id: &str) -> String {
    format!("{id:?}@")
}

fn parse_version(text: &str) -> Option<(u32, u32)> {
    let version = text.split_whitespace().nth(1)?;
    let mut parts = version.split(['.', '-', '+']);
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// Parses `name NUL root NUL` pairs (an empty root when jj recorded none).
fn parse_list(text: &str) -> Vec<Registered> {
    let fields: Vec<&str> = text.split('\0').collect();
    fields
        .chunks_exact(2)
        .filter(|pair| !pair[0].is_empty())
        .map(|pair| Registered {
            name: pair[0].to_string(),
            path: (!pair[1].is_empty()).then(|| PathBuf::from(pair[1])),
        })
        .collect()
}

fn parse_kept(text: &str) -> Kept {
    let mut fields = text.lines().next().unwrap_or("").split('\t');
    match (fields.next(), fields.next(), fields.next()) {
        (Some(change), Some(commit), Some("keep")) => Kept::Change {
            change_id: change.to_string(),
            commit_id: commit.to_string(),
        },
        _ => Kept::Nothing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version("jj 0.45.1\n"), Some((0, 45)));
        assert_eq!(parse_version("jj 0.38.0-abcdef"), Some((0, 38)));
        assert_eq!(parse_version("nonsense"), None);
        assert!(parse_version("jj 0.37.2").unwrap() < MIN_VERSION);
    }

    #[test]
    fn workspace_list() {
        let parsed = parse_list("default\0/repo\0w-1\0/cache/n\ns\tx/w-1\0old\0\0");
        assert_eq!(parsed.len(), 3);
        assert_eq!(
            parsed[1].path.as_deref(),
            Some(Path::new("/cache/n\ns\tx/w-1"))
        );
        assert_eq!(
            parsed[2],
            Registered {
                name: "old".into(),
                path: None
            }
        );
    }

    #[test]
    fn kept_edits() {
        assert_eq!(parse_kept("abc\tdef\tabandon\n"), Kept::Nothing);
        assert_eq!(
            parse_kept("abc\tdef\tkeep\n"),
            Kept::Change {
                change_id: "abc".into(),
                commit_id: "def".into()
            }
        );
        assert_eq!(parse_kept(""), Kept::Nothing);
    }

    #[test]
    fn revsets_quote_ids() {
        assert_eq!(workspace_revset("a.b-c"), r#""a.b-c"@"#);
    }
}
