//! The machine the tests run on: finding tools, and running a command as an unprivileged
//! user where the tests run as root (as CI does), so that checks of file permissions test
//! something there too.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::command::{Cmd, Outcome};

/// The unprivileged user (and group) commands run as when the tests run as root.
pub const NOBODY: u32 = 65534;

/// The tools a command of the tool under test may start.
const TOOLS: &[&str] = &["jj", "git", "direnv", "just"];

/// Finds `tool` on the inherited PATH.
pub fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(tool))
        .find(|p| p.is_file())
}

/// Whether the tests run as root, where file permissions do not stop writes.
pub fn running_as_root() -> bool {
    let out = Command::new("id").arg("-u").output().expect("run id -u");
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

impl Cmd<'_> {
    /// Runs the command as a user file permissions apply to: as the current user, or, when
    /// the tests run as root, as [`NOBODY`] (through `setpriv`). For that run the test
    /// environment's whole temp dir belongs to [`NOBODY`]; binaries it could not reach are
    /// copied into it first. Afterwards the temp dir belongs to root again.
    pub fn run_unprivileged(self) -> Outcome {
        if !running_as_root() {
            return self.run();
        }
        let root = self.env.root.clone();
        let bin = root.join("bin-unprivileged");
        fs::create_dir_all(&bin).unwrap();
        for tool in TOOLS {
            if let Some(found) = which(tool) {
                reachable_copy(&found, &bin);
            }
        }
        let program = reachable_copy(Path::new(&self.program), &bin);
        let path = self.env.path_with_first(&bin);
        let setpriv = which("setpriv").expect("setpriv is not on PATH");
        let mut args = vec![
            format!("--reuid={NOBODY}").into(),
            format!("--regid={NOBODY}").into(),
            "--clear-groups".into(),
            program.into_os_string(),
        ];
        args.extend(self.args.iter().cloned());
        let mut cmd = Cmd {
            program: setpriv.into_os_string(),
            args,
            ..self
        };
        cmd.vars.insert("PATH".into(), path);
        chown_all(&root, NOBODY);
        let out = cmd.run();
        chown_all(&root, 0);
        out
    }
}

/// `path` if every user may run it, else a copy of it in `bin`.
fn reachable_copy(path: &Path, bin: &Path) -> PathBuf {
    if !path.is_absolute() || reachable_by_all(path) {
        return path.to_path_buf();
    }
    let copy = bin.join(path.file_name().unwrap());
    if !copy.exists() {
        fs::copy(path, &copy).unwrap_or_else(|e| panic!("copy {}: {e}", path.display()));
        fs::set_permissions(&copy, fs::Permissions::from_mode(0o755)).unwrap();
    }
    copy
}

/// Whether a user who is neither owner nor in the group may run `path`: every directory
/// above it searchable, the file itself readable and executable by others.
fn reachable_by_all(path: &Path) -> bool {
    let Ok(path) = fs::canonicalize(path) else {
        return false;
    };
    let mode = |p: &Path| fs::metadata(p).map(|m| m.permissions().mode()).unwrap_or(0);
    mode(&path) & 0o005 == 0o005 && path.ancestors().skip(1).all(|dir| mode(dir) & 0o001 != 0)
}

/// `chown -R uid:uid dir`.
fn chown_all(dir: &Path, uid: u32) {
    let status = Command::new("chown")
        .args(["-R", &format!("{uid}:{uid}")])
        .arg(dir)
        .status()
        .expect("run chown");
    assert!(status.success(), "chown -R {uid} {} failed", dir.display());
}
