//! A sandboxed worktree's own git directory read as data, never by git: whether it changed
//! (`private_key`), what its refs name (`private_refs`), and which of those the user's
//! repository does not hold in the history of what came back (`Git::outside`).

use std::fs;
use std::path::Path;

use super::Git;
use super::EXPORT_REFS;
use crate::vcs::error::Result;
use crate::vcs::packs::io;

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
