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

    pub fn failure(message: impl Into<String>) -> Self {
        CliError {
            kind: Kind::Failure,
            message: message.into(),
            causes: vec![],
            hint: None,
        }
    }

    /// An I/O error about `path`, phrased as "could not <action> <path>".
    pub fn io(action: &str, path: &Path, err: &std::io::Error) -> Self {
        CliError::failure(format!("could not {action} {}", path.display())).cause(err.to_string())
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
            (Kind::Failure, true) => 125,
            (Kind::Failure, false) => 1,
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

impl From<crate::process::ProcessError> for CliError {
    fn from(err: crate::process::ProcessError) -> Self {
        err.into_cli_error()
    }
}

pub type Result<T, E = CliError> = std::result::Result<T, E>;
