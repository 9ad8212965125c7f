//! The files a `.envrc` loads that its workspace can change: `source_env` and
//! `source_env_if_exists` targets, `dotenv`/`dotenv_if_exists` files (default `.env`),
//! `use flake`'s `flake.nix` and `flake.lock`, and `watch_file` targets. Only paths inside the
//! workspace count (relative, without `..` or variables).

use std::collections::BTreeMap;
use std::path::Path;

use crate::store::fsutil;
use crate::store::state::digest;

/// What a missing file's digest is recorded as.
pub(crate) const ABSENT: &str = "absent";
/// The digest recorded for a loaded file that is not a regular file of a sane size.
const UNREADABLE: &str = "unreadable";

/// The workspace-relative files `envrc` loads, in order, without duplicates.
pub(crate) fn targets(envrc: &str, workspace: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for line in envrc.lines() {
        let words: Vec<String> = line
            .split('#')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .map(|w| w.trim_matches(|c| c == '"' || c == '\'').to_string())
            .collect();
        let Some((command, args)) = words.split_first() else {
            continue;
        };
        let files: Vec<String> = match command.as_str() {
            "source_env" | "source_env_if_exists" => args
                .first()
                .map(|a| envrc_of(a, workspace))
                .into_iter()
                .collect(),
            "dotenv" | "dotenv_if_exists" => {
                vec![args.first().cloned().unwrap_or_else(|| ".env".into())]
            }
            "use" if args.first().map(String::as_str) == Some("flake") => {
                let dir = match args.get(1) {
                    Some(a) if a.starts_with('.') => a.split('#').next().unwrap_or(".").to_string(),
                    _ => ".".to_string(),
                };
                vec![format!("{dir}/flake.nix"), format!("{dir}/flake.lock")]
            }
            "watch_file" => args.to_vec(),
            _ => vec![],
        };
        for file in files.into_iter().filter_map(|f| inside(&f)) {
            if !found.contains(&file) {
                found.push(file);
            }
        }
    }
    found
}

/// `source_env` of a directory loads its `.envrc`.
fn envrc_of(arg: &str, workspace: &Path) -> String {
    match arg.ends_with('/') || inside(arg).is_some_and(|a| workspace.join(a).is_dir()) {
        true => format!("{}/.envrc", arg.trim_end_matches('/')),
        false => arg.to_string(),
    }
}

/// `path` normalised relative to the workspace, or `None` when it may lie outside it.
fn inside(path: &str) -> Option<String> {
    if path.is_empty() || path.starts_with('/') || path.contains('$') || path.contains('~') {
        return None;
    }
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.is_empty() || parts.contains(&"..") {
        return None;
    }
    Some(parts.join("/"))
}

/// The digest of each target's content in the workspace now ([`ABSENT`] when missing).
pub(crate) fn digests(workspace: &Path, targets: &[String]) -> BTreeMap<String, String> {
    targets
        .iter()
        .map(|t| {
            let d = match fsutil::read_untrusted(&workspace.join(t), fsutil::UNTRUSTED_LIMIT) {
                Ok(bytes) => digest(&bytes),
                Err(e) if fsutil::is_missing(&e) => ABSENT.to_string(),
                // A FIFO, a device or a huge file never matches what was allowed.
                Err(_) => UNREADABLE.to_string(),
            };
            (t.clone(), d)
        })
        .collect()
}

/// The files a workspace's `.envrc` loads and their digests now; empty without an `.envrc`.
pub(crate) fn current(workspace: &Path) -> BTreeMap<String, String> {
    let text = fsutil::read_untrusted_string(&workspace.join(".envrc"), fsutil::UNTRUSTED_LIMIT)
        .unwrap_or_default();
    digests(workspace, &targets(&text, workspace))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_loaded_files_inside_the_workspace() {
        let text = "source_env_if_exists .envrc.local\ndotenv\ndotenv_if_exists \"conf/.env\"\n\
                    use flake\nwatch_file a.txt ./b.txt\nsource_env /etc/x\nsource_env ../up\n\
                    # dotenv commented\nexport X=1\n";
        assert_eq!(
            targets(text, Path::new("/nonexistent")),
            [
                ".envrc.local",
                ".env",
                "conf/.env",
                "flake.nix",
                "flake.lock",
                "a.txt",
                "b.txt"
            ]
        );
    }
}
