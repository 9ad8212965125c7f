//! The tools agent-workspace starts: found on PATH, jj's version, bubblewrap's probe; and
//! direnv's trust database.

use std::path::PathBuf;

use super::Check;
use crate::exec::process;
use crate::exec::sandbox::{self, SandboxError};
use crate::repo::Backend;
use crate::vcs::jj::{parse_version, MIN_VERSION, NEWEST_TESTED_VERSION, TESTED_VERSION};

/// jj, git, direnv, just and bubblewrap. A missing tool is an error where this repository
/// needs it (its backend; bubblewrap when the configuration sandboxes every run).
pub(super) fn check(backend: Option<Backend>, sandboxed: bool) -> Vec<Check> {
    vec![
        jj(crate::vcs::program(backend) == "jj"),
        present(
            "git",
            crate::vcs::program(backend) == "git",
            "the git backend",
            "install git (Debian/Ubuntu: apt-get install git)",
        ),
        present(
            "direnv",
            false,
            "loading a workspace's .envrc",
            "install direnv (Debian/Ubuntu: apt-get install direnv), or run with --no-direnv",
        ),
        present(
            "just",
            false,
            "the agents.just recipes",
            "install just (https://just.systems; cargo install just)",
        ),
        bubblewrap(sandboxed),
    ]
}

fn present(tool: &str, needed: bool, for_what: &str, fix: &str) -> Check {
    match process::find(tool) {
        Ok(path) => Check::ok(tool, format!("{} found", path.display())),
        Err(_) => {
            let message = format!("{tool} is not on PATH (needed for {for_what})");
            if needed {
                Check::error(tool, message, fix)
            } else {
                Check::warning(tool, message, fix)
            }
        }
    }
}

fn jj(needed: bool) -> Check {
    let (major, minor, patch) = TESTED_VERSION;
    let fix = format!(
        "install jj {major}.{minor}.{patch} with `cargo install --locked jj-cli@{major}.{minor}.{patch}` ({}.{} or newer is supported)",
        MIN_VERSION.0, MIN_VERSION.1
    );
    let path = match process::find("jj") {
        Ok(path) => path,
        Err(_) if needed => return Check::error("jj", "jj is not on PATH", fix),
        Err(_) => {
            return Check::warning("jj", "jj is not on PATH (needed for jj repositories)", fix)
        }
    };
    let out = crate::vcs::jj::version_text(&path);
    let shown = out.trim();
    match parse_version(&out) {
        None => Check::error(
            "jj",
            format!("{} did not tell its version", path.display()),
            fix,
        ),
        Some(v) if v < MIN_VERSION => Check::error(
            "jj",
            format!(
                "{shown} at {} is older than {}.{}, the oldest supported",
                path.display(),
                MIN_VERSION.0,
                MIN_VERSION.1
            ),
            fix,
        ),
        Some(v) if v > (NEWEST_TESTED_VERSION.0, NEWEST_TESTED_VERSION.1) => Check::warning(
            "jj",
            format!(
                "{shown} at {} is newer than the newest tested, {}.{}.{}",
                path.display(),
                NEWEST_TESTED_VERSION.0,
                NEWEST_TESTED_VERSION.1,
                NEWEST_TESTED_VERSION.2
            ),
            "it likely works; report a problem if a command fails",
        ),
        Some(_) => Check::ok("jj", format!("{shown} at {}", path.display())),
    }
}

fn bubblewrap(needed: bool) -> Check {
    let (message, fix) = match sandbox::find() {
        Ok(path) => {
            return Check::ok(
                "bubblewrap",
                format!("{} starts a sandbox here", path.display()),
            )
        }
        Err(err) => {
            let message = match err {
                SandboxError::Missing => {
                    "bubblewrap (bwrap) is not on PATH: --sandbox runs are refused".to_string()
                }
                _ => err.to_string(),
            };
            // The fix is the hint the command layer gives the same error.
            let worded: crate::error::CliError = err.into();
            (message, worded.hint.unwrap_or_default())
        }
    };
    if needed {
        Check::error(
            "bubblewrap",
            format!("{message} (and sandbox.enabled is set)"),
            fix,
        )
    } else {
        Check::warning("bubblewrap", message, fix)
    }
}

/// direnv's trust database (`$XDG_DATA_HOME/direnv/allow`): missing is fine (direnv creates
/// it on the first allow); present, it must be a readable directory.
pub(super) fn trust_database() -> Check {
    let Some(dir) = allow_dir() else {
        return Check::warning(
            "direnv trust",
            "HOME is not set: direnv has no trust database",
            "set HOME",
        );
    };
    match std::fs::read_dir(&dir) {
        Ok(_) => Check::ok("direnv trust", format!("{} is readable", dir.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Check::ok(
            "direnv trust",
            format!("{} does not exist yet (direnv creates it on the first allow)", dir.display()),
        ),
        Err(e) => Check::error(
            "direnv trust",
            format!("cannot read {}: {e}", dir.display()),
            format!("make {} a directory you can read and write (direnv records allowed .envrc files there)", dir.display()),
        ),
    }
}

fn allow_dir() -> Option<PathBuf> {
    let data = crate::vars::non_empty(crate::vars::XDG_DATA_HOME)
        .map(PathBuf::from)
        .or_else(|| std::env::home_dir().map(|h| h.join(".local").join("share")))?;
    Some(data.join("direnv").join("allow"))
}
