//! The command error type: what failed, why, and what to do about it.

use std::fmt;
use std::path::Path;

/// How a failure is classified; each kind maps to a documented exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Bad flags or a malformed workspace id: exit 2.
    Usage,
    /// Anything else agent-workspace could not do: exit 1 (125 for `run` and `shell`).
    Failure,
    /// Stopped by this signal before the command started: exit 128 + the signal.
    Interrupted(i32),
    /// The command itself could not be started: 127 not found, 126 otherwise (as env(1)).
    NotStarted(i32),
}

/// One user-facing error: a message, optional causes and an optional hint.
#[derive(Debug)]
pub struct CliError {
    pub kind: Kind,
    pub message: String,
    pub causes: Vec<String>,
    pub hint: Option<String>,
}

impl CliError {
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            kind: Kind::Usage,
            message: message.into(),
            causes: vec![],
            hint: None,
        }
    }

    pub fn interrupted(signal: i32, message: impl Into<String>) -> Self {
        CliError {
            kind: Kind::Interrupted(signal),
            message: message.into(),
            causes: vec![],
            hint: None,
        }
    }

    /// The command could not be started; `code` is 126 or 127.
    pub fn not_started(code: i32, message: impl Into<String>) -> Self {
        CliError {
            kind: Kind::NotStarted(code),
            ..CliError::failure(message)
        }
    }

    pub fn failure(message: impl Into<String>) -> Self {
        CliError {
            kind: Kind::Failure,
            message: message.into(),
            causes: vec![],
            hint: None,
        }
    }

    /// An I/O error about `path`, phrased as "could not <action> <path>", with a hint for
    /// its kind (a caller with a better one replaces it).
    pub fn io(action: &str, path: &Path, err: &std::io::Error) -> Self {
        if err.raw_os_error() == Some(libc::ENAMETOOLONG) {
            if let Some(component) = crate::fsutil::long_component(path) {
                return CliError::from(crate::fsutil::FsError::NameTooLong {
                    path: path.into(),
                    component,
                });
            }
        }
        CliError::failure(format!("could not {action} {}", path.display()))
            .cause(err.to_string())
            .hint(io_hint(err, path))
    }

    pub fn cause(mut self, cause: impl Into<String>) -> Self {
        let cause = cause.into();
        if !cause.trim().is_empty() {
            self.causes.push(cause.trim_end().to_string());
        }
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The exit code of this error; `run` and `shell` report their own failures as 125.
    pub fn exit_code(&self, wraps_command: bool) -> u8 {
        match (self.kind, wraps_command) {
            (Kind::Usage, _) => 2,
            (Kind::Interrupted(sig), _) => u8::try_from(128 + sig).unwrap_or(1),
            (Kind::NotStarted(code), _) => u8::try_from(code).unwrap_or(126),
            (Kind::Failure, true) => 125,
            (Kind::Failure, false) => 1,
        }
    }
}

/// An error as `--json` outputs carry it: what kind, the message, its causes and the hint.
#[derive(Debug, serde::Serialize)]
pub struct ErrorJson {
    /// `usage`, `failure` or `interrupted`.
    pub kind: &'static str,
    pub message: String,
    pub causes: Vec<String>,
    pub hint: Option<String>,
}

impl CliError {
    /// This error as a structured object for `--json` output.
    pub fn to_json(&self) -> ErrorJson {
        ErrorJson {
            kind: match self.kind {
                Kind::Usage => "usage",
                Kind::Failure => "failure",
                Kind::Interrupted(_) => "interrupted",
                Kind::NotStarted(_) => "not-started",
            },
            message: self.message.clone(),
            causes: self.causes.clone(),
            hint: self.hint.clone(),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error: {}", self.message)?;
        for cause in &self.causes {
            for (i, line) in cause.lines().enumerate() {
                let lead = if i == 0 { "Caused by: " } else { "           " };
                write!(f, "\n{lead}{line}")?;
            }
        }
        if let Some(hint) = &self.hint {
            write!(f, "\nHint: {hint}")?;
        }
        Ok(())
    }
}

/// What to do about an I/O error, by its kind.
fn io_hint(err: &std::io::Error, path: &Path) -> String {
    use std::io::ErrorKind;
    match err.kind() {
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => {
            "free space on that file system and try again".into()
        }
        ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => format!(
            "make {} writable by this user, or pass --root DIR for another workspace root",
            path.display()
        ),
        ErrorKind::NotFound => format!(
            "{} (or a directory above it) is missing; check that nothing else removed it",
            path.display()
        ),
        ErrorKind::IsADirectory => format!(
            "a directory stands where agent-workspace writes a file: move {} away (nothing in it was touched) and try again",
            path.display()
        ),
        _ => "check that the path is accessible and try again".into(),
    }
}

impl From<crate::fsutil::FsError> for CliError {
    fn from(err: crate::fsutil::FsError) -> Self {
        use crate::fsutil::FsError;
        let message = err.to_string();
        match err {
            FsError::Symlink { path } => CliError::failure(message).hint(format!(
                "agent-workspace never follows symlinks in its own directories; remove {} (after checking where it points) and try again",
                path.display()
            )),
            FsError::NotADirectory { path } => CliError::failure(message).hint(format!(
                "agent-workspace expects a directory it made there; move {} away and try again",
                path.display()
            )),
            FsError::NameTooLong { .. } => CliError::failure(message).hint(
                "workspace namespaces are named after the repository's directory: use a shorter name for it (or a shorter workspace id)",
            ),
            FsError::Io {
                action,
                path,
                source,
            } => CliError::io(action, &path, &source),
        }
    }
}

impl From<crate::process::ProcessError> for CliError {
    fn from(err: crate::process::ProcessError) -> Self {
        let hint = process_hint(&err);
        let stderr = err.stderr().to_string();
        let mut cli = CliError::failure(err.to_string()).cause(stderr);
        if cli.hint.is_none() {
            cli.hint = Some(hint);
        }
        cli
    }
}

/// The backend no longer knows workspace `id`, whose directory `path` still exists: the one
/// wording of that condition.
pub fn unregistered(id: &str, path: &Path) -> CliError {
    CliError::failure(format!(
        "the backend no longer knows workspace {id:?}, so its files may hold edits no commit has"
    ))
    .hint(format!(
        "inspect {}, then `agent-workspace clean --force {id}` removes it, keeping its files aside",
        path.display()
    ))
}

/// How to install a helper program agent-workspace needs.
pub fn install_hint(program: &str) -> String {
    match program {
        "jj" => "install jj 0.45.1 with `cargo install --locked jj-cli@0.45.1`".into(),
        "direnv" => {
            "install direnv, or pass --no-direnv to run without the workspace's environment".into()
        }
        other => format!("install {other} with your package manager"),
    }
}

/// What to do after the backend failed to create a workspace (nothing of it was kept).
pub fn creation_hint(err: &crate::process::ProcessError) -> String {
    match process_hint(err) {
        hint if hint.starts_with("the tool's own") => {
            "nothing of the workspace was kept; fix what the backend reports above and run again"
                .into()
        }
        hint => hint,
    }
}

/// What to do about a failed helper call, from what it reported.
fn process_hint(err: &crate::process::ProcessError) -> String {
    if let crate::process::ProcessError::NotFound { program } = err {
        return install_hint(program);
    }
    let stderr = err.stderr();
    if stderr.contains("No space left on device") {
        "free space on that file system and try again; nothing was kept half made".into()
    } else if stderr.contains("gpg") || stderr.contains("signing") {
        "commit signing failed: fix the signing setup (or set commit.gpgsign=false for this repository) and try again".into()
    } else if stderr.contains("not a valid branch name") || stderr.contains("invalid ref") {
        "use a workspace id (and AGENT_WORKSPACE_BRANCH_PREFIX) that makes a valid git branch name"
            .into()
    } else {
        "the tool's own message is above; fix what it reports and try again".into()
    }
}

pub type Result<T, E = CliError> = std::result::Result<T, E>;
