//! Where things live: the workspace root, the repository's identity and namespace, workspace
//! paths, and which ids are acceptable.

use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::Result;
use crate::repo::Repo;
use crate::store::fsutil;
use crate::vars;

/// The pool's directory inside a namespace (ready files and take journals).
pub(crate) const POOL_DIR: &str = ".pool";

/// The name prefix of a prepared workspace's directory.
pub(crate) const POOL_PREFIX: &str = ".pool-";

/// The longest workspace id accepted.
pub(crate) const MAX_ID_LEN: usize = 64;

/// A workspace id, checked where it enters: on the command line (clap's value parser,
/// [`WorkspaceId::from_arg`]) or read from a directory name, a journal, a record or a
/// backend's list ([`WorkspaceId::parse`]); a prepared workspace's `.pool-<token>` name is one
/// too ([`WorkspaceId::prepared`]). Either way it is one safe path component. The lifecycle
/// (`session`, `workspace`), the layout and the VCS layer take only this type, so an id read
/// from a file the command can write reaches no path, lease, branch or backend call
/// unchecked. Names the backend lists stay strings until a caller takes one for a workspace
/// of its own (jj's `default` is none); `tests/it/walls.rs` holds that no `id: &str` is
/// left in `vcs/`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorkspaceId(String);

impl WorkspaceId {
    /// `id` when it is acceptable (1-64 characters of `[A-Za-z0-9._-]`, starting with a
    /// letter or digit), else the usage error saying why.
    pub(crate) fn parse(id: &str) -> std::result::Result<WorkspaceId, InvalidId> {
        validate_id(id)?;
        Ok(WorkspaceId(id.to_string()))
    }

    /// The name of the prepared workspace `.pool-<token>` (`token`: 1-40 lowercase letters
    /// and digits), which goes through creation like an id and is renamed to one when taken.
    pub(crate) fn prepared(token: &str) -> Option<WorkspaceId> {
        let valid = !token.is_empty()
            && token.len() <= 40
            && token
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase());
        valid.then(|| WorkspaceId(format!("{POOL_PREFIX}{token}")))
    }

    /// clap's value parser for an id argument: its error carries the one wording, which
    /// the command line's error form takes over as it is (`cli::parse`).
    pub(crate) fn from_arg(id: &str) -> std::result::Result<WorkspaceId, InvalidId> {
        WorkspaceId::parse(id)
    }
}

impl WorkspaceId {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    /// A name read from a file: an id, or a prepared workspace's `.pool-<token>` name;
    /// `None` for anything else.
    pub(crate) fn read(name: &str) -> Option<WorkspaceId> {
        match name.strip_prefix(POOL_PREFIX) {
            Some(token) => WorkspaceId::prepared(token),
            None => WorkspaceId::parse(name).ok(),
        }
    }
}

/// Written as its string.
impl serde::Serialize for WorkspaceId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// Read through [`WorkspaceId::read`]: a file holding anything else does not parse.
impl<'de> serde::Deserialize<'de> for WorkspaceId {
    fn deserialize<D: serde::Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<WorkspaceId, D::Error> {
        let name = String::deserialize(d)?;
        WorkspaceId::read(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("{name:?} is not a workspace id")))
    }
}

impl std::ops::Deref for WorkspaceId {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

/// Shown as the id's string (`"w1"`), as messages quote an id.
impl std::fmt::Debug for WorkspaceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.0.as_str(), f)
    }
}

impl std::borrow::Borrow<str> for WorkspaceId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for WorkspaceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for WorkspaceId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<String> for WorkspaceId {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

/// A workspace id refused (by clap's value parser, or where one is read): what it was, and
/// why it is none.
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid workspace id {id:?}: {why}")]
pub(crate) struct InvalidId {
    pub id: String,
    pub why: String,
}

/// Where the workspaces go, refused or not made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LayoutError {
    #[error("cannot find a workspace root: HOME is not set")]
    NoHome,
    #[error("could not read {}", path.display())]
    NoCurrentDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("workspace root {} is inside the repository {}", root.display(), repo.display())]
    RootInRepo { root: PathBuf, repo: PathBuf },
    #[error("workspace root {} is not a directory", root.display())]
    RootNotDir { root: PathBuf },
    /// A directory of the root or namespace could not be created.
    #[error("could not create the workspace directory {}", path.display())]
    Unwritable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Fs(#[from] fsutil::FsError),
}

/// Checks an id: 1-64 characters of `[A-Za-z0-9._-]`, starting with a letter or digit.
fn validate_id(id: &str) -> std::result::Result<(), InvalidId> {
    let bad = |why: &str| InvalidId {
        id: id.to_string(),
        why: why.to_string(),
    };
    if id.is_empty() {
        return Err(bad("it is empty"));
    }
    if id.len() > MAX_ID_LEN {
        return Err(bad("it is longer than 64 characters"));
    }
    if !id.as_bytes()[0].is_ascii_alphanumeric() {
        return Err(bad("it must start with a letter or digit"));
    }
    if let Some(c) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "._-".contains(*c)))
    {
        return Err(bad(&format!("{c:?} is not allowed")));
    }
    Ok(())
}

/// `<basename>-<first 10 hex of sha256(root)>`, the same as the shell script it replaces.
pub(crate) fn namespace(repo_root: &Path) -> String {
    let digest = Sha256::digest(repo_root.as_os_str().as_encoded_bytes());
    let base = repo_root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    format!(
        "{}-{}",
        base.unwrap_or_else(|| "root".into()),
        &format!("{digest:x}")[..10]
    )
}

/// The workspace root: `--root`, `$AI_WORKSPACES_ROOT`, `$XDG_CACHE_HOME/ai-workspaces`
/// (when absolute) or `~/.cache/ai-workspaces`.
pub(crate) fn workspace_root(flag: Option<&Path>) -> Result<PathBuf> {
    let chosen = flag
        .map(Path::to_path_buf)
        .or_else(|| vars::non_empty(vars::ROOT).map(PathBuf::from))
        .or_else(|| {
            vars::non_empty(vars::XDG_CACHE_HOME)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|p| p.join("ai-workspaces"))
        })
        .or_else(|| std::env::home_dir().map(|h| h.join(".cache").join("ai-workspaces")));
    let root = chosen.ok_or(LayoutError::NoHome)?;
    let root = match root.is_absolute() {
        true => root,
        false => std::env::current_dir()
            .map_err(|source| LayoutError::NoCurrentDir {
                path: PathBuf::from("."),
                source,
            })?
            .join(root),
    };
    Ok(resolve(&root))
}

/// The canonical form of `path` even where it does not exist yet: its longest existing
/// ancestor canonicalized (symlinks resolved, as jj and git record paths), the rest appended
/// with `.` and `..` applied.
pub(crate) fn resolve(path: &Path) -> PathBuf {
    let parts: Vec<_> = path.components().collect();
    for split in (1..=parts.len()).rev() {
        let head: PathBuf = parts[..split].iter().collect();
        let Ok(mut resolved) = fs::canonicalize(&head) else {
            continue;
        };
        for part in &parts[split..] {
            match part {
                std::path::Component::ParentDir => {
                    resolved.pop();
                }
                std::path::Component::Normal(name) => resolved.push(name),
                _ => {}
            }
        }
        return resolved;
    }
    path.to_path_buf()
}

/// Paths of one repository's namespace under the workspace root.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub root: PathBuf,
    pub namespace: String,
    pub dir: PathBuf,
}

impl Layout {
    pub(crate) fn new(root: PathBuf, repo: &Repo) -> Self {
        let namespace = namespace(&repo.root);
        let dir = root.join(&namespace);
        Layout {
            root,
            namespace,
            dir,
        }
    }

    pub(crate) fn workspace(&self, id: &WorkspaceId) -> PathBuf {
        self.dir.join(id.as_str())
    }

    /// Lock files live beside the workspaces under a name no id can take.
    pub(crate) fn locks(&self) -> PathBuf {
        self.dir.join(".locks")
    }

    /// Answers worth keeping between calls (the jj workspace lists), under a name no id can
    /// take; anything in it may be deleted at any time.
    pub(crate) fn cache(&self) -> PathBuf {
        self.dir.join(".cache")
    }

    /// The environment direnv last loaded for workspace `id` (see `kept_env`), in the cache.
    pub(crate) fn kept_env(&self, id: &str) -> PathBuf {
        self.cache().join("direnv-env").join(format!("{id}.v1"))
    }

    /// The stores of sandboxed jj workspaces (a dot-name no id can take): `<id>/` holds one
    /// workspace's own store, `.bases/<commit>/` the objects of one base revision.
    pub(crate) fn private_stores(&self) -> PathBuf {
        self.dir.join(".private")
    }

    /// Workspace `id`'s own store, which only its sandboxed runs see (mounted as its `.jj`).
    pub(crate) fn private_store(&self, id: &WorkspaceId) -> PathBuf {
        self.private_stores().join(id.as_str())
    }

    /// The lock a run holds for its whole life: one run per workspace.
    pub(crate) fn lease(&self, id: &WorkspaceId) -> PathBuf {
        self.locks().join(format!("{id}.lock"))
    }

    /// The temporary git index `run --parent` builds a child's starting commit in (a dot-name:
    /// never a lease); removed right after.
    pub(crate) fn fork_index(&self, child: &WorkspaceId) -> PathBuf {
        self.locks().join(format!(".fork-{child}.index"))
    }

    /// The lock serialising workspace creation and removal in this repository (its name
    /// starts with a dot, so no workspace's lease can take it).
    pub(crate) fn repo_lock(&self) -> PathBuf {
        self.locks().join(".repo.lock")
    }

    /// The lock one land of this repository holds from its plan to its record, so lands
    /// meet their target one at a time (a dot-name: never a lease).
    pub(crate) fn land_lock(&self) -> PathBuf {
        self.locks().join(".land.lock")
    }

    /// The pool's bookkeeping: a prepared workspace's ready file and a take's journal.
    pub(crate) fn pool_dir(&self) -> PathBuf {
        self.dir.join(POOL_DIR)
    }

    /// A prepared workspace: a dot-name (never a workspace id) at a workspace's depth, since
    /// a jj workspace finds its repository by a relative path.
    pub(crate) fn pool_entry(&self, token: &str) -> PathBuf {
        self.dir.join(format!("{POOL_PREFIX}{token}"))
    }

    /// The logs of the runs `mcp` starts, one directory per workspace id (a dot-name: never
    /// a workspace).
    pub(crate) fn logs(&self) -> PathBuf {
        self.dir.join(".logs")
    }

    /// The run logs of workspace `id` (the MCP server's, one file a run).
    pub(crate) fn run_logs(&self, id: &str) -> PathBuf {
        self.logs().join(id)
    }

    /// The lock one filler of the pool holds while it prepares workspaces.
    pub(crate) fn pool_lock(&self) -> PathBuf {
        self.locks().join(".pool.lock")
    }

    /// Checks that the namespace directory and its `.locks/` and `.cache/` are real
    /// directories where they exist: a symlink planted there would redirect every file this
    /// tool writes or deletes.
    pub(crate) fn verify(&self) -> Result<()> {
        if fsutil::is_real_dir(&self.dir)? {
            fsutil::is_real_dir(&self.locks())?;
            fsutil::is_real_dir(&self.cache())?;
        }
        Ok(())
    }

    /// Creates the namespace directory with its `.locks/` and `.cache/`, refusing roots that
    /// are files, unwritable, or inside the repository itself, and symlinks below the root.
    pub(crate) fn ensure(&self, repo: &Repo) -> Result<()> {
        if self.dir.starts_with(&repo.root) {
            return Err(LayoutError::RootInRepo {
                root: self.root.clone(),
                repo: repo.root.clone(),
            }
            .into());
        }
        if self.root.exists() && !self.root.is_dir() {
            return Err(LayoutError::RootNotDir {
                root: self.root.clone(),
            }
            .into());
        }
        let unwritable = |source: std::io::Error, path: &Path| LayoutError::Unwritable {
            path: path.to_path_buf(),
            source,
        };
        fs::create_dir_all(&self.root).map_err(|e| unwritable(e, &self.root))?;
        let mut made_cache = false;
        for dir in [self.dir.clone(), self.locks(), self.cache()] {
            made_cache = fsutil::create_dir_nofollow(&dir).map_err(|e| match e {
                fsutil::FsError::Io { source, path, .. } => unwritable(source, &path),
                other => LayoutError::Fs(other),
            })?;
        }
        if made_cache {
            // Caches used to live in `.locks/`; they are only ever re-computed, so drop them.
            for old in ["jj-workspaces.cache", "jj-workspace-names.cache"] {
                let _ = fsutil::remove_file(&self.locks().join(old));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_shows_and_quotes_as_its_string() {
        let id = WorkspaceId::parse("w-1").unwrap();
        assert_eq!(format!("{id} {id:?}"), "w-1 \"w-1\"");
        let prepared = WorkspaceId::prepared("abc123").unwrap();
        assert_eq!(format!("{prepared:?}"), "\".pool-abc123\"");
        assert!(WorkspaceId::prepared("../x").is_none());
        assert!(WorkspaceId::prepared("").is_none());
    }

    #[test]
    fn ids() {
        for ok in ["a", "0", "w-1", "A.b_c-9", &"x".repeat(64)] {
            assert!(validate_id(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            ".",
            "..",
            "a/b",
            "-x",
            "_x",
            ".x",
            "a b",
            "é",
            "a\n",
            &"x".repeat(65),
        ] {
            assert!(validate_id(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn resolve_follows_symlinks_and_dot_dot_of_missing_parts() {
        let tmp = tempfile::tempdir().unwrap();
        let real = fs::canonicalize(tmp.path()).unwrap();
        fs::create_dir(real.join("real")).unwrap();
        std::os::unix::fs::symlink(real.join("real"), real.join("link")).unwrap();
        assert_eq!(
            resolve(&real.join("link/a/../b/./c")),
            real.join("real/b/c")
        );
        assert_eq!(resolve(&real.join("link/../x")), real.join("x"));
    }

    #[test]
    fn namespace_matches_sha256_of_path_bytes() {
        // printf '%s' /home/me/repo | sha256sum
        assert_eq!(namespace(Path::new("/home/me/repo")), "repo-74b392f5c9");
    }
}
