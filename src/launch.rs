//! Starting the user's command in a workspace: its environment variables, the optional
//! `direnv exec` wrapper and the guard (see `guard.rs`) that stands between it and us.

use std::ffi::OsString;
use std::fs;
use std::os::fd::RawFd;

use crate::context::Context;
use crate::direnv::Loader;
use crate::error::{CliError, Result};
use crate::metadata::{self, Record};
use crate::process::{self, Child, Ending, TRAMPOLINE};
use crate::vars;

/// A command ready to start in a workspace.
pub struct Launch {
    child: Child,
    through_direnv: bool,
    workspace: String,
}

impl Launch {
    /// `lease` is the workspace's lease, which the guard holds until every process of the
    /// run has ended (none for `shell`, which takes no lease).
    pub fn new(
        ctx: &Context,
        record: &Record,
        loader: Loader,
        command: &[OsString],
        lease: Option<RawFd>,
    ) -> Result<Launch> {
        let ws = &record.workspace_path;
        let mut env: Vec<(OsString, OsString)> = vec![
            (vars::ID.into(), record.workspace_id.clone().into()),
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
        let me = std::env::current_exe().map_err(|e| {
            CliError::failure("cannot locate the agent-workspace binary")
                .cause(e.to_string())
                .hint("run agent-workspace by a path that still exists")
        })?;
        let guard: Vec<OsString> = vec![me.into(), TRAMPOLINE.into(), "--".into()];
        let mut argv: Vec<OsString> = vec![];
        let through_direnv = match loader {
            Loader::Direct => false,
            Loader::Direnv(bin) => {
                if vars::raw(vars::DIRENV_LOG_FORMAT).is_none() {
                    env.push((vars::DIRENV_LOG_FORMAT.into(), "".into()));
                }
                let canonical =
                    fs::canonicalize(ws).map_err(|e| CliError::io("resolve", ws, &e))?;
                argv.extend([bin.into(), "exec".into(), canonical.into()]);
                true
            }
        };
        argv.extend(guard);
        argv.extend(command.iter().cloned());
        let child = Child {
            argv,
            dir: ws.clone(),
            env,
            lease,
        };
        Ok(Launch {
            child,
            through_direnv,
            workspace: ws.display().to_string(),
        })
    }

    /// Runs the command to completion; an error means it never started.
    pub fn run(self) -> Result<Ending> {
        let (through_direnv, workspace) = (self.through_direnv, self.workspace);
        let (ending, started) = process::run_child(self.child).map_err(|e| {
            CliError::failure("could not start the command")
                .cause(e.to_string())
                .hint("check that the command exists and is executable; the workspace is kept")
        })?;
        if started || matches!(ending, Ending::Signaled(_)) {
            return Ok(ending);
        }
        let how = match ending {
            Ending::Exited(code) | Ending::NotStarted(code) => format!("exit status: {code}"),
            Ending::Signaled(sig) => format!("signal {sig}"),
        };
        Err(match through_direnv {
            true => CliError::failure(format!(
                "`direnv exec {workspace}` failed before the command started ({how})"
            ))
            .hint("see direnv's message above; --no-direnv runs without the workspace's .envrc"),
            false => CliError::failure(format!(
                "agent-workspace's guard process failed before the command started ({how})"
            ))
            .hint("run agent-workspace by a path that still exists and is executable"),
        })
    }
}
