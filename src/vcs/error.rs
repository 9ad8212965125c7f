//! What can go wrong in a backend call, as types callers can match on; the command layer
//! turns them into the one user-facing error form through `From<VcsError> for CliError`.

use std::path::PathBuf;

use crate::error::CliError;
use crate::exec::process::ProcessError;
use crate::repo::Backend;
use crate::store::layout::WorkspaceId;

pub(crate) type Result<T> = std::result::Result<T, VcsError>;

#[derive(Debug, thiserror::Error)]
pub enum VcsError {
    /// A jj or git call failed (or could not start).
    #[error(transparent)]
    Process(#[from] ProcessError),
    /// A call could not be confined (its sandbox's filter could not be made).
    #[error(transparent)]
    Sandbox(#[from] crate::exec::sandbox::SandboxError),
    /// A worktree in the middle of something its own git directory would not carry.
    #[error("worktree {} holds {what}, which a sandboxed run cannot carry into its own git directory", ws.display())]
    Busy {
        ws: PathBuf,
        what: String,
        how: String,
    },
    /// jj answered, but is older than the oldest version this tool supports.
    #[error("{path} is {version}; agent-workspace needs jj {}.{} or newer", min.0, min.1)]
    TooOld {
        path: PathBuf,
        version: String,
        min: (u32, u32),
    },
    /// `jj.colocate = true` with a jj that makes no colocated workspaces.
    #[error("jj.colocate = true asks for workspaces that are git worktrees, which {version} cannot make (jj 0.46 and later can)")]
    CannotColocate { version: String },
    /// The id names jj's main workspace.
    #[error("workspace id {id:?} is jj's main workspace, which agent-workspace never manages")]
    MainWorkspace { id: WorkspaceId },
    /// The id makes a branch name git refuses.
    #[error("workspace id {id:?} makes the git branch {branch:?}, which git refuses: {why}")]
    BadBranch {
        id: WorkspaceId,
        branch: String,
        why: String,
    },
    /// A revision the backend cannot resolve.
    #[error("cannot resolve revision {rev:?}")]
    UnknownRevision {
        rev: String,
        backend: Backend,
        source: Box<ProcessError>,
    },
    /// A revision that resolves to no commit, or to several where one is needed.
    #[error("revision {rev:?} names {}", if *.many { "more than one commit" } else { "no commit" })]
    NotOneCommit { rev: String, many: bool },
    /// The workspace's branch already exists elsewhere than the base asked for.
    #[error("branch {branch} already exists at {tip}, not at the --base-change asked for")]
    BranchElsewhere { branch: String, tip: String },
    /// The backend refused to create the workspace.
    #[error("could not create {what} {id:?} at {}", path.display())]
    CreateFailed {
        what: &'static str,
        id: WorkspaceId,
        path: PathBuf,
        source: Box<ProcessError>,
    },
    /// `git branch -d` refused a branch with commits no other branch has.
    #[error("branch {branch} is not fully merged")]
    NotMerged { branch: String },
    /// Deleting a branch failed for another reason.
    #[error("could not delete branch {branch}")]
    BranchDelete {
        branch: String,
        source: Box<ProcessError>,
    },
    /// A commit a gitlink of a worktree names could not be fetched into the user's
    /// repository before the worktree's git area was removed.
    #[error("could not keep commit {commit} that gitlink {path} names in {}; the workspace is kept", into.display())]
    GitlinkNotKept {
        path: String,
        commit: String,
        into: PathBuf,
        source: Box<ProcessError>,
    },
    /// Committing a worktree's uncommitted changes failed; `unstaged` says whether what was
    /// staged for it was unstaged again.
    #[error("could not commit the uncommitted changes of {}; the workspace is kept", ws.display())]
    CommitFailed {
        ws: PathBuf,
        source: Box<ProcessError>,
        unstage_failed: Option<Box<VcsError>>,
    },
    /// Committing a checkpoint failed; `unstage_failed` (git) says whether what was staged
    /// for it could not be unstaged again.
    #[error("could not commit the checkpoint of workspace {id:?}")]
    CheckpointFailed {
        id: WorkspaceId,
        ws: PathBuf,
        backend: Backend,
        source: Box<ProcessError>,
        unstage_failed: Option<Box<VcsError>>,
    },
    /// A git workspace without any commit cannot be a parent.
    #[error("workspace {id:?} has no commit to start a child from")]
    NoCommit { id: WorkspaceId },
    /// The backend no longer knows the workspace at `path`. `id` is a name, not a
    /// [`WorkspaceId`]: a stale working copy is named by its directory, which for a land's
    /// target may be the repository's own.
    #[error("the backend no longer knows workspace {id:?}")]
    Unregistered { id: String, path: PathBuf },
    /// A partial copy an interrupted repair left could not be removed.
    #[error("could not remove the partial copy {}", path.display())]
    PartialCopy {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Carrying a stale working copy's files across its update failed; they are kept in
    /// `kept`, and the next run or clean resumes when `resumes`.
    #[error("could not {action} {}", path.display())]
    Carry {
        action: &'static str,
        path: PathBuf,
        source: Box<CarryFailure>,
        kept: PathBuf,
        resumes: bool,
    },
    /// A stale working copy's files were not copied aside: not enough free space for the
    /// copy, or the copy failed (its partial copy is removed). The workspace is untouched.
    #[error("did not carry the edits of the stale working copy {} across its update: {why}", path.display())]
    NotCarried { path: PathBuf, why: String },
    /// A stale working copy was updated, but some of its unrecorded edits conflict with the
    /// update: the workspace holds the updated version of each file and the edit is kept.
    /// `id` is its directory's name, as for [`VcsError::Unregistered`] (so are the next two).
    #[error(
        "workspace {id:?} was stale; updating it conflicts with its unrecorded edits to {}",
        list_paths(files)
    )]
    StaleConflict {
        id: String,
        ws: PathBuf,
        files: Vec<StaleEdit>,
    },
    /// A stale working copy was updated after an operation elsewhere undid what it had
    /// recorded (`jj undo`, `jj op restore`): the files as they were are kept aside.
    #[error(
        "workspace {id:?} was stale: an operation elsewhere undid what its working copy had recorded in {}",
        list_paths(files)
    )]
    StaleUndone {
        id: String,
        ws: PathBuf,
        files: Vec<StaleEdit>,
    },
    /// A stale working copy was updated, but jj no longer knew the commit it last recorded,
    /// so its edits could not be told apart: its files as they were are kept whole.
    #[error(
        "workspace {id:?} was stale and jj no longer knows what its working copy last recorded"
    )]
    StaleUnknownBase {
        id: String,
        ws: PathBuf,
        kept: PathBuf,
    },
    /// Recording a workspace's edits would not fit on a file system: refused before
    /// anything was written.
    #[error(transparent)]
    NoRoom(crate::store::disk::NoRoom),
    /// `diff`: the jj working copy was made stale by another workspace.
    #[error("the working copy of workspace {id:?} is stale")]
    Stale { id: WorkspaceId },
    /// `diff`: the record names no commit the workspace started on.
    #[error("workspace {id:?} has no recorded base commit to compare with")]
    NoBase { id: WorkspaceId },
    /// `diff`: the working copy no longer descends from the commits it started on.
    #[error("workspace {id:?}'s working copy does not descend from its base {base}")]
    NotDescendant { id: WorkspaceId, base: String },
    /// `diff` compares files with git, which a jj repository of another backend lacks.
    #[error("this jj repository is not backed by git")]
    NotGitBacked,
    /// `diff`: git does not take the directory for a worktree.
    #[error("{} is not a git worktree", path.display())]
    NotAWorktree {
        path: PathBuf,
        source: Box<ProcessError>,
    },
    /// `diff`: listing the workspace's commits failed.
    #[error("could not read the changes of workspace {id:?}")]
    Changes {
        id: WorkspaceId,
        source: Box<ProcessError>,
    },
    /// A file in the worktree git cannot record (a FIFO, a socket, a device).
    #[error("{} is a {kind}, which git cannot record", path.display())]
    Unaddable { path: PathBuf, kind: &'static str },
    /// git: the worktree's index has unmerged entries (a merge or `git stash pop` stopped
    /// half-way): committing would record the conflict markers as content.
    #[error("the worktree at {} {}unmerged files: {}; nothing was changed",
        ws.display(),
        operation.as_ref().map_or("has ".to_string(), |what| format!("is in the middle of {what}, with ")),
        files.join(", "))]
    Unmerged {
        ws: PathBuf,
        files: Vec<String>,
        /// The operation that left them (`a merge`, ...), if one is in progress.
        operation: Option<String>,
        /// How to conclude or abort that operation.
        how: String,
    },
    /// git: what would be committed (or landed) adds conflict-marker lines to these files.
    #[error("workspace {id:?} {} conflict markers in {}; nothing was changed",
        if *.landing { "would land" } else { "would commit" }, files.join(", "))]
    Markers {
        id: WorkspaceId,
        ws: PathBuf,
        files: Vec<String>,
        /// Found in what a land brings (committed or not), not only in uncommitted changes.
        landing: bool,
    },
    /// A file a backend call works with could not be read or written.
    #[error("could not {action} {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Fs(#[from] crate::store::fsutil::FsError),
}

/// An unrecorded edit of a stale working copy that does not merge with the update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleEdit {
    /// The file, relative to the workspace root.
    pub path: String,
    /// Where the workspace's version is kept; `None` when the workspace had deleted it.
    pub kept: Option<PathBuf>,
}

fn list_paths(files: &[StaleEdit]) -> String {
    files
        .iter()
        .map(|f| f.path.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What failed while carrying files across a stale working copy's update.
#[derive(Debug, thiserror::Error)]
pub enum CarryFailure {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Process(#[from] ProcessError),
}

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
fn process_error(err: ProcessError) -> CliError {
    let hint = backend_hint(&err);
    let cli = CliError::from(err);
    match hint {
        Some(hint) => cli.hint(hint),
        None => cli,
    }
}

impl From<VcsError> for CliError {
    fn from(err: VcsError) -> CliError {
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
            VcsError::UnknownRevision {
                backend, source, ..
            } => CliError::failure(message)
                .cause(source.stderr().to_string())
                .hint(match backend {
                    Backend::Jj => {
                        "pass --base-change a change id, commit id or bookmark that exists"
                    }
                    Backend::Git => "pass --base-change a commit, branch or tag that exists",
                }),
            VcsError::NotOneCommit { many, .. } => CliError::failure(message).hint(if many {
                "pass --base-change a single revision"
            } else {
                "pass --base-change a revision that names one commit"
            }),
            VcsError::PartialCopy { path, source } => {
                CliError::io("remove the partial copy", &path, &source)
                    .hint("remove it by hand; the workspace itself was not touched")
            }
            VcsError::BranchElsewhere { branch, .. } => CliError::failure(message).hint(format!(
                "drop --base-change to reuse the branch, or delete it: git branch -D {branch}"
            )),
            VcsError::CreateFailed { source, .. } => CliError::failure(message)
                .cause(source.to_string())
                .cause(source.stderr().to_string())
                .hint(match backend_hint(&source) {
                    Some(hint) => hint.to_string(),
                    None => crate::exec::process::creation_hint(&source),
                }),
            VcsError::NotMerged { .. } => {
                CliError::failure(message).hint("pass --force to delete it anyway")
            }
            VcsError::BranchDelete { branch, source } => CliError::from(*source)
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
                backend,
                source,
                unstage_failed,
                ..
            } => {
                let err = CliError::failure(message)
                    .cause(source.to_string())
                    .cause(source.stderr().to_string());
                match (backend, unstage_failed) {
                    (Backend::Jj, _) => {
                        err.hint("nothing was committed; see jj's message and try again")
                    }
                    (Backend::Git, None) => err.hint(format!(
                        "nothing was committed or left staged; fix the commit (e.g. its signing setup: `git -C {} config commit.gpgsign false`) and try again",
                        ws.display()
                    )),
                    (Backend::Git, Some(reset)) => err.cause(reset.to_string()).hint(format!(
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
            VcsError::Unregistered { id, path } => crate::error::unregistered(&id, &path),
            VcsError::StaleConflict { id, ws, files } | VcsError::StaleUndone { id, ws, files } => {
                let mut err = CliError::failure(message);
                for file in &files {
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
            } => CliError::io(action, &path, &source),
            VcsError::Fs(e) => e.into(),
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
                let err = match *source {
                    CarryFailure::Io(e) => CliError::io(action, &path, &e),
                    CarryFailure::Process(e) => process_error(e),
                };
                err.hint(if resumes {
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
