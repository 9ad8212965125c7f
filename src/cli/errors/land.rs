//! The words of a land's refusals and failures: each [`LandError`] as the one user-facing
//! error form.

use crate::error::CliError;
use crate::vcs::land::{LandError, TargetKind};

impl From<LandError> for CliError {
    fn from(err: LandError) -> CliError {
        let message = err.to_string();
        match err {
            LandError::Vcs(e) => e.into(),
            LandError::UnknownTarget { kind, .. } => CliError::failure(message).hint(match kind {
                TargetKind::JjRevision => "pass --onto a change id, commit id or bookmark that names one commit",
                TargetKind::GitCommit => "git lands by merging into a branch: pass --onto a local branch name (create one at that commit with `git branch NAME REV`)",
                TargetKind::GitUnknown => "pass --onto a local branch name (see `git branch`)",
            }),
            LandError::DetachedMain => {
                CliError::failure(message).hint("pass --onto BRANCH to name the branch to land on")
            }
            LandError::NoBranch { .. } => CliError::failure(message)
                .hint("check `git branch`; the workspace's branch keeps its commits"),
            LandError::Dirty { jj: true, .. } => CliError::failure(message)
                .hint("commit them there first (`jj commit`), or land elsewhere with --onto REV"),
            LandError::Dirty { jj: false, .. } => CliError::failure(message)
                .hint("commit or stash them there first, or land elsewhere with --onto BRANCH"),
            LandError::ParentEdits { parent, .. } => CliError::failure(message).hint(format!(
                "record the parent's edits first (`agent-workspace checkpoint {parent}`), then land again: its edits then stay its own and this workspace's changes come on top"
            )),
            LandError::TargetConflicted { jj: true, .. } => CliError::failure(message)
                .hint("resolve them there first (`jj resolve`, or edit the files and let jj snapshot them), then land again"),
            LandError::TargetConflicted { jj: false, .. } => CliError::failure(message)
                .hint("finish or abort the merge there first (`git merge --continue` or `git merge --abort`), then land again"),
            LandError::NoOperation { .. } => CliError::failure(message)
                .hint("check that `jj --version` is 0.45 or later (`--no-integrate-operation` names the operation it writes)"),
            LandError::TargetMoved => CliError::failure(message).hint("land again"),
            LandError::TargetChanging { .. } => CliError::failure(message)
                .hint("something keeps writing there (a file watcher, a build, an editor's autosave, commits): pause it, then land again"),
            LandError::MovesOthers { others, .. } => CliError::failure(message).hint(format!(
                "land {} first, or clean {} (`agent-workspace clean {}` keeps its edits), then land this one",
                others.join(", "),
                if others.len() == 1 { "it" } else { "them" },
                others[0]
            )),
            LandError::Divergent {
                ref ws,
                ref changes,
                ..
            } => {
                let ws = crate::exec::process::quote(&ws.display().to_string());
                let outside: Vec<&str> = changes
                    .iter()
                    .flat_map(|d| d.outside.iter().map(String::as_str))
                    .collect();
                let each_outside = changes.iter().all(|d| d.outside.len() + 1 == d.commits.len());
                CliError::failure(message).hint(match each_outside {
                    true => format!(
                        "a change lands as one commit: keep one of each and abandon the others in the workspace (to keep those in its history: `jj -R {ws} abandon {}`), then land again",
                        outside.join(" ")
                    ),
                    false => format!(
                        "a change lands as one commit: keep one of each and abandon the others in the workspace (`jj -R {ws} abandon <commit>`), then land again"
                    ),
                })
            }
            LandError::Preview { source, .. } => CliError::failure(message)
                .cause(source.stderr().to_string())
                .hint("check that the target workspace still exists (`agent-workspace status`), or pass --onto REV"),
            LandError::Rebase { source, .. } => CliError::failure(message)
                .cause(source.to_string())
                .cause(source.stderr().to_string())
                .hint("nothing was landed; fix what jj reports above and try again"),
            LandError::InProgress { ref path, ref abort, .. } => CliError::failure(message).hint(format!(
                "finish it there first, or abort it (`git -C {} {abort}`), then land again",
                crate::exec::process::quote(&path.display().to_string())
            )),
            LandError::Unmerged { .. } => CliError::failure(message).hint(
                "resolve them there first (edit, then `git add` them), then land again",
            ),
            LandError::Ignored { jj: false, .. } => CliError::failure(message).hint(
                "the land would replace them and no commit holds them: move them away (or commit them there), then land again",
            ),
            LandError::Ignored { jj: true, .. } => CliError::failure(message).hint(
                "no commit holds them and jj would not write over them: move them away or delete them, then land again",
            ),
            LandError::NoRoom { .. } => CliError::failure(message)
                .hint("free space on that file system, then land again"),
            LandError::MainNotWritten { ref path, restored: true, .. } => CliError::failure(message).hint(format!(
                "free space on that file system, then run `jj -R {} workspace update-stale` to write the landed files there",
                crate::exec::process::quote(&path.display().to_string())
            )),
            LandError::MainNotWritten { ref path, ref before, .. } => CliError::failure(message).hint(format!(
                "free space on that file system, then put those files back as commit {} holds them (`jj -R {} --ignore-working-copy file show -r {} FILE > FILE`) before `jj workspace update-stale` there, or jj records them as edits",
                &before[..before.len().min(12)],
                crate::exec::process::quote(&path.display().to_string()),
                &before[..before.len().min(12)],
            )),
            LandError::MainPutBack { ref path, ref half, .. } if !half.is_empty() => CliError::failure(message).hint(format!(
                "free space on that file system, then put them back (`git -C {} checkout-index -f -- FILE`, or delete a file git does not track), then land again",
                crate::exec::process::quote(&path.display().to_string())
            )),
            LandError::MainPutBack { .. } => CliError::failure(message)
                .hint("free space on that file system, then land again"),
            LandError::HeadElsewhere {
                ref ws,
                ref commit,
                ref branch,
                ref other,
                ..
            } => {
                let q = crate::exec::process::quote;
                let ws = q(&ws.display().to_string());
                let (branch, from) = (q(branch), q(other.as_deref().unwrap_or(commit)));
                CliError::failure(message).hint(format!(
                    "bring that work onto the branch in the workspace (commit what is uncommitted, then `git -C {ws} switch {branch} && git -C {ws} merge {from}`), then land again"
                ))
            }
        }
    }
}
