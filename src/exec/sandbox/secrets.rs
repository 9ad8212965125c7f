//! What of the user's a sandbox does not see: the credentials under HOME and the
//! environment variables that carry them.
//!
//! HOME is an allowlist: the sandbox gets an empty, read-only HOME with only what toolchains
//! read put back ([`HOME_READABLE`], the configuration jj, git and direnv read, the
//! directories on PATH, and `sandbox.readable` from the user's own file). A denylist would
//! have to name every credential every tool ever keeps; what it forgets is sent. The
//! credential files that live inside a directory put back (cargo's, git's) are covered.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Under HOME, what a sandbox reads: toolchains, version managers and their caches. None of
/// these holds a credential but the files [`COVERED`] names.
pub(crate) const HOME_READABLE: &[&str] = &[
    ".cargo",
    ".rustup",
    ".nix-profile",
    ".nix-defexpr",
    ".local/bin",
    ".local/state/nix/profiles",
    ".local/share/direnv",
    ".config/direnv",
    ".config/jj",
    ".jjconfig.toml",
    ".config/git/config",
    ".config/git/ignore",
    ".config/git/attributes",
    ".gitconfig",
    ".gitignore",
    ".gitignore_global",
    ".pyenv",
    ".nvm",
    ".volta",
    ".bun",
    ".deno",
    ".asdf",
    ".sdkman",
    ".ghcup",
    ".opam",
    ".elan",
    ".go",
    "go",
    ".m2/repository",
    ".gradle/caches",
    ".gradle/wrapper",
    ".cache/pip",
    ".cache/uv",
    ".cache/go-build",
    ".cache/yarn",
    ".cache/pnpm",
    ".cache/bazel",
    ".cache/nix",
];

/// Credential files inside the directories put back, covered with an empty file.
pub(crate) const COVERED: &[&str] = &[
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/jj/repos",
    ".gradle/gradle.properties",
];

/// Under the configuration and data directories (`$XDG_CONFIG_HOME`, `$XDG_DATA_HOME`) when
/// they are set elsewhere than HOME's: what a sandbox reads there.
pub(crate) const XDG_CONFIG_READABLE: &[&str] =
    &["jj", "git/config", "git/ignore", "git/attributes", "direnv"];
pub(crate) const XDG_DATA_READABLE: &[&str] = &["direnv"];

/// The paths under `home` a sandbox reads, whichever exist.
pub(crate) fn home_readable(home: &Path) -> Vec<PathBuf> {
    HOME_READABLE.iter().map(|p| home.join(p)).collect()
}

/// The credential files under `home` and the configuration directory `config` to cover.
pub(crate) fn covered(home: &Path, config: Option<&Path>) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = COVERED.iter().map(|p| home.join(p)).collect();
    if let Some(config) = config {
        files.push(config.join("jj/repos"));
    }
    files
}

/// Whether the environment variable `name` is taken for one that carries a credential: not
/// passed into a sandbox unless the user's `sandbox.pass_env` names it.
pub(crate) fn carries_credentials(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    let upper = name.to_ascii_uppercase();
    const PREFIXES: &[&str] = &[
        "AWS_",
        "GH_",
        "GITHUB_",
        "GITLAB_",
        "AZURE_",
        "ARM_CLIENT",
        "GOOGLE_",
        "GCLOUD_",
        "CLOUDSDK_",
        "OP_",
        "VAULT_",
        "DIGITALOCEAN_",
        "HEROKU_",
        "DOCKER_AUTH",
        "NPM_CONFIG__AUTH",
        "NPM_CONFIG_//",
    ];
    const EXACT: &[&str] = &[
        "SSH_AUTH_SOCK",
        "SSH_AGENT_PID",
        "GPG_AGENT_INFO",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "KUBECONFIG",
        "NETRC",
        "DATABASE_URL",
    ];
    const PARTS: &[&str] = &[
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "API_KEY",
        "APIKEY",
        "ACCESS_KEY",
        "PRIVATE_KEY",
        "CREDENTIAL",
        "AUTH_KEY",
        "SESSION_KEY",
    ];
    if upper.starts_with("AGENT_WORKSPACE_") {
        return false;
    }
    PREFIXES.iter().any(|p| upper.starts_with(p))
        || EXACT.contains(&upper.as_str())
        || PARTS.iter().any(|p| upper.contains(p))
        || upper.ends_with("_PAT")
}

/// The variables of the environment `vars` a sandbox does not get: those that carry
/// credentials, but the ones `pass` names.
pub(crate) fn withheld<'a>(
    vars: impl IntoIterator<Item = &'a OsStr>,
    pass: &[String],
) -> Vec<std::ffi::OsString> {
    let mut names: Vec<std::ffi::OsString> = vars
        .into_iter()
        .filter(|name| carries_credentials(name))
        .filter(|name| !pass.iter().any(|p| OsStr::new(p) == *name))
        .map(OsStr::to_os_string)
        .collect();
    names.sort();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_variables_are_told_from_the_rest() {
        for name in [
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_PROFILE",
            "NPM_TOKEN",
            "CARGO_REGISTRY_TOKEN",
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "TWINE_PASSWORD",
            "SSH_AUTH_SOCK",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "HF_TOKEN",
            "my_secret_thing",
            "GITLAB_PAT",
        ] {
            assert!(carries_credentials(OsStr::new(name)), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "TERM",
            "CARGO_HOME",
            "RUSTUP_TOOLCHAIN",
            "XDG_CONFIG_HOME",
            "AGENT_WORKSPACE_ID",
            "DIRENV_LOG_FORMAT",
            "PATCH_LEVEL",
            "LD_LIBRARY_PATH",
            "SSH_CONNECTION",
        ] {
            assert!(!carries_credentials(OsStr::new(name)), "{name}");
        }
    }

    #[test]
    fn what_the_user_passes_is_not_withheld() {
        let vars = ["PATH", "GITHUB_TOKEN", "ANTHROPIC_API_KEY", "GITHUB_TOKEN"];
        let withheld = withheld(
            vars.iter().map(OsStr::new),
            &["ANTHROPIC_API_KEY".to_string()],
        );
        assert_eq!(withheld, vec![std::ffi::OsString::from("GITHUB_TOKEN")]);
    }
}
