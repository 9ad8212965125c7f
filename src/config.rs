//! Configuration files: the repository's (`agent-workspace.toml` at the main workspace's root,
//! or `.config/agent-workspace.toml`), shared by everyone who clones it, and the user's
//! (`$XDG_CONFIG_HOME/agent-workspace/config.toml`). A setting's value comes from, in order:
//! its flag, its environment variable, the user file, the repository file, the default.
//!
//! Both files are read from outside every workspace (the main workspace's root and the user's
//! configuration directory), never from a workspace an agent can write.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::CliError;
use crate::repo::Backend;
use crate::vars;

/// The repository file's names, relative to the main workspace's root.
pub const REPO_FILES: [&str; 2] = ["agent-workspace.toml", ".config/agent-workspace.toml"];

/// One configuration file's content. Unknown keys are errors, so a typo never goes unnoticed.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileContent {
    backend: Option<Backend>,
    #[serde(default)]
    git: GitSection,
    #[serde(default)]
    clean: CleanSection,
    #[serde(default)]
    sandbox: SandboxSection,
    #[serde(default)]
    limits: LimitsSection,
    #[serde(default)]
    ports: PortsSection,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LimitsSection {
    max_workspaces: Option<usize>,
    min_free_disk: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PortsSection {
    count: Option<u16>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct GitSection {
    branch_prefix: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CleanSection {
    disposable: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SandboxSection {
    enabled: Option<bool>,
    network: Option<bool>,
    writable: Option<Vec<PathBuf>>,
}

/// The settings the files give (flags and environment variables are applied by their users,
/// before these).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    pub backend: Option<Backend>,
    pub branch_prefix: Option<String>,
    pub disposable: Option<Vec<String>>,
    /// Runs are sandboxed unless `--no-sandbox` (`sandbox.enabled`).
    pub sandbox: bool,
    /// Sandboxed runs keep the network unless `--no-network` (`sandbox.network`, default true).
    pub sandbox_network: bool,
    /// Extra writable paths of sandboxed runs (user file only).
    pub sandbox_writable: Vec<PathBuf>,
    /// At most this many workspaces per repository (`limits.max_workspaces`).
    pub max_workspaces: Option<usize>,
    /// Bytes that must stay free on the root's file system (`limits.min_free_disk`).
    pub min_free_disk: Option<u64>,
    /// TCP ports per workspace (`ports.count`, default 1).
    pub ports: u16,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("could not read {}: {source}", file.display())]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid configuration in {}: {message}", file.display())]
    Invalid { file: PathBuf, message: String },
    #[error("{} and {} both exist; the repository has one configuration file", first.display(), second.display())]
    Both { first: PathBuf, second: PathBuf },
    #[error("{} sets {key}, which only the user's own file may set", file.display())]
    UserOnly { file: PathBuf, key: &'static str },
}

impl From<ConfigError> for CliError {
    fn from(err: ConfigError) -> CliError {
        let message = err.to_string();
        let hint = match &err {
            ConfigError::Read { .. } => "make it readable, or remove it".to_string(),
            ConfigError::Invalid { .. } => {
                "fix the key or value named above; the README's Configuration section lists every key".into()
            }
            ConfigError::Both { second, .. } => format!("merge them and remove {}", second.display()),
            ConfigError::UserOnly { key, .. } => format!(
                "move {key} to {}: a repository's file must not widen what a sandboxed agent may write",
                user_file().map_or("your own configuration file".into(), |p| p.display().to_string())
            ),
        };
        CliError::usage(message).hint(hint)
    }
}

/// The user's configuration file (whether or not it exists).
pub fn user_file() -> Option<PathBuf> {
    let base = vars::non_empty("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| vars::non_empty("HOME").map(|h| Path::new(&h).join(".config")))?;
    Some(base.join("agent-workspace").join("config.toml"))
}

/// Reads the user file and, when `repo_root` is known, the repository file; the user's
/// values win over the repository's.
pub fn load(repo_root: Option<&Path>) -> Result<Config, ConfigError> {
    let mut config = Config {
        sandbox_network: true,
        ports: 1,
        ..Config::default()
    };
    if let Some(root) = repo_root {
        let found: Vec<PathBuf> = REPO_FILES
            .iter()
            .map(|name| root.join(name))
            .filter(|p| p.is_file())
            .collect();
        if let [first, second] = found.as_slice() {
            return Err(ConfigError::Both {
                first: first.clone(),
                second: second.clone(),
            });
        }
        if let Some(file) = found.first() {
            let content = read(file)?;
            if content.sandbox.writable.is_some() {
                return Err(ConfigError::UserOnly {
                    file: file.clone(),
                    key: "sandbox.writable",
                });
            }
            apply(&mut config, content, file)?;
        }
    }
    if let Some(file) = user_file().filter(|p| p.is_file()) {
        let content = read(&file)?;
        apply(&mut config, content, &file)?;
    }
    Ok(config)
}

fn read(file: &Path) -> Result<FileContent, ConfigError> {
    let text = fs::read_to_string(file).map_err(|source| ConfigError::Read {
        file: file.to_path_buf(),
        source,
    })?;
    toml::from_str(&text).map_err(|e| ConfigError::Invalid {
        file: file.to_path_buf(),
        message: one_line(&e, &text),
    })
}

/// toml's error as one line: its message, and the line it points at with its number.
fn one_line(err: &toml::de::Error, text: &str) -> String {
    let message = err.message().trim().trim_end_matches('.');
    let Some(span) = err.span() else {
        return message.to_string();
    };
    let start = span.start.min(text.len());
    let number = text[..start].matches('\n').count() + 1;
    let line = text.lines().nth(number - 1).unwrap_or("").trim();
    format!("{message}, at line {number}: {line}")
}

fn apply(config: &mut Config, content: FileContent, file: &Path) -> Result<(), ConfigError> {
    let invalid = |message: String| ConfigError::Invalid {
        file: file.to_path_buf(),
        message,
    };
    if let Some(max) = content.limits.max_workspaces {
        config.max_workspaces = Some(max);
    }
    if let Some(text) = content.limits.min_free_disk {
        config.min_free_disk = Some(parse_size(&text).ok_or_else(|| {
            invalid(format!(
                "limits.min_free_disk = {text:?} is not a size (e.g. \"5GiB\", \"500MB\")"
            ))
        })?);
    }
    match content.ports.count {
        Some(0) => return Err(invalid("ports.count must be at least 1".into())),
        Some(count) => config.ports = count,
        None => {}
    }
    if let Some(backend) = content.backend {
        config.backend = Some(backend);
    }
    if let Some(prefix) = content.git.branch_prefix {
        config.branch_prefix = Some(prefix);
    }
    if let Some(list) = content.clean.disposable {
        config.disposable = Some(list);
    }
    if let Some(enabled) = content.sandbox.enabled {
        config.sandbox = enabled;
    }
    if let Some(network) = content.sandbox.network {
        config.sandbox_network = network;
    }
    if let Some(paths) = content.sandbox.writable {
        config.sandbox_writable = paths;
    }
    Ok(())
}

/// Parses a size such as `5GiB`, `500MB` or `1024` (bytes).
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let factor: f64 = match unit.trim() {
        "" | "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some((number * factor) as u64)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_parse_with_their_units() {
        assert_eq!(parse_size("5GiB"), Some(5 * 1024 * 1024 * 1024));
        assert_eq!(parse_size("500MB"), Some(500_000_000));
        assert_eq!(parse_size("1024"), Some(1024));
        assert_eq!(parse_size("1.5 KiB"), Some(1536));
        assert_eq!(parse_size("5 parsecs"), None);
        assert_eq!(parse_size(""), None);
    }
}
