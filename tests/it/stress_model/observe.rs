//! What the round sees: the lines (tokens) and conflict markers in a directory tree, the
//! tokens every commit of the repository holds, and what `status --json` says.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use crate::backends::Backend;
use crate::harness::{TestEnv, AW};

use super::proc::{argv, run, run_input};

/// The prefixes of the lines jj and git write around a conflict.
pub const MARKERS: &[&str] = &["<<<<<<<", ">>>>>>>", "%%%%%%%", "+++++++", r"\\\\\\\"];

/// The tokens `L<seed>_<n>_` in `text`.
pub fn tokens(text: &str, seed: u64) -> Vec<u64> {
    let prefix = format!("L{seed}_");
    let mut found = vec![];
    let mut rest = text;
    while let Some(at) = rest.find(&prefix) {
        rest = &rest[at + prefix.len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if !digits.is_empty() && rest[digits.len()..].starts_with('_') {
            // Invariant: `digits` is a non-empty run of ASCII digits of a token we wrote.
            found.push(digits.parse().expect("a token number"));
        }
    }
    found
}

/// The files of a tree (relative paths) with the tokens each holds, and those holding a
/// conflict marker at the start of a line.
#[derive(Default, Clone)]
pub struct Scan {
    pub files: BTreeMap<String, Vec<u64>>,
    pub marked: BTreeSet<String>,
}

impl Scan {
    pub fn all(&self) -> BTreeSet<u64> {
        self.files.values().flatten().copied().collect()
    }
}

/// Scans `root` (no `.jj`, `.git` or workspace record); a missing root scans as empty.
pub fn scan(root: &Path, seed: u64) -> Scan {
    let mut scan = Scan::default();
    walk(root, root, seed, &mut scan);
    scan
}

fn walk(root: &Path, dir: &Path, seed: u64, scan: &mut Scan) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == ".jj" || name == ".git" || name.starts_with(".agent-workflow.json") {
            continue;
        }
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            walk(root, &path, seed, scan);
        } else if meta.is_file() {
            let text = String::from_utf8_lossy(&fs::read(&path).unwrap_or_default()).into_owned();
            // Invariant: `path` was found under `root` by this walk.
            let rel = path.strip_prefix(root).expect("under the root");
            let rel = rel.to_string_lossy().into_owned();
            if text
                .lines()
                .any(|l| MARKERS.iter().any(|m| l.starts_with(m)))
            {
                scan.marked.insert(rel.clone());
            }
            scan.files.insert(rel, tokens(&text, seed));
        }
    }
}

/// The tokens of every commit seen so far, read once per commit (commits never change).
#[derive(Default)]
pub struct History {
    by_commit: BTreeMap<String, Vec<u64>>,
}

impl History {
    /// The tokens held by the repository's commits (jj: every visible commit; git: every
    /// ref, every worktree's HEAD) and by the commits in `named`.
    pub fn tokens(
        &mut self,
        env: &TestEnv,
        repo: &Path,
        backend: Backend,
        named: &BTreeSet<String>,
        seed: u64,
    ) -> BTreeSet<u64> {
        let mut commits: BTreeSet<String> = BTreeSet::new();
        match backend {
            Backend::Jj => {
                let out = run(
                    env,
                    repo,
                    "jj",
                    &argv(&[
                        "--no-pager",
                        "--color=never",
                        "--ignore-working-copy",
                        "log",
                        "--no-graph",
                        "-r",
                        "all()",
                        "-T",
                        "commit_id ++ \"\\n\"",
                    ]),
                );
                assert!(out.ok(), "jj log all() failed: {}", out.stderr);
                commits.extend(out.stdout.lines().map(str::to_string));
            }
            Backend::Git => {
                // Every ref's history and every worktree's HEAD's, in one listing.
                let out = run(
                    env,
                    repo,
                    "git",
                    &argv(&["worktree", "list", "--porcelain"]),
                );
                assert!(out.ok(), "git worktree list failed: {}", out.stderr);
                let heads: Vec<String> = out
                    .stdout
                    .lines()
                    .filter_map(|l| l.strip_prefix("HEAD "))
                    .filter(|h| h.bytes().any(|b| b != b'0'))
                    .map(str::to_string)
                    .collect();
                let mut args = argv(&["rev-list", "--all"]);
                args.extend(heads.iter().cloned());
                args.push("--".into());
                let out = run(env, repo, "git", &args);
                if out.ok() {
                    commits.extend(out.stdout.lines().map(str::to_string));
                } else {
                    // A head that is no commit (a worktree a kill left half made): list
                    // the refs and each head that is one on its own.
                    let out = run(env, repo, "git", &argv(&["rev-list", "--all"]));
                    assert!(out.ok(), "git rev-list --all failed: {}", out.stderr);
                    commits.extend(out.stdout.lines().map(str::to_string));
                    for head in &heads {
                        let log = run(env, repo, "git", &argv(&["rev-list", head]));
                        commits.extend(log.stdout.lines().map(str::to_string));
                    }
                }
            }
        }
        // Every commit the tool named that is (still) a commit of the store, all asked at
        // once: `git cat-file --batch-check` prints `<id> commit` for each one found and
        // `<name> missing` for one that is not.
        if !named.is_empty() {
            let input: String = named
                .iter()
                .map(|id| format!("{id}^{{commit}}\n"))
                .collect();
            let out = run_input(
                env,
                repo,
                "git",
                &argv(&["cat-file", "--batch-check=%(objectname) %(objecttype)"]),
                &input,
            );
            assert!(
                out.ok(),
                "git cat-file --batch-check failed: {}",
                out.stderr
            );
            for line in out.stdout.lines() {
                if let Some(id) = line.strip_suffix(" commit") {
                    commits.insert(id.to_string());
                }
            }
        }
        // jj's root commit (all zeros) is no git object.
        commits.retain(|c| !c.is_empty() && c.bytes().any(|b| b != b'0'));
        let new: Vec<&String> = commits
            .iter()
            .filter(|c| !self.by_commit.contains_key(*c))
            .collect();
        for chunk in new.chunks(100) {
            let mut args = argv(&["grep", "-I", "-o", "-E"]);
            args.push(format!("L{seed}_[0-9]+_"));
            args.extend(chunk.iter().map(|c| c.to_string()));
            args.push("--".into());
            let out = run(env, repo, "git", &args);
            assert!(
                out.code == Some(0) || out.code == Some(1),
                "git grep failed: {}",
                out.stderr
            );
            for c in chunk {
                self.by_commit.insert(c.to_string(), vec![]);
            }
            for line in out.stdout.lines() {
                if let Some((commit, _)) = line.split_once(':') {
                    let found = tokens(line, seed);
                    if let Some(list) = self.by_commit.get_mut(commit) {
                        list.extend(found);
                    }
                }
            }
        }
        commits
            .iter()
            .filter_map(|c| self.by_commit.get(c))
            .flatten()
            .copied()
            .collect()
    }
}

/// The tokens of the tree of one commit (`git grep` in the repository's git store).
pub fn commit_tokens(env: &TestEnv, repo: &Path, commit: &str, seed: u64) -> BTreeSet<u64> {
    let mut args = argv(&["grep", "-I", "-o", "-E"]);
    args.push(format!("L{seed}_[0-9]+_"));
    args.push(commit.to_string());
    args.push("--".into());
    let out = run(env, repo, "git", &args);
    tokens(&out.stdout, seed).into_iter().collect()
}

/// One workspace as `status --json` shows it.
#[derive(Debug, Clone)]
pub struct Shown {
    pub status: String,
    pub problem: Option<String>,
}

/// `status --json`: the workspaces of the repository by id.
pub fn status(env: &TestEnv, repo: &Path) -> Result<BTreeMap<String, Shown>, String> {
    let out = run(env, repo, AW, &argv(&["status", "--json"]));
    if !out.ok() {
        return Err(format!("status --json: {}: {}", out.how(), out.stderr));
    }
    let json: serde_json::Value =
        serde_json::from_str(&out.stdout).map_err(|e| format!("status --json: {e}"))?;
    let mut shown = BTreeMap::new();
    for w in json["workspaces"].as_array().cloned().unwrap_or_default() {
        let id = w["workspace_id"].as_str().unwrap_or_default().to_string();
        shown.insert(
            id,
            Shown {
                status: w["status"].as_str().unwrap_or_default().to_string(),
                problem: w["problem"].as_str().map(str::to_string),
            },
        );
    }
    Ok(shown)
}
