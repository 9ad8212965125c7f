//! The words of a configuration file that could not be read or taken: each [`ConfigError`]
//! as a usage error with its fix.

use crate::config::ConfigError;
use crate::error::CliError;

impl From<ConfigError> for CliError {
    fn from(err: ConfigError) -> CliError {
        let message = err.to_string();
        let hint = match &err {
            ConfigError::Read { .. } => "make it readable, or remove it".to_string(),
            ConfigError::Invalid { .. } => {
                "fix the key or value named above; docs/configuration.md lists every key".into()
            }
            ConfigError::Both { second, .. } => format!("merge them and remove {}", second.display()),
            ConfigError::UserOnly { key, .. } => format!(
                "move {key} to {}: a repository's file must not widen what a sandboxed agent may reach",
                crate::config::user_file().map_or("your own configuration file".into(), |p| p.display().to_string())
            ),
        };
        CliError::usage(message).hint(hint)
    }
}
