//! A sandboxed workspace's own store as each backend keeps it (`jj/own_store.rs`,
//! `git/own_store.rs`), behind one set of questions the lifecycle's one flow asks
//! (`workspace/own_store/`): where the store is and how a sandbox mounts it, what the user's
//! side is, making it, exporting its work inside the sandbox, taking that back, and what it
//! holds outside what came back.
//!
//! jj keeps `<dir>/wc` (a repository whose `.jj` is mounted over the workspace's); git keeps
//! `<dir>/git` (a git directory named by the `.git` file `<dir>/gitfile`, mounted over the
//! worktree's).

use std::path::{Path, PathBuf};

use super::git::{Checkout, Git};
use super::jj::{Jj, WorkingCommit};
use super::Vcs;
use crate::exec::sandbox::{Confinement, PrivateStore};
use crate::store::layout::WorkspaceId;
use crate::store::nested_aside::{KeptAside, MovedAside};
use crate::vcs::error::Result;

/// The user's side a new store is made from, read before the store is made.
pub(crate) enum Source<'a> {
    /// jj: the workspace's working-copy commit (just snapshotted), the operation heads read
    /// before it, and the base's shared objects (none for a commit on the root).
    Jj {
        jj: &'a Jj,
        at: WorkingCommit,
        user_op: String,
        base_objects: Option<PathBuf>,
    },
    /// git: the worktree's `HEAD` and the key of it and its index.
    Git {
        git: &'a Git,
        at: Checkout,
        user_op: String,
    },
}

/// What a store was made from: the user's working-copy commit (git: its `HEAD`, its parent
/// the base), the user's side's key then, the shared objects it borrows.
pub(crate) struct Made {
    pub at: WorkingCommit,
    pub user_op: String,
    pub base_objects: Option<PathBuf>,
}

impl Source<'_> {
    /// Makes the store in `dir` (which holds nothing of one) from this source; the shared
    /// objects of a base are made under `bases` once.
    pub(crate) fn make(self, ws: &Path, dir: &Path, bases: &Path) -> Result<Made> {
        match self {
            Source::Jj {
                jj,
                at,
                user_op,
                base_objects,
            } => {
                jj.make_private(&dir.join("wc"), ws, &at, base_objects.as_deref())?;
                Ok(Made {
                    at,
                    user_op,
                    base_objects,
                })
            }
            Source::Git { git, at, user_op } => {
                let base = git.base_of(&at.commit);
                let objects = git.base_objects(&base, bases)?;
                git.make_private(&dir.join("git"), &dir.join("gitfile"), &at, &base, &objects)?;
                Ok(Made {
                    at: WorkingCommit {
                        commit: at.commit,
                        parents: vec![base],
                    },
                    user_op,
                    base_objects: Some(objects),
                })
            }
        }
    }
}

/// Whether the user's side is still what a store was made from or brought back to.
pub(crate) enum UserSide {
    /// Nothing happened there.
    Same,
    /// Something happened, but the working-copy commit is the same: the new key.
    SameCommit(String),
    /// The workspace moved (a checkpoint, a land): the store is made again.
    Moved,
}

/// What a store holds outside what came back.
pub(crate) enum Beyond {
    Nothing,
    /// jj: heads outside `@` and its ancestors (short commit ids), and their bookmarks.
    Heads {
        commits: Vec<String>,
        bookmarks: Vec<String>,
    },
    /// git: the refs naming work outside `HEAD`, the index and the base.
    Refs(Vec<String>),
    /// jj's heads could not be read (why).
    HeadsUnread(String),
    /// jj printed a line that is no head.
    Printed(String),
    /// git's refs could not be read as data (or there were too many).
    RefsUnread,
    /// git's refs could not be looked up in the user's repository.
    RefsUnchecked(super::VcsError),
}

/// How the lifecycle names a backend's store in what it says.
pub(crate) struct Words {
    /// "own store", "own git directory".
    pub store: &'static str,
    /// Where the agent's files are: "workspace", "worktree".
    pub files_in: &'static str,
}

impl Vcs {
    /// The store kept in the own-store directory `dir` (jj: `wc`, git: `git`).
    pub(crate) fn own_store(&self, dir: &Path) -> PathBuf {
        match self {
            Vcs::Jj(_) => dir.join("wc"),
            Vcs::Git(_) => dir.join("git"),
        }
    }

    /// How the store is called.
    pub(crate) fn own_store_words(&self) -> Words {
        match self {
            Vcs::Jj(_) => Words {
                store: "own store",
                files_in: "workspace",
            },
            Vcs::Git(_) => Words {
                store: "own git directory",
                files_in: "worktree",
            },
        }
    }

    /// The store's own state (jj: its operation heads; git: its refs and index), read as
    /// data: whether the agent did anything since it was last read.
    pub(crate) fn own_store_state(&self, dir: &Path) -> Option<String> {
        match self {
            Vcs::Jj(_) => super::jj::Jj::private_op_heads(&self.own_store(dir)),
            Vcs::Git(_) => super::git::private_key(&self.own_store(dir)),
        }
    }

    /// The store's objects directory (where a kept store's base pack is linked in).
    pub(crate) fn own_store_objects(&self, dir: &Path) -> PathBuf {
        match self {
            Vcs::Jj(_) => self.own_store(dir).join(".jj/repo/store/git/objects"),
            Vcs::Git(_) => self.own_store(dir).join("objects"),
        }
    }

    /// How a sandbox mounts the store at `dir`: the store over the workspace's `.jj` (git:
    /// the git directory at its own path, `gitfile` over the worktree's `.git`), the base's
    /// objects read-only, and `out` (an export's bundle) writable.
    pub(crate) fn own_store_mounts(
        &self,
        dir: &Path,
        base_objects: Option<&Path>,
        out: Option<&Path>,
    ) -> PrivateStore {
        let mut store = match self {
            Vcs::Jj(_) => {
                PrivateStore::default().over(self.own_store(dir).join(".jj"), ".jj", true)
            }
            Vcs::Git(_) => PrivateStore::default().at(self.own_store(dir), true).over(
                dir.join("gitfile"),
                ".git",
                false,
            ),
        };
        if let Some(objects) = base_objects {
            store = store.at(objects.to_path_buf(), false);
        }
        match out {
            Some(out) => store.at(out.to_path_buf(), true),
            None => store,
        }
    }

    /// The most an export's bundle may weigh, if anything bounds it.
    pub(crate) fn own_store_bundle_limit(&self) -> Option<u64> {
        match self {
            Vcs::Jj(_) => None,
            Vcs::Git(_) => Some(super::git::BUNDLE_LIMIT),
        }
    }

    /// Refuses a workspace whose state a store would not carry (git: a merge, rebase, ...
    /// in progress, or conflicts; `user_op` the key a store was last made or brought back
    /// at, which tells an index already checked).
    pub(crate) fn own_store_ready(&self, ws: &Path, user_op: Option<&str>) -> Result<()> {
        match self {
            Vcs::Jj(_) => Ok(()),
            Vcs::Git(git) => git.own_store_ready(ws, user_op),
        }
    }

    /// Whether the user's side of workspace `id` at `ws` is still `at` as of key `user_op`.
    pub(crate) fn own_store_user_side(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        at: &WorkingCommit,
        user_op: &str,
    ) -> Result<UserSide> {
        match self {
            Vcs::Jj(jj) => jj.own_store_user_side(id, ws, at, user_op),
            Vcs::Git(git) => git.own_store_user_side(ws, user_op),
        }
    }

    /// The user's side a new store of workspace `id` at `ws` is made from (jj snapshots the
    /// workspace first; the base's shared objects are made under `bases` once).
    pub(crate) fn own_store_source(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        bases: &Path,
    ) -> Result<Source<'_>> {
        match self {
            Vcs::Jj(jj) => jj.own_store_source(id, ws, bases),
            Vcs::Git(git) => git.own_store_source(ws),
        }
    }

    /// Exports the store's work inside `jail` (the workspace's sandbox with the store and
    /// `out` mounted) as a bundle in `out`, everything above `at` (what the store was made
    /// from or brought back to); `None` when there is nothing to bring (git: `HEAD` and the
    /// index as they were).
    pub(crate) fn own_store_export(
        &self,
        jail: &Confinement,
        out: &Path,
        at: &WorkingCommit,
    ) -> Result<Option<PathBuf>> {
        match self {
            Vcs::Jj(jj) => jj.export_own(jail, out, at).map(Some),
            Vcs::Git(git) => git.export_own(jail, out, &at.commit),
        }
    }

    /// Takes an export's `bundle` back into the user's store as workspace `id`'s work (none:
    /// nothing changed since `at`); the working-copy commit the store is then synced to, and
    /// the user's side's key.
    pub(crate) fn own_store_take_back(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        at: &WorkingCommit,
        bundle: Option<&Path>,
    ) -> Result<(WorkingCommit, String)> {
        match self {
            Vcs::Jj(jj) => {
                if let Some(bundle) = bundle {
                    jj.take_back(id, ws, bundle)?;
                }
                let user_op = jj.op_heads_key().unwrap_or_default();
                Ok((jj.working_commit(id, ws, false)?, user_op))
            }
            Vcs::Git(git) => {
                let checkout = git.checkout(ws)?;
                let head = match bundle {
                    Some(bundle) => git.take_back(id, ws, &checkout, &at.commit, bundle)?,
                    None => at.commit.clone(),
                };
                let at = WorkingCommit {
                    commit: head,
                    parents: at.parents.clone(),
                };
                Ok((at, git.checkout_key(&checkout.git_dir).unwrap_or_default()))
            }
        }
    }

    /// Before anything is brought back into the workspace at `ws`: what the agent left
    /// there that the user's jj or git would follow (jj: a `.git` jj did not make), moved
    /// into `aside`; where each now is.
    pub(crate) fn own_store_before_bring_back(
        &self,
        ws: &Path,
        aside: &mut KeptAside,
    ) -> Vec<MovedAside> {
        match self {
            Vcs::Jj(jj) => jj.move_aside_foreign_git(ws, aside).into_iter().collect(),
            Vcs::Git(_) => vec![],
        }
    }

    /// After the work of the store at `dir` came back into the workspace at `ws`: what the
    /// agent left there that the user's git would follow (git: a submodule's `.git` leading
    /// out of the repository's git directory), moved into `aside`; where each now is.
    pub(crate) fn own_store_after_bring_back(
        &self,
        ws: &Path,
        dir: &Path,
        aside: &mut KeptAside,
    ) -> Result<Vec<MovedAside>> {
        match self {
            Vcs::Jj(_) => Ok(vec![]),
            Vcs::Git(git) => {
                let git_dir = git.worktree_git_dir(ws)?;
                Ok(git.move_aside_gitlink_dirs(&git_dir, ws, &dir.join("gitlinks"), aside))
            }
        }
    }

    /// What the store at `dir` holds outside what came back (`at` and its parents): git's
    /// refs read as data and looked up in the user's repository; jj's heads asked of jj in
    /// the sandbox `confine` makes around a scratch directory (never outside one).
    pub(crate) fn own_store_beyond(
        &self,
        dir: &Path,
        at: &WorkingCommit,
        confine: &dyn Fn(&Path) -> std::result::Result<Confinement, String>,
    ) -> Beyond {
        match self {
            Vcs::Jj(jj) => jj.heads_beyond(dir, confine),
            Vcs::Git(git) => {
                let Some(refs) = super::git::private_refs(&self.own_store(dir)) else {
                    return Beyond::RefsUnread;
                };
                let mut tips = vec![at.commit.clone()];
                tips.extend(at.parents.iter().cloned());
                match git.outside(&refs, &tips, &dir.join(".refs")) {
                    Ok(names) if names.is_empty() => Beyond::Nothing,
                    Ok(names) => Beyond::Refs(names),
                    Err(err) => Beyond::RefsUnchecked(err),
                }
            }
        }
    }
}

/// Whether `text` (printed inside a sandbox) is a whole object id.
pub(super) fn object_id(text: &str) -> Option<String> {
    let id = text.trim();
    (matches!(id.len(), 40 | 64) && id.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| id.to_string())
}
