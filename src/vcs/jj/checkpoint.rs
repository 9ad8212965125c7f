//! Checkpoints of a jj workspace (`jj commit` of its working copy) and the commit a child
//! workspace starts from (its parent's working-copy commit, freshly snapshotted).

use std::path::{Path, PathBuf};

use super::classify::{self, Failure};
use super::stale::recovery_dir;
use super::Jj;
use crate::store::layout::WorkspaceId;
use crate::vcs::error::{Result, VcsError};
use crate::vcs::{Recorded, Unrecorded};

/// Change id and whether the working-copy commit holds changes.
const STATE_TEMPLATE: &str = r#"change_id ++ "\t" ++ if(empty, "empty", "changed") ++ "\n""#;

/// Change id, commit id and the paths the commit changed (NUL-terminated).
const COMMITTED_TEMPLATE: &str = r#"change_id ++ "\t" ++ commit_id ++ "\t" ++ diff.files().map(|f| f.path() ++ "\0").join("") ++ "\n""#;

impl Jj {
    /// Snapshots the working copy of `ws`; when it holds changes, commits them with
    /// `description` (`jj commit`: the working copy continues on a new empty commit on top).
    pub(crate) fn checkpoint(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        description: &str,
    ) -> Result<Recorded> {
        let (out, stderr) = self.snapshot_query(ws, STATE_TEMPLATE)?;
        let unrecorded = parse_refused(&stderr);
        if !out.trim_end().ends_with("\tchanged") {
            return Ok(Recorded {
                unrecorded,
                ..Recorded::default()
            });
        }
        // The snapshot above recorded the files: committing needs no second one. The working
        // copy's files are the new working-copy commit's tree, so jj keeps it fresh.
        self.call(ws)?
            .args(["--ignore-working-copy", "commit", "--message", description])
            .stdout()
            .map_err(|e| VcsError::CheckpointFailed {
                id: id.clone(),
                ws: ws.to_path_buf(),
                jj: true,
                source: Box::new(e),
                unstage_failed: None,
            })?;
        let out = self
            .call(ws)?
            .args(["--ignore-working-copy", "log", "--no-graph", "-r", "@-"])
            .args(["-T", COMMITTED_TEMPLATE])
            .stdout()?;
        let (change_id, commit, files) = parse_committed(&out);
        Ok(Recorded {
            commit: Some(commit),
            change_id: Some(change_id),
            files,
            unrecorded,
        })
    }

    /// Where a child of workspace `parent` (at `ws`) starts: a copy (`jj duplicate`) of the
    /// parent's working-copy commit after a snapshot, so it holds the parent's exact state,
    /// unrecorded edits included. A copy, not the commit itself: a child built on the
    /// parent's working-copy commit would be rebased by jj whenever the parent's working copy
    /// changes, and the parent's later edits would appear in the child.
    pub(crate) fn fork_point(
        &self,
        parent: &WorkspaceId,
        child: &WorkspaceId,
        ws: &Path,
    ) -> Result<String> {
        let (out, _) = self.snapshot_query(ws, "commit_id")?;
        let commit = out.trim().to_string();
        // Ids hold only [A-Za-z0-9._-]: safe inside the template's string literal.
        let description = format!("[workspace {child}] the state of {parent} it started from");
        self.query()?
            .arg(format!(
                "--config=templates.duplicate_description='\"{description}\"'"
            ))
            .args(["duplicate", &commit])
            .stdout()?;
        let copy = self
            .query()?
            .args(["log", "--no-graph", "-T", "commit_id", "-r"])
            .arg(format!(
                "latest((children(parents({commit})) ~ {commit}) & description(substring:\"{description}\"))"
            ))
            .stdout()?;
        match copy.trim() {
            "" => Err(VcsError::NotOneCommit {
                rev: format!("the copy of {commit}"),
                many: false,
            }),
            id => Ok(id.to_string()),
        }
    }

    /// Queries the working-copy commit of `ws` with `template`, which snapshots it first;
    /// its stdout and stderr (jj's warnings). A repair a killed run left is finished first,
    /// and a stale working copy is updated (its edits kept) and queried again. Run from the
    /// workspace, so jj's warnings name its files relative to it.
    fn snapshot_query(&self, ws: &Path, template: &str) -> Result<(String, String)> {
        let scratch = recovery_dir(ws);
        self.resume_recovery(ws, &scratch)?;
        let query = || -> Result<_> {
            Ok(self
                .call(ws)?
                .dir(ws)
                .args(["log", "--no-graph", "-r", "@", "-T", template]))
        };
        match query()?.output() {
            Err(e) if classify::failure(e.stderr()) == Failure::Stale => {
                self.update_stale(ws, &scratch)?;
                Ok(query()?.output()?)
            }
            other => Ok(other?),
        }
    }
}

/// The files jj refused to snapshot (too large), as a checkpoint's unrecorded files.
fn parse_refused(stderr: &str) -> Vec<Unrecorded> {
    classify::refused_snapshot(stderr)
        .into_iter()
        .map(|(path, why)| Unrecorded {
            path,
            why: format!("jj refused to snapshot it: {why}"),
            ignored: false,
        })
        .collect()
}

fn parse_committed(text: &str) -> (String, String, Vec<PathBuf>) {
    let mut fields = text.trim_end_matches('\n').splitn(3, '\t');
    let change = fields.next().unwrap_or_default().to_string();
    let commit = fields.next().unwrap_or_default().to_string();
    let files = crate::vcs::split_nul(fields.next().unwrap_or_default());
    (change, commit, files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed() {
        let (change, commit, files) = parse_committed("kx\tab12\ta.txt\0d/x\0\n");
        assert_eq!((change.as_str(), commit.as_str()), ("kx", "ab12"));
        assert_eq!(files, vec![PathBuf::from("a.txt"), PathBuf::from("d/x")]);
        assert!(parse_committed("kx\tab12\t\n").2.is_empty());
    }
}
