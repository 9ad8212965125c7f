//! What a workspace changed since its base, as both backends report it: its commits and
//! the files its latest state changes, read from `git diff -z --raw --numstat -M` (jj's
//! commits are git commits in its backing repository, so one parser serves both).

use std::collections::HashMap;

use crate::store::timestamp::Timestamp;

/// How a file changed between the base and the workspace's latest state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub(crate) enum FileStatus {
    Created,
    Modified,
    Deleted,
    Renamed,
}

impl FileStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FileStatus::Created => "created",
            FileStatus::Modified => "modified",
            FileStatus::Deleted => "deleted",
            FileStatus::Renamed => "renamed",
        }
    }
}

/// One changed file, its path relative to the workspace root.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct FileChange {
    pub path: String,
    /// The path it had in the base, for a renamed file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    pub status: FileStatus,
    /// Lines added; 0 for a binary file.
    pub added: u64,
    /// Lines removed; 0 for a binary file.
    pub removed: u64,
    pub binary: bool,
}

/// A commit the workspace made on top of its base.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct WorkCommit {
    pub commit_id: String,
    /// jj's change id; none for git.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_id: Option<String>,
    /// The first line of its description.
    pub subject: String,
    /// The full description (commit message), without its trailing newline.
    pub description: String,
}

/// What a workspace's changes are read since: its recorded base commits and (jj) the change
/// ids its last land brought into its target. Once those sit in the workspace's history,
/// what they landed on (the target's own commits, the user's among them) is not the
/// workspace's work: jj reads its changes since the landed commits' parents instead.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Since<'a> {
    pub base: &'a [String],
    pub landed: &'a [String],
}

impl<'a> Since<'a> {
    /// The changes since the base and the last land of the workspace whose record is `record`.
    pub(crate) fn of(record: &'a crate::store::metadata::Record) -> Since<'a> {
        Since {
            base: &record.base_commits,
            landed: record.landed_changes(),
        }
    }
}

/// Everything a workspace changed since its base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Changes {
    /// The commit (or, for several base commits, the merged tree) the files are compared to.
    pub against: String,
    /// The workspace's latest state: jj's working-copy commit, or the tree of a git
    /// worktree's files (its uncommitted changes included).
    pub latest: String,
    /// Its commits, newest first (for jj, without the working-copy commit).
    pub commits: Vec<WorkCommit>,
    pub files: Vec<FileChange>,
    /// The moment the files show.
    pub as_of: AsOf,
}

/// The moment a workspace's changes show: its files as they are now, or (jj read without
/// snapshotting, as while a run holds the workspace) as jj last recorded them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AsOf {
    /// The files on disk now (git always; jj after a snapshot).
    LiveFiles,
    /// jj's working-copy commit as last snapshotted, written at this time.
    LastSnapshot(Option<Timestamp>),
}

impl AsOf {
    /// `live-files` or `last-snapshot`, as the JSON says it.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            AsOf::LiveFiles => "live-files",
            AsOf::LastSnapshot(_) => "last-snapshot",
        }
    }

    /// When the last snapshot was written, for [`AsOf::LastSnapshot`].
    pub(crate) fn snapshot_at(&self) -> Option<&Timestamp> {
        match self {
            AsOf::LastSnapshot(at) => at.as_ref(),
            AsOf::LiveFiles => None,
        }
    }

    /// `live files` or `as of jj's last snapshot at <time>`.
    pub(crate) fn describe(&self) -> String {
        match self {
            AsOf::LiveFiles => "live files".into(),
            AsOf::LastSnapshot(Some(at)) => format!("as of jj's last snapshot at {at}"),
            AsOf::LastSnapshot(None) => "as of jj's last snapshot".into(),
        }
    }
}

/// The arguments of the `git diff` whose output [`parse_changes`] reads, before the revisions.
pub(crate) const DIFF_ARGS: [&str; 9] = [
    "diff",
    "-z",
    "--raw",
    "--numstat",
    "-M",
    "--no-ext-diff",
    "--no-textconv",
    "--no-relative",
    "--no-color",
];

/// The arguments of the patch `git diff`, before the revisions: renames detected, binary
/// files in full, the usual `a/` `b/` prefixes whatever the user's configuration says.
pub(crate) const PATCH_ARGS: [&str; 10] = [
    "diff",
    "--binary",
    "-M",
    "--no-ext-diff",
    "--no-textconv",
    "--no-relative",
    "--no-color",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--submodule=short",
];

/// Parses `git diff -z --raw --numstat -M` output: raw records (`:<modes> <ids> <status>`
/// then one path, or two for a rename) followed by numstat records (`<add>\t<del>\t<path>`,
/// or `<add>\t<del>\t` then the old and new paths; `-` for a binary file).
pub(crate) fn parse_changes(text: &str) -> Vec<FileChange> {
    let mut tokens = text.split('\0');
    let mut files: Vec<FileChange> = vec![];
    let mut stats: HashMap<String, (Option<u64>, Option<u64>)> = HashMap::new();
    while let Some(token) = tokens.next() {
        if let Some(meta) = token.strip_prefix(':') {
            let status = meta.rsplit(' ').next().unwrap_or("");
            let first = tokens.next().unwrap_or("").to_string();
            let (status, path, old_path) = match status.chars().next() {
                Some('R') => (
                    FileStatus::Renamed,
                    tokens.next().unwrap_or("").into(),
                    Some(first),
                ),
                Some('C' | 'A') => (FileStatus::Created, first, None),
                Some('D') => (FileStatus::Deleted, first, None),
                _ => (FileStatus::Modified, first, None),
            };
            files.push(FileChange {
                path,
                old_path,
                status,
                added: 0,
                removed: 0,
                binary: false,
            });
        } else if let Some((add, rest)) = token.split_once('\t') {
            let Some((del, path)) = rest.split_once('\t') else {
                continue;
            };
            let path = match path {
                "" => {
                    tokens.next();
                    tokens.next().unwrap_or("").to_string()
                }
                p => p.to_string(),
            };
            stats.insert(path, (add.parse().ok(), del.parse().ok()));
        }
    }
    for file in &mut files {
        match stats.get(&file.path) {
            Some((Some(add), Some(del))) => (file.added, file.removed) = (*add, *del),
            Some(_) => file.binary = true,
            None => {}
        }
    }
    files
}

/// Parses commit records of `fields` NUL-separated fields each (NUL-terminated), the first
/// the commit id, the last its description; a middle field, when present, the change id.
pub(crate) fn parse_work_commits(text: &str, fields: usize) -> Vec<WorkCommit> {
    let parts: Vec<&str> = text.split('\0').collect();
    parts
        .chunks_exact(fields)
        .filter(|rec| !rec[0].trim().is_empty())
        .map(|rec| WorkCommit {
            commit_id: rec[0].trim().to_string(),
            change_id: (fields > 2).then(|| rec[1].to_string()),
            subject: rec[fields - 1].lines().next().unwrap_or("").to_string(),
            description: rec[fields - 1].trim_end().to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_change() {
        let text = ":100644 100644 de98044 f8f7a32 M\0a.txt\0\
            :100644 100644 88768ef 3e3315e M\0bin.dat\0\
            :100644 000000 587be6b 0000000 D\0del.txt\0\
            :000000 100755 0000000 3e75765 A\0new\tfile\0\
            :100644 100644 96cc558 a699df2 R096\0ren.txt\0dir/ren2.txt\0\
            2\t1\ta.txt\0-\t-\tbin.dat\0\x30\t1\tdel.txt\0\
            1\t0\tnew\tfile\0\x31\t0\t\0ren.txt\0dir/ren2.txt\0";
        let files = parse_changes(text);
        let summary: Vec<_> = files
            .iter()
            .map(|f| {
                (
                    f.path.as_str(),
                    f.old_path.as_deref(),
                    f.status,
                    f.added,
                    f.removed,
                    f.binary,
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                ("a.txt", None, FileStatus::Modified, 2, 1, false),
                ("bin.dat", None, FileStatus::Modified, 0, 0, true),
                ("del.txt", None, FileStatus::Deleted, 0, 1, false),
                ("new\tfile", None, FileStatus::Created, 1, 0, false),
                (
                    "dir/ren2.txt",
                    Some("ren.txt"),
                    FileStatus::Renamed,
                    1,
                    0,
                    false
                ),
            ]
        );
        assert!(parse_changes("").is_empty());
    }

    #[test]
    fn commit_records() {
        let jj = parse_work_commits("abc\0kxy\0two\nlines\n\0def\0kzz\0\0", 3);
        assert_eq!(jj.len(), 2);
        assert_eq!(jj[0].change_id.as_deref(), Some("kxy"));
        assert_eq!(jj[0].description, "two\nlines");
        let git = parse_work_commits("abc\0subject\n\0", 2);
        assert_eq!(git[0].change_id, None);
        assert_eq!(git[0].description, "subject");
    }
}
