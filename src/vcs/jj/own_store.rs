//! A sandboxed workspace's own jj store, and bringing its work back as data.
//!
//! The store is made here, outside any sandbox, before the agent ever touched it: a
//! non-colocated jj repository whose git store holds only what the workspace's working-copy
//! commit needs (its base's objects through an alternate shared read-only by every store of
//! that base, its own commits in a pack of its own), with that commit checked out as `@`
//! and the workspace's file states copied in, so no file is written or hashed again. After
//! that, jj and git run on it only inside the sandbox. Its work comes back as a git bundle
//! made there (`export_own`: jj and git each a process of their own in the sandbox),
//! fetched into the user's store with the user's configuration.

use std::fs;
use std::path::{Path, PathBuf};

use super::Jj;
use crate::exec::process::Call;
use crate::exec::sandbox::Confinement;
use crate::store::layout::WorkspaceId;
use crate::vcs::error::{Result, VcsError};
use crate::vcs::own_store::{Beyond, Source, UserSide};

/// The git ref an export inside the sandbox bundles (the agent's `@`).
pub(crate) const EXPORT_REF: &str = "refs/heads/agent-workspace-export";

/// The ref a new store imports its `@` through, deleted once it is `@`.
const START_REF: &str = "refs/heads/agent-workspace-start";

/// A workspace's working-copy commit as the user's store records it, with its parents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WorkingCommit {
    pub commit: String,
    pub parents: Vec<String>,
}

impl Jj {
    /// The git directory backing the user's store (`store/git_target` resolved).
    fn backing_git(&self) -> Result<PathBuf> {
        self.git_dir().ok_or(VcsError::NotGitBacked)
    }

    fn git_at(&self, git_dir: &Path) -> Result<Call> {
        crate::vcs::packs::git_at(git_dir)
    }

    /// The working-copy commit of workspace `id` and its parents, as last recorded (no
    /// snapshot); with `snapshot`, the workspace at `ws` is snapshotted first.
    pub(crate) fn working_commit(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        snapshot: bool,
    ) -> Result<WorkingCommit> {
        let template = r#"commit_id ++ " " ++ parents.map(|c| c.commit_id()).join(" ") ++ "\n""#;
        let call = match snapshot {
            true => self
                .call(ws)?
                .dir(ws)
                .args(["log", "--no-graph", "-r", "@"]),
            false => self.query()?.args([
                "log".to_string(),
                "--no-graph".into(),
                "-r".into(),
                super::workspace_revset(id),
            ]),
        };
        let out = call.args(["-T", template]).stdout()?;
        let mut words = out.split_whitespace().map(str::to_string);
        let commit = words.next().ok_or_else(|| VcsError::NotOneCommit {
            rev: super::workspace_revset(id),
            many: false,
        })?;
        Ok(WorkingCommit {
            commit,
            parents: words.collect(),
        })
    }

    /// The objects of `base` and all its history, in a pack under `bases/<base>/objects`,
    /// made once and shared read-only by every private store of that base.
    pub(crate) fn base_objects(&self, base: &str, bases: &Path) -> Result<PathBuf> {
        crate::vcs::packs::base_objects(&self.backing_git()?, base, bases)
    }

    /// Writes a pack of every object reachable from `tips` and not from `not` into `dir`.
    fn pack(&self, tips: &[String], not: &[String], dir: &Path) -> Result<()> {
        crate::vcs::packs::pack(&self.backing_git()?, tips, not, dir)
    }

    /// Makes workspace `ws`'s own store at `wc/.jj`: `at` checked out as `@` (its change id
    /// kept), its base's objects through `base_objects`, the files' states copied from the
    /// workspace so nothing is checked out again. `wc` must not exist.
    pub(crate) fn make_private(
        &self,
        wc: &Path,
        ws: &Path,
        at: &WorkingCommit,
        base_objects: Option<&Path>,
    ) -> Result<()> {
        let jj = self.binary()?.to_path_buf();
        let call = |args: &[&str]| {
            Call::new(&jj)
                .args(["--no-pager", "--color=never", "--quiet"])
                .args(args.iter().copied())
                .env("COLUMNS", "200")
        };
        call(&["git", "init", "--no-colocate"]).arg(wc).stdout()?;
        let git = wc.join(".jj/repo/store/git");
        let io = |action, path: PathBuf, source| VcsError::Io {
            action,
            path,
            source,
        };
        // What the user's store ignores in every workspace (the tool's own files among it).
        if let Some(exclude) = self.exclude_file() {
            if let Ok(text) = crate::store::fsutil::read_untrusted(&exclude, 1 << 20) {
                let mine = git.join("info/exclude");
                fs::create_dir_all(git.join("info"))
                    .map_err(|e| io("create", git.join("info"), e))?;
                fs::write(&mine, text).map_err(|e| io("write", mine, e))?;
            }
        }
        let not: Vec<String> = match base_objects {
            Some(objects) => {
                let alternates = git.join("objects/info/alternates");
                fs::write(&alternates, format!("{}\n", objects.display()))
                    .map_err(|e| io("write", alternates, e))?;
                at.parents.first().cloned().into_iter().collect()
            }
            None => vec![],
        };
        self.pack(
            std::slice::from_ref(&at.commit),
            &not,
            &git.join("objects/pack"),
        )?;
        let private_git = |args: &[&str]| -> Result<String> {
            Ok(self.git_at(&git)?.args(args.iter().copied()).stdout()?)
        };
        private_git(&["update-ref", START_REF, &at.commit])?;
        let repo = wc.as_os_str().to_owned();
        let in_repo = |args: &[&str]| {
            call(&["--ignore-working-copy", "-R"])
                .arg(&repo)
                .args(args.iter().copied())
                .stdout()
        };
        in_repo(&["git", "import"])?;
        in_repo(&["edit", &at.commit])?;
        private_git(&["update-ref", "-d", START_REF])?;
        in_repo(&["bookmark", "forget", "agent-workspace-start"])?;
        // The one operation head is the operation the working copy is at.
        let op = match Jj::private_op_heads(wc) {
            Some(head) if !head.contains(',') => head,
            _ => in_repo(&["op", "log", "--no-graph", "-n1", "-T", "id"])?,
        };
        let state = wc.join(".jj/working_copy");
        let from = ws.join(".jj/working_copy/tree_state");
        fs::copy(&from, state.join("tree_state")).map_err(|e| io("copy", from, e))?;
        let checkout = checkout_file(op.trim(), "default").ok_or_else(|| VcsError::Io {
            action: "record",
            path: state.join("checkout"),
            source: std::io::Error::other("jj printed an operation id that is not hex"),
        })?;
        fs::write(state.join("checkout"), checkout)
            .map_err(|e| io("write", state.join("checkout"), e))?;
        Ok(())
    }

    /// Brings workspace `id`'s exported work back from `bundle` (made inside its sandbox):
    /// fetched with the user's own configuration, imported, and made the workspace's
    /// working-copy commit holding exactly the files the workspace has (as the user's jj
    /// snapshots them), the commit it replaces abandoned. Returns the new working-copy commit.
    pub(crate) fn take_back(&self, id: &WorkspaceId, ws: &Path, bundle: &Path) -> Result<String> {
        let import_ref = format!("refs/heads/agent-workspace/import/{id}");
        let bookmark = import_ref.trim_start_matches("refs/heads/").to_string();
        let git_dir = self.backing_git()?;
        self.git_at(&git_dir)?
            .args(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head"])
            .arg(bundle)
            .arg(format!("+{EXPORT_REF}:{import_ref}"))
            .stdout()?;
        // The git ref first: a colocated jj would import it again after the bookmark went.
        let cleanup = || {
            let _ = self
                .git_at(&git_dir)
                .and_then(|c| Ok(c.args(["update-ref", "-d", &import_ref]).stdout()?));
            let _ = self
                .query()
                .and_then(|c| Ok(c.args(["bookmark", "forget", &bookmark]).stdout()?));
        };
        let result = (|| -> Result<String> {
            self.query()?.args(["git", "import"]).stdout()?;
            let revset = format!("bookmarks(exact:{bookmark:?})");
            let old = self.working_commit(id, ws, true)?.commit;
            let head = |me: &Jj| -> Result<String> {
                Ok(me
                    .query()?
                    .args(["log", "--no-graph", "-r", &revset, "-T", "commit_id"])
                    .stdout()?
                    .trim()
                    .to_string())
            };
            if head(self)? != old {
                // The agent's jj may have left files out of its snapshot: the working copy
                // keeps what is on disk, as the user's jj records it (just snapshotted, so
                // neither this nor the abandon below needs the working copy).
                self.query()?
                    .args(["restore", "--from", &old, "--into", &revset])
                    .stdout()?;
                self.call(ws)?.dir(ws).args(["edit", &revset]).stdout()?;
                let replaced = format!("{old} ~ ::({revset})");
                self.query()?.args(["abandon", &replaced]).stdout()?;
            }
            head(self)
        })();
        cleanup();
        result
    }

    /// Whether the user's side of workspace `id` at `ws` is still `at`, as of the
    /// operation heads `user_op`: nothing happened since (no jj asked), or the working-copy
    /// commit is the same (the new heads).
    pub(crate) fn own_store_user_side(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        at: &WorkingCommit,
        user_op: &str,
    ) -> Result<UserSide> {
        if self.op_heads_key().as_deref() == Some(user_op) {
            return Ok(UserSide::Same);
        }
        let user_op = self.op_heads_key().unwrap_or_default();
        let now = self.working_commit(id, ws, false)?;
        Ok(match now.commit == at.commit {
            true => UserSide::SameCommit(user_op),
            false => UserSide::Moved,
        })
    }

    /// What a new store of workspace `id` at `ws` is made from: its working-copy commit,
    /// snapshotted first, with the operation heads read before it (an operation in between
    /// is then only asked about next time) and its base's shared objects under `bases`.
    pub(crate) fn own_store_source(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        bases: &Path,
    ) -> Result<Source<'_>> {
        let user_op = self.op_heads_key().unwrap_or_default();
        let at = self.working_commit(id, ws, true)?;
        let base_objects = match at.parents.first() {
            Some(parent) => Some(self.base_objects(parent, bases)?),
            None => None,
        };
        Ok(Source::Jj {
            jj: self,
            at,
            user_op,
            base_objects,
        })
    }

    /// Exports the agent's work inside `jail`, each step a process of its own there (no
    /// network): its `@` given the export's bookmark, exported to its git store and bundled
    /// from there into `out`, everything above the parents of `at` (which the user's store
    /// has). The bundle's path.
    pub(crate) fn export_own(
        &self,
        jail: &Confinement,
        out: &Path,
        at: &WorkingCommit,
    ) -> Result<PathBuf> {
        let ws = jail.workspace();
        let bookmark = EXPORT_REF.trim_start_matches("refs/heads/");
        let in_ws = |args: &[&str]| -> Result<String> {
            let call = self.call(ws)?.dir(ws).args(args.iter().copied());
            Ok(jail.wrap(call)?.stdout()?)
        };
        in_ws(&["bookmark", "set", bookmark, "-r", "@", "--allow-backwards"])?;
        in_ws(&["--ignore-working-copy", "git", "export"])?;
        let bundle = out.join("export.bundle");
        let call = self
            .git_at(&ws.join(".jj/repo/store/git"))?
            .dir(ws)
            .args(crate::vcs::packs::AGENT_STORE)
            .args(["bundle", "create", "-q"])
            .arg(&bundle)
            .arg(EXPORT_REF)
            .args(at.parents.iter().map(|p| format!("^{p}")));
        jail.wrap(call)?.stdout()?;
        Ok(bundle)
    }

    /// The visible heads of the store in `dir` outside `@` and its ancestors, asked of jj
    /// inside the sandbox `confine` makes around an empty directory (the workspace may be
    /// gone).
    pub(crate) fn heads_beyond(
        &self,
        dir: &Path,
        confine: &dyn Fn(&Path) -> std::result::Result<Confinement, String>,
    ) -> Beyond {
        let scratch = dir.join("check");
        let _ = fs::remove_dir_all(&scratch);
        if let Err(err) = fs::create_dir(&scratch) {
            return Beyond::HeadsUnread(err.to_string());
        }
        let said = confine(&scratch).and_then(|jail| {
            let ws = jail.workspace();
            let call = self
                .call(ws)
                .map_err(|e| e.to_string())?
                .dir(ws)
                .args(["--ignore-working-copy", "log", "--no-graph"])
                .args(["-r", "visible_heads() ~ ::@"])
                .args([
                    "-T",
                    r#"commit_id ++ " " ++ bookmarks.map(|b| b.name()).join(" ") ++ "\n""#,
                ]);
            let wrapped = jail.wrap(call).map_err(|e| e.to_string())?;
            wrapped.stdout().map_err(|e| e.to_string())
        });
        let _ = fs::remove_dir_all(&scratch);
        let said = match said {
            Ok(said) => said,
            Err(why) => return Beyond::HeadsUnread(why),
        };
        let mut commits = vec![];
        let mut bookmarks = vec![];
        for line in said.lines().take(10_000) {
            let mut words = line.split(' ');
            let commit = words.next().unwrap_or_default();
            if commit.len() != 40 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Beyond::Printed(line.to_string());
            }
            commits.push(commit.get(..12).unwrap_or(commit).to_string());
            bookmarks.extend(words.filter(|w| !w.is_empty()).map(str::to_string));
        }
        match commits.is_empty() {
            true => Beyond::Nothing,
            false => Beyond::Heads { commits, bookmarks },
        }
    }

    /// A `.git` at the root of the workspace at `ws` that is not the one jj made there (jj
    /// 0.46's link to the repository's worktree entry, or none): the agent made it, and the
    /// user's `git status` there would run the configuration it names. Moved into `aside`;
    /// where it now is.
    pub(crate) fn move_aside_foreign_git(
        &self,
        ws: &Path,
        aside: &mut crate::store::nested_aside::KeptAside,
    ) -> Option<crate::store::nested_aside::MovedAside> {
        match self.git_link_is_ours(ws) {
            true => None,
            false => aside.take(ws, ".git".as_ref()),
        }
    }

    /// The ids of the operation heads of the store at `wc` (its files' names, never
    /// interpreted): whether anything happened there since they were last read.
    pub(crate) fn private_op_heads(wc: &Path) -> Option<String> {
        let heads = fs::read_dir(wc.join(".jj/repo/op_heads/heads")).ok()?;
        let mut ids: Vec<String> = heads
            .take(64)
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        ids.sort();
        (!ids.is_empty()).then(|| ids.join(","))
    }
}

/// jj's working-copy `checkout` file (protobuf: field 2 the operation id's bytes, field 3
/// the workspace name), written by hand so no jj runs on the store after it is made.
fn checkout_file(op_hex: &str, workspace: &str) -> Option<Vec<u8>> {
    if !op_hex.len().is_multiple_of(2) {
        return None;
    }
    let op: Vec<u8> = (0..op_hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(op_hex.get(i..i + 2)?, 16).ok())
        .collect::<Option<_>>()?;
    let mut out = vec![0x12];
    varint(op.len(), &mut out);
    out.extend(op);
    out.push(0x1a);
    varint(workspace.len(), &mut out);
    out.extend(workspace.as_bytes());
    Some(out)
}

fn varint(mut n: usize, out: &mut Vec<u8>) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkout_files_are_jjs_protobuf() {
        let op = "ab".repeat(64);
        let bytes = checkout_file(&op, "default").unwrap();
        assert_eq!(&bytes[..3], &[0x12, 64, 0xab]);
        assert_eq!(&bytes[66..68], &[0x1a, 7]);
        assert_eq!(&bytes[68..], b"default");
        assert!(checkout_file("not hex", "default").is_none());
    }
}
