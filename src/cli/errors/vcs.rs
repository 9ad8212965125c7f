//! The words of a backend's errors: each [`VcsError`] as the one user-facing error form.

use crate::error::CliError;
use crate::exec::process::ProcessError;
use crate::vcs::error::CarryFailure;
use crate::vcs::VcsError;

/// The hint the backend's own classifier gives for a failed jj or git call, if any.
fn backend_hint(err: &ProcessError) -> Option<&'static str> {
    let ProcessError::Failed { stderr, .. } = err else {
        return None;
    };
    let (signing, ref_name) = (
        crate::vcs::classify::signing_failed(stderr),
        crate::vcs::classify::bad_ref_name(stderr),
    );
    if signing {
        Some("commit signing failed: fix the signing setup (or set commit.gpgsign=false for this repository) and try again")
    } else if ref_name {
        Some("use a workspace id (and AGENT_WORKSPACE_BRANCH_PREFIX) that makes a valid git branch name")
    } else {
        None
    }
}

/// A failed jj or git call in the one error form, with its backend's hint when it has one.
pub(in crate::cli) fn process_error(err: &ProcessError) -> CliError {
    let hint = backend_hint(err);
    let cli = CliError::from(err);
    match hint {
        Some(hint) => cli.hint(hint),
        None => cli,
    }
}

impl From<VcsError> for CliError {
    fn from(err: VcsError) -> CliError {
        CliError::from(&err)
    }
}

impl From<&VcsError> for CliError {
    fn from(err: &VcsError) -> CliError {
        let message = err.to_string();
        match err {
            VcsError::Process(e) => process_error(e),
            VcsError::Sandbox(e) => CliError::from(e),
            VcsError::Busy { how, .. } => CliError::failure(message).hint(format!(
                "{how}, then run again; nothing was changed (or run without --sandbox)"
            )),
            VcsError::TooOld { .. } => {
                CliError::failure(message).hint(crate::error::install_hint("jj"))
            }
            VcsError::CannotColocate { .. } => CliError::failure(message).hint(
                "install jj 0.46 or later, or set jj.colocate = \"auto\" (jj's default) in the configuration; nothing was created",
            ),
            VcsError::MainWorkspace { .. } => CliError::usage(message)
                .hint("pick another id; the main workspace is the repository itself"),
            VcsError::BadBranch { .. } => CliError::usage(message).hint(
                "pick an id that makes a valid git branch name (no '..', no trailing '.' or '.lock'); check AGENT_WORKSPACE_BRANCH_PREFIX too",
            ),
            VcsError::UnknownRevision { jj, source, .. } => CliError::failure(message)
                .cause(source.stderr().to_string())
                .hint(match jj {
                    true => "pass --base-change a change id, commit id or bookmark that exists",
                    false => "pass --base-change a commit, branch or tag that exists",
                }),
            VcsError::NotOneCommit { many, .. } => CliError::failure(message).hint(if *many {
                "pass --base-change a single revision"
            } else {
                "pass --base-change a revision that names one commit"
            }),
            VcsError::PartialCopy { path, source } => {
                CliError::io("remove the partial copy", path, source)
                    .hint("remove it by hand; the workspace itself was not touched")
            }
            VcsError::BranchElsewhere { branch, .. } => CliError::failure(message).hint(format!(
                "drop --base-change to reuse the branch, or delete it: git branch -D {branch}"
            )),
            VcsError::CreateFailed { source, .. } => CliError::failure(message)
                .cause(source.to_string())
                .cause(source.stderr().to_string())
                .hint(match backend_hint(source) {
                    Some(hint) => hint.to_string(),
                    None => super::process::creation_hint(source),
                }),
            VcsError::NotMerged { .. } => {
                CliError::failure(message).hint("pass --force to delete it anyway")
            }
            VcsError::BranchDelete { branch, source } => CliError::from(&**source)
                .hint(format!("delete it by hand: git branch -D {branch}")),
            VcsError::GitlinkNotKept { source, .. } => CliError::failure(message)
                .cause(source.to_string())
                .cause(source.stderr().to_string())
                .hint("nothing was removed: fix what kept git from fetching it (room, permissions), then clean again"),
            VcsError::CommitFailed {
                ws,
                source,
                unstage_failed,
            } => {
                let err = CliError::failure(message)
                    .cause(source.to_string())
                    .cause(source.stderr().to_string());
                match unstage_failed {
                    None => err.hint(format!(
                        "nothing was left staged; fix the commit (e.g. its signing setup: `git -C {} config commit.gpgsign false`) or commit the changes yourself, then clean again",
                        ws.display()
                    )),
                    Some(reset) => err.cause(reset.to_string()).hint(format!(
                        "the changes are still staged in {}; fix the commit or commit them yourself, then clean again",
                        ws.display()
                    )),
                }
            }
            VcsError::CheckpointFailed {
                ws,
                jj,
                source,
                unstage_failed,
                ..
            } => {
                let err = CliError::failure(message)
                    .cause(source.to_string())
                    .cause(source.stderr().to_string());
                match (jj, unstage_failed) {
                    (true, _) => {
                        err.hint("nothing was committed; see jj's message and try again")
                    }
                    (false, None) => err.hint(format!(
                        "nothing was committed or left staged; fix the commit (e.g. its signing setup: `git -C {} config commit.gpgsign false`) and try again",
                        ws.display()
                    )),
                    (false, Some(reset)) => err.cause(reset.to_string()).hint(format!(
                        "the changes are still staged in {}; fix the commit and try again",
                        ws.display()
                    )),
                }
            }
            VcsError::Unaddable { path, .. } => CliError::failure(message).hint(format!(
                "nothing was recorded; remove it (`rm {}`) or put a regular file in its place, then try again",
                crate::exec::process::quote(&path.to_string_lossy())
            )),
            VcsError::Unmerged {
                ws,
                files,
                operation,
                how,
            } => {
                let q = crate::exec::process::quote;
                let ws = q(&ws.to_string_lossy());
                let quoted: Vec<String> = files.iter().map(|f| q(f)).collect();
                let quoted = quoted.join(" ");
                let resolve = format!(
                    "resolve each file (edit out its conflict markers, then `git -C {ws} add -- {quoted}`)"
                );
                CliError::failure(message).hint(match operation {
                    Some(_) => format!("{resolve} and {how}, then try again"),
                    None => format!(
                        "{resolve}, or take back the committed version (`git -C {ws} checkout HEAD -- {quoted}`; a `git stash pop` that stopped keeps its stash), then try again"
                    ),
                })
            }
            VcsError::Markers {
                ws, files, landing, ..
            } => {
                let ws = crate::exec::process::quote(&ws.to_string_lossy());
                let files = files.join(", ");
                CliError::failure(message).hint(match landing {
                    true => format!(
                        "resolve the conflict they mark in {files} (edit the markers out in {ws}), then land again; lines meant as content can be merged by hand (`git merge`)"
                    ),
                    false => format!(
                        "resolve the conflict they mark in {files} (edit the markers out in {ws}), then try again; lines meant as content can be committed by hand (`git -C {ws} commit`)"
                    ),
                })
            }
            VcsError::NoCommit { .. } => CliError::failure(message)
                .hint("commit something in it first, or start the child with --base-change"),
            VcsError::Unregistered { id, path } => super::workspace::unregistered(id, path),
            VcsError::StaleConflict { id, ws, files } | VcsError::StaleUndone { id, ws, files } => {
                let mut err = CliError::failure(message);
                for file in files {
                    err = err.cause(match &file.kept {
                        Some(kept) => format!(
                            "{}: the workspace's version is kept in {}",
                            file.path,
                            kept.display()
                        ),
                        None => format!(
                            "{}: the workspace had deleted it; the update changed it",
                            file.path
                        ),
                    });
                }
                let example = files
                    .iter()
                    .find_map(|f| {
                        let kept = f.kept.as_ref()?;
                        Some(format!(
                            " (`diff -u {} {}` shows both)",
                            crate::exec::process::quote(&ws.join(&f.path).display().to_string()),
                            crate::exec::process::quote(&kept.display().to_string())
                        ))
                    })
                    .unwrap_or_default();
                err.hint(format!(
                    "{} now holds the updated version of each file; merge the workspace's version into it by hand{example}, then go on: the next run of {id} works as usual",
                    ws.display()
                ))
            }
            VcsError::StaleUnknownBase { id, ws, kept } => CliError::failure(message)
                .cause(format!(
                    "its files as they were before the update are kept in {}",
                    kept.display()
                ))
                .hint(format!(
                    "{} now holds the updated version; copy back from the kept files what you need, then go on: the next run of {id} works as usual",
                    ws.display()
                )),
            VcsError::NoRoom(_) => CliError::failure(message).hint(
                "nothing was changed: free space on that file system, then try again",
            ),
            VcsError::Stale { id } => CliError::failure(message).hint(format!(
                "`agent-workspace run {id} -- true` updates it, keeping its edits; then diff again"
            )),
            VcsError::NoBase { .. } => CliError::failure(message)
                .hint("its record predates base commits; compare by hand with `git diff`"),
            VcsError::NotDescendant { .. } => CliError::failure(message)
                .hint("its commits were moved elsewhere; compare them with `jj diff` by hand"),
            VcsError::NotGitBacked => CliError::failure(message).hint(
                "agent-workspace diff needs a repository made with `jj git init` or `jj git clone`",
            ),
            VcsError::NotAWorktree { source, .. } => CliError::failure(message)
                .cause(source.stderr().to_string())
                .hint("check it with `git worktree list`; `agent-workspace status` shows its problem"),
            VcsError::Changes { source, .. } => CliError::failure(message)
                .cause(source.to_string())
                .cause(source.stderr().to_string())
                .hint("check the workspace with `agent-workspace status`"),
            VcsError::Io {
                action,
                path,
                source,
            } => CliError::io(action, path, source),
            VcsError::Fs(e) => CliError::from(e),
            err @ VcsError::NotCarried { .. } => CliError::failure(err.to_string()).hint(
                "its files are untouched and nothing was copied: free space on that file system, then run the command again",
            ),
            VcsError::Carry {
                action,
                path,
                source,
                kept,
                resumes,
            } => {
                let err = match &**source {
                    CarryFailure::Io(e) => CliError::io(action, path, e),
                    CarryFailure::Process(e) => process_error(e),
                };
                err.hint(if *resumes {
                    format!(
                        "the workspace's files are kept in {}; the next run or clean of it resumes",
                        kept.display()
                    )
                } else {
                    format!("its files are kept in {}", kept.display())
                })
            }
        }
    }
}
