//! What a jj land left: the landed commits as rewritten, their conflicted files, `--prefer`'s
//! resolutions, a dry run's trial and its revert, and whether a landed workspace's work is
//! all in its target.

use std::path::Path;

use super::land::Place;
use super::land_preview::{parse_preview, Landed};
use super::{workspace_revset, Jj};
use crate::metadata::{Conflict, Land, Resolved, Side};
use crate::vcs::land::{hex_ids, Landing, Result};

/// The preview template's commit part, without files.
const LANDED_TEMPLATE: &str = r#""C\0" ++ change_id ++ "\0" ++ commit_id ++ "\0" ++ if(conflict, "c", "-") ++ "\0" ++ description.first_line() ++ "\0""#;

impl Jj {
    fn landed(&self, changes: &[&str]) -> Result<Vec<Landed>> {
        let out = self
            .query()?
            .args(["log", "--no-graph", "--reversed", "-T", LANDED_TEMPLATE])
            .arg(format!("--revisions={}", by_change(changes)))
            .stdout()?;
        Ok(parse_preview(&out).commits)
    }

    /// `--prefer`: resolves the oldest conflicted landed commit by taking one side
    /// (`:theirs` is the rebased commit, the workspace's; `:ours` the target's), until none
    /// is left or jj cannot resolve what remains.
    pub(super) fn prefer(
        &self,
        place: &Place,
        changes: &[&str],
        side: Side,
    ) -> Result<Vec<Resolved>> {
        let tool = match side {
            Side::Workspace => ":theirs",
            Side::Target => ":ours",
        };
        let mut resolved = vec![];
        for _ in 0..=changes.len() {
            let Some(first) = self.landed(changes)?.into_iter().find(|l| l.conflicted) else {
                break;
            };
            let files = self.conflicted_files(&first.commit.id)?;
            let done = self
                .call(&place.dir)?
                .args(["resolve", "--tool", tool, "-r", &first.commit.id])
                .stdout();
            if done.is_err() {
                break;
            }
            resolved.extend(files.into_iter().map(|file| Resolved { file, side }));
        }
        resolved.sort_by(|a, b| a.file.cmp(&b.file));
        resolved.dedup();
        Ok(resolved)
    }

    fn conflicted_files(&self, commit: &str) -> Result<Vec<String>> {
        let out = self
            .query()?
            .args(["file", "list", "-r", commit, "-T"])
            .arg(r#"if(conflict, path ++ "\0")"#)
            .stdout()?;
        Ok(crate::vcs::split_nul(&out)
            .into_iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect())
    }

    /// The landed commits as they are now, and each conflicted file of each.
    pub(super) fn fill(&self, changes: &[&str], landing: &mut Landing) -> Result<()> {
        landing.commits.clear();
        landing.conflicts.clear();
        for landed in self.landed(changes)? {
            if landed.conflicted {
                for file in self.conflicted_files(&landed.commit.id)? {
                    landing.conflicts.push(Conflict {
                        commit: landed.commit.id.clone(),
                        file,
                    });
                }
            }
            landing.commits.push(landed.commit);
        }
        Ok(())
    }

    /// Whether the work of workspace `id` at `ws` is all in the target of `land`: after a
    /// snapshot of its working copy, no non-empty commit of `::<id>@` outside it.
    pub fn is_landed(&self, id: &str, ws: &Path, land: &Land) -> crate::vcs::Result<bool> {
        let stop = match land.target.strip_suffix('@') {
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

/// A revset of the given change ids (jj change ids only: lowercase letters).
fn by_change(changes: &[&str]) -> String {
    let ids: Vec<String> = changes
        .iter()
        .filter(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_lowercase()))
        .map(|c| format!("change_id({c})"))
        .collect();
    match ids.is_empty() {
        true => "none()".into(),
        false => ids.join(" | "),
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
