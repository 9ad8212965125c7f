//! What a jj land left: the landed commits as rewritten, their files and conflicted files,
//! `--prefer`'s resolutions, and whether a landed workspace's work is all in its target.

use std::path::Path;

use super::land_preview::{parse_preview, Landed};
use super::{by_change, workspace_revset, Jj};
use crate::exec::process::{Call, ProcessError};
use crate::store::layout::WorkspaceId;
use crate::store::metadata::{Conflict, Land, Resolved, Side};
use crate::vcs::land::{hex_ids, JjLanded, Landing, Result};
use crate::vcs::markers::marked_files;

/// The preview template's commit part, with the files each commit changes.
fn landed_template() -> String {
    format!(
        r#""C\0" ++ change_id ++ "\0" ++ commit_id ++ "\0" ++ if(conflict, "c", "-") ++ "\0" ++ description.first_line() ++ "\0" ++ {}"#,
        super::land_preview::FILES_TEMPLATE
    )
}

/// The merge tool `--prefer` configures for its `jj resolve`.
const PREFER_TOOL: &str = "agent-workspace-prefer";

impl Jj {
    fn landed(&self, at: &str, changes: &[&str]) -> Result<Vec<Landed>> {
        let out = self
            .query_at(at)?
            .args(["log", "--no-graph", "--reversed", "-T"])
            .arg(landed_template())
            .arg(format!("--revisions={}", by_change(changes)))
            .stdout()?;
        Ok(parse_preview(&out).commits)
    }

    /// `--prefer`: resolves the oldest conflicted landed commit, until none is left or jj
    /// cannot resolve what remains, with a merge tool configured for the call: `git
    /// merge-file --ours|--theirs` merges each conflicted file again, taking that side in
    /// the conflicting hunks only (both sides' other changes stay, as git's `-X ours|theirs`).
    /// `$left` is the target's side (the new parent), `$right` the workspace's (the rebased
    /// commit). A conflict jj cannot give a tool (more than two sides, a file deleted on one
    /// side) or one git cannot merge (binary) stays a conflict. Each resolution is an
    /// operation of the trial.
    /// A commit that was conflicted before the land holds the workspace's own conflict, not
    /// one between the workspace and the target: it is left alone (`own`). So is a file
    /// conflicted in a commit the landed ones sit on (`inherited`): jj's rebase brings that
    /// commit's conflict terms into the landed commits' merge, whose sides are then not the
    /// workspace's and the target's, and taking one would drop lines both hold (jj seed 3
    /// step 299 of the model-based round).
    pub(super) fn prefer(
        &self,
        changes: &[&str],
        own: &[&str],
        inherited: &[String],
        side: Side,
        trial: &mut Trial,
    ) -> Result<Vec<Resolved>> {
        let flag = match side {
            Side::Workspace => "--theirs",
            Side::Target => "--ours",
        };
        // A TOML literal string: the script holds no single quote.
        let script = format!(
            r#"git merge-file -p {flag} -L target -L base -L workspace "$1" "$2" "$3" > "$4""#
        );
        let mut resolved = vec![];
        for _ in 0..=changes.len() {
            let Some(first) = self
                .landed(&trial.at, changes)?
                .into_iter()
                .find(|l| l.conflicted && !own.contains(&l.change.as_str()))
            else {
                break;
            };
            let files: Vec<String> = self
                .conflicted_files(&trial.at, &first.commit.id)?
                .into_iter()
                .filter(|f| !inherited.contains(f))
                .collect();
            if files.is_empty() {
                break;
            }
            let call = self
                .step(&self.main, &trial.at)?
                .args(["resolve", "-r", &first.commit.id, "--tool", PREFER_TOOL])
                .arg(format!("--config=merge-tools.{PREFER_TOOL}.program='sh'"))
                .arg(format!(
                    r#"--config=merge-tools.{PREFER_TOOL}.merge-args=["-c", '{script}', "sh", "$left", "$base", "$right", "$output"]"#
                ))
                .arg("--")
                .args(files.iter().map(|f| format!("root-file:{f:?}")));
            if trial.run(call).is_err() {
                break;
            }
            let now = self.commit_of(&trial.at, &first.change)?;
            let left = self.conflicted_files(&trial.at, &now)?;
            resolved.extend(
                files
                    .into_iter()
                    .filter(|f| !left.contains(f))
                    .map(|file| Resolved { file, side }),
            );
        }
        resolved.sort_by(|a, b| a.file.cmp(&b.file));
        resolved.dedup();
        Ok(resolved)
    }

    /// The commit of `change` now.
    fn commit_of(&self, at: &str, change: &str) -> Result<String> {
        let out = self
            .query_at(at)?
            .args(["log", "--no-graph", "-T", r#"commit_id ++ "\n""#])
            .arg(format!("--revisions={}", by_change(&[change])))
            .stdout()?;
        Ok(out.lines().next().unwrap_or_default().to_string())
    }

    pub(super) fn conflicted_files(&self, at: &str, commit: &str) -> Result<Vec<String>> {
        let out = self
            .query_at(at)?
            .args(["file", "list", "-r", commit, "-T"])
            .arg(r#"if(conflict, path ++ "\0")"#)
            .stdout()?;
        Ok(crate::vcs::split_nul(&out)
            .into_iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect())
    }

    /// Adds each file the land brings in with conflict markers as ordinary text, which jj
    /// does not know as a conflict: a conflicted file an agent renamed or copied (jj
    /// records the markers under the new path as content; jj seed 3 step 218 of the
    /// model-based round), or markers an agent wrote. The land would write them into the
    /// target unreported; they are conflicts of the landed head `commit` (`--prefer` cannot
    /// settle them: there is no conflict for jj to resolve). A file is one when a line the
    /// change `span` makes adds a marker (`<<<<<<<` or `>>>>>>>` at its start) and jj lists
    /// no conflict in it already.
    pub(super) fn marker_conflicts(
        &self,
        span: &Span,
        commit: &str,
        landing: &mut Landing<JjLanded>,
    ) -> Result<()> {
        let out = self
            .call(span.dir)?
            .arg(format!("--at-op={}", span.at))
            .args(["diff", "--git", "--from", span.from, "--to", span.to])
            .stdout()?;
        for file in marked_files(&out) {
            if !landing.conflicts.iter().any(|c| c.file == file) {
                landing.by.marker_files.push(file.clone());
            }
            landing.add_conflict(commit, file);
        }
        Ok(())
    }

    /// The landed commits as they are now, the files they change, and each conflicted file
    /// of each. Returns them as listed.
    pub(super) fn fill(
        &self,
        at: &str,
        changes: &[&str],
        landing: &mut Landing<JjLanded>,
    ) -> Result<Vec<Landed>> {
        landing.commits.clear();
        landing.conflicts.clear();
        landing.by.marker_files.clear();
        let landed = self.landed(at, changes)?;
        let mut files: Vec<String> = landed.iter().flat_map(|l| l.files.clone()).collect();
        files.sort();
        files.dedup();
        landing.files = files;
        for one in &landed {
            if one.conflicted {
                for file in self.conflicted_files(at, &one.commit.id)? {
                    landing.conflicts.push(Conflict {
                        commit: one.commit.id.clone(),
                        file,
                    });
                }
            }
            landing.commits.push(one.commit.clone());
        }
        Ok(landed)
    }

    /// Whether the work of workspace `id` at `ws` is all in the target of `land`: after a
    /// snapshot of its working copy, no non-empty commit of `::<id>@` outside it.
    pub(crate) fn is_landed(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        land: &Land,
    ) -> crate::vcs::Result<bool> {
        let stop = match land.target.working_copy() {
            Some(name) => workspace_revset(name),
            None => match land
                .commits
                .last()
                .map(|c| hex_ids(std::slice::from_ref(c)))
            {
                Some(ids) if !ids.is_empty() => format!("present({})", ids[0]),
                _ => return Ok(false),
            },
        };
        let ws_rev = workspace_revset(id);
        let out = self
            .call(ws)?
            .args(["log", "--no-graph", "-T", "commit_id"])
            .arg(format!("--revisions=(::{ws_rev} ~ ::({stop})) ~ empty()"))
            .stdout()?;
        Ok(out.trim().is_empty())
    }
}

/// A change between two commits of a trial: `from` to `to`, revsets of the repository at
/// `dir`, at operation `at`.
pub(super) struct Span<'a> {
    pub(super) dir: &'a Path,
    pub(super) at: &'a str,
    pub(super) from: &'a str,
    pub(super) to: &'a str,
}

/// A trial's operations so far (oldest first) and the one the next step starts at.
pub(super) struct Trial {
    pub(super) ops: Vec<String>,
    pub(super) at: String,
}

impl Trial {
    /// Runs a step; the operation it wrote (if it changed anything) is where the next
    /// starts.
    pub(super) fn run(&mut self, call: Call) -> std::result::Result<(), ProcessError> {
        let (_, stderr) = call.output()?;
        if let Some(op) = super::classify::unintegrated_operation(&stderr) {
            self.ops.push(op.to_string());
            self.at = op.to_string();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_revsets() {
        assert_eq!(by_change(&["kx", "zz"]), "change_id(kx) | change_id(zz)");
        assert_eq!(by_change(&["x)|all("]), "none()");
    }
}
