//! What every command starts from: the repository, its namespace and its backend.

use std::path::{Path, PathBuf};

use crate::config::{self, Config};
use crate::error::Result;
use crate::progress::Progress;
use crate::repo::{Backend, Repo};
use crate::store::layout::{self, Layout};
use crate::vars;
use crate::vcs::Vcs;
use crate::workspace::error::WorkspaceError;

/// The repository a command acts on and where its workspaces live.
pub(crate) struct Context {
    pub repo: Repo,
    pub layout: Layout,
    pub vcs: Vcs,
    /// What the configuration files set (flags and environment variables come first).
    pub config: Config,
    /// Where the lifecycle reports the phases of a slow step (nowhere unless a command says).
    pub progress: Progress,
}

/// Where a command was asked to act: the global flags, without their command-line form.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options<'a> {
    pub root: Option<&'a Path>,
    pub repo: Option<&'a Path>,
    pub backend: Option<Backend>,
}

impl Context {
    pub(crate) fn open<'a>(options: impl Into<Options<'a>>) -> Result<Context> {
        let global: Options = options.into();
        let backend = match (global.backend, vars::non_empty(vars::BACKEND)) {
            (Some(backend), _) => Some(backend),
            (None, Some(name)) => match Backend::parse(&name) {
                Some(backend) => Some(backend),
                None => return Err(WorkspaceError::BadBackendVar { name }.into()),
            },
            (None, None) => None,
        };
        let start = match &global.repo {
            Some(path) => path.to_path_buf(),
            None => std::env::current_dir()
                .map_err(|e| WorkspaceError::io("read", &PathBuf::from("."), e))?,
        };
        let mut repo = match crate::vcs::discover::own_store_sandbox(&start) {
            Some(repo) => repo,
            None => crate::vcs::discover::discover(&start, backend)?,
        };
        let config = config::load(Some(&repo.root))?;
        // A backend the configuration names applies when neither flag nor variable chose.
        if let (None, Some(configured)) = (backend, config.backend) {
            if configured != repo.backend {
                repo = crate::vcs::discover::discover(&start, Some(configured))?;
            }
        }
        let root = layout::workspace_root(global.root)?;
        let layout = Layout::new(root, &repo);
        layout.verify()?;
        let prefix = vars::non_empty(vars::BRANCH_PREFIX).or(config.branch_prefix.clone());
        let colocate = match vars::non_empty(vars::JJ_COLOCATE) {
            Some(text) => match config::Colocate::parse(&text) {
                Some(colocate) => colocate,
                None => return Err(WorkspaceError::BadColocateVar { text }.into()),
            },
            None => config.jj_colocate,
        };
        let vcs = Vcs::new(&repo, &layout.cache(), prefix, colocate);
        Ok(Context {
            repo,
            layout,
            vcs,
            config,
            progress: Progress::default(),
        })
    }
}
