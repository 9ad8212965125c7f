//! Starting the user's command in a workspace: its environment variables, the optional
//! `direnv exec` wrapper and the trampoline that gives 126/127 their usual meaning.

use std::ffi::OsString;
use std::fs;

use crate::context::Context;
use crate::direnv::Loader;
use crate::error::{CliError, Result};
use crate::metadata::{self, Record};
use crate::process::{self, Child, Ending};
use crate::vars;

/// The hidden subcommand `direnv exec` runs, which then execs the user's command.
pub const TRAMPOLINE: &str = "__exec";

/// A command ready to start in a workspace.
pub struct Launch {
    child: Child,
    through_direnv: bool,
    workspace: String,
}

impl Launch {
    pub fn new(
        ctx: &Context,
        record: &Record,
        loader: Loader,
        command: &[OsString],
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
        let (argv, through_direnv) = match loader {
            Loader::Direct => (command.to_vec(), false),
            Loader::Direnv(bin) => {
                if vars::raw(vars::DIRENV_LOG_FORMAT).is_none() {
                    env.push((vars::DIRENV_LOG_FORMAT.into(), "".into()));
                }
                let canonical =
                    fs::canonicalize(ws).map_err(|e| CliError::io("resolve", ws, &e))?;
                let me = std::env::current_exe().map_err(|e| {
                    CliError::failure("cannot locate the agent-workspace binary")
                        .cause(e.to_string())
                        .hint(
                            "run agent-workspace by a path that still exists, or pass --no-direnv",
                        )
                })?;
                let mut argv: Vec<OsString> = vec![
                    bin.into(),
                    "exec".into(),
                    canonical.into(),
                    me.into(),
                    TRAMPOLINE.into(),
                    "--".into(),
                ];
                argv.extend(command.iter().cloned());
                (argv, true)
            }
        };
        let child = Child {
            argv,
            dir: ws.clone(),
            env,
            mark_start: through_direnv,
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
        let program = self.child.argv[0].to_string_lossy().into_owned();
        let (ending, started) = process::run_child(self.child).map_err(|e| {
            CliError::failure("could not start the command")
                .cause(e.to_string())
                .hint("check that the command exists and is executable; the workspace is kept")
        })?;
        if let Ending::NotStarted(code) = ending {
            let why = if code == 127 {
                "command not found"
            } else {
                "permission denied"
            };
            eprintln!("agent-workspace: {program}: {why}");
        }
        if through_direnv && !started && !matches!(ending, Ending::Signaled(_)) {
            return Err(CliError::failure(format!(
                "`direnv exec {workspace}` failed before the command started ({})",
                match ending {
                    Ending::Exited(code) | Ending::NotStarted(code) =>
                        format!("exit status: {code}"),
                    Ending::Signaled(sig) => format!("signal {sig}"),
                }
            ))
            .hint("see direnv's message above; --no-direnv runs without the workspace's .envrc"));
        }
        Ok(ending)
    }
}

/// The trampoline: report the start, then become the user's command (127 not found, 126 not
/// executable, as env(1) does).
pub fn trampoline(args: &[OsString]) -> i32 {
    let command = match args.first() {
        Some(sep) if sep == "--" => &args[1..],
        _ => args,
    };
    if command.is_empty() {
        eprintln!("agent-workspace: {TRAMPOLINE}: no command");
        return 125;
    }
    let parent = process::report_started();
    process::exec(command, None, parent)
}
