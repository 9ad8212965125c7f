//! jj invocations, one method per call, each parser beside its call.

mod carry;
mod checkpoint;
pub(crate) mod classify;
mod diff;
mod held;
mod keep;
mod land;
mod land_disk;
mod land_preview;
mod land_result;
mod own_store;
mod pool;
mod recorded;
mod stale;
mod untracked;
mod worktree;

pub(crate) use own_store::WorkingCommit;
pub(crate) use stale::recovery_dir;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use super::Registered;
use crate::exec::process::{Call, ProcessError};
use crate::repo::Repo;
use crate::store::layout::WorkspaceId;
use crate::vcs::error::{Result, VcsError};
use classify::Failure;

/// The name jj gives the repository's main workspace.
pub(crate) const MAIN_WORKSPACE: &str = "default";

/// The oldest jj whose templates and workspace listing this tool relies on.
pub(crate) const MIN_VERSION: (u32, u32) = (0, 38);

/// The first jj release whose `workspace add` makes colocated git worktrees in a colocated
/// repository (and takes `--colocate`/`--no-colocate`).
pub(crate) const COLOCATING_VERSION: (u32, u32) = (0, 46);

/// The jj release the test suite runs against first, and the one installs recommend.
pub(crate) const TESTED_VERSION: (u32, u32, u32) = (0, 45, 1);

/// The newest jj release the suite also runs against (its second pass): newer ones are
/// untested.
pub(crate) const NEWEST_TESTED_VERSION: (u32, u32, u32) = (0, 46, 0);

/// What the jj at `path` says of its version (`jj --version`), empty when it says nothing.
pub(crate) fn version_text(path: &Path) -> String {
    Call::new(path)
        .arg("--version")
        .stdout()
        .unwrap_or_default()
}

/// A jj repository, addressed through its main workspace.
pub(crate) struct Jj {
    main: PathBuf,
    store: PathBuf,
    cache_dir: PathBuf,
    binary: OnceLock<PathBuf>,
    /// The binary's `(major, minor)` version, asked once and only where jj releases differ
    /// ([`Jj::version`]); `None` inside when it could not be read.
    version: OnceLock<Option<(u32, u32)>>,
    /// Whether new workspaces are made colocated git worktrees (`jj.colocate`).
    colocate: crate::config::Colocate,
    /// The working copies read from jj's view, with the operation head they were read at.
    view: Mutex<Option<(String, Arc<WorkingCopies>)>>,
    /// While set ([`Jj::pin_view`]), the view read last is used without looking at the
    /// operation heads again: one moment for a whole table.
    pinned: std::sync::atomic::AtomicBool,
    /// While pinned: every workspace's kept changes, read from one file
    /// ([`diff::Bundle`]) and written back when the pin ends.
    bundle: Mutex<Option<diff::Bundle>>,
}

/// Every workspace's name and working-copy commit (hex), in jj's order (by name).
type WorkingCopies = Vec<(String, String)>;

impl Jj {
    /// `cache_dir` is where workspace lists may be kept between calls.
    pub(crate) fn new(repo: &Repo, cache_dir: PathBuf) -> Jj {
        Jj {
            main: repo.root.clone(),
            store: repo.store.clone(),
            cache_dir,
            binary: OnceLock::new(),
            version: OnceLock::new(),
            colocate: crate::config::Colocate::default(),
            view: Mutex::new(None),
            pinned: std::sync::atomic::AtomicBool::new(false),
            bundle: Mutex::new(None),
        }
    }

    /// The jj binary on PATH.
    fn binary(&self) -> Result<&Path> {
        if let Some(path) = self.binary.get() {
            return Ok(path);
        }
        let path = crate::exec::process::find("jj")?;
        Ok(self.binary.get_or_init(|| path))
    }

    /// The binary's `(major, minor)` version: the one place that decides where jj releases
    /// behave differently (see `worktree.rs`). Asked of jj once, on the paths
    /// that create or remove workspaces only, never on a warm run.
    fn version(&self) -> Option<(u32, u32)> {
        *self
            .version
            .get_or_init(|| parse_version(&version_text(self.binary().ok()?)))
    }

    /// Explains a failed call: a jj older than [`MIN_VERSION`] is named as the cause. The
    /// version is only asked when something failed, so working calls cost no extra process.
    fn explain(&self, err: ProcessError) -> VcsError {
        let Ok(path) = self.binary() else {
            return err.into();
        };
        let out = version_text(path);
        match parse_version(&out) {
            Some(v) if v >= MIN_VERSION => err.into(),
            _ => VcsError::TooOld {
                path: path.to_path_buf(),
                version: if out.trim().is_empty() {
                    "of an unknown version".into()
                } else {
                    out.trim().to_string()
                },
                min: MIN_VERSION,
            },
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

    /// Every registered workspace with the root jj recorded for it: read from jj's files
    /// (the view's names, the workspace store's roots) when the repository has one operation
    /// head, else asked of jj.
    pub(crate) fn list(&self) -> Result<Vec<Registered>> {
        // Without jj nothing else would work: said here as when jj is asked.
        self.binary()?;
        if let Some(list) = self.list_from_files() {
            return Ok(list);
        }
        // NUL-separated: a root path may hold any other byte, a newline included.
        let template = r#"name ++ "\0" ++ if(root, root.absolute(), "") ++ "\0""#;
        self.cached_list(template, "jj-workspaces.v2.cache")
    }

    /// Every registered workspace's name. Much cheaper than [`Jj::list`] with many
    /// workspaces: jj 0.45 re-reads its workspace index for each `root` it prints. Read from
    /// jj's view when the repository has one operation head (no process), else asked of jj.
    pub(crate) fn names(&self) -> Result<Vec<Registered>> {
        self.binary()?;
        if let Some(view) = self.working_copies() {
            return Ok(view
                .iter()
                .map(|(name, _)| Registered {
                    name: name.clone(),
                    path: None,
                })
                .collect());
        }
        self.cached_list(r#"name ++ "\0\0""#, "jj-workspace-names.v2.cache")
    }

    /// [`Jj::list`] as jj answers it, from its files: every workspace of the view with the
    /// root the workspace store records for it, resolved as jj does (canonical; none when
    /// that fails, as for a deleted directory).
    fn list_from_files(&self) -> Option<Vec<Registered>> {
        let view = self.working_copies()?;
        let roots = recorded::recorded_roots(&self.store)?;
        Some(
            view.iter()
                .map(|(name, _)| Registered {
                    name: name.clone(),
                    path: roots
                        .iter()
                        .find(|(n, _)| n == name)
                        .filter(|(_, root)| !root.is_empty())
                        .and_then(|(_, root)| fs::canonicalize(self.store.join(root)).ok()),
                })
                .collect(),
        )
    }

    /// Every workspace's working-copy commit as the view of the repository's operation head
    /// records it, read from jj's files once per head; `None` when jj's files do not tell
    /// (several heads, another format), and the caller asks jj.
    fn working_copies(&self) -> Option<Arc<WorkingCopies>> {
        // A poisoned lock only means another reader panicked: the memo is still whole.
        let mut memo = self.view.lock().unwrap_or_else(|e| e.into_inner());
        if self.pinned.load(std::sync::atomic::Ordering::Relaxed) {
            if let Some((_, view)) = memo.as_ref() {
                return Some(view.clone());
            }
        }
        let heads = self.op_heads_key()?;
        if let Some((head, view)) = memo.as_ref().filter(|(head, _)| *head == heads) {
            debug_assert_eq!(*head, heads);
            return Some(view.clone());
        }
        let (head, mut view) = recorded::working_copies(&self.store)?;
        // By name, as jj lists them, so a workspace is found by a binary search (the view's
        // own order is not always that).
        view.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let view = Arc::new(view);
        *memo = Some((head, view.clone()));
        Some(view)
    }

    /// jj's working copies (sorted by name) at the operation heads `heads`, when those are
    /// still the heads and jj's files tell.
    pub(crate) fn working_copies_at(&self, heads: &str) -> Option<Arc<WorkingCopies>> {
        let view = self.working_copies()?;
        let memo = self.view.lock().unwrap_or_else(|e| e.into_inner());
        // The view read is the one of `heads` only if the memo is filed under them.
        let (at, _) = memo.as_ref()?;
        (at == heads).then_some(view)
    }

    /// Reads jj's view now and keeps using it, without looking at the operation heads again,
    /// until the guard is dropped: for reading many workspaces as of one moment.
    /// With `bundle`, every workspace's kept changes are read from one file and written
    /// back when the pin ends (for a table of many workspaces).
    pub(crate) fn pin_view(&self, bundle: bool) -> ViewPin<'_> {
        self.pinned
            .store(false, std::sync::atomic::Ordering::Relaxed);
        if self.working_copies().is_none() {
            // Not readable now: no earlier view may stand in for it while pinned.
            *self.view.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
        *self.bundle.lock().unwrap_or_else(|e| e.into_inner()) =
            bundle.then(|| diff::Bundle::read(&self.cache_dir));
        self.pinned
            .store(true, std::sync::atomic::Ordering::Relaxed);
        ViewPin(self)
    }

    /// The working-copy commit (hex) of workspace `id` in jj's view, when jj's files tell.
    fn working_copy_commit(&self, id: &WorkspaceId) -> Option<String> {
        commit_in(&self.working_copies()?[..], id).map(str::to_string)
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
    pub(crate) fn op_heads_key(&self) -> Option<String> {
        let heads = fs::read_dir(self.store.join("op_heads").join("heads")).ok()?;
        let mut ids: Vec<String> = heads
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        ids.sort();
        (!ids.is_empty()).then(|| ids.join(","))
    }

    pub(crate) fn resolve_base(&self, rev: Option<&str>) -> Result<Vec<String>> {
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
            // The first jj call of a new workspace: a jj too old to run it is named as such.
            .map_err(|source| match self.explain(source) {
                VcsError::Process(source) => VcsError::UnknownRevision {
                    rev: revset.to_string(),
                    jj: true,
                    source: Box::new(source),
                },
                too_old => too_old,
            })?;
        let commits: Vec<String> = out.lines().map(str::to_string).collect();
        match commits.len() {
            0 => Err(VcsError::NotOneCommit {
                rev: revset.to_string(),
                many: false,
            }),
            n if n > 1 && rev.is_some() => Err(VcsError::NotOneCommit {
                rev: revset.to_string(),
                many: true,
            }),
            _ => Ok(commits),
        }
    }

    pub(crate) fn workspace_add(
        &self,
        id: &WorkspaceId,
        path: &Path,
        base: &[String],
    ) -> Result<()> {
        let mut call = self
            .call(&self.main)?
            .args(["workspace", "add", "--name", id]);
        if let Some(flag) = self.colocation_flag()? {
            call = call.arg(flag);
        }
        for commit in base {
            call = call.arg(format!("--revision={commit}"));
        }
        call.arg(path)
            .stdout()
            .map_err(|source| VcsError::CreateFailed {
                what: "jj workspace",
                id: id.clone(),
                path: path.to_path_buf(),
                source: Box::new(source),
            })?;
        Ok(())
    }

    /// Starts `workspace forget`, which touches only the repository, so the directory can be
    /// removed meanwhile. It snapshots no working copy: the main one's files are not what a
    /// forget is about (the forgotten workspace's were recorded before), and a snapshot of
    /// them would record the user's edits there as a side effect and cost a walk of every
    /// file. The main working-copy commit stays as it is, so it is not stale afterwards.
    pub(crate) fn start_forget(&self, id: &WorkspaceId) -> Result<crate::exec::process::Started> {
        Ok(self.query()?.args(["workspace", "forget", id]).start()?)
    }

    pub(crate) fn workspace_forget(&self, id: &WorkspaceId) -> Result<()> {
        self.call(&self.main)?
            .args(["workspace", "forget", id])
            .stdout()?;
        Ok(())
    }

    pub(crate) fn file_at(&self, commit: &str, file: &str) -> Result<Option<Vec<u8>>> {
        let out = self
            .query()?
            .args(["file", "show", "-r", commit])
            .arg(format!("root-file:{file:?}"))
            .stdout();
        match out {
            Ok(text) => Ok(Some(text.into_bytes())),
            Err(e @ ProcessError::Failed { .. })
                if classify::failure(e.stderr()) == Failure::NoSuchPath =>
            {
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }

    pub(crate) fn exclude_file(&self) -> Option<PathBuf> {
        let store = self.store.join("store");
        let target =
            crate::store::fsutil::read_untrusted_string(&store.join("git_target"), 4096).ok()?;
        Some(store.join(target.trim()).join("info").join("exclude"))
    }
}

/// The working-copy commit of workspace `name` in `view` (sorted by name when read): any
/// name jj's view holds, `default` among them.
fn commit_in<'v>(view: &'v [(String, String)], name: &str) -> Option<&'v str> {
    let at = view.binary_search_by(|(n, _)| n.as_str().cmp(name)).ok();
    match at {
        Some(i) => Some(&view[i].1),
        None => view
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c.as_str()),
    }
}

/// Keeps [`Jj::pin_view`]'s view in use until dropped.
pub(crate) struct ViewPin<'a>(&'a Jj);

impl Drop for ViewPin<'_> {
    fn drop(&mut self) {
        self.0
            .pinned
            .store(false, std::sync::atomic::Ordering::Relaxed);
        let bundle = self
            .0
            .bundle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(bundle) = bundle {
            bundle.write(&self.0.cache_dir);
        }
    }
}

/// Writes a cache file atomically, never through a symlink; a cache that cannot be written
/// is simply not kept (the namespace's directories were checked when the command started).
fn store_atomically(path: &Path, text: &str) -> bool {
    let Some(dir) = path.parent() else {
        return false;
    };
    crate::store::fsutil::create_dir_nofollow(dir).is_ok()
        && crate::store::fsutil::write_atomic(path, text.as_bytes()).is_ok()
}

/// The revset of workspace `name`'s working-copy commit. A name, not only a
/// [`WorkspaceId`]: jj's main workspace (`default`), a land's target as its record names it
/// and a stale working copy's directory are named here too.
pub(crate) fn workspace_revset(name: &str) -> String {
    format!("{name:?}@")
}

/// A revset of the given change ids (jj change ids only: lowercase letters).
pub(super) fn by_change(changes: &[&str]) -> String {
    let ids: Vec<String> = changes
        .iter()
        .filter(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_lowercase()))
        .map(|c| format!("change_id({c})"))
        .collect();
    match ids.is_empty() {
        true => "none()".into(),
        false => ids.join(" | "),
    }
}

/// The major and minor version in `jj --version`'s output.
pub(crate) fn parse_version(text: &str) -> Option<(u32, u32)> {
    let version = text.split_whitespace().nth(1)?;
    let mut parts = version.split(['.', '-', '+']);
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// A workspace name as jj's template prints it: quoted like a string literal when it is not a
/// plain symbol (a name starting with a dot, such as a prepared workspace's).
fn unquote(name: &str) -> String {
    match name.starts_with('"') && name.ends_with('"') && name.len() >= 2 {
        true => serde_json::from_str(name).unwrap_or_else(|_| name.to_string()),
        false => name.to_string(),
    }
}

/// Parses `name NUL root NUL` pairs (an empty root when jj recorded none).
fn parse_list(text: &str) -> Vec<Registered> {
    let fields: Vec<&str> = text.split('\0').collect();
    fields
        .chunks_exact(2)
        .filter(|pair| !pair[0].is_empty())
        .map(|pair| Registered {
            name: unquote(pair[0]),
            path: (!pair[1].is_empty()).then(|| PathBuf::from(pair[1])),
        })
        .collect()
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
    fn revsets_quote_ids() {
        assert_eq!(workspace_revset("a.b-c"), r#""a.b-c"@"#);
    }
}
