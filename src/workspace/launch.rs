//! Starting the user's command in a workspace: its environment variables, the optional
//! `direnv exec` wrapper and the guard (see `guard.rs`) that stands between it and us.

use std::ffi::OsString;
use std::fs;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::error::Result;
use crate::exec::process::{self, Child, Ending, TRAMPOLINE};
use crate::exec::sandbox;
use crate::store::kept_env;
use crate::store::metadata::{self, Record};
use crate::vars;
use crate::workspace::context::Context;
use crate::workspace::direnv::{self, Loader};
use crate::workspace::error::{Stage, WorkspaceError};

/// A command ready to start in a workspace.
pub(crate) struct Launch {
    child: Child,
    through_direnv: bool,
    sandboxed: bool,
    workspace: String,
    kept_store: Option<crate::workspace::own_store::KeptStore>,
    /// What an earlier sandboxed run left that jj or git would follow, moved aside.
    moved_aside: Vec<crate::store::nested_aside::MovedAside>,
    /// The cgroup holding the run's limits, removed after it.
    cgroup: Option<sandbox::limits::Cgroup>,
    /// direnv evaluates for this launch, and what it loads is kept for the next ones.
    evaluation: Option<Evaluation>,
    /// The proxy the run reaches the hosts it may reach through (`sandbox.allowed_hosts`).
    proxy: Option<sandbox::proxy::Proxy>,
}

/// An evaluation by direnv whose result may be kept (see [`kept_env`]): where, under which
/// key, when it began, and the file the guard hands the loaded environment back in.
struct Evaluation {
    file: PathBuf,
    key: String,
    began: SystemTime,
    handback: OwnedFd,
    /// The user's direnv configuration, stamped before the evaluation.
    configuration: Vec<kept_env::Read>,
}

/// A sandbox to start the command in: bubblewrap (found and probed) and the options.
pub struct Sandboxing {
    pub bwrap: PathBuf,
    pub options: sandbox::Options,
    /// Why the run gets no process, memory or CPU limit (no cgroup on this host), to be
    /// said; none when it gets them.
    pub unlimited: Option<String>,
    /// The only hosts the run may reach, through a proxy (`sandbox.allowed_hosts`); none:
    /// the network as `options.network` says.
    pub allowed_hosts: Option<Vec<sandbox::hosts::HostPattern>>,
}

impl Launch {
    /// `lease` is the workspace's lease, which the guard holds until every process of the
    /// run has ended (none for `shell`, which takes no lease).
    pub(crate) fn new(
        ctx: &Context,
        record: &Record,
        loader: Loader,
        command: &[OsString],
        lease: Option<RawFd>,
        sandboxing: Option<&Sandboxing>,
    ) -> Result<Launch> {
        let ws = &record.workspace_path;
        let mut env: Vec<(OsString, OsString)> = vec![
            (vars::ID.into(), record.workspace_id.as_str().into()),
            (vars::PATH.into(), ws.clone().into()),
            (vars::METADATA.into(), metadata::path(ws).into()),
            (vars::REPO_ROOT.into(), ctx.repo.root.clone().into()),
            (vars::NAMESPACE.into(), ctx.layout.namespace.clone().into()),
            (vars::BACKEND.into(), ctx.repo.backend.as_str().into()),
            (
                vars::WORKFLOW.into(),
                record.workflow.clone().unwrap_or_default().into(),
            ),
            // Nested calls must find the same root even when this one was given --root.
            (vars::ROOT.into(), ctx.layout.root.clone().into()),
        ];
        if let Some(first) = record.ports.first() {
            let all: Vec<String> = record.ports.iter().map(u16::to_string).collect();
            env.push((vars::PORT.into(), first.to_string().into()));
            env.push((vars::PORTS.into(), all.join(",").into()));
        }
        if let Some(tools) = &record.tools {
            env.push((vars::TOOL_COPY_ROOT.into(), ws.join(&tools.dir).into()));
            env.push((vars::TOOLS_VERSION.into(), tools.version.clone().into()));
            env.push((vars::TOOLS_SOURCE.into(), tools.source.clone().into()));
        }
        let me = std::env::current_exe().map_err(|source| WorkspaceError::NoBinary { source })?;
        let mut argv: Vec<OsString> = vec![];
        let mut passed = None;
        let mut kept_store = None;
        let mut moved_aside = vec![];
        let mut cgroup = None;
        let mut proxy = None;
        if let Some(sandboxing) = sandboxing {
            let tag = match (sandboxing.options.network, &sandboxing.allowed_hosts) {
                (false, _) => "bwrap,no-network",
                (true, Some(_)) => "bwrap,allowed-hosts",
                (true, None) => "bwrap",
            };
            if let (true, Some(hosts)) = (sandboxing.options.network, &sandboxing.allowed_hosts) {
                let started = sandbox::proxy::Proxy::start(hosts.clone())
                    .map_err(|source| WorkspaceError::NoProxy { source })?;
                env.push((process::PROXY_VAR.into(), started.socket().into()));
                proxy = Some(started);
            }
            env.push((vars::SANDBOX.into(), tag.into()));
            argv.push(sandboxing.bwrap.clone().into());
            let id = crate::store::layout::WorkspaceId::parse(&record.workspace_id)?;
            let prepared = crate::workspace::own_store::prepare(ctx, &id, ws, &sandboxing.bwrap)?;
            let private = Some(prepared.store);
            kept_store = prepared.kept;
            moved_aside = prepared.moved;
            let seccomp = std::os::fd::OwnedFd::from(sandbox::seccomp()?);
            let fd = std::os::fd::AsRawFd::as_raw_fd(&seccomp);
            let mut readable = sandbox::readable(&me, &sandboxing.options.readable);
            if let Loader::Direnv(bin) = &loader {
                readable.push(bin.clone());
            }
            argv.extend(sandbox_args(
                ctx,
                ws,
                readable,
                &sandboxing.options,
                fd,
                private,
                proxy.as_ref().map(|p| p.socket().to_path_buf()),
            )?);
            passed = Some(seccomp);
            if let Some(limits) = &sandboxing.options.limits {
                cgroup = sandbox::limits::Cgroup::make(limits)?;
            }
        }
        let guard: Vec<OsString> = vec![me.into(), TRAMPOLINE.into(), "--".into()];
        let mut evaluation = None;
        let mut env_only = false;
        let through_direnv = match loader {
            Loader::Direct => false,
            Loader::Direnv(bin) => {
                if vars::raw(vars::DIRENV_LOG_FORMAT).is_none() {
                    env.push((vars::DIRENV_LOG_FORMAT.into(), "".into()));
                }
                let canonical =
                    fs::canonicalize(ws).map_err(|e| WorkspaceError::io("resolve", ws, e))?;
                // A sandboxed run's direnv runs inside its sandbox: nothing is kept for it.
                let kept = match sandboxing {
                    None => kept_or_evaluation(ctx, record, &env, &canonical, &bin),
                    Some(_) => Kept::Neither,
                };
                match kept {
                    Kept::Environment(kept) => {
                        env = kept;
                        env_only = true;
                        false
                    }
                    kept => {
                        if let Kept::Evaluate(e) = kept {
                            evaluation = Some(e);
                        }
                        argv.extend([bin.into(), "exec".into(), canonical.into()]);
                        true
                    }
                }
            }
        };
        argv.extend(guard);
        argv.extend(command.iter().cloned());
        let child = Child {
            argv,
            dir: ws.clone(),
            env,
            lease,
            sandboxed: sandboxing.is_some(),
            output: None,
            passed,
            handback: evaluation.as_ref().map(|e| e.handback.as_raw_fd()),
            env_only,
            cgroup_procs: cgroup.as_ref().map_or(vec![], |c| c.procs()),
            cpus: cgroup
                .as_ref()
                .and_then(|c| c.cpus())
                .map(<[usize]>::to_vec),
        };
        Ok(Launch {
            child,
            through_direnv,
            sandboxed: sandboxing.is_some(),
            workspace: ws.display().to_string(),
            kept_store,
            moved_aside,
            cgroup,
            evaluation,
            proxy,
        })
    }

    /// The workspace's own store this launch replaced, kept aside because it held work
    /// that did not come back (to be said).
    pub(crate) fn kept_store(&self) -> Option<&crate::workspace::own_store::KeptStore> {
        self.kept_store.as_ref()
    }

    /// What an earlier sandboxed run left that jj or git would follow, moved aside before
    /// this one (where each now is).
    pub(crate) fn moved_aside(&self) -> &[crate::store::nested_aside::MovedAside] {
        &self.moved_aside
    }

    /// Sends the command's stdout and stderr to `log` (stdin empty) instead of ours.
    pub(crate) fn output_to(mut self, log: std::fs::File) -> Launch {
        self.child.output = Some(log);
        self
    }

    /// Runs the command to completion; an error means it never started.
    pub(crate) fn run(self) -> Result<Ending> {
        self.run_after(|| Ok(()))?.outcome
    }

    /// Starts the chain in front of the command (direnv, the sandbox, the guard), does
    /// `first` meanwhile, and only then lets the guard start the command, which then runs to
    /// completion. `first` always runs; its error ends the chain before the command starts.
    pub(crate) fn run_after(self, first: impl FnOnce() -> Result<()>) -> Result<Ran> {
        let running = process::start_child(self.child);
        if let Err(err) = first() {
            // The guard sees no go-ahead and ends; wait for the chain so nothing of it
            // (the lease the guard holds among it) outlives this error.
            if let Ok(running) = running {
                drop(running.wait());
            }
            return Err(err);
        }
        let ended = running.and_then(|mut running| {
            running.go();
            running.wait()
        });
        let (result, guard) = match ended {
            Ok(ended) => (Ok((ended.ending, ended.started)), Some(ended)),
            Err(err) => (Err(err), None),
        };
        if let Some(evaluation) = self.evaluation {
            // The guard started only when direnv's evaluation succeeded.
            evaluation.keep(matches!(result, Ok((_, true))));
        }
        let outcome = finish(result, self.through_direnv, self.sandboxed, &self.workspace);
        let killed = matches!(outcome, Ok(Ending::Signaled(libc::SIGKILL)));
        let limit_hit = self.cgroup.as_ref().and_then(|c| c.hit(killed));
        let refused_hosts = self.proxy.map_or(vec![], sandbox::proxy::Proxy::finish);
        Ok(Ran {
            outcome,
            limit_hit,
            refused_hosts,
            _guard: guard,
            _cgroup: self.cgroup,
        })
    }
}

/// What a launch through direnv (unsandboxed) does about the environment direnv loads.
enum Kept {
    /// Starts with this environment, loaded before and still current.
    Environment(Vec<(OsString, OsString)>),
    /// Evaluates, keeping the result.
    Evaluate(Evaluation),
    /// Evaluates, keeping nothing (sandboxed, or nothing can be kept).
    Neither,
}

/// The environment kept for `record`'s workspace when direnv would load the same again by its
/// own rule (the same caller environment `env`, workspace, direnv binary, and every file the
/// last evaluation read unchanged), unless `direnv.reuse` is off; else the evaluation to keep.
fn kept_or_evaluation(
    ctx: &Context,
    record: &Record,
    env: &[(OsString, OsString)],
    canonical: &Path,
    bin: &Path,
) -> Kept {
    let began = SystemTime::now();
    let given = direnv_receives(env);
    let Some(key) = direnv::evaluation_key(&given, canonical, bin, began) else {
        return Kept::Neither;
    };
    let file = ctx.layout.kept_env(&record.workspace_id);
    if ctx.config.direnv_reuse {
        if let Some(kept) = kept_env::load(&file, &key) {
            return Kept::Environment(kept);
        }
    }
    let configuration = direnv::configuration_files(&given);
    match (handback_file(), configuration) {
        (Some(handback), Some(configuration)) => Kept::Evaluate(Evaluation {
            file,
            key,
            began,
            handback,
            configuration,
        }),
        _ => Kept::Neither,
    }
}

/// The whole environment `direnv exec` receives: ours with `env` set over it (the guard's
/// descriptors, new every run, left out).
fn direnv_receives(env: &[(OsString, OsString)]) -> Vec<(OsString, OsString)> {
    let mut all: std::collections::BTreeMap<OsString, OsString> = std::env::vars_os().collect();
    all.extend(env.iter().cloned());
    all.remove(std::ffi::OsStr::new(process::GUARD_VAR));
    all.into_iter().collect()
}

/// An anonymous file for the guard to hand the loaded environment back in.
fn handback_file() -> Option<OwnedFd> {
    #[cfg(target_os = "linux")]
    {
        rustix::fs::memfd_create("agent-workspace-env", rustix::fs::MemfdFlags::CLOEXEC).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

impl Evaluation {
    /// Keeps what the guard handed back when direnv's evaluation succeeded (`succeeded`) and
    /// every file it read had settled; otherwise forgets what was kept before.
    fn keep(self, succeeded: bool) {
        let kept = succeeded
            && handed_back(self.handback).is_some_and(|env| {
                let Some(mut files) = direnv::watched_files(&env) else {
                    return false;
                };
                files.extend(self.configuration);
                kept_env::keep(&self.file, &self.key, self.began, &files, &env)
            });
        if !kept {
            kept_env::forget(&self.file);
        }
    }
}

/// The environment the guard wrote to `fd` (see `guard.rs`), when it wrote it whole.
fn handed_back(fd: OwnedFd) -> Option<Vec<(OsString, OsString)>> {
    use std::io::{Read, Seek};
    use std::os::unix::ffi::OsStringExt;
    let mut file = fs::File::from(fd);
    file.seek(std::io::SeekFrom::Start(0)).ok()?;
    let mut bytes = vec![];
    file.take(crate::store::fsutil::UNTRUSTED_LIMIT)
        .read_to_end(&mut bytes)
        .ok()?;
    // Entries each ended by a NUL, then an empty one.
    let body = match bytes.as_slice() {
        b"\0" => &[][..],
        _ => bytes.strip_suffix(b"\0\0")?,
    };
    let mut env = vec![];
    for entry in body.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        let at = entry.iter().position(|b| *b == b'=')?;
        env.push((
            OsString::from_vec(entry[..at].to_vec()),
            OsString::from_vec(entry[at + 1..].to_vec()),
        ));
    }
    Some(env)
}

/// A command that ran: how it ended (an error: it never started), and its guard, which may
/// still be ending as this is read and is waited for when this is dropped.
pub(crate) struct Ran {
    pub outcome: Result<Ending>,
    /// The sandbox limit the run reached, when it did.
    pub limit_hit: Option<crate::store::metadata::LimitHit>,
    /// The hosts the run's proxy refused (`sandbox.allowed_hosts`).
    pub refused_hosts: Vec<crate::store::metadata::RefusedHost>,
    _guard: Option<process::Ended>,
    /// Removed once the guard (dropped first) has ended with every process of the run.
    _cgroup: Option<sandbox::limits::Cgroup>,
}

/// How a started chain ended, or why it failed before the command started.
fn finish(
    waited: std::io::Result<(Ending, bool)>,
    through_direnv: bool,
    sandboxed: bool,
    workspace: &str,
) -> Result<Ending> {
    let (ending, started) = waited.map_err(|source| WorkspaceError::NotStarted { source })?;
    if started || matches!(ending, Ending::Signaled(_)) {
        return Ok(ending);
    }
    let how = match ending {
        Ending::Exited(code) | Ending::NotStarted(code) => format!("exit status: {code}"),
        Ending::Signaled(sig) => format!("signal {sig}"),
    };
    let stage = match through_direnv {
        _ if sandboxed => Stage::Sandbox,
        true => Stage::Direnv {
            workspace: workspace.to_string(),
        },
        false => Stage::Guard,
    };
    Err(WorkspaceError::ChainFailed { stage, how }.into())
}

/// bubblewrap's arguments for a run in `ws`: what must stay readable although it lives under
/// `/tmp` (`readable`: this binary, direnv, the user's configuration, PATH) is put back
/// read-only.
fn sandbox_args(
    ctx: &Context,
    ws: &std::path::Path,
    readable: Vec<PathBuf>,
    options: &sandbox::Options,
    seccomp: std::os::fd::RawFd,
    private: Option<sandbox::PrivateStore>,
    proxy: Option<PathBuf>,
) -> Result<Vec<OsString>> {
    let canonical = fs::canonicalize(ws).map_err(|e| WorkspaceError::io("resolve", ws, e))?;
    let namespace_dir = canonical.parent().unwrap_or(&canonical).to_path_buf();
    let root = fs::canonicalize(&ctx.layout.root).unwrap_or_else(|_| ctx.layout.root.clone());
    let backend = ctx
        .vcs
        .sandbox_paths(&ctx.repo, &canonical, private.is_some())?;
    let scope = sandbox::Scope {
        repo: &ctx.repo,
        workspace: &canonical,
        root: &root,
        namespace_dir: &namespace_dir,
        readable,
        private,
        backend,
        proxy,
    };
    Ok(sandbox::args(options, &scope, seccomp)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn handed(bytes: &[u8]) -> Option<Vec<(OsString, OsString)>> {
        let mut file = tempfile::tempfile().expect("a temp file");
        file.write_all(bytes).expect("write");
        handed_back(OwnedFd::from(file))
    }

    #[test]
    fn only_an_environment_handed_back_whole_is_read() {
        let whole = handed(b"A=1\0B=x=y\0\0").expect("whole");
        assert_eq!(
            whole,
            vec![("A".into(), "1".into()), ("B".into(), "x=y".into())]
        );
        assert_eq!(handed(b"\0"), Some(vec![]), "an empty environment");
        assert_eq!(handed(b"A=1\0B=x"), None, "cut inside an entry");
        assert_eq!(handed(b"A=1\0"), None, "cut after an entry");
        assert_eq!(handed(b""), None, "nothing written");
        assert_eq!(handed(b"A\0\0"), None, "not NAME=value");
    }
}
