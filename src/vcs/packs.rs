//! What both backends' private stores share: git run on a git directory named outright, a
//! pack of the objects some commits need, and the base's pack made once and shared read-only
//! by every private store of that base (`git/own_store.rs`, `jj/own_store.rs`).

use std::fs;
use std::path::{Path, PathBuf};

use crate::exec::process::Call;
use crate::vcs::error::{Result, VcsError};

pub(crate) fn io(action: &'static str, path: &Path, source: std::io::Error) -> VcsError {
    VcsError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// What git is told when it runs on a store an agent could write (its own store, in its
/// sandbox): the store's hooks and file-system monitor are not run, whatever its
/// configuration says (the command line wins over every file).
pub(crate) const AGENT_STORE: [&str; 4] = [
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
];

/// git on the git directory `git_dir` (never one found from the current directory).
pub(crate) fn git_at(git_dir: &Path) -> Result<Call> {
    Ok(Call::new(crate::exec::process::find("git")?)
        .arg(format!("--git-dir={}", git_dir.display()))
        .env("LC_ALL", "C")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0"))
}

/// Writes into `dir` a pack of every object of the git directory `from` reachable from
/// `tips` and not from `not`.
pub(crate) fn pack(from: &Path, tips: &[String], not: &[String], dir: &Path) -> Result<()> {
    let revs = dir.join(".revs");
    let text: String = tips
        .iter()
        .map(|t| format!("{t}\n"))
        .chain(not.iter().map(|n| format!("^{n}\n")))
        .collect();
    fs::write(&revs, text).map_err(|e| io("write", &revs, e))?;
    let input = fs::File::open(&revs).map_err(|e| io("read", &revs, e))?;
    let made = git_at(from)?
        .args(["pack-objects", "-q", "--revs"])
        .arg(dir.join("pack"))
        .input(input)
        .stdout();
    let _ = fs::remove_file(&revs);
    made?;
    Ok(())
}

/// The objects of `base` and all its history (from the git directory `from`), in a pack
/// under `bases/<base>/objects`, made once and shared read-only by every private store of
/// that base.
pub(crate) fn base_objects(from: &Path, base: &str, bases: &Path) -> Result<PathBuf> {
    let dir = bases.join(base);
    let objects = dir.join("objects");
    if objects.join("pack").is_dir() {
        return Ok(objects);
    }
    fs::create_dir_all(bases).map_err(|e| io("create", bases, e))?;
    let tmp = bases.join(format!(".tmp-{}-{base}", std::process::id()));
    let pack_dir = tmp.join("objects").join("pack");
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&pack_dir).map_err(|e| io("create", &pack_dir, e))?;
    pack(from, &[base.to_string()], &[], &pack_dir)?;
    match fs::rename(&tmp, &dir) {
        Ok(()) => {}
        // Another run made the same pack meanwhile: use theirs.
        Err(_) if objects.join("pack").is_dir() => {
            let _ = fs::remove_dir_all(&tmp);
        }
        Err(e) => return Err(io("move into place", &dir, e)),
    }
    Ok(objects)
}
