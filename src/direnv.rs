//! direnv: finding it, allowing a workspace, and the policy for trusting its `.envrc`.

use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{CliError, Result};
use crate::metadata::Record;
use crate::process::Call;
use crate::vcs::Vcs;

/// How a run loads its environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Loader {
    /// Run the command directly: no `.envrc`, or `--no-direnv`.
    Direct,
    /// Run through `direnv exec` with this binary.
    Direnv(PathBuf),
}

/// The sha256 of the workspace's `.envrc`, if it has one.
pub fn envrc_digest(workspace: &Path) -> Option<String> {
    fs::read(workspace.join(".envrc"))
        .ok()
        .map(|bytes| hex::encode(Sha256::digest(&bytes)))
}

/// Decides how to load the environment of `record`'s workspace, allowing its `.envrc` when the
/// trust policy permits: unchanged since we allowed it, identical to the base revision's, or
/// `trust` given. Updates `record` with what was allowed.
pub fn prepare(record: &mut Record, vcs: &Vcs, no_direnv: bool, trust: bool) -> Result<Loader> {
    let ws = record.workspace_path.clone();
    if no_direnv {
        return Ok(Loader::Direct);
    }
    let Some(digest) = envrc_digest(&ws) else {
        return Ok(Loader::Direct);
    };
    let envrc = ws.join(".envrc");
    let bin = which::which("direnv").map_err(|_| {
        CliError::failure(format!(
            "{} exists but direnv is not installed",
            envrc.display()
        ))
        .hint("install direnv, or pass --no-direnv to run without the workspace's environment")
    })?;
    if record.direnv_allowed && record.envrc_sha256.as_deref() == Some(digest.as_str()) {
        return Ok(Loader::Direnv(bin));
    }
    if !trust && !matches_base(&envrc, record, vcs)? {
        record.direnv_allowed = false;
        return Err(CliError::failure(format!(
            "{} differs from the .envrc of the workspace's base revision; not loading it",
            envrc.display()
        ))
        .hint("review it, then pass --trust-envrc to allow it (or --no-direnv to skip it)"));
    }
    allow(&bin, &ws)?;
    record.direnv_allowed = true;
    record.envrc_sha256 = Some(digest);
    Ok(Loader::Direnv(bin))
}

fn matches_base(envrc: &Path, record: &Record, vcs: &Vcs) -> Result<bool> {
    let current = fs::read(envrc).map_err(|e| CliError::io("read", envrc, &e))?;
    if let Some(base) = &record.base_envrc_sha256 {
        return Ok(*base == hex::encode(Sha256::digest(&current)));
    }
    // A record rebuilt after it was lost does not know its base's .envrc: ask the backend,
    // comparing with the default base when the base commits are unknown too.
    let base = match record.base_commits.is_empty() {
        true => vcs.resolve_base(None)?,
        false => record.base_commits.clone(),
    };
    for commit in &base {
        if vcs.file_at(commit, ".envrc")?.as_deref() == Some(current.as_slice()) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `direnv allow` on the canonical path, which is the one `direnv exec` will hash.
pub fn allow(bin: &Path, workspace: &Path) -> Result<()> {
    let canonical =
        fs::canonicalize(workspace).map_err(|e| CliError::io("resolve", workspace, &e))?;
    Call::new(bin)
        .arg("allow")
        .arg(&canonical)
        .env(crate::vars::DIRENV_LOG_FORMAT, "")
        .stdout()?;
    Ok(())
}
