//! A sandboxed worktree's own git directory, and bringing its work back as data.
//!
//! The directory is made here, outside any sandbox, before the agent ever touched it: a
//! repository of its own (no `commondir`, no other worktree) whose objects are the base's
//! history (a pack shared read-only by every store of that base, through an alternate) plus
//! the worktree's own commits and staged files (a pack of its own), with the worktree's
//! `HEAD` (its branch, or a detached commit) and its index copied, so no file is hashed
//! again. A sandbox mounts it through a `.git` file over the worktree's own. After that git
//! runs on it only inside a sandbox. Its work comes back as a bundle made there, fetched
//! into the user's repository with the user's git and configuration, checked (`fsck`).

use std::fs;
use std::path::{Path, PathBuf};

use super::Git;
use crate::exec::process::Call;
use crate::store::layout::WorkspaceId;
use crate::vcs::error::Result;

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
    fn git_at(&self, git_dir: &Path) -> Result<Call> {
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

/// A file's size, time and inode, as a key that changes when it is written (empty when it
/// is missing).
pub(crate) fn stat_key(path: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    match fs::symlink_metadata(path) {
        Ok(m) => format!("{}:{}.{}:{}", m.size(), m.mtime(), m.mtime_nsec(), m.ino()),
        Err(_) => "-".into(),
    }
}

/// What says a private git directory changed since: its `HEAD`, the loose ref it names,
/// its packed refs, its index and `HEAD`'s reflog, read as data (never by git).
pub(crate) fn private_key(git_dir: &Path) -> Option<String> {
    let read = |path: &Path| crate::store::fsutil::read_untrusted_string(path, 4096).ok();
    let head = read(&git_dir.join("HEAD"))?;
    let named = head
        .strip_prefix("ref: ")
        .map(|r| r.trim())
        .filter(|r| r.starts_with("refs/") && !r.split('/').any(|part| part == ".."))
        .and_then(|r| read(&git_dir.join(r)))
        .unwrap_or_default();
    let key = format!(
        "{} {} {} {} {}",
        head.trim(),
        named.trim(),
        stat_key(&git_dir.join("packed-refs")),
        stat_key(&git_dir.join("index")),
        stat_key(&git_dir.join("logs/HEAD")),
    );
    Some(key.replace(['\n', '\r'], " "))
}

/// The most refs and reflog entries of a private git directory looked at: beyond, it is
/// kept whole rather than read further.
const REFS_LIMIT: usize = 2000;

/// What a private git directory's refs name, read as data (never by git): every ref (loose,
/// packed, a detached `HEAD`) but the export's, and each commit `HEAD`'s reflog names that no
/// other reflog does (made on a detached `HEAD`, then left). `None` when there are more than
/// [`REFS_LIMIT`] or they cannot be read.
pub(crate) fn private_refs(git_dir: &Path) -> Option<Vec<(String, String)>> {
    let read = |path: &Path| crate::store::fsutil::read_untrusted_string(path, 64 << 10).ok();
    // A reflog or the packed refs grow with every update: bounded higher. A file that is
    // missing is empty; one that cannot be read makes the whole answer unknown.
    let read_log = |path: &Path| match fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(String::new()),
        _ => crate::store::fsutil::read_untrusted_string(path, 16 << 20).ok(),
    };
    let mut refs = vec![];
    let mut logged = std::collections::HashSet::new();
    // Loose refs and their reflogs, every directory a real one (never a link followed).
    let mut dirs = vec![
        (git_dir.join("refs"), "refs".to_string(), false),
        (git_dir.join("logs/refs"), "refs".to_string(), true),
    ];
    let mut seen = 0;
    while let Some((dir, name, log)) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let entry = entry.ok()?;
            seen += 1;
            if seen > REFS_LIMIT {
                return None;
            }
            let file = entry.file_name().into_string().ok()?;
            let full = format!("{name}/{file}");
            let kind = entry.file_type().ok()?;
            if kind.is_dir() {
                dirs.push((entry.path(), full, log));
            } else if !kind.is_file() || full.starts_with(EXPORT_REFS) {
                continue;
            } else if log {
                for line in read_log(&entry.path())?.lines() {
                    logged.extend(line.split(' ').take(2).map(str::to_string));
                }
            } else {
                let text = read(&entry.path())?;
                if !text.starts_with("ref: ") {
                    refs.push((full, text.trim().to_string()));
                }
            }
        }
    }
    let packed = read_log(&git_dir.join("packed-refs"))?;
    for line in packed.lines().filter(|l| !l.starts_with(['#', '^'])) {
        if let Some((id, name)) = line.split_once(' ') {
            if !name.starts_with(EXPORT_REFS) {
                refs.push((name.to_string(), id.to_string()));
            }
        }
    }
    let head = read(&git_dir.join("HEAD"))?;
    if !head.starts_with("ref: ") {
        refs.push(("HEAD".into(), head.trim().to_string()));
    }
    let mut detached = std::collections::BTreeSet::new();
    for line in read_log(&git_dir.join("logs/HEAD"))?.lines() {
        // A rebase's picks are copies of commits it started from (which their own reflogs
        // name): only what was committed on a detached HEAD is the agent's own.
        let rebase = line
            .split_once('\t')
            .is_some_and(|(_, message)| message.starts_with("rebase"));
        if let Some(id) = line.split(' ').nth(1) {
            if !rebase && !logged.contains(id) && !id.bytes().all(|b| b == b'0') {
                detached.insert(id.to_string());
            }
        }
    }
    refs.extend(detached.into_iter().map(|id| {
        (
            "a commit made on a detached HEAD (in HEAD's reflog)".to_string(),
            id,
        )
    }));
    (refs.len() <= REFS_LIMIT).then_some(refs)
}

impl Git {
    /// Which of `refs` (name, object id: read from an agent's git directory) name anything
    /// the user's repository does not hold in the history of `tips` (what came back, and its
    /// base): an object it does not have at all, or a commit outside that history.
    /// `scratch` is a file of agent-workspace's own it may write (the ids handed to git).
    pub(crate) fn outside(
        &self,
        refs: &[(String, String)],
        tips: &[String],
        scratch: &Path,
    ) -> Result<Vec<String>> {
        let hex =
            |oid: &str| matches!(oid.len(), 40 | 64) && oid.bytes().all(|b| b.is_ascii_hexdigit());
        let mut outside: Vec<String> = vec![];
        let ids: String = refs
            .iter()
            .filter(|(_, id)| hex(id))
            .map(|(_, id)| format!("{id}\n"))
            .collect();
        fs::write(scratch, ids).map_err(|e| io("write", scratch, e))?;
        let input = fs::File::open(scratch).map_err(|e| io("read", scratch, e))?;
        let kinds = self
            .git_at(&self.common)?
            .args(["cat-file", "--batch-check=%(objectname) %(objecttype)"])
            .input(input)
            .stdout();
        let _ = fs::remove_file(scratch);
        let kinds: std::collections::HashMap<String, String> = kinds?
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(id, kind)| (id.to_string(), kind.to_string()))
            .collect();
        let mut commits: Vec<(&str, &str)> = vec![];
        for (name, id) in refs {
            match kinds.get(id).map(String::as_str) {
                Some("commit") if hex(id) => commits.push((name, id)),
                _ => outside.push(name.clone()),
            }
        }
        if !commits.is_empty() {
            let not: Vec<String> = tips
                .iter()
                .filter(|t| hex(t))
                .map(|t| format!("^{t}"))
                .collect();
            let listed = self
                .git_at(&self.common)?
                .args(["rev-list"])
                .args(commits.iter().map(|(_, id)| id.to_string()))
                .args(not)
                .stdout()?;
            let listed: std::collections::HashSet<&str> = listed.lines().collect();
            outside.extend(
                commits
                    .iter()
                    .filter(|(_, id)| listed.contains(id))
                    .map(|(name, _)| name.to_string()),
            );
        }
        outside.sort();
        outside.dedup();
        Ok(outside)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: char) -> String {
        n.to_string().repeat(40)
    }

    /// A git directory as an agent leaves it: a branch (with its reflog), a stash, a packed
    /// tag, the export's refs, and HEAD's reflog with a commit made detached, a rebase's
    /// pick and a move to the branch.
    #[test]
    fn private_refs_are_read_as_data() {
        let tmp = tempfile::tempdir().unwrap();
        let git = tmp.path();
        let write = |rel: &str, text: &str| {
            let path = git.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        };
        let zero = "0".repeat(40);
        write("HEAD", "ref: refs/heads/w\n");
        write("refs/heads/w", &format!("{}\n", id('a')));
        write("refs/stash", &format!("{}\n", id('b')));
        write(&format!("{EXPORT_REFS}head"), &format!("{}\n", id('c')));
        write(
            "packed-refs",
            &format!(
                "# pack-refs with: peeled\n{} refs/tags/v1\n^{}\n",
                id('d'),
                id('a')
            ),
        );
        let entry = |old: &str, new: &str, message: &str| {
            format!("{old} {new} A <a@x> 1 +0000\t{message}\n")
        };
        write(
            "logs/refs/heads/w",
            &(entry(&zero, &id('9'), "branch: Created") + &entry(&id('9'), &id('a'), "commit: x")),
        );
        write(
            "logs/HEAD",
            &(entry(&zero, &id('9'), "x")
                + &entry(&id('9'), &id('e'), "commit: made detached")
                + &entry(&id('e'), &id('f'), "rebase (pick): copy")
                + &entry(&id('f'), &id('a'), "checkout: moving to w")),
        );
        let mut refs = private_refs(git).unwrap();
        refs.sort();
        let detached = "a commit made on a detached HEAD (in HEAD's reflog)".to_string();
        assert_eq!(
            refs,
            vec![
                (detached, id('e')),
                ("refs/heads/w".into(), id('a')),
                ("refs/stash".into(), id('b')),
                ("refs/tags/v1".into(), id('d')),
            ]
        );
        // A FIFO in place of a ref is no ref (skipped); in place of the packed refs, the
        // answer is unknown. Neither is waited on.
        let mkfifo = |path: &Path| {
            let _ = fs::remove_file(path);
            assert!(std::process::Command::new("mkfifo")
                .arg(path)
                .status()
                .unwrap()
                .success());
        };
        mkfifo(&git.join("refs/heads/fifo"));
        assert_eq!(private_refs(git).map(|r| r.len()), Some(4));
        mkfifo(&git.join("packed-refs"));
        assert_eq!(private_refs(git), None);
    }
}
