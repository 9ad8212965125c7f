//! The merge a git land decides on, computed with `git merge-tree` without touching any ref,
//! index or worktree: what it brings, the files it conflicts in, and `--prefer`'s side.

use super::Git;
use crate::store::metadata::{Conflict, Resolved, Side};
use crate::vcs::land::{Landing, Plan, Result};

impl Git {
    /// What merging `tip` into `target` (at `onto`) would bring: the commits, the files, the
    /// conflicts (or those `--prefer` resolves), and the merged tree.
    pub(super) fn merge_plan(
        &self,
        plan: &Plan,
        target: &str,
        onto: &str,
        tip: &str,
    ) -> Result<(Landing, String)> {
        let mut landing = Landing {
            target: target.to_string(),
            ..Landing::default()
        };
        landing.commits = self.work_commits(&[tip], &[onto.to_string()])?;
        landing.commits.reverse();
        if landing.commits.is_empty() {
            return Ok((landing, String::new()));
        }
        let (mut tree, conflicted) = self.merge_tree(onto, tip, None)?;
        if !conflicted.is_empty() {
            let still = match plan.prefer {
                Some(side) => {
                    let (resolved_tree, mut still) = self.merge_tree(onto, tip, Some(side))?;
                    tree = resolved_tree;
                    // With several merge bases git merges against a virtual base merged
                    // from them, conflict markers included: in a file they disagree on, a
                    // "conflicting hunk" can hold lines only one side changed (say the user
                    // amended the commit the workspace started on), and taking a side
                    // would drop the other's. Such a file is reported, never settled.
                    let disputed = self.files_merge_bases_disagree_on(onto, tip)?;
                    for file in &conflicted {
                        if disputed.contains(file) && !still.contains(file) {
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

    /// `git merge-tree` of `theirs` into `ours`: the resulting tree and the conflicted files
    /// (none when it merged cleanly).
    fn merge_tree(
        &self,
        ours: &str,
        theirs: &str,
        prefer: Option<Side>,
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
