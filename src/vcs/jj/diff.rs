//! What a jj workspace changed since its base: its commits, listed from the workspace (which
//! snapshots its latest edits), and its files, compared by git in the backing repository,
//! where every jj commit is a git commit (so binary files come out in full).

use std::path::{Path, PathBuf};

use super::classify::{self, Failure};
use super::{workspace_revset, Jj};
use crate::exec::process::Call;
use crate::store::layout::WorkspaceId;
use crate::store::timestamp::Timestamp;
use crate::vcs::diff::{self, AsOf, Changes, Since, DIFF_ARGS, PATCH_ARGS};
use crate::vcs::{Result, VcsError};

/// Commit id (for the working-copy commit, after `@` and the time it was written), change
/// id, description.
const CHANGES_TEMPLATE: &str = r#"if(current_working_copy, "@" ++ committer.timestamp().utc().format("%Y-%m-%dT%H:%M:%SZ") ++ " ") ++ commit_id ++ "\0" ++ change_id ++ "\0" ++ description ++ "\0""#;

/// git's empty tree, which every git repository knows without storing it.
pub(super) const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

impl Jj {
    /// The changes of workspace `id` at `ws` against `base` (its recorded base commits;
    /// when none were recorded, the newest commits it shares with the main working copy).
    /// With `snapshot`, its latest edits are snapshotted first; without, its working-copy
    /// commit is read as jj last recorded it (`--ignore-working-copy`: no lock taken, no
    /// operation written, nothing in the workspace touched, so a live run is not disturbed).
    pub(crate) fn changes(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        since: Since,
        snapshot: bool,
    ) -> Result<Changes> {
        let base = match hex_ids(since.base) {
            ids if ids.is_empty() => self.shared_base(id)?,
            ids => ids,
        };
        let landed = change_ids(since.landed);
        // Read without a snapshot, the answer is a function of the working-copy commit and
        // the base alone: a commit id names its parents, files and description, so while jj's
        // view keeps the same commit for the workspace, so is the answer, whatever else the
        // repository did. When the view cannot be read, kept until the next operation.
        let cache = self.cache_dir.join(format!("changes-{id}.v2"));
        let key = match snapshot {
            true => None,
            false => self.changes_key(id, &base, &landed),
        };
        if let Some(key) = key.as_deref() {
            let kept = self.bundle_get(id, key);
            if let Some(found) = kept.as_deref().and_then(|text| parse_kept(text, key)) {
                return Ok(found);
            }
            if let Some((found, text)) = cached(&cache, key) {
                self.bundle_put(id, text);
                return Ok(found);
            }
        }
        let base = self.since_landed(id, base, &landed)?;
        let revset = format!("({})..@", base.join(" | "));
        let mut call = self.call(ws)?;
        if !snapshot {
            call = call.arg("--ignore-working-copy");
        }
        let out = call
            .args(["log", "--no-graph", "-T", CHANGES_TEMPLATE])
            .arg(format!("--revisions={revset}"))
            .stdout()
            .map_err(|e| read_failed(id, ws, e))?;
        let found = self.changes_from(id, &base, &out, snapshot)?;
        if let Some(key) = key {
            let text = format!("{key}{}\n{}\n{out}{}", out.len(), found.0, found.1);
            super::store_atomically(&cache, &text);
            self.bundle_put(id, text);
        }
        Ok(found.2)
    }

    /// [`Jj::changes`] from jj's log output `out`: the base compared with, git's diff
    /// output and the changes.
    fn changes_from(
        &self,
        id: &WorkspaceId,
        base: &[String],
        out: &str,
        snapshot: bool,
    ) -> Result<(String, String, Changes)> {
        let against = self.merged_base(base)?;
        let mut changes = parse_log(out, snapshot, against.clone(), "").ok_or_else(|| {
            VcsError::NotDescendant {
                id: id.clone(),
                base: base.join(", "),
            }
        })?;
        let files = self
            .git()?
            .args(DIFF_ARGS)
            .args([against.as_str(), changes.latest.as_str(), "--"])
            .stdout()?;
        changes.files = diff::parse_changes(&files);
        Ok((against, files, changes))
    }
}

impl Jj {
    /// The key [`Jj::changes`] keeps the answer for workspace `id` against `base` (and the
    /// `landed` changes) under, read without a snapshot.
    fn changes_key(&self, id: &WorkspaceId, base: &[String], landed: &[&str]) -> Option<String> {
        let since = format!("{}\n{}", base.join(","), landed_line(landed));
        match self.working_copy_commit(id) {
            Some(commit) => Some(format!("wc {commit}\n{since}")),
            None => self.op_heads_key().map(|heads| format!("{heads}\n{since}")),
        }
    }

    /// What the changes of workspace `id` are read since: `base`, or once the `landed`
    /// changes are in its history, the commits those sit on there (as they are now, the
    /// user's rewording or rebasing of them included), so that what they were landed onto
    /// (the target's own commits) is not taken for the workspace's work; landed commits the
    /// user moved out of its history leave it the newest commits it shares with them.
    fn since_landed(
        &self,
        id: &WorkspaceId,
        base: Vec<String>,
        landed: &[&str],
    ) -> Result<Vec<String>> {
        if landed.is_empty() {
            return Ok(base);
        }
        let mut stop: Vec<String> = base.iter().map(|c| format!("present({c})")).collect();
        let (landed, ws) = (super::by_change(landed), workspace_revset(id));
        // Landed commits in its history: what they sit on. Landed commits moved out of
        // it (`jj rebase -r`): the newest commits it shares with their history.
        stop.push(format!("parents(roots(({landed}) & ::{ws}))"));
        stop.push(format!("(::{ws} & ::(({landed}) ~ ::{ws}))"));
        let out = self
            .query()?
            .args(["log", "--no-graph", "-T", r#"commit_id ++ "\n""#])
            .arg(format!("--revisions=heads({})", stop.join(" | ")))
            .stdout()?;
        let heads: Vec<String> = out.lines().map(str::to_string).collect();
        Ok(match heads.is_empty() {
            true => base,
            false => heads,
        })
    }

    /// [`Jj::changes`] without a snapshot when its answer is kept (and no jj or git process
    /// is needed to give it); `None` otherwise.
    pub(crate) fn kept_changes(&self, id: &WorkspaceId, since: Since) -> Option<Changes> {
        let base: Vec<&str> = since
            .base
            .iter()
            .map(String::as_str)
            .filter(|c| is_id(c))
            .collect();
        if base.is_empty() {
            return None;
        }
        // The key of [`Jj::changes_key`], compared piece by piece (a table asks a thousand
        // times: no key is formatted). The view is read before the bundle is locked.
        let view = self.working_copies();
        let bundle = self.bundle.lock().ok()?;
        let text = bundle.as_ref()?.entries.get(id.as_str())?;
        let rest = match view.as_deref().and_then(|view| super::commit_in(view, id)) {
            Some(commit) => text
                .strip_prefix("wc ")?
                .strip_prefix(commit)?
                .strip_prefix('\n')?,
            None => text
                .strip_prefix(self.op_heads_key()?.as_str())?
                .strip_prefix('\n')?,
        };
        let mut rest = rest;
        for (i, commit) in base.iter().enumerate() {
            if i > 0 {
                rest = rest.strip_prefix(',')?;
            }
            rest = rest.strip_prefix(commit)?;
        }
        let rest = rest
            .strip_prefix('\n')?
            .strip_prefix(landed_line(&change_ids(since.landed)).as_str())?;
        parse_kept_body(rest)
    }

    /// The kept entry of workspace `id` in the pinned bundle, when it is under `key`.
    fn bundle_get(&self, id: &WorkspaceId, key: &str) -> Option<String> {
        let bundle = self.bundle.lock().ok()?;
        let text = bundle.as_ref()?.entries.get(id.as_str())?;
        text.starts_with(key).then(|| text.clone())
    }

    /// Keeps `text` as workspace `id`'s entry in the pinned bundle (none when not pinned).
    fn bundle_put(&self, id: &WorkspaceId, text: String) {
        if let Ok(mut bundle) = self.bundle.lock() {
            if let Some(bundle) = bundle.as_mut() {
                bundle.entries.insert(id.to_string(), text);
                bundle.changed = true;
            }
        }
    }
}

/// Every workspace's kept changes in one file (`changes.v2.kept`), read when a table pins the
/// view and written back when it ends: a thousand workspaces cost one read. An entry holds
/// what the workspace's own file holds, under the same key (its working-copy commit and
/// base), so it can never answer for another commit.
#[derive(Default)]
pub(crate) struct Bundle {
    entries: std::collections::HashMap<String, String>,
    changed: bool,
}

/// The bundle's file in the cache directory.
const BUNDLE: &str = "changes.v2.kept";
/// The file an earlier version kept the answers in, removed when this one is written.
const SUPERSEDED: &str = "changes.v2.all";

impl Bundle {
    /// The bundle kept in `cache_dir` (empty when there is none or it cannot be read).
    pub(super) fn read(cache_dir: &Path) -> Bundle {
        let entries = crate::store::fsutil::read_untrusted(
            &cache_dir.join(BUNDLE),
            crate::store::fsutil::UNTRUSTED_LIMIT,
        )
        .ok()
        .map(|text| parse_bundle(&text))
        .unwrap_or_default();
        Bundle {
            entries,
            changed: false,
        }
    }

    /// Writes the bundle back when an entry was added or replaced.
    pub(super) fn write(self, cache_dir: &Path) {
        // The earlier version's file goes once this one is written (in a directory just
        // checked to be no link; unlink removes the name).
        if self.changed
            && super::store_atomically(&cache_dir.join(BUNDLE), &bundle_text(&self.entries))
        {
            let _ = std::fs::remove_file(cache_dir.join(SUPERSEDED));
        }
    }
}

/// The bundle's file: for each entry its workspace's id, a newline, the entry's length in
/// bytes, a newline, the entry, a newline. An entry holds NULs and newlines (jj's and
/// git's output): its length, not an escape, tells where it ends, so reading a thousand
/// entries is a copy, not a JSON parse.
fn bundle_text(entries: &std::collections::HashMap<String, String>) -> String {
    let mut text = String::new();
    for (id, entry) in entries {
        text.push_str(id);
        text.push('\n');
        text.push_str(&entry.len().to_string());
        text.push('\n');
        text.push_str(entry);
        text.push('\n');
    }
    text
}

/// The entries of a bundle file's `text` ([`bundle_text`]), up to the first that is not
/// one (each is still checked against its key when used).
fn parse_bundle(text: &[u8]) -> std::collections::HashMap<String, String> {
    let mut entries = std::collections::HashMap::new();
    let Ok(mut rest) = std::str::from_utf8(text) else {
        return entries;
    };
    while !rest.is_empty() {
        let Some((id, after)) = rest.split_once('\n') else {
            break;
        };
        let Some((len, after)) = after.split_once('\n') else {
            break;
        };
        let Ok(len) = len.parse::<usize>() else {
            break;
        };
        let (Some(entry), Some(after)) = (after.get(..len), after.get(len..)) else {
            break;
        };
        let Some(after) = after.strip_prefix('\n') else {
            break;
        };
        entries.insert(id.to_string(), entry.to_string());
        rest = after;
    }
    entries
}

/// The changes a cache entry's `text` holds under `key`.
fn parse_kept(text: &str, key: &str) -> Option<Changes> {
    parse_kept_body(text.strip_prefix(key)?)
}

/// The changes a cache entry holds after its key.
fn parse_kept_body(rest: &str) -> Option<Changes> {
    let (len, rest) = rest.split_once('\n')?;
    let (against, rest) = rest.split_once('\n')?;
    let len: usize = len.parse().ok()?;
    let (out, files) = (rest.get(..len)?, rest.get(len..)?);
    parse_log(out, false, against.to_string(), files)
}

/// The changes the cache entry at `path` holds for `key` (format: `<key><log length>\n
/// <against>\n<log><diff>`), with the entry's text.
fn cached(path: &Path, key: &str) -> Option<(Changes, String)> {
    let text = std::fs::read_to_string(path).ok()?;
    let found = parse_kept(&text, key)?;
    Some((found, text))
}

/// The changes from jj's log output `out` ([`CHANGES_TEMPLATE`]) and git's diff `files`;
/// `None` when the output holds no working-copy commit (it does not descend from the base).
fn parse_log(out: &str, snapshot: bool, against: String, files: &str) -> Option<Changes> {
    let mut commits = diff::parse_work_commits(out, 3);
    let at = commits.iter().position(|c| c.commit_id.starts_with('@'))?;
    let marked = commits.remove(at).commit_id;
    let (written, commit) = marked[1..].split_once(' ').unwrap_or(("", &marked[1..]));
    let (latest, written) = (commit.to_string(), written.to_string());
    Some(Changes {
        against,
        latest,
        commits,
        files: diff::parse_changes(files),
        as_of: match snapshot {
            true => AsOf::LiveFiles,
            false => AsOf::LastSnapshot(
                Some(written)
                    .filter(|w| !w.is_empty())
                    .map(|w| Timestamp::parse(&w)),
            ),
        },
    })
}

impl Jj {
    /// The git-format patch from `from` to `to`, made by git in the backing repository.
    pub(crate) fn patch(&self, from: &str, to: &str) -> Result<Vec<u8>> {
        Ok(self
            .git()?
            .args(PATCH_ARGS)
            .args([from, to, "--"])
            .stdout_bytes()?)
    }

    /// For records without base commits: the newest commits workspace `id` shares with the
    /// main working copy or trunk.
    fn shared_base(&self, id: &WorkspaceId) -> Result<Vec<String>> {
        let revset = format!(
            "heads(::{} & ::(trunk() | present(default@)))",
            workspace_revset(id)
        );
        let out = self
            .query()?
            .args(["log", "--no-graph", "-T", r#"commit_id ++ "\n""#])
            .arg(format!("--revisions={revset}"))
            .stdout()?;
        Ok(out.lines().map(str::to_string).collect())
    }

    /// The one commit to compare with: the base, or for several base commits the tree git
    /// merges them into (the first base when they conflict).
    fn merged_base(&self, base: &[String]) -> Result<String> {
        // jj's root commit (all zeros) has no git commit behind it: it is the empty tree.
        let base: Vec<String> = base
            .iter()
            .map(|c| match c.bytes().all(|b| b == b'0') {
                true => EMPTY_TREE.to_string(),
                false => c.clone(),
            })
            .collect();
        if base.len() < 2 {
            return Ok(base.first().cloned().unwrap_or_default());
        }
        let merged = self
            .git()?
            .args(["merge-tree", "--write-tree", "--no-messages"])
            .args(&base)
            .stdout();
        Ok(match merged {
            Ok(out) => out.lines().next().unwrap_or_default().to_string(),
            Err(_) => base[0].clone(),
        })
    }

    /// git on the repository backing this jj repository.
    pub(super) fn git(&self) -> Result<Call> {
        let dir = self.git_dir().ok_or(VcsError::NotGitBacked)?;
        Ok(Call::new(crate::exec::process::find("git")?)
            .arg("--git-dir")
            .arg(dir)
            .env("LC_ALL", "C")
            .env("GIT_TERMINAL_PROMPT", "0"))
    }

    /// The git repository backing the store, from `store/git_target`.
    pub(super) fn git_dir(&self) -> Option<PathBuf> {
        let store = self.store.join("store");
        let target =
            crate::store::fsutil::read_untrusted_string(&store.join("git_target"), 4096).ok()?;
        Some(store.join(target.trim()))
    }
}

/// The key's line for the `landed` changes: none when there are none (the key is then as
/// before lands were known by their changes).
fn landed_line(landed: &[&str]) -> String {
    match landed.is_empty() {
        true => String::new(),
        false => format!("landed {}\n", landed.join(",")),
    }
}

/// Only jj change ids (lowercase letters) reach a revset: they come from a record the
/// workspace can write.
fn change_ids(landed: &[String]) -> Vec<&str> {
    landed
        .iter()
        .map(String::as_str)
        .filter(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_lowercase()))
        .collect()
}

/// Only commit ids reach a revset: the base comes from a record the workspace can write.
fn hex_ids(base: &[String]) -> Vec<String> {
    base.iter().filter(|c| is_id(c)).cloned().collect()
}

/// Whether `c` is a commit id (hex): nothing else may reach a revset or a kept key.
fn is_id(c: &str) -> bool {
    !c.is_empty() && c.bytes().all(|b| b.is_ascii_hexdigit())
}

fn read_failed(id: &WorkspaceId, ws: &Path, e: crate::exec::process::ProcessError) -> VcsError {
    match classify::failure(e.stderr()) {
        Failure::Stale => VcsError::Stale { id: id.clone() },
        Failure::NoWorkingCopy => VcsError::Unregistered {
            id: id.to_string(),
            path: ws.to_path_buf(),
        },
        _ => VcsError::Changes {
            id: id.clone(),
            source: Box::new(e),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_reads_back_as_written_up_to_a_bad_entry() {
        let mut entries = std::collections::HashMap::new();
        entries.insert("w1".to_string(), "wc ab\nc\n3\nx\0y\n\0é".to_string());
        entries.insert("w2".to_string(), String::new());
        let text = bundle_text(&entries);
        assert_eq!(parse_bundle(text.as_bytes()), entries);
        let cut = parse_bundle(format!("{text}w3\n99\nshort\n").as_bytes());
        assert_eq!(cut, entries);
        assert!(parse_bundle(b"w1\nnot a length\nx\n").is_empty());
        assert!(parse_bundle(b"\xff").is_empty());
    }

    #[test]
    fn a_kept_answer_reads_back_only_under_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("changes-w1.v1");
        let key = "op1\nabc\n";
        let out = "@2026-11-26T10:00:00Z c2\0k2\0\0c1\0k1\0one\ntwo\n\0";
        let files = ":100644 100644 aaa bbb M\0a.txt\x002\t1\ta.txt\0";
        let text = format!("{key}{}\nbase\n{out}{files}", out.len());
        std::fs::write(&path, text).unwrap();
        let found = cached(&path, key).unwrap().0;
        assert_eq!(found.latest, "c2");
        assert_eq!(found.against, "base");
        assert_eq!(found.commits.len(), 1);
        assert_eq!(found.commits[0].description, "one\ntwo");
        assert_eq!(found.files[0].added, 2);
        assert_eq!(
            found.as_of,
            AsOf::LastSnapshot(Some(Timestamp::parse("2026-11-26T10:00:00Z")))
        );
        assert!(cached(&path, "op2\nabc\n").is_none());
    }
}
