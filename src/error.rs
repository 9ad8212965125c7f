//! The command error type: what failed, why, and what to do about it.

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
#[derive(Debug, Clone)]
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
            if let Some(component) = long_component(path) {
                return CliError::name_too_long(path, &component);
            }
        }
        CliError::failure(format!("could not {action} {}", path.display()))
            .cause(err.to_string())
            .hint(io_hint(err, path))
    }

    /// A name in `path` longer than the file system allows: the one wording of it.
    pub fn name_too_long(path: &Path, component: &str) -> Self {
        CliError::failure(name_too_long_message(path, component)).hint(
            "workspace namespaces are named after the repository's directory: use a shorter name for it (or a shorter workspace id)",
        )
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
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ErrorJson {
    /// `usage`, `failure` or `interrupted`.
    pub kind: &'static str,
    pub message: String,
    pub causes: Vec<String>,
    pub hint: Option<String>,
}

/// A command asked for `--json` that failed: what it prints on stdout (its `Error:` and
/// `Hint:` still go to stderr).
#[derive(Debug, serde::Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub(crate) struct FailureJson {
    pub schema_version: u64,
    pub error: ErrorJson,
    /// The exit code the command ends with.
    pub exit_code: u8,
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

/// How to install a helper program agent-workspace needs.
pub(crate) fn install_hint(program: &str) -> String {
    match program {
        "jj" => "install jj 0.45.1 with `cargo install --locked jj-cli@0.45.1`".into(),
        "direnv" => {
            "install direnv, or pass --no-direnv to run without the workspace's environment".into()
        }
        other => format!("install {other} with your package manager"),
    }
}

/// The longest name a file system takes for one path component (Linux, macOS).
pub(crate) const NAME_MAX: usize = 255;

/// The first component of `path` longer than [`NAME_MAX`].
pub(crate) fn long_component(path: &Path) -> Option<String> {
    path.components()
        .map(|c| c.as_os_str())
        .find(|c| c.len() > NAME_MAX)
        .map(|c| c.to_string_lossy().into_owned())
}

/// The message of a name too long in `path` (the file system error and its rendering).
pub(crate) fn name_too_long_message(path: &Path, component: &str) -> String {
    format!(
        "the name {component:?} in {} is {} bytes, longer than the file system allows ({NAME_MAX})",
        path.display(),
        component.len()
    )
}

pub(crate) type Result<T, E = CliError> = std::result::Result<T, E>;
