//! A jj dry run: what the land's rebase would conflict on, predicted with git's three-way
//! merge (`git merge-tree`) on the git repository backing the store, commit by commit along
//! the chain. It writes no jj operation, so the operation log, `jj undo` and every working
//! copy stay exactly as they were; git gains at most unreachable objects (a tree and a
//! commit per landed commit), which its garbage collection removes.

use super::land::Place;
use super::land_preview::Landed;
use super::Jj;
use crate::metadata::Conflict;
use crate::vcs::land::{LandError, Landing, Result};

impl Jj {
    /// Fills `landing.conflicts` with the files each of `commits` (oldest first, a chain)
    /// would leave conflicted once rebased as the land would.
    pub(super) fn predict(
        &self,
        place: &Place,
        commits: &[Landed],
        landing: &mut Landing,
    ) -> Result<()> {
        let mut ours = self.new_parent(place)?;
        if is_root(&ours) {
            // jj's root commit has no git commit behind it: start from an empty one.
            ours = self.scratch_commit(super::diff::EMPTY_TREE, None)?;
        }
        let ids: Vec<&str> = commits.iter().map(|c| c.commit.id.as_str()).collect();
        let parents = self.first_parents(&ids)?;
        for (landed, base) in commits.iter().zip(parents) {
            let out = self
                .git()?
                .args([
                    "merge-tree",
                    "--write-tree",
                    "-z",
                    "--name-only",
                    "--no-messages",
                ])
                .arg(format!("--merge-base={base}"))
                .args([&ours, &landed.commit.id])
                .stdout_allowing(&[1]);
            // Exit 0: merged cleanly; 1: conflicts; anything else failed.
            let (code, stdout) = out.map_err(|e| LandError::Predict {
                why: format!("git merge-tree failed: {}", e.stderr().trim()),
            })?;
            let mut fields = stdout.split('\0').filter(|f| !f.is_empty());
            let tree = fields.next().unwrap_or_default().to_string();
            if code == 1 {
                landing.conflicts.extend(fields.map(|file| Conflict {
                    commit: landed.commit.id.clone(),
                    file: file.to_string(),
                }));
            }
            ours = self.scratch_commit(&tree, Some(&ours))?;
        }
        landing.conflicts.dedup();
        Ok(())
    }

    /// The commit the landed chain would start on: the target working-copy commit's one
    /// parent, or the commit `--onto` named.
    fn new_parent(&self, place: &Place) -> Result<String> {
        if !place.working_copy {
            return Ok(place.revset.clone());
        }
        let out = self
            .call(&place.dir)?
            .args([
                "--ignore-working-copy",
                "log",
                "--no-graph",
                "-r",
                "@",
                "-T",
            ])
            .arg(r#"parents.map(|p| p.commit_id()).join(" ")"#)
            .stdout()?;
        match out.split_whitespace().collect::<Vec<_>>().as_slice() {
            [one] => Ok(one.to_string()),
            _ => Err(LandError::Predict {
                why: "the target working-copy commit is a merge".into(),
            }),
        }
    }

    /// The first parent of each commit of `ids`, in the same order (the empty tree for a
    /// commit on jj's root commit, which git lists without a parent).
    fn first_parents(&self, ids: &[&str]) -> Result<Vec<String>> {
        let out = self
            .git()?
            .args(["rev-list", "--no-walk=unsorted", "--parents"])
            .args(ids)
            .stdout()?;
        let mut parents = vec![];
        for id in ids {
            let line =
                out.lines()
                    .find(|l| l.starts_with(id))
                    .ok_or_else(|| LandError::Predict {
                        why: format!("git does not know commit {id}"),
                    })?;
            let parent = line.split_whitespace().nth(1);
            parents.push(parent.unwrap_or(super::diff::EMPTY_TREE).to_string());
        }
        Ok(parents)
    }

    /// An unreachable commit of `tree` on `parent`, for the next merge of the chain.
    fn scratch_commit(&self, tree: &str, parent: Option<&str>) -> Result<String> {
        let parent: Vec<&str> = parent.map(|p| vec!["-p", p]).unwrap_or_default();
        let out = self
            .git()?
            .env("GIT_AUTHOR_NAME", "agent-workspace")
            .env("GIT_AUTHOR_EMAIL", "dry-run@agent-workspace.invalid")
            .env("GIT_COMMITTER_NAME", "agent-workspace")
            .env("GIT_COMMITTER_EMAIL", "dry-run@agent-workspace.invalid")
            .args(["commit-tree", tree])
            .args(parent)
            .args(["-m", "land dry run"])
            .stdout()?;
        Ok(out.trim().to_string())
    }
}

/// Whether `commit` is jj's root commit (all zeros), which git does not have.
fn is_root(commit: &str) -> bool {
    commit.bytes().all(|b| b == b'0')
}
