//! A sandboxed worktree's own git directory, and bringing its work back as data.
//!
//! The directory is made here, outside any sandbox, before the agent ever touched it: a
//! repository of its own (no `commondir`, no other worktree) whose objects are the base's
//! history (a pack shared read-only by every store of that base, through an alternate) plus
//! the worktree's own commits and staged files (a pack of its own), with the worktree's
//! `HEAD` (its branch, or a detached commit) and its index copied, so no file is hashed
//! again. A sandbox mounts it through a `.git` file over the worktree's own. After that git
//! runs on it only inside a sandbox. Its work comes back as a bundle made there
//! (`export_own`: each git a process of its own in the sandbox), fetched into the user's
//! repository with the user's git and configuration, checked (`fsck`).

use std::fs;
use std::path::{Path, PathBuf};

use super::stat_key;
use super::Git;
use crate::exec::process::Call;
use crate::exec::sandbox::Confinement;
use crate::store::layout::WorkspaceId;
use crate::vcs::error::{Result, VcsError};
use crate::vcs::own_store::{object_id, Source, UserSide};

/// The refs an export inside the sandbox bundles: `head` (the agent's `HEAD`) and `index`
/// (a commit of what it staged, its parent `head`), when there is one.
pub(crate) const EXPORT_REFS: &str = "refs/heads/agent-workspace-export/";

/// The most a bundle brought back may weigh.
pub(crate) const BUNDLE_LIMIT: u64 = 4 << 30;

/// A worktree as the user's repository records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Checkout {
    /// Its git directory (`<common>/worktrees/<name>`).
    pub git_dir: PathBuf,
    /// The commit its `HEAD` names.
    pub commit: String,
    /// The branch `HEAD` is on, if any (`refs/heads/...`).
    pub branch: Option<String>,
}

use crate::vcs::packs::io;

/// What a worktree is in the middle of, and how to conclude or abort it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InProgress {
    pub what: String,
    pub how: String,
    /// Whether an operation (a merge, a rebase, ...) is in progress, not only conflicts.
    pub operation: bool,
}

impl Git {
    pub(super) fn git_at(&self, git_dir: &Path) -> Result<Call> {
        crate::vcs::packs::git_at(git_dir)
    }

    /// The worktree at `ws` as the user's repository records it.
    pub(crate) fn checkout(&self, ws: &Path) -> Result<Checkout> {
        let git_dir = self
            .call(ws)?
            .args(["rev-parse", "--absolute-git-dir"])
            .stdout()?;
        let git_dir = PathBuf::from(git_dir.trim_end_matches('\n'));
        let commit = self
            .git_at(&git_dir)?
            .args(["rev-parse", "--verify", "HEAD^{commit}"])
            .stdout()?
            .trim()
            .to_string();
        let branch = self
            .git_at(&git_dir)?
            .args(["symbolic-ref", "-q", "HEAD"])
            .stdout_allowing(&[1])?;
        let branch = (branch.0 == 0).then(|| branch.1.trim().to_string());
        Ok(Checkout {
            git_dir,
            commit,
            branch,
        })
    }

    /// The git directory of the worktree at `ws`, read from its `.git` file as data (git
    /// asked only when it is not one).
    pub(crate) fn worktree_git_dir(&self, ws: &Path) -> Result<PathBuf> {
        let named = crate::store::fsutil::read_untrusted_string(&ws.join(".git"), 4096)
            .ok()
            .and_then(|text| {
                let path = text
                    .strip_prefix("gitdir: ")?
                    .trim_end_matches(['\n', '\r']);
                Some(ws.join(path))
            })
            .filter(|dir| dir.join("commondir").is_file());
        match named {
            Some(dir) => Ok(dir),
            None => Ok(self.checkout(ws)?.git_dir),
        }
    }

    /// What the worktree at `ws` (its git directory `git_dir`) is in the middle of, if
    /// anything: a merge, cherry-pick, revert, rebase or `am` (its state files, read as
    /// they are: only the user's git writes there), or unresolved conflicts in its index
    /// (`ls-files -u`, not asked when `index_checked`: the index is one already found
    /// without). Each with how to conclude or abort it.
    pub(crate) fn in_progress(
        &self,
        ws: &Path,
        git_dir: &Path,
        index_checked: bool,
    ) -> Result<Option<InProgress>> {
        let at = |name: &str| fs::symlink_metadata(git_dir.join(name)).is_ok();
        let operation = [
            ("MERGE_HEAD", "a merge", "commit", "merge --abort"),
            (
                "CHERRY_PICK_HEAD",
                "a cherry-pick",
                "cherry-pick --continue",
                "cherry-pick --abort",
            ),
            (
                "REVERT_HEAD",
                "a revert",
                "revert --continue",
                "revert --abort",
            ),
            (
                "rebase-merge",
                "a rebase",
                "rebase --continue",
                "rebase --abort",
            ),
            (
                "rebase-apply",
                "a rebase or am",
                "rebase --continue",
                "rebase --abort",
            ),
        ]
        .into_iter()
        .find(|(file, ..)| at(file));
        if let Some((_, what, go_on, abort)) = operation {
            return Ok(Some(InProgress {
                operation: true,
                what: what.to_string(),
                how: format!(
                    "conclude it (`git -C {ws} {go_on}`) or abort it (`git -C {ws} {abort}`)",
                    ws = crate::exec::process::quote(&ws.to_string_lossy())
                ),
            }));
        }
        if index_checked {
            return Ok(None);
        }
        let unmerged = self
            .git_at(git_dir)?
            .arg(format!("--work-tree={}", ws.display()))
            .args(["ls-files", "-u", "-z", "--format=%(path)"])
            .stdout()?;
        let mut files: Vec<&str> = unmerged.split('\0').filter(|p| !p.is_empty()).collect();
        files.dedup();
        let Some(first) = files.first() else {
            return Ok(None);
        };
        let shown: Vec<String> = files
            .iter()
            .take(5)
            .map(|f| crate::exec::process::quote(f))
            .collect();
        let more = match files.len() {
            n if n > 5 => format!(" and {} more", n - 5),
            _ => String::new(),
        };
        Ok(Some(InProgress {
            operation: false,
            what: "unresolved conflicts".to_string(),
            how: format!(
                "resolve them in {}{more} and mark them (`git -C {ws} add {first}`), or take them out of the index (`git -C {ws} restore --staged {first}`)",
                shown.join(", "),
                ws = crate::exec::process::quote(&ws.to_string_lossy()),
                first = crate::exec::process::quote(first),
            ),
        }))
    }

    /// The commit `HEAD` of the worktree whose git directory is `git_dir` names (no other
    /// work), and its index's size and time: what says the user's side moved.
    pub(crate) fn checkout_key(&self, git_dir: &Path) -> Option<String> {
        let commit = self
            .git_at(git_dir)
            .ok()?
            .args(["rev-parse", "--verify", "HEAD^{commit}"])
            .stdout()
            .ok()?;
        Some(format!(
            "{} {}",
            commit.trim(),
            stat_key(&git_dir.join("index"))
        ))
    }

    /// Where the base of a worktree at `commit` is: where its history meets the main
    /// worktree's `HEAD` (so every worktree of one base shares its pack), else `commit`.
    pub(crate) fn base_of(&self, commit: &str) -> String {
        self.call(&self.main)
            .and_then(|c| {
                Ok(c.args(["merge-base", commit, "HEAD"])
                    .stdout()?
                    .trim()
                    .to_string())
            })
            .ok()
            .filter(|b| !b.is_empty())
            .unwrap_or_else(|| commit.to_string())
    }

    /// The objects of `base` and all its history, in a pack under `bases/<base>/objects`,
    /// made once and shared read-only by every private store of that base.
    pub(crate) fn base_objects(&self, base: &str, bases: &Path) -> Result<PathBuf> {
        crate::vcs::packs::base_objects(&self.common, base, bases)
    }

    /// Writes a pack of every object reachable from `tips` and not from `not` into `dir`.
    fn pack(&self, tips: &[String], not: &[String], dir: &Path) -> Result<()> {
        crate::vcs::packs::pack(&self.common, tips, not, dir)
    }

    /// Makes the worktree's own git directory at `git_dir` (which must not exist), and the
    /// `.git` file naming it at `git_file`: `at`'s `HEAD` and index, its base's objects
    /// through `base_objects`, its own commits and staged files in a pack of its own.
    pub(crate) fn make_private(
        &self,
        git_dir: &Path,
        git_file: &Path,
        at: &Checkout,
        base: &str,
        base_objects: &Path,
    ) -> Result<()> {
        let format = self
            .git_at(&self.common)?
            .args(["rev-parse", "--show-object-format"])
            .stdout()?;
        Call::new(crate::exec::process::find("git")?)
            .args(["init", "-q", "--bare", "--template="])
            .arg(format!("--object-format={}", format.trim()))
            .arg(git_dir)
            .env("LC_ALL", "C")
            .stdout()?;
        let private = |args: &[&str]| -> Result<String> {
            Ok(self.git_at(git_dir)?.args(args.iter().copied()).stdout()?)
        };
        private(&["config", "core.bare", "false"])?;
        private(&["config", "core.logAllRefUpdates", "true"])?;
        for sub in ["info", "objects/info", "objects/pack", "refs/heads"] {
            let path = git_dir.join(sub);
            fs::create_dir_all(&path).map_err(|e| io("create", &path, e))?;
        }
        // What the repository ignores in every worktree (the tool's own files among it).
        if let Ok(text) =
            crate::store::fsutil::read_untrusted(&self.common.join("info/exclude"), 1 << 20)
        {
            let mine = git_dir.join("info/exclude");
            fs::write(&mine, text).map_err(|e| io("write", &mine, e))?;
        }
        let alternates = git_dir.join("objects/info/alternates");
        fs::write(&alternates, format!("{}\n", base_objects.display()))
            .map_err(|e| io("write", &alternates, e))?;
        // What the worktree staged: its index written as a tree (in the user's repository),
        // so its blobs are in the pack. An index with conflicts has none: `HEAD`'s is read.
        let staged = self
            .git_at(&at.git_dir)?
            .args(["write-tree"])
            .stdout()
            .ok()
            .map(|t| t.trim().to_string());
        let mut tips = vec![at.commit.clone()];
        tips.extend(staged.clone());
        self.pack(&tips, &[base.to_string()], &git_dir.join("objects/pack"))?;
        match &at.branch {
            Some(branch) => {
                private(&["update-ref", branch, &at.commit])?;
                private(&["symbolic-ref", "HEAD", branch])?;
            }
            None => {
                private(&["update-ref", "--no-deref", "HEAD", &at.commit])?;
            }
        }
        let index = git_dir.join("index");
        match staged {
            Some(_) => {
                let from = at.git_dir.join("index");
                fs::copy(&from, &index).map_err(|e| io("copy", &from, e))?;
            }
            None => {
                private(&["read-tree", "HEAD"])?;
            }
        }
        fs::write(git_file, format!("gitdir: {}\n", git_dir.display()))
            .map_err(|e| io("write", git_file, e))?;
        Ok(())
    }

    /// Brings worktree `id`'s exported work back from `bundle` (made inside its sandbox):
    /// fetched into the user's repository with the user's configuration (its objects
    /// checked), its `head` made the worktree's `HEAD` (only while that is still `from`),
    /// what it staged the worktree's index. Returns the new `HEAD`.
    pub(crate) fn take_back(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        at: &Checkout,
        from: &str,
        bundle: &Path,
    ) -> Result<String> {
        let import = format!("refs/agent-workspace/import/{id}/");
        self.git_at(&self.common)?
            .args([
                "-c",
                "fetch.fsckObjects=true",
                "-c",
                "transfer.fsckObjects=true",
            ])
            .args(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head"])
            .arg(bundle)
            .arg(format!("+{EXPORT_REFS}*:{import}*"))
            .stdout()?;
        let result = (|| -> Result<String> {
            let resolve = |name: &str| -> Option<String> {
                self.git_at(&self.common)
                    .ok()?
                    .args(["rev-parse", "--verify", "--quiet"])
                    .arg(format!("{import}{name}^{{commit}}"))
                    .stdout()
                    .ok()
                    .map(|s| s.trim().to_string())
            };
            // No `head`: the agent's `HEAD` is still `from` (it only staged).
            let head = resolve("head").unwrap_or_else(|| from.to_string());
            if head != from {
                self.git_at(&at.git_dir)?
                    .args([
                        "update-ref",
                        "-m",
                        "agent-workspace: work of a sandboxed run",
                    ])
                    .args(["HEAD", &head, from])
                    .stdout()?;
            }
            let staged = match resolve("index") {
                Some(index) => format!("{index}^{{tree}}"),
                None => format!("{head}^{{tree}}"),
            };
            // A two-way read of the index alone (`-i`: the worktree's files, which the agent
            // changed, are not compared) keeps what the index knows of every file the agent's
            // commits did not change, so no other file is hashed again; one the worktree's
            // index does not allow reads the tree whole.
            let index = || -> Result<Call> {
                Ok(self
                    .git_at(&at.git_dir)?
                    .arg(format!("--work-tree={}", ws.display())))
            };
            if index()?
                .args(["read-tree", "-m", "-i", from, &staged])
                .stdout()
                .is_err()
            {
                index()?.args(["read-tree", &staged]).stdout()?;
            }
            Ok(head)
        })();
        let listed = self.git_at(&self.common).and_then(|c| {
            Ok(c.args(["for-each-ref", "--format=%(refname)"])
                .arg(&import)
                .stdout()?)
        });
        for name in listed.unwrap_or_default().lines() {
            let _ = self
                .git_at(&self.common)
                .and_then(|c| Ok(c.args(["update-ref", "-d", name]).stdout()?));
        }
        result
    }

    /// Refuses a worktree at `ws` in the middle of a merge, cherry-pick, revert or rebase,
    /// or with unresolved conflicts: neither the agent's git directory nor a bring-back
    /// into the worktree's index would keep its state. The index a store was made or brought
    /// back to (`user_op` ends with its key) had no conflicts: while it is the same file, it
    /// has none.
    pub(crate) fn own_store_ready(&self, ws: &Path, user_op: Option<&str>) -> Result<()> {
        let git_dir = self.worktree_git_dir(ws)?;
        let index = stat_key(&git_dir.join("index"));
        let checked = index != "-" && user_op.is_some_and(|u| u.ends_with(&format!(" {index}")));
        match self.in_progress(ws, &git_dir, checked)? {
            Some(busy) => Err(VcsError::Busy {
                ws: ws.to_path_buf(),
                what: busy.what,
                how: busy.how,
            }),
            None => Ok(()),
        }
    }

    /// Whether the worktree at `ws` is still as of `user_op` (its `HEAD` and index).
    pub(crate) fn own_store_user_side(&self, ws: &Path, user_op: &str) -> Result<UserSide> {
        let git_dir = self.worktree_git_dir(ws)?;
        Ok(
            match self.checkout_key(&git_dir).as_deref() == Some(user_op) {
                true => UserSide::Same,
                false => UserSide::Moved,
            },
        )
    }

    /// What a new store of the worktree at `ws` is made from: its `HEAD`, and the key of it
    /// and its index.
    pub(crate) fn own_store_source(&self, ws: &Path) -> Result<Source<'_>> {
        let at = self.checkout(ws)?;
        let user_op = self.checkout_key(&at.git_dir).unwrap_or_default();
        Ok(Source::Git {
            git: self,
            at,
            user_op,
        })
    }

    /// Exports the agent's work inside `jail`, each git a process of its own there (no
    /// network): its `HEAD`, when it is not `from`, as the export's `head`, and what it
    /// staged, when that differs from `HEAD`'s tree, as a commit `index` on it; both bundled
    /// into `out` above `from`. `None` when there is neither.
    pub(crate) fn export_own(
        &self,
        jail: &Confinement,
        out: &Path,
        from: &str,
    ) -> Result<Option<PathBuf>> {
        let ws = jail.workspace();
        let git = |args: &[&str]| -> Result<Call> {
            Ok(self
                .call(ws)?
                .dir(ws)
                .args(crate::vcs::packs::AGENT_STORE)
                .args(args.iter().copied()))
        };
        let run = |call: Call| -> Result<String> { Ok(jail.wrap(call)?.stdout()?) };
        // What git printed inside the sandbox is handed on only as a whole object id.
        let id = |said: String| {
            object_id(&said).ok_or_else(|| VcsError::Io {
                action: "read",
                path: ws.to_path_buf(),
                source: std::io::Error::other(format!("git printed {said:?}, not an object id")),
            })
        };
        let head = id(run(git(&["rev-parse", "--verify", "HEAD^{commit}"])?)?)?;
        // An earlier export's refs (or the agent's under that name) go first.
        let listed = run(git(&[
            "for-each-ref",
            "--format=delete %(refname)",
            EXPORT_REFS,
        ])?)?;
        if !listed.trim().is_empty() {
            let list = out.join("delete-refs");
            fs::write(&list, &listed).map_err(|e| io("write", &list, e))?;
            let input = fs::File::open(&list).map_err(|e| io("read", &list, e))?;
            run(git(&["update-ref", "--stdin"])?.input(input))?;
            let _ = fs::remove_file(&list);
        }
        if head != from {
            run(git(&["update-ref", &format!("{EXPORT_REFS}head"), &head])?)?;
        }
        // An index with conflicts writes no tree: then nothing was staged.
        let tree = jail
            .wrap(git(&["write-tree"])?)?
            .stdout()
            .ok()
            .and_then(|t| object_id(&t));
        if let Some(tree) = tree {
            let head_tree = run(git(&["rev-parse", &format!("{head}^{{tree}}")])?)?;
            if tree != head_tree.trim() {
                let index = id(run(git(&[
                    "commit-tree",
                    &tree,
                    "-p",
                    &head,
                    "-m",
                    "staged",
                ])?)?)?;
                run(git(&[
                    "update-ref",
                    &format!("{EXPORT_REFS}index"),
                    &index,
                ])?)?;
            }
        }
        if run(git(&["for-each-ref", EXPORT_REFS])?)?.trim().is_empty() {
            return Ok(None);
        }
        let bundle = out.join("export.bundle");
        let branches = format!(
            "--branches={}",
            EXPORT_REFS
                .trim_start_matches("refs/heads/")
                .trim_end_matches('/')
        );
        run(git(&["bundle", "create", "-q"])?
            .arg(&bundle)
            .arg(branches)
            .arg(format!("^{from}")))?;
        Ok(Some(bundle))
    }

    /// Every submodule of the worktree at `ws` (a gitlink in its index, `git_dir`) whose
    /// `.git` does not lead into the repository's own git directory: the agent made it, and
    /// the user's `git status` would run the configuration it names. Each is moved into
    /// `aside`; returns where they now are. The worktree's files are only looked at, never
    /// read by git.
    ///
    /// The worktree's gitlinks are listed again only when its index changed since `cache`
    /// (the index's size and time, then the paths; agent-workspace's own file, never
    /// mounted).
    pub(crate) fn move_aside_gitlink_dirs(
        &self,
        git_dir: &Path,
        ws: &Path,
        cache: &Path,
        aside: &mut crate::store::nested_aside::KeptAside,
    ) -> Vec<crate::store::nested_aside::MovedAside> {
        let key = stat_key(&git_dir.join("index"));
        let links = match crate::store::private_state::gitlinks(cache, &key) {
            Some(links) => links,
            None => {
                let Ok(links) = self.gitlinks(git_dir) else {
                    return vec![];
                };
                crate::store::private_state::keep_gitlinks(cache, &key, &links);
                links
            }
        };
        let mut moved = vec![];
        for link in links {
            // Each step a real directory: a link could lead the rename out of the worktree.
            let mut path = ws.to_path_buf();
            let real = Path::new(&link).components().all(|part| {
                path.push(part);
                matches!(part, std::path::Component::Normal(_))
                    && fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_dir())
            });
            let dot_git = path.join(".git");
            if !real || fs::symlink_metadata(&dot_git).is_err() || self.leads_home(&path, &dot_git)
            {
                continue;
            }
            moved.extend(aside.take(&path, ".git".as_ref()));
        }
        moved
    }

    /// Whether the submodule `.git` at `dot_git` is a `.git` file naming a directory inside
    /// the repository's own git directory (as `git submodule` makes them).
    pub(crate) fn leads_home(&self, submodule: &Path, dot_git: &Path) -> bool {
        let Ok(text) = crate::store::fsutil::read_untrusted_string(dot_git, 4096) else {
            return false;
        };
        let Some(named) = text.strip_prefix("gitdir: ") else {
            return false;
        };
        self.owns(&submodule.join(named.trim_end_matches(['\n', '\r'])))
    }

    /// The paths of the worktree's submodules (gitlinks in its index).
    pub(crate) fn gitlinks(&self, git_dir: &Path) -> Result<Vec<String>> {
        let out = self
            .git_at(git_dir)?
            .args(["ls-files", "-s", "-z"])
            .stdout()?;
        Ok(out
            .split('\0')
            .filter_map(|entry| {
                let (meta, path) = entry.split_once('\t')?;
                meta.starts_with("160000 ").then(|| path.to_string())
            })
            .collect())
    }

    /// Whether `dir` is inside the repository's common git directory (where only the user's
    /// git writes).
    pub(crate) fn owns(&self, dir: &Path) -> bool {
        let common = fs::canonicalize(&self.common).unwrap_or_else(|_| self.common.clone());
        fs::canonicalize(dir).is_ok_and(|d| d.starts_with(common))
    }
}
