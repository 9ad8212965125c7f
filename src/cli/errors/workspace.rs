//! The words of a workspace's lifecycle: opening, holding and preparing one
//! ([`WorkspaceError`]), its limits ([`CapacityError`]) and `.envrc` ([`DirenvError`]),
//! removing it ([`CleanError`]), the refusals before a land ([`LandRefusal`]), the pool
//! ([`PoolError`]) and a sandboxed run's own store ([`OwnStoreError`]).

use std::path::Path;

use crate::error::CliError;
use crate::workspace::capacity::CapacityError;
use crate::workspace::direnv::DirenvError;
use crate::workspace::error::{
    CleanError, LandRefusal, OwnStoreError, PoolError, Stage, StoreWords, WorkspaceError,
};

/// The backend no longer knows workspace `id`, whose directory `path` still exists: the one
/// wording of that condition.
pub(in crate::cli) fn unregistered(id: &str, path: &Path) -> CliError {
    CliError::failure(format!(
        "the backend no longer knows workspace {id:?}, so its files may hold edits no commit has"
    ))
    .hint(format!(
        "inspect {}, then `agent-workspace clean --force {id}` removes it, keeping its files aside",
        path.display()
    ))
}

impl From<WorkspaceError> for CliError {
    fn from(err: WorkspaceError) -> CliError {
        let message = err.to_string();
        let trusted_setup = "a setup.command in your own configuration file is always trusted";
        match err {
            WorkspaceError::Unknown { .. } => CliError::failure(message).hint(
                "list workspaces with `agent-workspace status`; create one with `agent-workspace run`",
            ),
            WorkspaceError::NotAWorkspace { .. } => {
                CliError::failure(message).hint("remove it by hand once you know where it points")
            }
            WorkspaceError::OutsideNamespace { .. } => CliError::failure(message)
                .hint("agent-workspace only deletes workspaces inside its own namespace directory"),
            WorkspaceError::Foreign { .. } => {
                CliError::failure(message).hint("pick another id, or forget that workspace first")
            }
            WorkspaceError::Unusable { id, .. } => {
                CliError::failure(message).hint(format!("see `agent-workspace status {id}`"))
            }
            WorkspaceError::Unregistered { id, path } => unregistered(&id, &path),
            WorkspaceError::Mismatch { mismatch, .. } => {
                CliError::failure(message).hint(mismatch.hint())
            }
            WorkspaceError::InsideSandbox { .. } => CliError::failure(message).hint(
                "do it from outside the sandbox once the run ends (`run --checkpoint` checkpoints after every run)",
            ),
            WorkspaceError::Busy { .. } => CliError::failure(message).hint(
                "wait for the run to end, or do this from inside that run (`run --checkpoint` checkpoints after every run)",
            ),
            WorkspaceError::ParentOfExisting { .. } => CliError::usage(message)
                .hint("drop --parent to run in it, or pick a new id for the child"),
            WorkspaceError::OwnParent { .. } => {
                CliError::usage(message).hint("pass --parent the id of another, existing workspace")
            }
            WorkspaceError::NoParent { .. } => CliError::failure(message)
                .hint("list workspaces with `agent-workspace status`; --parent takes the id of one"),
            WorkspaceError::BadParent { parent, .. } => {
                CliError::failure(message).hint(format!("see `agent-workspace status {parent}`"))
            }
            WorkspaceError::NestedTooDeep { id, .. } => CliError::failure(message).hint(format!(
                "move that directory out of the workspace, or `agent-workspace clean --force {id}` keeps it aside whole and removes the workspace; nothing was recorded"
            )),
            WorkspaceError::TooDeep { .. } => CliError::failure(message).hint(format!(
                "start it from a workspace higher up, or raise the limit with {}",
                crate::vars::MAX_DEPTH
            )),
            WorkspaceError::BadMaxDepth { .. } => CliError::usage(message)
                .hint("set it to how deep children may nest (e.g. 10), or unset it"),
            WorkspaceError::NewerRecord { .. } => {
                CliError::failure(message).hint("upgrade agent-workspace to read it")
            }
            WorkspaceError::NotComparable { id, .. } => CliError::failure(message).hint(format!(
                "`agent-workspace run {id} -- true` adopts or repairs it; `agent-workspace status {id}` shows its problem"
            )),
            WorkspaceError::NewerRecordKept { .. } => {
                CliError::failure(message).hint("upgrade agent-workspace")
            }
            WorkspaceError::BaseDiffers { .. } => CliError::failure(message)
                .hint("drop --base-change to reattach, or use a new id"),
            WorkspaceError::BadBackendVar { .. } => CliError::usage(message).hint("use jj or git"),
            WorkspaceError::BadColocateVar { .. } => {
                CliError::usage(message).hint("use auto, true or false")
            }
            WorkspaceError::CreateInterrupted { signal, .. } => {
                CliError::interrupted(signal, message)
                    .hint("run the same command again to create the workspace")
            }
            WorkspaceError::CopyFailed { .. } => CliError::failure(message).hint(
                "free the problem (permissions, disk space) or change copy.include, then run again",
            ),
            WorkspaceError::ToolsUntrusted { .. } => CliError::failure(message).hint(
                "review the file, then pass --trust-config to copy what it names (tools.paths in your own configuration file is always trusted); the workspace is kept",
            ),
            WorkspaceError::ToolsLink { .. } => CliError::failure(message).hint(
                "remove that symlink or the entry from tools.paths: the tools bundle never copies the checkout, its .git or its .jj",
            ),
            WorkspaceError::ToolsRead { root, source } => {
                CliError::io("read the tools bundle's sources in", &root, &source)
                    .hint("check tools.paths in the configuration")
            }
            WorkspaceError::SetupUntrusted { .. } => CliError::failure(message).hint(format!(
                "review the file, then pass --trust-config to run its setup ({trusted_setup}); the workspace is kept"
            )),
            WorkspaceError::SetupInterrupted { signal, log } => {
                CliError::interrupted(signal, message).hint(format!(
                    "its output is in {}; the next run retries the setup",
                    log.display()
                ))
            }
            WorkspaceError::SetupFailed { id, .. } => CliError::failure(message).hint(format!(
                "workspace {id:?} is kept for inspection; the next run retries the setup"
            )),
            WorkspaceError::NoBinary { source } => CliError::failure(message)
                .cause(source.to_string())
                .hint("run agent-workspace by a path that still exists"),
            WorkspaceError::NoProxy { source } => CliError::failure(message)
                .cause(source.to_string())
                .hint("the proxy's socket is made in $TMPDIR (else /tmp): make it writable, or leave sandbox.allowed_hosts out; the command was not run"),
            WorkspaceError::NotStarted { source } => CliError::failure(message)
                .cause(source.to_string())
                .hint("check that the command exists and is executable; the workspace is kept"),
            WorkspaceError::ChainFailed { stage, .. } => CliError::failure(message).hint(match stage {
                Stage::Sandbox => "see bubblewrap's or direnv's message above; the command was not run, confined or not",
                Stage::Direnv { .. } => "see direnv's message above; --no-direnv runs without the workspace's .envrc",
                Stage::Guard => "run agent-workspace by a path that still exists and is executable",
            }),
            WorkspaceError::Io {
                action,
                path,
                source,
            } => CliError::io(action, &path, &source),
            WorkspaceError::Lock(e) => e.into(),
        }
    }
}

impl From<CapacityError> for CliError {
    fn from(err: CapacityError) -> CliError {
        let message = err.to_string();
        CliError::failure(message).hint(match err {
            CapacityError::TooMany { .. } => {
                "clean workspaces you no longer need (`agent-workspace status` lists them; `agent-workspace clean --status done` removes finished ones), or raise limits.max_workspaces"
            }
            CapacityError::LowDisk { .. } => {
                "free space there (`agent-workspace status --size` shows what each workspace takes; `clean` removes them), or lower limits.min_free_disk"
            }
            CapacityError::NoPorts { .. } => "lower ports.count, or free some ports",
        })
    }
}

impl From<DirenvError> for CliError {
    fn from(err: DirenvError) -> CliError {
        let review = "review it, then pass --trust-envrc to allow it (or --no-direnv to skip it)";
        match err {
            DirenvError::NotInstalled { .. } => {
                CliError::failure(err.to_string()).hint(crate::error::install_hint("direnv"))
            }
            DirenvError::EnvrcChanged { .. } | DirenvError::LoadChanged { .. } => {
                CliError::failure(err.to_string()).hint(review)
            }
            DirenvError::Io {
                action,
                path,
                source,
            } => CliError::io(action, &path, &source),
            DirenvError::Unreadable(e) => e.into(),
            DirenvError::Vcs(e) => (*e).into(),
            DirenvError::Allow(e) => e.into(),
        }
    }
}

impl From<CleanError> for CliError {
    fn from(err: CleanError) -> CliError {
        let message = err.to_string();
        let kept_aside = |dest: &Path| {
            format!(
                "files already kept aside are in {}; free the problem, then clean again",
                dest.display()
            )
        };
        match err {
            CleanError::Journal { .. } | CleanError::NotSurveyed { .. } => {
                CliError::failure(message)
            }
            CleanError::NotFinished { dest, .. } | CleanError::NotKeptAside { dest, .. } => {
                CliError::failure(message).hint(kept_aside(&dest))
            }
            CleanError::BackendName { id, path, .. } => CliError::failure(message).hint(format!(
                "rename it back (`jj workspace rename {id}` in {}), then clean again",
                path.display()
            )),
            CleanError::TooDeep { id, .. } => CliError::failure(message).hint(format!(
                "`agent-workspace clean --force {id}` keeps it aside whole (in the namespace's .kept/) and removes the workspace; nothing was changed"
            )),
            CleanError::TooDeepNotKept { .. } => CliError::failure(message)
                .hint("nothing was removed; free the problem, then clean again"),
            CleanError::NoRoom { .. } => CliError::failure(message).hint(
                "nothing was changed: free space on that file system, then clean again (its edits are recorded in the repository first)",
            ),
            CleanError::InUse { forced: false, .. } => {
                CliError::failure(message).hint("pass --force to stop its run first")
            }
            CleanError::InUse { forced: true, .. } => CliError::failure(message)
                .hint("its run did not stop; stop it by hand and try again"),
            CleanError::Vcs(e) => e.into(),
        }
    }
}

impl From<LandRefusal> for CliError {
    fn from(err: LandRefusal) -> CliError {
        let message = err.to_string();
        match err {
            LandRefusal::Underway => CliError::failure(message)
                .hint("land again once it is done, or drop --no-wait to wait for it"),
            LandRefusal::Stuck { minutes, lock } => CliError::failure(message)
                .cause(format!("waited {minutes} minutes for {}", lock.display()))
                .hint("a land seems stuck: `agent-workspace status` shows the workspace it is landing; land again once it ends"),
            LandRefusal::NoDirectory { id, .. } => CliError::failure(message).hint(format!(
                "`agent-workspace run {id} -- true` re-creates it with its edits; land it then"
            )),
            LandRefusal::Renamed { id, .. } => CliError::failure(message).hint(format!(
                "`agent-workspace clean {id}` forgets that name, keeping its edits"
            )),
            LandRefusal::NoRecord { id, .. } => CliError::failure(message).hint(format!(
                "`agent-workspace status {id}` says why; the next `agent-workspace run {id}` repairs it"
            )),
            LandRefusal::TargetHeld { what, source } => {
                let mut err = CliError::from(*source);
                err.message = format!("cannot land on {what}: {}", err.message);
                err
            }
            LandRefusal::ParentGone { .. } => {
                CliError::failure(message).hint("pass --onto REV to name where to land")
            }
        }
    }
}

impl From<PoolError> for CliError {
    fn from(err: PoolError) -> CliError {
        let message = err.to_string();
        match err {
            PoolError::Interrupted { signal } => CliError::interrupted(signal, message)
                .hint("`agent-workspace pool fill` goes on where it stopped"),
            PoolError::BadToken { .. } => CliError::failure(message)
                .hint("run `agent-workspace pool drain`, then fill the pool again"),
            PoolError::ReadyFile { .. } => CliError::failure(message),
            PoolError::HelperRunning { .. } => CliError::failure(message)
                .hint("wait for it to end (or end it), then run the command again"),
            PoolError::NotPrepared { err, log: None } => *err,
            PoolError::NotPrepared { err, log: Some(log) } => {
                err.cause(format!("the setup's output is kept in {}", log.display()))
            }
            PoolError::Setup { err, refused: true } => err.hint(
                "review the file, then pass --trust-config to `agent-workspace pool fill` (a setup.command in your own configuration file is always trusted)",
            ),
            PoolError::Setup { err, refused: false } => err.hint(
                "fix the setup command; `agent-workspace pool fill` prepares the pool again",
            ),
        }
    }
}

/// "the agent's commits stay in its own store PATH (its files are in the workspace)"
fn commits_stay(words: &StoreWords) -> String {
    format!(
        "the agent's commits stay in its {} {} (its files are in the {})",
        words.store,
        words.path.display(),
        words.files_in
    )
}

impl From<OwnStoreError> for CliError {
    fn from(err: OwnStoreError) -> CliError {
        let message = err.to_string();
        let tries_again = |words: &StoreWords| {
            format!(
                "{}; the next sandboxed run tries again",
                commits_stay(words)
            )
        };
        match err {
            OwnStoreError::NotMovedAside { dir, .. } => CliError::failure(message).hint(format!(
                "the command was not run; the store is {} (move it elsewhere, then run again)",
                dir.display()
            )),
            OwnStoreError::NotMade { source, words } => CliError::from(source).hint(format!(
                "the {}'s {} for sandboxed runs could not be made; the command was not run",
                words.files_in, words.store
            )),
            OwnStoreError::NotBroughtBack { err, words, dir } => err.hint(format!(
                "the command was not run; {}: to start afresh from the {files_in}'s files, delete {} (those commits are then lost)",
                commits_stay(&words),
                dir.display(),
                files_in = words.files_in,
            )),
            OwnStoreError::NotExported { err, words, .. } => CliError::failure(message)
                .cause(err.message)
                .hint(tries_again(&words)),
            OwnStoreError::TimedOut { kept, .. } => CliError::failure(message).hint(format!(
                "the workspace's files are as the agent left them and its next sandboxed run starts afresh from them (a larger sandbox.bring_back_timeout in your own configuration gives a big export more time); what the agent committed in its sandbox is kept in {}",
                kept.display()
            )),
            OwnStoreError::NoBundle { words, .. } => {
                CliError::failure(message).hint(tries_again(&words))
            }
            OwnStoreError::NotTakenBack { id, source, words } => CliError::from(source)
                .cause(format!("bringing back the work of workspace {id:?}"))
                .hint(tries_again(&words)),
            OwnStoreError::OddEntry { .. } => CliError::failure(message),
            OwnStoreError::NoBinary { source } => {
                CliError::failure(message).cause(source.to_string())
            }
        }
    }
}
