//! What keeps a jj workspace's work when it is removed: its working-copy commit, the files
//! that commit holds, and the earlier commits of the workspace.

use std::path::{Path, PathBuf};

use super::stale::{recovery_dir, Probe};
use super::{workspace_revset, Jj};
use crate::store::disk::NoRoom;
use crate::store::layout::WorkspaceId;
use crate::vcs::error::{Result, VcsError};
use crate::vcs::Kept;
use crate::vcs::COMMIT_TEMPLATE_JJ;

/// Change id, commit id, and whether forgetting the workspace abandons its commit.
const KEEP_TEMPLATE: &str = r#"change_id ++ "\t" ++ commit_id ++ "\t" ++ if(empty && description == "", "abandon", "keep") ++ "\n""#;

impl Jj {
    pub(crate) fn keep_edits(&self, id: &WorkspaceId, path: Option<&Path>) -> Result<Kept> {
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

    /// [`Jj::keep_edits`] of the workspace at `ws`, with (when it is registered) the
    /// [`Jj::work_commits_and_tracked`] it is removed with, from one jj process: the query
    /// that snapshots the workspace also prints its other commits holding work and the files
    /// its working-copy commit holds. On any other failure of that query (one the separate
    /// queries may not have) it falls back to them, without the listing. `room` is asked
    /// first whether [`Jj::bytes_to_record`] fits (refused: [`VcsError::NoRoom`]).
    #[allow(clippy::type_complexity)]
    pub(crate) fn keep_edits_listing(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        base: &[String],
        room: &dyn Fn(u64) -> std::result::Result<(), NoRoom>,
    ) -> Result<(Kept, Option<(Vec<crate::vcs::Commit>, Vec<PathBuf>)>)> {
        self.resume_recovery(ws, &recovery_dir(ws))?;
        room(self.bytes_to_record(ws)).map_err(VcsError::NoRoom)?;
        let revset = format!("@ | {}", work_revset("@", base));
        let out = match self.probe_revset(ws, &revset, LISTING_TEMPLATE) {
            Ok(Probe::Fresh(out)) => Some(out),
            Ok(Probe::Unknown) => return Ok((Kept::Unregistered, None)),
            Ok(Probe::Stale) => {
                self.carry_across_update(ws, &recovery_dir(ws))?;
                let call = self.listing_call(ws, &revset)?.arg(LISTING_TEMPLATE);
                call.stdout().ok()
            }
            Err(_) => None,
        };
        match out.as_deref().and_then(parse_listing) {
            Some((kept, commits, tracked)) => Ok((kept, Some((commits, tracked)))),
            None => Ok((self.keep_edits(id, Some(ws))?, None)),
        }
    }

    /// At most what jj's snapshot of the workspace at `ws` writes: the files changed since
    /// its `tree_state` was written, the ignored ones aside.
    pub(crate) fn bytes_to_record(&self, ws: &Path) -> u64 {
        let recorded = [ws.join(".jj/working_copy/tree_state")];
        crate::vcs::changed_bytes(
            ws,
            &recorded,
            self.ignored_files(ws, true).unwrap_or_default(),
        )
    }

    /// The files of the workspace at `ws` that jj's snapshot leaves out as ignored
    /// (`.gitignore` at any depth, the backing repository's `info/exclude`), relative to `ws`:
    /// asked of git with an empty index, so every file is compared with the ignore rules.
    /// With `dirs`, a directory whose files are all ignored is listed alone (`target/`).
    pub(crate) fn ignored_files(&self, ws: &Path, dirs: bool) -> Result<Vec<PathBuf>> {
        let out = self
            .git_without_index(ws)?
            .args([
                "ls-files",
                "-z",
                "--others",
                "--ignored",
                "--exclude-standard",
            ])
            .args(dirs.then_some("--directory"))
            .stdout()?;
        Ok(crate::vcs::split_nul(&out))
    }

    /// git in the workspace at `ws` with an index file that does not exist: every file on
    /// disk is compared with the ignore rules, none taken for tracked.
    pub(super) fn git_without_index(&self, ws: &Path) -> Result<crate::exec::process::Call> {
        let no_index = std::env::temp_dir().join(format!(
            "agent-workspace-no-index-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        Ok(self
            .git()?
            .arg("--work-tree")
            .arg(ws)
            .env("GIT_INDEX_FILE", no_index)
            .arg("-C")
            .arg(ws))
    }

    /// The files the working-copy commit of workspace `id` holds, relative to its root; call
    /// it after [`Jj::keep_edits`] snapshotted the workspace.
    pub(crate) fn tracked(&self, id: &WorkspaceId) -> Result<Vec<PathBuf>> {
        let out = self
            .query()?
            .args(["file", "list", "-T", "path ++ \"\\0\""])
            .arg(format!("--revision={}", workspace_revset(id)))
            .stdout()?;
        Ok(crate::vcs::split_nul(&out))
    }

    /// The commits of workspace `id` below its working-copy commit that hold work (non-empty
    /// or described), newest first: those in `::<id>@` but not in `::base` (when no base was
    /// recorded, not in `::(trunk() | default@)`).
    pub(crate) fn work_commits(
        &self,
        id: &WorkspaceId,
        base: &[String],
    ) -> Result<Vec<crate::vcs::Commit>> {
        let out = self.work_commits_call(id, base)?.stdout()?;
        Ok(crate::vcs::parse_commits(&out))
    }

    /// [`Jj::work_commits`] and [`Jj::tracked`] at once: two read-only jj processes side by
    /// side, since neither needs the other's answer.
    pub(crate) fn work_commits_and_tracked(
        &self,
        id: &WorkspaceId,
        base: &[String],
    ) -> (Result<Vec<crate::vcs::Commit>>, Result<Vec<PathBuf>>) {
        let commits = self
            .work_commits_call(id, base)
            .and_then(|call| Ok(call.start()?));
        let tracked = self.tracked(id);
        let commits = commits.and_then(|started| Ok(started.wait()?));
        (commits.map(|out| crate::vcs::parse_commits(&out)), tracked)
    }

    fn work_commits_call(
        &self,
        id: &WorkspaceId,
        base: &[String],
    ) -> Result<crate::exec::process::Call> {
        Ok(self
            .query()?
            .args(["log", "--no-graph", "-T", COMMIT_TEMPLATE_JJ])
            .arg(format!(
                "--revisions={}",
                work_revset(&workspace_revset(id), base)
            )))
    }
}

/// The revset of the commits below the working-copy commit `ws` (a revset naming it) that
/// hold work: those in `::ws` but not in `::base` (when no base was recorded, not in
/// `::(trunk() | default@)`), and not empty without a description.
fn work_revset(ws: &str, base: &[String]) -> String {
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
    format!("(::{ws} ~ ::({base}) ~ {ws}) ~ (empty() & description(exact:\"\"))")
}

/// [`Jj::keep_edits_listing`]'s template: the working-copy commit as [`KEEP_TEMPLATE`]'s
/// fields behind `@`, then each file it holds, then an empty record; every other commit as
/// [`COMMIT_TEMPLATE_JJ`] behind `c`. Each record ends with NUL (a path may hold any other
/// byte).
const LISTING_TEMPLATE: &str = concat!(
    r#"if(current_working_copy, "@\t" ++ change_id ++ "\t" ++ commit_id ++ "\t" ++ "#,
    r#"if(empty && description == "", "abandon", "keep") ++ "\0" ++ "#,
    r#"self.files().map(|f| f.path() ++ "\0").join("") ++ "\0", "#,
    r#""c\t" ++ commit_id ++ "\t" ++ change_id ++ "\t" ++ description.first_line() ++ "\0")"#
);

/// Reads [`LISTING_TEMPLATE`]'s output: what keeps the edits, the other commits holding
/// work, the files; `None` when the working-copy commit's record is not whole.
fn parse_listing(text: &str) -> Option<(Kept, Vec<crate::vcs::Commit>, Vec<PathBuf>)> {
    // Every record ends with NUL: what follows the last one is not a record.
    let mut records = text.trim_end_matches('\n').strip_suffix('\0')?.split('\0');
    let (mut kept, mut commits, mut files) = (None, String::new(), vec![]);
    while let Some(record) = records.next() {
        let record = record.trim_start_matches('\n');
        if let Some(fields) = record.strip_prefix("@\t") {
            kept = Some(parse_kept(fields));
            // Its files, up to the empty record that ends them.
            let mut ended = false;
            for path in records.by_ref() {
                if path.is_empty() {
                    ended = true;
                    break;
                }
                files.push(PathBuf::from(path));
            }
            if !ended {
                return None;
            }
        } else if let Some(commit) = record.strip_prefix("c\t") {
            commits.push_str(commit);
            commits.push('\0');
        }
    }
    Some((kept?, crate::vcs::parse_commits(&commits), files))
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
    fn listing_reads_the_working_copy_its_files_and_the_other_commits() {
        // Paths may look like records ("c\t...", "@\t...") and hold newlines; the empty
        // record ends them.
        let text = "@\tchg\tcid\tkeep\0a.txt\0c\tx\ty\0@\tz\0new\nline\0\0\
                    c\tc1\tk1\tfirst\0c\tc2\tk2\t\0";
        let (kept, commits, files) = parse_listing(text).unwrap();
        assert_eq!(
            kept,
            Kept::Change {
                change_id: "chg".into(),
                commit_id: "cid".into()
            }
        );
        let names = ["a.txt", "c\tx\ty", "@\tz", "new\nline"];
        assert_eq!(files, names.map(PathBuf::from));
        let ids: Vec<_> = commits.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["c1", "c2"]);
        assert_eq!(commits[0].subject, "first");
        // Commits printed before the working copy's record are read too.
        let (kept, commits, files) =
            parse_listing("c\tc1\tk1\ts\0@\tchg\tcid\tabandon\0\0").unwrap();
        assert_eq!((kept, commits.len(), files.len()), (Kept::Nothing, 1, 0));
        // No record of the working copy, or its files cut short: not whole.
        assert!(parse_listing("c\tc1\tk1\ts\0").is_none());
        assert!(parse_listing("@\tchg\tcid\tkeep\0a.txt\0").is_none());
    }
}
