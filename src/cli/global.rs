//! The flags every subcommand accepts and the sandbox flags of `run` and `shell`: the part of
//! the command line the commands read besides their own `Args`.

use std::path::PathBuf;

use clap::Args;

use crate::error::CliError;
use crate::repo::Backend;
use crate::ui::output::ColorChoice;

/// Flags every subcommand accepts, listed apart from each subcommand's own.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global Options")]
pub struct GlobalArgs {
    /// Directory holding all workspaces [default: $AI_WORKSPACES_ROOT, else
    /// $XDG_CACHE_HOME/ai-workspaces, else ~/.cache/ai-workspaces]
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Repository to act on [default: the one containing the current directory]
    #[arg(long, global = true, value_name = "PATH")]
    pub repo: Option<PathBuf>,
    /// Version-control backend [default: $AGENT_WORKSPACE_BACKEND, else jj when the
    /// repository has .jj, else git]
    #[arg(long, global = true, value_enum)]
    pub backend: Option<Backend>,
    /// When to colour the output: auto (on a terminal, unless NO_COLOR is set), always, never
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// The sandbox flags of `run` and `shell`.
#[derive(Debug, Args, Clone, Default)]
pub struct SandboxArgs {
    /// Confine the command (direnv included) with bubblewrap: it can write only this
    /// workspace, what jj or git needs, a private /tmp and --allow-write paths
    #[arg(long)]
    pub sandbox: bool,
    /// Run unconfined although the configuration sets sandbox.enabled
    #[arg(long, conflicts_with_all = ["sandbox", "no_network", "allow_write"])]
    pub no_sandbox: bool,
    /// With --sandbox: remove the network (only loopback remains)
    #[arg(long)]
    pub no_network: bool,
    /// With --sandbox: also let the command write PATH (repeatable; also
    /// $AGENT_WORKSPACE_SANDBOX_WRITE, separated like PATH)
    #[arg(long, value_name = "PATH")]
    pub allow_write: Vec<PathBuf>,
}

impl SandboxArgs {
    /// bubblewrap, found and probed, with the options asked for (flags first, then the
    /// configuration's `sandbox.*`); `None` when the run is not sandboxed.
    /// `confined`: a run of the workspace was sandboxed before, so this one is too unless
    /// `--no-sandbox` says otherwise.
    pub fn prepare(
        &self,
        config: &crate::config::Config,
        confined: bool,
    ) -> Result<Option<crate::workspace::launch::Sandboxing>, CliError> {
        let sandboxed = self.sandbox || ((config.sandbox || confined) && !self.no_sandbox);
        if !sandboxed {
            if self.no_network || !self.allow_write.is_empty() {
                return Err(CliError::usage(
                    "--no-network and --allow-write apply to sandboxed runs only",
                )
                .hint("add --sandbox (or set sandbox.enabled in the configuration)"));
            }
            return Ok(None);
        }
        let bwrap = crate::exec::sandbox::find()?;
        let mut flags = self.allow_write.clone();
        flags.extend(config.sandbox_writable.iter().cloned());
        let writable = crate::exec::sandbox::writable(&flags)?;
        let sockets = crate::exec::sandbox::sockets(&config.sandbox_sockets)?;
        let readable = crate::exec::sandbox::extra_readable(&config.sandbox_readable)?;
        let (limits, unlimited) = crate::exec::sandbox::limits::resolve(&config.sandbox_limits)?;
        let network = !self.no_network && config.sandbox_network;
        let allowed_hosts = config.sandbox_allowed_hosts.clone().filter(|_| network);
        Ok(Some(crate::workspace::launch::Sandboxing {
            bwrap,
            unlimited,
            options: crate::exec::sandbox::Options {
                network,
                allowed_hosts: allowed_hosts
                    .as_ref()
                    .map(|list| list.iter().map(ToString::to_string).collect()),
                writable,
                sockets,
                readable,
                pass_env: config.sandbox_pass_env.clone(),
                limits: Some(limits),
            },
            allowed_hosts,
        }))
    }
}

/// Whether a run of workspace `id` at `path` was sandboxed before (its record says so):
/// then this one is too, unless `--no-sandbox`, which is said.
pub(in crate::cli) fn ran_sandboxed(
    ui: &crate::ui::Ui,
    args: &SandboxArgs,
    id: &crate::store::layout::WorkspaceId,
    path: &std::path::Path,
) -> bool {
    let confined = matches!(
        crate::store::metadata::load(path),
        crate::store::metadata::Loaded::Ok(record) if record.confined
    );
    if confined && args.no_sandbox {
        ui.warning_with_hint(
            format!("workspace {id:?} ran sandboxed before, and this run is not confined (--no-sandbox): what an agent wrote there (its .envrc, git hooks, nested repositories) runs as you"),
            "leave out --no-sandbox to keep it confined",
        );
    }
    confined
}

impl<'a> From<&'a GlobalArgs> for crate::workspace::context::Options<'a> {
    fn from(global: &'a GlobalArgs) -> Self {
        crate::workspace::context::Options {
            root: global.root.as_deref(),
            repo: global.repo.as_deref(),
            backend: global.backend,
        }
    }
}
