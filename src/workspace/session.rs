//! A coding agent's session that works in a workspace directly (Claude Code after its
//! `WorktreeCreate` hook), held like a run: the workspace is recorded `running` with the
//! session's process as its pid, and a detached holder keeps the workspace's lease until
//! the session says it ended (`SessionEnd`, or `WorktreeRemove` letting the workspace go),
//! then records it `done`; or until the process goes without saying so (killed), then
//! records it `interrupted`. So `status` shows the live session, and `clean`, `gc` and the
//! pool leave the workspace alone while it lives.

use std::time::{Duration, Instant};

use crate::store::layout::WorkspaceId;
use crate::store::metadata::{self, Loaded, Status};
use crate::workspace::context::Context;

/// A Claude Code session: its id and its process (with its start time, against pid reuse).
#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub id: String,
    pub pid: u32,
    pub start: Option<u64>,
}

/// The command a held workspace's record names: `claude-code session <id>`.
pub(crate) fn command(session_id: &str) -> Vec<String> {
    vec!["claude-code".into(), "session".into(), session_id.into()]
}

/// The exit code recorded for a session whose process went without saying it ended.
pub(crate) const GONE_UNSAID: i32 = 143;

/// How long a holder waits between looks at the session's process.
const LOOK: Duration = Duration::from_millis(200);

/// Holds workspace `id` for `session` (the caller holds its lease, and keeps it for as long
/// as this runs): waits for word that the session ended or let go (SIGUSR1, SIGUSR2) or for
/// its process to go, then records the outcome if the record still names this session's
/// run.
pub(crate) fn hold(ctx: &Context, id: &WorkspaceId, session: &Session) {
    #[cfg(target_os = "linux")]
    let said = {
        use crate::exec::signals;
        let set = signals::session_set();
        signals::block(&set);
        loop {
            if let Some((libc::SIGUSR1 | libc::SIGUSR2, _, _)) = signals::wait_timeout(&set, LOOK) {
                break true;
            }
            if !crate::exec::liveness::is_alive(session.pid, session.start) {
                break false;
            }
        }
    };
    #[cfg(not(target_os = "linux"))]
    let said = {
        while crate::exec::liveness::is_alive(session.pid, session.start) {
            std::thread::sleep(LOOK);
        }
        false
    };
    let path = ctx.layout.workspace(id);
    let Loaded::Ok(mut record) = metadata::load(&path) else {
        return;
    };
    let ours = record.status == Status::Running
        && record.command == command(&session.id)
        && record.pid == Some(session.pid);
    if !ours {
        return;
    }
    let took = record
        .started_at
        .as_ref()
        .and_then(|t| t.age(std::time::SystemTime::now()))
        .unwrap_or_default();
    match said {
        true => record.finish_run(Status::Done, 0, None, took),
        false => record.finish_run(Status::Interrupted, GONE_UNSAID, None, took),
    }
    let _ = metadata::save(&record);
}

/// The holders of `session_id`'s workspaces (of `workspace` alone when given): processes of
/// this binary whose arguments say so.
pub(crate) fn holders(session_id: &str, workspace: Option<&WorkspaceId>) -> Vec<u32> {
    crate::exec::liveness::processes_whose_args(|args| {
        let after = |flag: &str| {
            args.windows(2)
                .find(|w| w[0] == flag.as_bytes())
                .map(|w| w[1])
        };
        after("--session") == Some(session_id.as_bytes())
            && after("--hold")
                .is_some_and(|held| workspace.is_none_or(|id| held == id.as_str().as_bytes()))
    })
}

/// Tells every holder of `session_id`'s workspaces that the session ended as it should
/// (each records `done` and lets its workspace go), and waits up to `limit` for them to end.
pub(crate) fn ended(session_id: &str, limit: Duration) -> bool {
    release(
        holders(session_id, None),
        rustix::process::Signal::USR1,
        limit,
    )
}

/// Lets `session_id`'s hold of workspace `id` go (recorded `done`) and waits, up to
/// `limit`, for its holder to end; whether none is left.
pub(crate) fn let_go(session_id: &str, id: &WorkspaceId, limit: Duration) -> bool {
    release(
        holders(session_id, Some(id)),
        rustix::process::Signal::USR2,
        limit,
    )
}

/// Signals `holders` with `sig` and waits up to `limit` for them to end.
fn release(holders: Vec<u32>, sig: rustix::process::Signal, limit: Duration) -> bool {
    let start = Instant::now();
    for pid in &holders {
        crate::exec::signals::signal_process(*pid, sig);
    }
    while holders
        .iter()
        .any(|pid| crate::exec::liveness::is_alive(*pid, None))
    {
        if start.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// Starts the detached holder of workspace `id` for `session` (this binary's hidden `hook
/// claude-code --hold`), handing it the lease `lease`, which it then holds too.
pub(crate) fn start_holder(
    ctx: &Context,
    id: &WorkspaceId,
    session: &Session,
    lease: &crate::store::lock::Lock,
) -> std::io::Result<()> {
    let me = std::env::current_exe()?;
    let shared = lease.share()?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&shared);
    let null = std::fs::OpenOptions::new().write(true).open("/dev/null")?;
    let mut call = crate::exec::process::Call::new(me)
        .arg("--root")
        .arg(&ctx.layout.root)
        .arg("--repo")
        .arg(&ctx.repo.root)
        .args([
            "--backend",
            ctx.repo.backend.as_str(),
            "hook",
            "claude-code",
        ])
        .args(["--hold", id.as_str(), "--session", &session.id])
        .args(["--session-pid".to_string(), session.pid.to_string()])
        .args(["--lease-fd".to_string(), fd.to_string()]);
    if let Some(start) = session.start {
        call = call.args(["--session-start".to_string(), start.to_string()]);
    }
    call.dir(&ctx.repo.root)
        .pass(shared)
        .detach(null)
        .map_err(|e| std::io::Error::other(e.to_string()))
}
