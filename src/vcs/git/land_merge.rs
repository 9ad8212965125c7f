//! The merge a git land decides on, computed with `git merge-tree` without touching any ref,
//! index or worktree: what it brings, the files it conflicts in, and `--prefer`'s side.

use super::Git;
use crate::store::metadata::{Conflict, LandTarget, Resolved, Side};
use crate::vcs::land::{GitLanded, Landing, Plan, Result};

impl Git {
    /// What merging `tip` into `target` (at `onto`) would bring: the commits, the files, the
    /// conflicts (or those `--prefer` resolves), and the merged tree. With `fork` (a child's
    /// copy of its parent's state, see [`Git::fork_copy`]) only what `tip` changed since
    /// `fork` is merged, and `fork` is not among the commits.
    pub(super) fn merge_plan(
        &self,
        plan: &Plan,
        target: &str,
        onto: &str,
        tip: &str,
        fork: Option<&str>,
    ) -> Result<(Landing<GitLanded>, String)> {
        let mut landing = Landing::onto(LandTarget::Revision(target.to_string()));
        let mut not: Vec<String> = vec![onto.to_string()];
        not.extend(fork.map(str::to_string));
        landing.commits = self.work_commits(&[tip], &not)?;
        landing.commits.reverse();
        if landing.commits.is_empty() {
            return Ok((landing, String::new()));
        }
        let (mut tree, mut conflicted) = self.merge_tree(onto, tip, None, fork)?;
        // Files git's rename detection would pair wrongly: reported as conflicts, never
        // merged (see `files_a_rename_would_swallow`) and never settled by `--prefer`.
        let paired = self.files_a_rename_would_swallow(onto, tip)?;
        for file in &paired {
            if !conflicted.contains(file) {
                conflicted.push(file.clone());
            }
        }
        if !conflicted.is_empty() {
            let still = match plan.prefer {
                Some(side) => {
                    let (resolved_tree, mut still) =
                        self.merge_tree(onto, tip, Some(side), fork)?;
                    tree = resolved_tree;
                    // With several merge bases git merges against a virtual base merged
                    // from them, conflict markers included: in a file they disagree on, a
                    // "conflicting hunk" can hold lines only one side changed (say the user
                    // amended the commit the workspace started on), and taking a side
                    // would drop the other's. Such a file is reported, never settled.
                    let disputed = self.files_merge_bases_disagree_on(onto, tip)?;
                    for file in &conflicted {
                        let unsettled = disputed.contains(file) || paired.contains(file);
                        if unsettled && !still.contains(file) {
                            still.push(file.clone());
                        }
                    }
                    if still.is_empty() {
                        landing.resolved = conflicted
                            .iter()
                            .map(|file| Resolved {
                                file: file.clone(),
                                side,
                            })
                            .collect();
                    }
                    still
                }
                None => conflicted,
            };
            if !still.is_empty() {
                landing.conflicts = still
                    .into_iter()
                    .map(|file| Conflict {
                        commit: tip.to_string(),
                        file,
                    })
                    .collect();
                return Ok((landing, tree));
            }
        }
        landing.files = self.changed_between(onto, &tree)?;
        Ok((landing, tree))
    }

    /// `git merge-tree` of `theirs` into `ours` (from `base` when given, else from their
    /// merge bases): the resulting tree and the conflicted files (none when it merged
    /// cleanly).
    fn merge_tree(
        &self,
        ours: &str,
        theirs: &str,
        prefer: Option<Side>,
        base: Option<&str>,
    ) -> Result<(String, Vec<String>)> {
        let mut call = self.call(&self.main)?.args([
            "merge-tree",
            "--write-tree",
            "--name-only",
            "-z",
            "--no-messages",
        ]);
        if let Some(side) = prefer {
            call = call.arg(match side {
                Side::Workspace => "-Xtheirs",
                Side::Target => "-Xours",
            });
        }
        if let Some(base) = base {
            call = call.arg(format!("--merge-base={base}"));
        }
        let (_, out) = call.args([ours, theirs]).stdout_allowing(&[1])?;
        Ok(parse_merge_tree(&out))
    }

    /// The files whose content differs between the merge bases of `ours` and `theirs` (none
    /// when they have one).
    fn files_merge_bases_disagree_on(&self, ours: &str, theirs: &str) -> Result<Vec<String>> {
        let out = self
            .call(&self.main)?
            .args(["merge-base", "--all", ours, theirs])
            .stdout_allowing(&[1])?
            .1;
        let bases: Vec<&str> = out.split_whitespace().collect();
        let mut files: Vec<String> = vec![];
        if let Some((first, rest)) = bases.split_first() {
            for other in rest {
                for file in self.changed_between(first, other)? {
                    if !files.contains(&file) {
                        files.push(file);
                    }
                }
            }
        }
        Ok(files)
    }

    /// The files a rename would swallow when merging `theirs` into `ours`: one side renamed
    /// `old` to `new` while the other side changed `old` and also holds `new` (it carried the
    /// file to the new name too, then wrote a fresh `old`). git pairs the rename with that
    /// "change" and merges the fresh file into `new`: the renamed file's lines are gone with
    /// no conflict. Both names are returned; none when the sides have no single merge base.
    fn files_a_rename_would_swallow(&self, ours: &str, theirs: &str) -> Result<Vec<String>> {
        let out = self
            .call(&self.main)?
            .args(["merge-base", "--all", ours, theirs])
            .stdout_allowing(&[1])?
            .1;
        let bases: Vec<&str> = out.split_whitespace().collect();
        let mut files: Vec<String> = vec![];
        // With several bases git merges against a virtual one; each real one is asked.
        for base in bases {
            for (renamer, other) in [(ours, theirs), (theirs, ours)] {
                let renames = self.renames_between(base, renamer)?;
                if renames.is_empty() {
                    continue;
                }
                let changed = self.changed_between(base, other)?;
                for (old, new) in renames {
                    if changed.contains(&old)
                        && self.has_path(other, &old)?
                        && self.has_path(other, &new)?
                    {
                        for file in [old, new] {
                            if !files.contains(&file) {
                                files.push(file);
                            }
                        }
                    }
                }
            }
        }
        Ok(files)
    }

    /// The renames git detects from `from` to `to` (old name, new name), as a merge detects
    /// them.
    fn renames_between(&self, from: &str, to: &str) -> Result<Vec<(String, String)>> {
        let out = self
            .call(&self.main)?
            .args([
                "diff-tree",
                "-r",
                "-z",
                "--name-status",
                "--find-renames",
                "--diff-filter=R",
                from,
                to,
            ])
            .stdout()?;
        let fields: Vec<String> = crate::vcs::split_nul(&out)
            .into_iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        // Each rename is three fields: `R<score>`, the old name, the new name.
        Ok(fields
            .chunks(3)
            .filter(|c| c.len() == 3 && c[0].starts_with('R'))
            .map(|c| (c[1].clone(), c[2].clone()))
            .collect())
    }

    /// Whether the tree of `commit` holds `path`.
    fn has_path(&self, commit: &str, path: &str) -> Result<bool> {
        let out = self
            .call(&self.main)?
            .args(["ls-tree", "-z", "--name-only", commit, "--"])
            .arg(format!(":(literal){path}"))
            .stdout()?;
        Ok(!out.is_empty())
    }

    fn changed_between(&self, from: &str, to: &str) -> Result<Vec<String>> {
        let out = self
            .call(&self.main)?
            .args([
                "diff-tree",
                "-r",
                "--name-only",
                "-z",
                "--no-renames",
                from,
                to,
            ])
            .stdout()?;
        Ok(crate::vcs::split_nul(&out)
            .into_iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect())
    }
}

/// `git merge-tree --write-tree --name-only -z` output: the tree id, then each conflicted
/// file once.
fn parse_merge_tree(text: &str) -> (String, Vec<String>) {
    let mut fields = text.split('\0');
    let tree = fields.next().unwrap_or("").trim().to_string();
    let mut files: Vec<String> = vec![];
    for field in fields {
        if field.is_empty() {
            break;
        }
        if !files.iter().any(|f| f == field) {
            files.push(field.to_string());
        }
    }
    (tree, files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_tree_output() {
        assert_eq!(parse_merge_tree("abc\0"), ("abc".into(), vec![]));
        let (tree, files) = parse_merge_tree("abc\0a.txt\0a.txt\0sp ace\0\0msg");
        assert_eq!(tree, "abc");
        assert_eq!(files, ["a.txt", "sp ace"]);
    }
}
