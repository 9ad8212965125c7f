//! What keeps a jj workspace's work when it is removed: its working-copy commit, the files
//! that commit holds, and the earlier commits of the workspace.

use std::path::{Path, PathBuf};

use super::stale::{recovery_dir, Probe};
use super::{workspace_revset, Jj};
use crate::vcs::error::Result;
use crate::vcs::Kept;
use crate::vcs::COMMIT_TEMPLATE_JJ;

/// Change id, commit id, and whether forgetting the workspace abandons its commit.
const KEEP_TEMPLATE: &str = r#"change_id ++ "\t" ++ commit_id ++ "\t" ++ if(empty && description == "", "abandon", "keep") ++ "\n""#;

impl Jj {
    pub fn keep_edits(&self, id: &str, path: Option<&Path>) -> Result<Kept> {
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

    /// The files of the workspace at `ws` that jj's snapshot leaves out as ignored
    /// (`.gitignore` at any depth, the backing repository's `info/exclude`), relative to `ws`:
    /// asked of git with an empty index, so every file is compared with the ignore rules.
    /// With `dirs`, a directory whose files are all ignored is listed alone (`target/`).
    pub fn ignored_files(&self, ws: &Path, dirs: bool) -> Result<Vec<PathBuf>> {
        let no_index = std::env::temp_dir().join(format!(
            "agent-workspace-no-index-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let out = self
            .git()?
            .arg("--work-tree")
            .arg(ws)
            .env("GIT_INDEX_FILE", no_index)
            .args(["-C"])
            .arg(ws)
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

    /// The files the working-copy commit of workspace `id` holds, relative to its root; call
    /// it after [`Jj::keep_edits`] snapshotted the workspace.
    pub fn tracked(&self, id: &str) -> Result<Vec<PathBuf>> {
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
    pub fn work_commits(&self, id: &str, base: &[String]) -> Result<Vec<crate::vcs::Commit>> {
        let out = self.work_commits_call(id, base)?.stdout()?;
        Ok(crate::vcs::parse_commits(&out))
    }

    /// [`Jj::work_commits`] and [`Jj::tracked`] at once: two read-only jj processes side by
    /// side, since neither needs the other's answer.
    pub fn work_commits_and_tracked(
        &self,
        id: &str,
        base: &[String],
    ) -> (Result<Vec<crate::vcs::Commit>>, Result<Vec<PathBuf>>) {
        let commits = self
            .work_commits_call(id, base)
            .and_then(|call| Ok(call.start()?));
        let tracked = self.tracked(id);
        let commits = commits.and_then(|started| Ok(started.wait()?));
        (commits.map(|out| crate::vcs::parse_commits(&out)), tracked)
    }

    fn work_commits_call(&self, id: &str, base: &[String]) -> Result<crate::process::Call> {
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
        let ws = workspace_revset(id);
        let revset = format!("(::{ws} ~ ::({base}) ~ {ws}) ~ (empty() & description(exact:\"\"))");
        Ok(self
            .query()?
            .args(["log", "--no-graph", "-T", COMMIT_TEMPLATE_JJ])
            .arg(format!("--revisions={revset}")))
    }
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
}
