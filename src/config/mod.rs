//! Configuration files: the repository's (`agent-workspace.toml` at the main workspace's root,
//! or `.config/agent-workspace.toml`), shared by everyone who clones it, and the user's
//! (`$XDG_CONFIG_HOME/agent-workspace/config.toml`). A setting's value comes from, in order:
//! its flag, its environment variable, the user file, the repository file, the default.
//!
//! Both files are read from outside every workspace (the main workspace's root and the user's
//! configuration directory), never from a workspace an agent can write.

mod file;
mod values;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use file::{CommandSpec, FileContent, ToolsSection};
use values::is_plain_relative;
pub(crate) use values::{parse_limit_size, parse_retention, parse_size};

use crate::repo::Backend;
use crate::vars;

/// The repository file's names, relative to the main workspace's root.
pub(crate) const REPO_FILES: [&str; 2] = ["agent-workspace.toml", ".config/agent-workspace.toml"];

/// The settings the files give (flags and environment variables are applied by their users,
/// before these).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    pub backend: Option<Backend>,
    pub branch_prefix: Option<String>,
    /// Whether jj workspaces are colocated git worktrees (`jj.colocate`, default auto).
    pub jj_colocate: Colocate,
    pub disposable: Option<Vec<String>>,
    /// Runs are sandboxed unless `--no-sandbox` (`sandbox.enabled`).
    pub sandbox: bool,
    /// Sandboxed runs keep the network unless `--no-network` (`sandbox.network`, default true).
    pub sandbox_network: bool,
    /// The only hosts a networked sandboxed run reaches, through a proxy
    /// (`sandbox.allowed_hosts`: the user's list, which the repository's may only narrow).
    pub sandbox_allowed_hosts: Option<Vec<crate::exec::sandbox::hosts::HostPattern>>,
    /// Extra writable paths of sandboxed runs (user file only).
    pub sandbox_writable: Vec<PathBuf>,
    /// Host unix sockets sandboxed runs may reach (`sandbox.sockets`, user file only).
    pub sandbox_sockets: Vec<PathBuf>,
    /// Paths sandboxed runs may read beyond the default view (`sandbox.readable`, user file
    /// only).
    pub sandbox_readable: Vec<PathBuf>,
    /// Credential-like environment variables passed into sandboxed runs
    /// (`sandbox.pass_env`, user file only).
    pub sandbox_pass_env: Vec<String>,
    /// What one sandboxed run may take of the machine (`[sandbox.limits]`, user file only).
    pub sandbox_limits: SandboxLimits,
    /// How long bringing back a sandboxed run's work may take (`sandbox.bring_back_timeout`,
    /// user file only); [`DEFAULT_BRING_BACK_TIMEOUT`] when unset.
    pub sandbox_bring_back_timeout: Option<Duration>,
    /// At most this many workspaces per repository (`limits.max_workspaces`).
    pub max_workspaces: Option<usize>,
    /// Bytes that must stay free on the root's file system (`limits.min_free_disk`).
    pub min_free_disk: Option<u64>,
    /// TCP ports per workspace (`ports.count`, default 1; 0: none).
    pub ports: u16,
    /// What the tools bundle copies, relative to the main workspace's root (`tools.paths`).
    pub tools_paths: Vec<String>,
    /// Whether `tools.paths` was set (else the default paths that exist are copied).
    pub tools_paths_set: bool,
    /// When the repository's file set `tools.paths` (and the user's did not): that file and
    /// its path relative to the main workspace's root, trusted like its `setup.command`.
    pub tools_paths_from_repo: Option<(PathBuf, String)>,
    /// The tools bundle's directory inside each workspace (`tools.dir`).
    pub tools_dir: String,
    /// The command run once in a new workspace (`setup.command`), with the file naming it.
    pub setup: Option<SetupCommand>,
    /// Ignored or untracked files of the main workspace copied into a new one (`copy.include`).
    pub copy_include: Vec<crate::store::include::Pattern>,
    /// How long `gc` keeps a workspace, per status (`retention.*`); absent: never removed.
    pub(crate) retention: BTreeMap<RetentionStatus, Duration>,
    /// How long `gc` keeps the directories removals kept aside (`retention.kept`, default
    /// 30 days); `None`: for ever.
    pub retention_kept: Option<Duration>,
    /// Prepared workspaces kept ready for new runs (`pool.size`, default 0: no pool).
    pub pool_size: usize,
    /// A run starts with the environment direnv loaded last time while nothing direnv
    /// watches changed (`direnv.reuse`, default true; `--reload-envrc` turns it off).
    pub direnv_reuse: bool,
}

/// What one sandboxed run may take of the machine (`[sandbox.limits]`): the sandbox's own
/// type, which this layer fills.
pub(crate) use crate::exec::sandbox::limits::AskedLimits as SandboxLimits;

/// Whether a jj workspace is made a colocated git worktree (jj 0.46 and later can): `Auto`
/// when the main workspace is one, or always, or never.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Colocate {
    #[default]
    Auto,
    Always,
    Never,
}

impl Colocate {
    /// `auto`, `true` or `false`, as the file and `AGENT_WORKSPACE_JJ_COLOCATE` give it.
    pub(crate) fn parse(text: &str) -> Option<Colocate> {
        match text.trim() {
            "auto" => Some(Colocate::Auto),
            "true" => Some(Colocate::Always),
            "false" => Some(Colocate::Never),
            _ => None,
        }
    }
}

/// The most prepared workspaces `pool.size` may ask for.
pub(crate) const MAX_POOL: usize = 64;

/// The tools bundle's default paths (those that exist are copied).
pub(crate) const DEFAULT_TOOLS_PATHS: [&str; 4] = ["agents.just", "rules", "scripts", "AGENTS.md"];
/// The tools bundle's default directory.
pub(crate) const DEFAULT_TOOLS_DIR: &str = ".agent-tools";

/// `setup.command`: its argv and the file it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupCommand {
    pub argv: Vec<String>,
    pub file: PathBuf,
    /// The repository file's path relative to the main workspace's root; `None` for the
    /// user's file (whose commands are trusted).
    pub repo_relative: Option<String>,
}

/// How long `gc` keeps kept-aside directories unless `retention.kept` says otherwise.
/// How long bringing back a sandboxed run's work may take unless the user's file says.
pub(crate) const DEFAULT_BRING_BACK_TIMEOUT: Duration = Duration::from_secs(120);

impl Config {
    /// How long bringing back a sandboxed run's work may take.
    pub(crate) fn bring_back_timeout(&self) -> Duration {
        self.sandbox_bring_back_timeout
            .unwrap_or(DEFAULT_BRING_BACK_TIMEOUT)
    }
}

pub(crate) const DEFAULT_RETENTION_KEPT: Duration = Duration::from_secs(30 * 24 * 3600);

/// A status `retention.<status>` may name: a run's end as its record says, or one the
/// inventory derives (`landed` from the last land, `crashed` from a supervisor gone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum RetentionStatus {
    Done,
    Landed,
    Error,
    Crashed,
    Interrupted,
    Idle,
}

impl RetentionStatus {
    /// Every one, in the order `gc` reports them (and `[retention]` lists them).
    pub(crate) const ALL: [RetentionStatus; 6] = [
        RetentionStatus::Done,
        RetentionStatus::Landed,
        RetentionStatus::Error,
        RetentionStatus::Crashed,
        RetentionStatus::Interrupted,
        RetentionStatus::Idle,
    ];

    /// Its key under `[retention]`, and the status `status` shows.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RetentionStatus::Done => "done",
            RetentionStatus::Landed => "landed",
            RetentionStatus::Error => "error",
            RetentionStatus::Crashed => "crashed",
            RetentionStatus::Interrupted => "interrupted",
            RetentionStatus::Idle => "idle",
        }
    }

    /// The one a workspace showing `status` has; `None` for a status no retention names
    /// (`running`, `conflicted`, a problem).
    pub(crate) fn of(status: &str) -> Option<RetentionStatus> {
        Self::ALL.into_iter().find(|s| s.as_str() == status)
    }
}

impl std::fmt::Display for RetentionStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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

/// The user's configuration file (whether or not it exists).
pub(crate) fn user_file() -> Option<PathBuf> {
    let base = vars::non_empty("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| vars::non_empty("HOME").map(|h| Path::new(&h).join(".config")))?;
    Some(base.join("agent-workspace").join("config.toml"))
}

/// Reads the user file and, when `repo_root` is known, the repository file; the user's
/// values win over the repository's.
pub(crate) fn load(repo_root: Option<&Path>) -> Result<Config, ConfigError> {
    let mut config = Config {
        sandbox_network: true,
        ports: 1,
        tools_paths: DEFAULT_TOOLS_PATHS.map(str::to_string).to_vec(),
        tools_dir: DEFAULT_TOOLS_DIR.to_string(),
        retention_kept: Some(DEFAULT_RETENTION_KEPT),
        direnv_reuse: true,
        ..Config::default()
    };
    // The repository's `sandbox.allowed_hosts`, which only narrows the user's.
    let mut repo_hosts = None;
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
            for (key, set) in [
                ("sandbox.writable", content.sandbox.writable.is_some()),
                ("sandbox.sockets", content.sandbox.sockets.is_some()),
                ("sandbox.readable", content.sandbox.readable.is_some()),
                ("sandbox.pass_env", content.sandbox.pass_env.is_some()),
                ("sandbox.limits", content.sandbox.limits.is_some()),
                (
                    "sandbox.bring_back_timeout",
                    content.sandbox.bring_back_timeout.is_some(),
                ),
            ] {
                if set {
                    return Err(ConfigError::UserOnly {
                        file: file.clone(),
                        key,
                    });
                }
            }
            let relative = file
                .strip_prefix(root)
                .ok()
                .map(|p| p.display().to_string());
            let sets_tools = content.tools.paths.is_some();
            apply(&mut config, content, file)?;
            repo_hosts = config.sandbox_allowed_hosts.take();
            if let (true, Some(relative)) = (sets_tools, &relative) {
                config.tools_paths_from_repo = Some((file.clone(), relative.clone()));
            }
            if let Some(setup) = config.setup.as_mut() {
                setup.repo_relative = relative;
            }
        }
    }
    if let Some(file) = user_file().filter(|p| p.is_file()) {
        let content = read(&file)?;
        if content.tools.paths.is_some() {
            config.tools_paths_from_repo = None;
        }
        apply(&mut config, content, &file)?;
    }
    config.sandbox_allowed_hosts = crate::exec::sandbox::hosts::narrowed(
        config.sandbox_allowed_hosts.as_deref(),
        repo_hosts.as_deref(),
    );
    Ok(config)
}

fn read(file: &Path) -> Result<FileContent, ConfigError> {
    // The repository's file is in a checkout an agent may write: never wait on a FIFO.
    let text =
        crate::store::fsutil::read_untrusted_string(file, crate::store::fsutil::UNTRUSTED_LIMIT)
            .map_err(|e| ConfigError::Read {
                file: file.to_path_buf(),
                source: match e {
                    crate::store::fsutil::FsError::Io { source, .. } => source,
                    other => std::io::Error::other(other.to_string()),
                },
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
    if let Some(list) = content.copy.include {
        config.copy_include = list
            .iter()
            .map(|text| crate::store::include::Pattern::parse(text))
            .collect::<Result<_, _>>()
            .map_err(|e| invalid(format!("copy.include: {e}")))?;
    }
    let r = content.retention;
    let given = [r.done, r.landed, r.error, r.crashed, r.interrupted, r.idle];
    for (status, text) in RetentionStatus::ALL.into_iter().zip(given) {
        let Some(text) = text else { continue };
        match parse_retention(&text) {
            Some(Some(age)) => config.retention.insert(status, age),
            Some(None) => config.retention.remove(&status),
            None => {
                return Err(invalid(format!(
                    "retention.{status} = {text:?} is not a duration (e.g. \"30m\", \"1h\", \"7d\") or \"never\""
                )))
            }
        };
    }
    if let Some(text) = r.kept {
        config.retention_kept = match parse_retention(&text) {
            Some(age) => age,
            None => {
                return Err(invalid(format!(
                    "retention.kept = {text:?} is not a duration (e.g. \"30d\") or \"never\""
                )))
            }
        };
    }
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
    if let Some(size) = content.pool.size {
        if size > MAX_POOL {
            return Err(invalid(format!(
                "pool.size = {size} is more than {MAX_POOL} prepared workspaces"
            )));
        }
        config.pool_size = size;
    }
    if let Some(count) = content.ports.count {
        config.ports = count;
    }
    if let Some(backend) = content.backend {
        config.backend = Some(backend);
    }
    if let Some(spec) = content.jj.colocate {
        config.jj_colocate = match spec {
            file::ColocateSpec::Flag(true) => Colocate::Always,
            file::ColocateSpec::Flag(false) => Colocate::Never,
            file::ColocateSpec::Word(word) => Colocate::parse(&word).ok_or_else(|| {
                invalid(format!(
                    "jj.colocate = {word:?} is not \"auto\", true or false"
                ))
            })?,
        };
    }
    if let Some(prefix) = content.git.branch_prefix {
        config.branch_prefix = Some(prefix);
    }
    if let Some(list) = content.clean.disposable {
        config.disposable = Some(list);
    }
    if let Some(reuse) = content.direnv.reuse {
        config.direnv_reuse = reuse;
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
    if let Some(paths) = content.sandbox.sockets {
        config.sandbox_sockets = paths;
    }
    if let Some(paths) = content.sandbox.readable {
        config.sandbox_readable = paths;
    }
    if let Some(names) = content.sandbox.pass_env {
        config.sandbox_pass_env = names;
    }
    if let Some(list) = content.sandbox.allowed_hosts {
        let hosts = list
            .iter()
            .map(|text| text.parse())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e: crate::exec::sandbox::hosts::BadHost| {
                invalid(format!("sandbox.allowed_hosts: {e}"))
            })?;
        config.sandbox_allowed_hosts = Some(hosts);
    }
    if let Some(limits) = content.sandbox.limits {
        apply_limits(&mut config.sandbox_limits, limits, &invalid)?;
    }
    if let Some(text) = content.sandbox.bring_back_timeout {
        let limit = humantime::parse_duration(text.trim())
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| {
                invalid(format!(
                    "sandbox.bring_back_timeout = {text:?} is not a duration such as \"2m\" or \"90s\""
                ))
            })?;
        config.sandbox_bring_back_timeout = Some(limit);
    }
    apply_tools(config, content.tools, &invalid)?;
    if let Some(spec) = content.setup.command {
        let argv = match spec {
            CommandSpec::Shell(text) => vec!["sh".into(), "-c".into(), text],
            CommandSpec::Argv(argv) => argv,
        };
        if argv.first().is_none_or(|a| a.trim().is_empty()) {
            return Err(invalid("setup.command is empty".into()));
        }
        config.setup = Some(SetupCommand {
            argv,
            file: file.to_path_buf(),
            repo_relative: None,
        });
    }
    Ok(())
}

fn apply_limits(
    limits: &mut SandboxLimits,
    section: file::SandboxLimitsSection,
    invalid: &dyn Fn(String) -> ConfigError,
) -> Result<(), ConfigError> {
    if let Some(pids) = section.pids {
        limits.pids = Some(u64::try_from(pids).ok().filter(|p| *p > 0).ok_or_else(|| {
            invalid(format!(
                "sandbox.limits.pids = {pids} is not a number of processes above 0"
            ))
        })?);
    }
    if let Some(cpus) = section.cpus {
        let milli = (cpus * 1000.0).round();
        if !(milli >= 1.0 && milli <= f64::from(u32::MAX)) {
            return Err(invalid(format!(
                "sandbox.limits.cpus = {cpus} is not a number of CPUs above 0 (e.g. 2, 0.5)"
            )));
        }
        limits.cpus_milli = Some(milli as u32);
    }
    for (key, text, slot) in [
        ("memory", section.memory, &mut limits.memory),
        ("tmp", section.tmp, &mut limits.tmp),
    ] {
        let Some(text) = text else { continue };
        *slot = Some(parse_limit_size(&text).filter(|n| *n > 0).ok_or_else(|| {
            invalid(format!(
                "sandbox.limits.{key} = {text:?} is not a size (e.g. \"512M\", \"4G\", \"1.5GiB\")"
            ))
        })?);
    }
    Ok(())
}

fn apply_tools(
    config: &mut Config,
    tools: ToolsSection,
    invalid: &dyn Fn(String) -> ConfigError,
) -> Result<(), ConfigError> {
    if let Some(paths) = tools.paths {
        for path in &paths {
            if !is_plain_relative(path) {
                return Err(invalid(format!(
                    "tools.paths entry {path:?} is not a relative path inside the repository"
                )));
            }
            if path.starts_with(".git") || path.starts_with(".jj") {
                let first = Path::new(path).components().next();
                if first.is_some_and(|c| c.as_os_str() == ".git" || c.as_os_str() == ".jj") {
                    return Err(invalid(format!(
                        "tools.paths entry {path:?} names the repository's store (.git or .jj)"
                    )));
                }
            }
        }
        config.tools_paths = paths;
        config.tools_paths_set = true;
    }
    if let Some(dir) = tools.dir {
        if !is_plain_relative(&dir) || dir.starts_with(".jj") || dir.starts_with(".git") {
            return Err(invalid(format!(
                "tools.dir = {dir:?} is not a relative directory inside the workspace"
            )));
        }
        config.tools_dir = dir.trim_end_matches('/').to_string();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{apply, Config, FileContent, RetentionStatus};
    use std::path::Path;
    use std::time::Duration;

    /// Each `retention.<status>` key sets that status's retention, a status `status` shows
    /// maps back to it, and `never` clears it.
    #[test]
    fn retention_keys_are_their_statuses() {
        let text = "[retention]\ndone = \"1s\"\nlanded = \"2s\"\nerror = \"3s\"\n\
                    crashed = \"4s\"\ninterrupted = \"5s\"\nidle = \"6s\"\n";
        let content: FileContent = toml::from_str(text).expect("the example parses");
        let mut config = Config::default();
        apply(&mut config, content, Path::new("x.toml")).expect("valid retentions");
        for (n, status) in (1..).zip(RetentionStatus::ALL) {
            assert_eq!(config.retention.get(&status), Some(&Duration::from_secs(n)));
            assert_eq!(RetentionStatus::of(status.as_str()), Some(status));
        }
        assert_eq!(RetentionStatus::of("conflicted"), None);
        assert_eq!(RetentionStatus::of("running"), None);
        let never: FileContent =
            toml::from_str("[retention]\nlanded = \"never\"\n").expect("the example parses");
        apply(&mut config, never, Path::new("x.toml")).expect("valid retentions");
        assert_eq!(config.retention.get(&RetentionStatus::Landed), None);
    }
}
