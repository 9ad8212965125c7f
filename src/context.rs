//! What every command starts from: the repository, its namespace and its backend.

use std::path::PathBuf;

use crate::cli::GlobalArgs;
use crate::error::{CliError, Result};
use crate::layout::{self, Layout, Repo};
use crate::vcs::{Backend, Vcs};

/// The repository a command acts on and where its workspaces live.
pub struct Context {
    pub repo: Repo,
    pub layout: Layout,
    pub vcs: Vcs,
}

impl Context {
    pub fn open(global: &GlobalArgs) -> Result<Context> {
        let backend = match (
            global.backend,
            layout::non_empty_env("AGENT_WORKSPACE_BACKEND"),
        ) {
            (Some(backend), _) => Some(backend),
            (None, Some(name)) => Some(Backend::parse(&name).ok_or_else(|| {
                CliError::usage(format!("AGENT_WORKSPACE_BACKEND={name:?} is not a backend"))
                    .hint("use jj or git")
            })?),
            (None, None) => None,
        };
        let start = match &global.repo {
            Some(path) => path.clone(),
            None => std::env::current_dir()
                .map_err(|e| CliError::io("read", &PathBuf::from("."), &e))?,
        };
        let repo = layout::discover(&start, backend)?;
        let root = layout::workspace_root(global.root.as_deref())?;
        let layout = Layout::new(root, &repo);
        let vcs = Vcs::new(&repo, &layout.locks());
        Ok(Context { repo, layout, vcs })
    }
}
