//! The commits a worktree's gitlinks name, kept in the user's repository before the
//! worktree goes. A commit made inside a submodule of a worktree lives only in the
//! worktree's own git area (`<common>/worktrees/<wt>/modules/<name>`), one made inside a
//! nested repository only in that repository's `.git`: removing the worktree would leave
//! its branch (or main, after a land) naming a commit that exists nowhere.
//!
//! Each such commit is fetched into the user's clone of that submodule
//! (`<common>/modules/<name>`, where `git submodule update` looks), or else into the user's
//! repository itself, under `refs/agent-workspace/kept/<id>/<commit>`. The agent wrote those
//! repositories: git runs in them only as `fetch`'s other end and `cat-file`, with hooks
//! and fsmonitor off.

use std::path::{Component, Path, PathBuf};

use super::Git;
use crate::exec::process::Call;
use crate::store::layout::WorkspaceId;
use crate::vcs::error::{Result, VcsError};
use crate::vcs::KeptLink;

/// Where the refs that keep gitlinks' commits live, in the repository each was fetched into.
pub(crate) const KEPT_REFS: &str = "refs/agent-workspace/kept/";

/// git with the configuration that could run a program off: the repositories it touches
/// here were written by an agent.
fn safe(call: Call) -> Call {
    call.args([
        "-c",
        "core.fsmonitor=false",
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "gc.auto=0",
        "-c",
        "maintenance.auto=false",
    ])
}

impl Git {
    /// Fetches into the user's repository every commit a gitlink of the worktree `id` at
    /// `ws` names (its index, its `HEAD`, the commits on `tips` not on `base`) that it does
    /// not keep yet; returns each one fetched, or found in no repository the worktree has.
    pub(crate) fn keep_gitlinks(
        &self,
        id: &WorkspaceId,
        ws: &Path,
        tips: &[&str],
        base: &[String],
    ) -> Result<Vec<KeptLink>> {
        let links = self.gitlinks_named(ws, tips, base)?;
        if links.is_empty() {
            return Ok(vec![]);
        }
        let wt_git_dir = self.worktree_git_dir(ws)?;
        let mut kept = vec![];
        for (path, commit) in links {
            let (name, sources) = link_sources(ws, &wt_git_dir, &path);
            let into = name
                .as_ref()
                .map(|n| self.common.join("modules").join(n))
                .filter(|dir| dir.join("HEAD").is_file())
                .unwrap_or_else(|| self.common.clone());
            if self.keeps(&into, &commit) {
                continue;
            }
            let holder = sources.iter().find(|dir| has_commit(dir, &commit));
            let mut link = KeptLink {
                path: path.clone(),
                commit: commit.clone(),
                submodule: name.is_some(),
                kept: None,
            };
            if let Some(from) = holder {
                let refname = format!("{KEPT_REFS}{id}/{commit}");
                let fetched = safe(crate::vcs::packs::git_at(&into)?)
                    .args([
                        "-c",
                        "protocol.version=2",
                        "-c",
                        "protocol.file.allow=always",
                        "-c",
                        "fetch.fsckObjects=true",
                        "-c",
                        "transfer.fsckObjects=true",
                    ])
                    .args(["fetch", "--quiet", "--no-tags", "--no-prune"])
                    .args(["--no-write-fetch-head", "--no-recurse-submodules"])
                    .arg(from)
                    .arg(format!("+{commit}:{refname}"))
                    .stdout();
                if let Err(source) = fetched {
                    return Err(VcsError::GitlinkNotKept {
                        path,
                        commit,
                        into,
                        source: Box::new(source),
                    });
                }
                link.kept = Some((into, refname));
            }
            kept.push(link);
        }
        Ok(kept)
    }

    /// The gitlinks (path, commit) of the worktree at `ws`: in its index, its `HEAD`, and
    /// the commits on `tips` not on `base`; each once, and none the base's tree has.
    fn gitlinks_named(
        &self,
        ws: &Path,
        tips: &[&str],
        base: &[String],
    ) -> Result<Vec<(String, String)>> {
        let mut links = vec![];
        let index = self.call(ws)?.args(["ls-files", "-s", "-z"]).stdout()?;
        links.extend(parse_index(&index));
        // An unborn branch has no tree.
        if let Ok(tree) = self
            .call(ws)?
            .args(["ls-tree", "-r", "-z", "--full-tree", "HEAD"])
            .stdout()
        {
            links.extend(parse_tree(&tree));
        }
        let hex = |c: &&str| !c.is_empty() && c.bytes().all(|b| b.is_ascii_hexdigit());
        let tips: Vec<&str> = tips.iter().copied().filter(hex).collect();
        if !tips.is_empty() {
            let log = self
                .call(&self.main)?
                .args([
                    "log",
                    "--format=",
                    "--raw",
                    "-z",
                    "--no-abbrev",
                    "--no-renames",
                ])
                .args(&tips)
                .arg("--not")
                .args(base.iter().map(String::as_str).filter(hex))
                .arg("--")
                .stdout()?;
            links.extend(parse_raw(&log));
        }
        let null = |c: &str| c.bytes().all(|b| b == b'0');
        // What the base already names is the user's (or its upstream's) to keep: a submodule
        // neither side initialised is not new work.
        let mut seen = std::collections::HashSet::new();
        for commit in base.iter().filter(|c| hex(&c.as_str())) {
            if let Ok(tree) = self
                .call(&self.main)?
                .args(["ls-tree", "-r", "-z", "--full-tree", commit])
                .stdout()
            {
                seen.extend(parse_tree(&tree));
            }
        }
        links.retain(|(path, commit)| !null(commit) && seen.insert((path.clone(), commit.clone())));
        Ok(links)
    }

    /// Whether the repository at `git_dir` has `commit` reachable from one of its refs (so
    /// no `gc` prunes it).
    fn keeps(&self, git_dir: &Path, commit: &str) -> bool {
        let Ok(call) = crate::vcs::packs::git_at(git_dir) else {
            return false;
        };
        safe(call)
            .args(["rev-list", "-n", "1", commit, "--not", "--all", "--"])
            .stdout()
            .is_ok_and(|out| out.trim().is_empty())
    }
}

/// Whether the repository at `git_dir` (an agent's) has `commit`.
fn has_commit(git_dir: &Path, commit: &str) -> bool {
    let Ok(call) = crate::vcs::packs::git_at(git_dir) else {
        return false;
    };
    safe(call)
        .args(["cat-file", "-e", &format!("{commit}^{{commit}}")])
        .stdout()
        .is_ok()
}

/// The submodule name of the gitlink at `path` of the worktree at `ws` (whose git
/// directory is `wt_git_dir`), when its repository is one of the worktree's submodules,
/// and the git directories that may hold its commits: the one its `.git` names (read as
/// data, through no symlink) and the worktree's submodule directory of that path.
fn link_sources(ws: &Path, wt_git_dir: &Path, path: &str) -> (Option<String>, Vec<PathBuf>) {
    let modules = wt_git_dir.join("modules");
    let mut sources = vec![];
    let mut name = None;
    let mut dir = ws.to_path_buf();
    // Each step a real directory: a symlink could lead out of the worktree.
    let real = Path::new(path).components().all(|part| {
        dir.push(part);
        matches!(part, Component::Normal(_))
            && std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_dir())
    });
    if real {
        let dot_git = dir.join(".git");
        match std::fs::symlink_metadata(&dot_git) {
            Ok(meta) if meta.is_dir() => sources.push(dot_git),
            Ok(meta) if meta.is_file() => {
                let named = crate::store::fsutil::read_untrusted_string(&dot_git, 4096)
                    .ok()
                    .and_then(|text| {
                        let to = text
                            .strip_prefix("gitdir: ")?
                            .trim_end_matches(['\n', '\r']);
                        Some(dir.join(to))
                    });
                if let Some(named) = named {
                    let canonical = std::fs::canonicalize(&named).unwrap_or(named.clone());
                    let home = std::fs::canonicalize(&modules).unwrap_or(modules.clone());
                    name = canonical
                        .strip_prefix(&home)
                        .ok()
                        .and_then(|rest| rest.to_str())
                        .map(str::to_string);
                    sources.push(named);
                }
            }
            _ => {}
        }
    }
    // A submodule whose checkout the agent removed still has its git directory, named as
    // `git submodule` names it by default: by its path.
    let by_path = modules.join(path);
    if Path::new(path)
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
        && by_path.join("HEAD").is_file()
    {
        if name.is_none() && sources.is_empty() {
            name = Some(path.to_string());
        }
        sources.push(by_path);
    }
    (name, sources)
}

/// The gitlinks of `git ls-files -s -z` (`<mode> <id> <stage>\t<path>`).
fn parse_index(text: &str) -> Vec<(String, String)> {
    text.split('\0')
        .filter_map(|entry| {
            let (meta, path) = entry.split_once('\t')?;
            let mut fields = meta.split(' ');
            match (fields.next(), fields.next()) {
                (Some("160000"), Some(id)) => Some((path.to_string(), id.to_string())),
                _ => None,
            }
        })
        .collect()
}

/// The gitlinks of `git ls-tree -r -z` (`<mode> commit <id>\t<path>`).
fn parse_tree(text: &str) -> Vec<(String, String)> {
    text.split('\0')
        .filter_map(|entry| {
            let (meta, path) = entry.split_once('\t')?;
            let mut fields = meta.split(' ');
            match (fields.next(), fields.next(), fields.next()) {
                (Some("160000"), Some("commit"), Some(id)) => {
                    Some((path.to_string(), id.to_string()))
                }
                _ => None,
            }
        })
        .collect()
}

/// The gitlinks a change of `git log --raw -z --no-renames` records
/// (`:<old mode> <new mode> <old id> <new id> <status>\0<path>\0`).
fn parse_raw(text: &str) -> Vec<(String, String)> {
    let mut links = vec![];
    let mut fields = text.split('\0');
    while let Some(field) = fields.next() {
        let Some(meta) = field.trim_start_matches('\n').strip_prefix(':') else {
            continue;
        };
        let Some(path) = fields.next() else { break };
        let parts: Vec<&str> = meta.split(' ').collect();
        if let [_, "160000", _, id, _] = parts.as_slice() {
            links.push((path.to_string(), id.to_string()));
        }
    }
    links
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";

    #[test]
    fn gitlinks_of_an_index_a_tree_and_a_log() {
        let index = format!("100644 {B} 0\ta.txt\0160000 {A} 0\tlib\0");
        assert_eq!(parse_index(&index), [("lib".to_string(), A.to_string())]);
        let tree = format!("100644 blob {B}\ta.txt\0160000 commit {A}\tvendor/x\0");
        assert_eq!(parse_tree(&tree), [("vendor/x".to_string(), A.to_string())]);
        let zero = "0".repeat(40);
        let log = format!(
            ":000000 160000 {zero} {A} A\0lib\0:100644 100644 {A} {B} M\0a.txt\0\n\
             :160000 160000 {A} {B} M\0lib\0:160000 000000 {B} {zero} D\0old\0"
        );
        assert_eq!(
            parse_raw(&log),
            [
                ("lib".to_string(), A.to_string()),
                ("lib".to_string(), B.to_string())
            ]
        );
    }
}
