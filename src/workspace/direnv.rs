//! direnv: finding it, allowing a workspace, and the policy for trusting its `.envrc`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::CliError;
use crate::exec::process::{Call, ProcessError};
use crate::store::fsutil;
use crate::store::metadata::Record;
use crate::vcs::{Vcs, VcsError};
use crate::workspace::envrc_loads;

pub(crate) type Result<T> = std::result::Result<T, DirenvError>;

/// Why a workspace's environment is not loaded.
#[derive(Debug, thiserror::Error)]
pub enum DirenvError {
    /// The workspace has an `.envrc` but direnv is not on PATH.
    #[error("{} exists but direnv is not installed", envrc.display())]
    NotInstalled { envrc: PathBuf },
    /// The `.envrc` is neither the one allowed before nor the base revision's.
    #[error("{} differs from the .envrc of the workspace's base revision; not loading it", envrc.display())]
    EnvrcChanged { envrc: PathBuf },
    /// A file the `.envrc` loads changed since the workspace was created.
    #[error("{}, which {} loads, changed since the workspace was created; not loading the environment", file.display(), envrc.display())]
    LoadChanged { file: PathBuf, envrc: PathBuf },
    /// A file could not be read or resolved.
    #[error("could not {action} {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file an agent can write is not a regular file (a FIFO would hang direnv).
    #[error(transparent)]
    Unreadable(#[from] crate::store::fsutil::FsError),
    /// Asking the backend about the base revision failed.
    #[error(transparent)]
    Vcs(Box<VcsError>),
    /// `direnv allow` failed.
    #[error(transparent)]
    Allow(#[from] ProcessError),
}

impl From<VcsError> for DirenvError {
    fn from(err: VcsError) -> DirenvError {
        DirenvError::Vcs(Box::new(err))
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

/// How a run loads its environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Loader {
    /// Run the command directly: no `.envrc`, or `--no-direnv`.
    Direct,
    /// Run through `direnv exec` with this binary.
    Direnv(PathBuf),
}

/// The sha256 of the workspace's `.envrc`, if it has one; an error when it is there but not
/// a regular file of a sane size (read without following a symlink or blocking).
pub(crate) fn envrc_digest(workspace: &Path) -> std::result::Result<Option<String>, DirenvError> {
    let envrc = workspace.join(".envrc");
    match fsutil::read_untrusted(&envrc, fsutil::UNTRUSTED_LIMIT) {
        Ok(bytes) => Ok(Some(format!("{:x}", Sha256::digest(&bytes)))),
        Err(e) if fsutil::is_missing(&e) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Decides how to load the environment of `record`'s workspace, allowing its `.envrc` when the
/// trust policy permits: unchanged since we allowed it, identical to the base revision's, or
/// `trust` given; and every file it loads that the workspace can change (see
/// [`crate::workspace::envrc_loads`]) unchanged since then too. Updates `record` with what was allowed.
pub(crate) fn prepare(
    record: &mut Record,
    vcs: &Vcs,
    no_direnv: bool,
    trust: bool,
) -> Result<Loader> {
    let ws = record.workspace_path.clone();
    if no_direnv {
        return Ok(Loader::Direct);
    }
    let Some(digest) = envrc_digest(&ws)? else {
        return Ok(Loader::Direct);
    };
    let envrc = ws.join(".envrc");
    let bin = crate::exec::process::find("direnv").map_err(|_| DirenvError::NotInstalled {
        envrc: envrc.clone(),
    })?;
    let loads = envrc_loads::current(&ws);
    let envrc_known = record.direnv_allowed && record.envrc_sha256.as_deref() == Some(&digest);
    if !trust && !envrc_known && !matches_base(&envrc, record, vcs)? {
        record.direnv_allowed = false;
        return Err(DirenvError::EnvrcChanged { envrc });
    }
    if !trust {
        if let Some(changed) = changed_load(&loads, record, vcs)? {
            record.direnv_allowed = false;
            return Err(DirenvError::LoadChanged {
                file: ws.join(&changed),
                envrc,
            });
        }
    }
    if !envrc_known {
        allow(&bin, &ws)?;
    }
    record.direnv_allowed = true;
    record.envrc_sha256 = Some(digest);
    record.envrc_loads_allowed = loads;
    Ok(Loader::Direnv(bin))
}

/// The first loaded file whose content is neither the one last allowed nor the base's.
fn changed_load(
    loads: &BTreeMap<String, String>,
    record: &Record,
    vcs: &Vcs,
) -> Result<Option<String>> {
    for (file, digest) in loads {
        if record.envrc_loads_allowed.get(file) == Some(digest) {
            continue;
        }
        let at_base = match &record.envrc_loads_base {
            Some(base) => base.get(file) == Some(digest),
            None => base_has(file, digest, record, vcs)?,
        };
        if !at_base {
            return Ok(Some(file.clone()));
        }
    }
    Ok(None)
}

/// Whether one of the base commits has `file` with `digest` (or lacks it, for `absent`).
fn base_has(file: &str, digest: &str, record: &Record, vcs: &Vcs) -> Result<bool> {
    for commit in &base_commits(record, vcs)? {
        let at = vcs.file_at(commit, file)?;
        let d = at.map_or_else(
            || envrc_loads::ABSENT.to_string(),
            |b| format!("{:x}", Sha256::digest(&b)),
        );
        if d == digest {
            return Ok(true);
        }
    }
    Ok(false)
}

fn base_commits(record: &Record, vcs: &Vcs) -> Result<Vec<String>> {
    match record.base_commits.is_empty() {
        true => Ok(vcs.resolve_base(None)?),
        false => Ok(record.base_commits.clone()),
    }
}

fn matches_base(envrc: &Path, record: &Record, vcs: &Vcs) -> Result<bool> {
    let current = fsutil::read_untrusted(envrc, fsutil::UNTRUSTED_LIMIT)?;
    if let Some(base) = &record.base_envrc_sha256 {
        return Ok(*base == format!("{:x}", Sha256::digest(&current)));
    }
    // A record rebuilt after it was lost (or migrated from an older version) does not know
    // its base's .envrc: ask the backend, comparing with the default base when the base
    // commits are unknown too.
    for commit in &base_commits(record, vcs)? {
        if vcs.file_at(commit, ".envrc")?.as_deref() == Some(current.as_slice()) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `direnv allow` on the canonical path, which is the one `direnv exec` will hash.
pub(crate) fn allow(bin: &Path, workspace: &Path) -> Result<()> {
    let canonical = fs::canonicalize(workspace).map_err(|source| DirenvError::Io {
        action: "resolve",
        path: workspace.to_path_buf(),
        source,
    })?;
    Call::new(bin)
        .arg("allow")
        .arg(&canonical)
        .env(crate::vars::DIRENV_LOG_FORMAT, "")
        .stdout()?;
    Ok(())
}
