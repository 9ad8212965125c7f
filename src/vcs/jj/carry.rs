//! Carrying a stale working copy's unrecorded edits onto the commit `update-stale` checked
//! out. jj rewrites only the paths that differ between the commit the working copy last
//! recorded and the new one, so only those are looked at. There, a file of the saved copy
//! that differs from what was recorded is an edit: it is merged three-way onto the new
//! version, or kept aside when it does not merge. A file as jj materialized it (conflict
//! markers included) is never an edit, and no conflict marker is ever written.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use super::Jj;
use crate::exec::process::{Call, ProcessError};
use crate::vcs::error::{CarryFailure, Result, StaleEdit, VcsError};

/// A path in one version: the recorded commit, the saved copy or the new commit.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Side {
    Absent,
    /// `exec` is `None` where jj does not say it.
    File {
        bytes: Vec<u8>,
        exec: Option<bool>,
    },
    Link(Vec<u8>),
    /// A conflict jj recorded, as it materializes it in a working copy.
    Conflict(Vec<u8>),
    /// A directory or a submodule: never merged.
    Other,
}

impl Side {
    fn text(&self) -> Option<&[u8]> {
        match self {
            Side::Absent => Some(b""),
            Side::File { bytes, .. } | Side::Conflict(bytes) if !bytes.contains(&0) => Some(bytes),
            _ => None,
        }
    }

    fn exec(&self) -> Option<bool> {
        match self {
            Side::File { exec, .. } => *exec,
            _ => None,
        }
    }
}

/// Whether `ours` (from disk) is what `recorded` (from jj) puts on disk.
fn same(ours: &Side, recorded: &Side) -> bool {
    match (ours, recorded) {
        (Side::File { bytes: a, exec: x }, Side::File { bytes: b, exec: y }) => {
            a == b && (x.is_none() || y.is_none() || x == y)
        }
        (Side::File { bytes, .. }, Side::Conflict(markers)) => bytes == markers,
        (Side::Other, _) | (_, Side::Other) => false,
        (a, b) => a == b,
    }
}

/// The executable files of the two commits, read once when first needed.
#[derive(Default)]
struct Modes {
    recorded: Option<HashSet<String>>,
    updated: Option<HashSet<String>>,
}

/// What to do at one path.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// The workspace already holds the right version.
    Leave,
    Write(Side),
    Conflict,
}

/// What the paths of a carried copy came to.
pub(super) struct Carried {
    pub(super) conflicts: Vec<StaleEdit>,
    /// Files holding what the working copy had recorded when an operation elsewhere undid
    /// that recording (`jj undo`, `jj op restore`): kept aside, never dropped silently.
    pub(super) undone: Vec<StaleEdit>,
}

impl Jj {
    /// Merges the edits the saved copy at `copy` holds (against commit `recorded`) into the
    /// workspace `ws`, which `update-stale` put at commit `updated`; edits that do not merge
    /// are copied into `kept`. Reads only jj's contents and the copy, so it can be repeated.
    /// With `undone` (the recorded commit was undone, not rewritten), a file as recorded
    /// that the update changes is recorded work the operation took away: it is kept too.
    pub(super) fn carry_edits(
        &self,
        ws: &Path,
        copy: &Path,
        recorded: &str,
        updated: &str,
        kept: &Path,
        undone: bool,
    ) -> Result<Carried> {
        let io = |action: &'static str, path: &Path| {
            let path = path.to_path_buf();
            move |source: io::Error| VcsError::Io {
                action,
                path,
                source,
            }
        };
        let mut conflicts = vec![];
        let mut taken = vec![];
        let scratch = copy.parent().unwrap_or(copy).join("merge");
        let changed = self.rewritten_paths(recorded, updated)?;
        let files: Vec<&str> = changed
            .iter()
            .filter(|(_, before, _)| *before == 'F')
            .map(|(path, _, _)| path.as_str())
            .collect();
        let unedited = self.unchanged_in_git(recorded, copy, &files);
        let mut modes = Modes::default();
        for (path, before, after) in changed {
            let Some(rel) = safe_relative(&path) else {
                continue;
            };
            let saved = copy.join(&rel);
            if unedited.contains(&path) {
                if undone {
                    taken.push(keep(&saved, &Side::Other, kept, &rel, &path)?);
                }
                continue;
            }
            let ours = read_disk(&saved).map_err(io("read", &saved))?;
            let base = self.side(recorded, &path, before, &mut modes.recorded)?;
            if same(&ours, &base) {
                // A conflict as jj materialized it is never work: undone, it just goes.
                if undone && ours != Side::Absent && !matches!(base, Side::Conflict(_)) {
                    let theirs = self.side(updated, &path, after, &mut modes.updated)?;
                    if !same(&ours, &theirs) {
                        taken.push(keep(&saved, &ours, kept, &rel, &path)?);
                    }
                }
                continue;
            }
            let theirs = self.side(updated, &path, after, &mut modes.updated)?;
            let outcome = match same(&ours, &theirs) {
                true => Outcome::Leave,
                false => merge(&base, &ours, &theirs, &saved, &scratch)?,
            };
            let target = ws.join(&rel);
            match outcome {
                Outcome::Leave => {}
                Outcome::Write(side) => {
                    if !write_side(ws, &rel, &side).map_err(io("write", &target))? {
                        conflicts.push(keep(&saved, &ours, kept, &rel, &path)?);
                    }
                }
                Outcome::Conflict => {
                    conflicts.push(keep(&saved, &ours, kept, &rel, &path)?);
                    // The update's version stays (jj wrote it; written again in case a
                    // killed repair left something else), never a merge with markers.
                    if matches!(theirs, Side::File { .. } | Side::Link(_) | Side::Absent) {
                        write_side(ws, &rel, &theirs).map_err(io("write", &target))?;
                    }
                }
            }
        }
        if fs::symlink_metadata(&scratch).is_ok() {
            crate::store::tree::remove(&scratch).map_err(io("remove", &scratch))?;
        }
        Ok(Carried {
            conflicts,
            undone: taken,
        })
    }

    /// The paths `update-stale` may have rewritten, with their types in `recorded` and in
    /// `updated`. jj 0.45's `update-stale` first snapshots the stale files onto the recorded
    /// commit (a divergent sibling of the updated one, same change id) and then checks out
    /// `updated` from that snapshot, so besides the paths that differ between the two
    /// commits, the paths any such sibling changed are rewritten too. Every commit of the
    /// change is looked at: a path no rewrite touched is as the copy has it, and is left.
    fn rewritten_paths(&self, recorded: &str, updated: &str) -> Result<Vec<(String, char, char)>> {
        let mut paths = self.changed_paths(recorded, updated)?;
        let siblings = self.siblings(recorded)?;
        let known: HashSet<String> = paths.iter().map(|(p, _, _)| p.clone()).collect();
        let mut extra: Vec<(String, char, char)> = vec![];
        for sibling in siblings.iter().filter(|c| *c != recorded && *c != updated) {
            for (path, before, _) in self.changed_paths(recorded, sibling)? {
                // Not changed by the update: as recorded in both commits.
                if !known.contains(&path) && !extra.iter().any(|(p, _, _)| *p == path) {
                    extra.push((path, before, before));
                }
            }
        }
        paths.extend(extra);
        Ok(paths)
    }

    /// The files among `paths` whose saved copy under `copy` is, content and mode, what
    /// `commit` holds: a shortcut that spares a `jj file show` per file, read from the
    /// backing git repository in a few calls (`ls-tree` of the commit, `hash-object` of the
    /// copies). Only a commit without conflicts is read so (its git tree is its tree); any
    /// failure just leaves the files to the full comparison.
    fn unchanged_in_git(&self, commit: &str, copy: &Path, paths: &[&str]) -> HashSet<String> {
        let mut same = HashSet::new();
        let git = || -> Result<Call> { Ok(self.git()?.arg("--literal-pathspecs")) };
        let conflicted = self.query().and_then(|q| {
            Ok(
                q.args(["log", "--no-graph", "-T", "conflict", "-r", commit])
                    .stdout()?,
            )
        });
        if paths.is_empty() || conflicted.map_or(true, |c| c.trim() != "false") {
            return same;
        }
        for chunk in paths.chunks(500) {
            let listed = git().and_then(|g| {
                Ok(g.args(["ls-tree", "-r", "-z", commit, "--"])
                    .args(chunk.iter().copied())
                    .stdout_bytes()?)
            });
            let Ok(listed) = listed else {
                return same;
            };
            // `<mode> blob <oid>\t<path>`, NUL-separated.
            let mut recorded = std::collections::HashMap::new();
            for entry in listed.split(|b| *b == 0).filter(|e| !e.is_empty()) {
                let text = String::from_utf8_lossy(entry);
                let Some((meta, path)) = text.split_once('\t') else {
                    continue;
                };
                let mut fields = meta.split(' ');
                if let (Some(mode), Some("blob"), Some(oid)) =
                    (fields.next(), fields.next(), fields.next())
                {
                    recorded.insert(path.to_string(), (mode == "100755", oid.to_string()));
                }
            }
            let regular: Vec<&str> = chunk
                .iter()
                .copied()
                .filter(|p| recorded.contains_key(*p))
                .filter(|p| fs::symlink_metadata(copy.join(p)).is_ok_and(|m| m.is_file()))
                .collect();
            if regular.is_empty() {
                continue;
            }
            let hashed = git().and_then(|g| {
                Ok(g.args(["hash-object", "--no-filters", "--"])
                    .args(regular.iter().map(|p| copy.join(p)))
                    .stdout()?)
            });
            let Ok(hashed) = hashed else {
                return same;
            };
            let oids: Vec<&str> = hashed.lines().collect();
            if oids.len() != regular.len() {
                return same;
            }
            for (path, oid) in regular.iter().zip(oids) {
                let exec = fs::symlink_metadata(copy.join(path))
                    .is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
                if recorded.get(*path) == Some(&(exec, oid.to_string())) {
                    same.insert(path.to_string());
                }
            }
        }
        same
    }

    /// The visible commits of the change `commit` belongs to (`commit` itself when visible).
    pub(super) fn siblings(&self, commit: &str) -> Result<Vec<String>> {
        let change = self
            .query()?
            .args(["log", "--no-graph", "-T", "change_id", "-r", commit])
            .stdout()?;
        let out = self
            .query()?
            .args(["log", "--no-graph", "-T", r#"commit_id ++ "\n""#, "-r"])
            .arg(format!("change_id({})", change.trim()))
            .stdout()?;
        Ok(out.lines().map(str::to_string).collect())
    }

    /// The paths that differ between two commits, with their types before and after (`-`
    /// absent, `F` file, `L` symlink, `C` conflict, `G` submodule, `T` tree). A rename is
    /// its two paths: the old one gone, the new one added (jj's `--types` output writes a
    /// rename as `{old => new}`, which names no path).
    fn changed_paths(&self, from: &str, to: &str) -> Result<Vec<(String, char, char)>> {
        let out = self
            .query()?
            .args(["diff", "--from", from, "--to", to, "-T", DIFF_TEMPLATE])
            .stdout_bytes()?;
        Ok(parse_diff(&out))
    }

    /// `path` in `commit`, as jj materializes it; `modes` caches the commit's executable
    /// files.
    fn side(
        &self,
        commit: &str,
        path: &str,
        kind: char,
        modes: &mut Option<HashSet<String>>,
    ) -> Result<Side> {
        let show = || -> Result<Vec<u8>> {
            Ok(self
                .query()?
                .args(["file", "show", "-r", commit])
                .arg(format!("root-file:{path:?}"))
                .stdout_bytes()?)
        };
        Ok(match kind {
            '-' => Side::Absent,
            'F' => {
                let executable = match modes {
                    Some(set) => set,
                    None => modes.insert(self.executables(commit)?),
                };
                Side::File {
                    bytes: show()?,
                    exec: Some(executable.contains(path)),
                }
            }
            'L' => match self.link_target(commit, path)? {
                Some(target) => Side::Link(target),
                None => Side::Other,
            },
            'C' => Side::Conflict(show()?),
            _ => Side::Other,
        })
    }

    /// The target of the symlink `path` in `commit` (`jj file show` prints nothing for a
    /// symlink), read from the backing git repository when the commit has no conflict (its
    /// git tree is then its tree); `None` when it cannot be read so.
    fn link_target(&self, commit: &str, path: &str) -> Result<Option<Vec<u8>>> {
        let conflicted = self
            .query()?
            .args(["log", "--no-graph", "-T", "conflict", "-r", commit])
            .stdout()?;
        if conflicted.trim() != "false" {
            return Ok(None);
        }
        let Ok(git) = self.git() else {
            return Ok(None);
        };
        Ok(git
            .args(["cat-file", "blob"])
            .arg(format!("{commit}:{path}"))
            .stdout_bytes()
            .ok())
    }

    /// The executable files of `commit`, in one call.
    fn executables(&self, commit: &str) -> Result<HashSet<String>> {
        let out = self
            .query()?
            .args(["file", "list", "-r", commit, "-T"])
            .arg(r#"if(executable, path ++ "\0", "")"#)
            .stdout_bytes()?;
        Ok(out
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect())
    }
}

/// Parses `jj diff --types` output: two type letters, a space, the path.
/// Per changed path: its status, then source path and type, then target path and type, each
/// field ending with NUL (which no path holds).
const DIFF_TEMPLATE: &str = r#"status ++ "\0" ++ source.path() ++ "\0" ++ source.file_type() ++ "\0" ++ target.path() ++ "\0" ++ target.file_type() ++ "\0""#;

/// Parses [`DIFF_TEMPLATE`] output into (path, type before, type after).
fn parse_diff(out: &[u8]) -> Vec<(String, char, char)> {
    let text = String::from_utf8_lossy(out);
    let fields: Vec<&str> = text.split('\0').collect();
    let kind = |t: &str| match t {
        "" => '-',
        "file" => 'F',
        "symlink" => 'L',
        "conflict" => 'C',
        "git-submodule" => 'G',
        _ => 'T',
    };
    let mut paths = vec![];
    for entry in fields.chunks_exact(5) {
        let status = entry[0].trim_start_matches('\n');
        let (source, before, target, after) = (entry[1], kind(entry[2]), entry[3], kind(entry[4]));
        match status {
            "renamed" => {
                paths.push((source.to_string(), before, '-'));
                paths.push((target.to_string(), '-', after));
            }
            // A copy leaves its source as it was.
            "copied" => paths.push((target.to_string(), '-', after)),
            _ if !target.is_empty() => paths.push((target.to_string(), before, after)),
            _ => {}
        }
    }
    paths
}

/// `path` as a relative path of normal components only (jj never names another kind).
fn safe_relative(path: &str) -> Option<PathBuf> {
    let rel = Path::new(path);
    rel.components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then(|| rel.to_path_buf())
}

/// The file at `path` on disk, never following a symlink.
fn read_disk(path: &Path) -> io::Result<Side> {
    let meta = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Side::Absent),
        other => other?,
    };
    Ok(if meta.file_type().is_symlink() {
        Side::Link(fs::read_link(path)?.as_os_str().as_bytes().to_vec())
    } else if meta.is_file() {
        Side::File {
            bytes: fs::read(path)?,
            exec: Some(meta.permissions().mode() & 0o111 != 0),
        }
    } else {
        Side::Other
    })
}

/// The three-way merge of an edit (`ours`, saved at `saved`) with the update (`theirs`) on
/// the recorded `base`. Text is merged line by line (`git merge-file`); anything else merges
/// only when one side left it as it was.
fn merge(base: &Side, ours: &Side, theirs: &Side, saved: &Path, scratch: &Path) -> Result<Outcome> {
    if same(theirs, base) {
        return Ok(Outcome::Write(ours.clone()));
    }
    let (Side::File { .. }, Side::File { exec, .. }) = (ours, theirs) else {
        return Ok(Outcome::Conflict);
    };
    let (Some(base_text), Some(_), Some(theirs_text)) = (base.text(), ours.text(), theirs.text())
    else {
        return Ok(Outcome::Conflict);
    };
    let Ok(git) = crate::exec::process::find("git") else {
        return Ok(Outcome::Conflict);
    };
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| VcsError::Io {
            action: "write a version to merge",
            path,
            source,
        }
    };
    fs::create_dir_all(scratch).map_err(io(scratch))?;
    let (base_file, theirs_file) = (scratch.join("base"), scratch.join("theirs"));
    fs::write(&base_file, base_text).map_err(io(&base_file))?;
    fs::write(&theirs_file, theirs_text).map_err(io(&theirs_file))?;
    let merged = Call::new(git)
        .args(["merge-file", "-p", "-q"])
        .arg(saved)
        .arg(&base_file)
        .arg(&theirs_file)
        .stdout_bytes();
    // The mode: the edit's when the edit changed it, else the update's.
    let exec = match (ours.exec(), base.exec()) {
        (Some(o), Some(b)) if o != b => Some(o),
        _ => *exec,
    };
    match merged {
        Ok(bytes) => Ok(Outcome::Write(Side::File { bytes, exec })),
        // git merge-file exits with the number of conflicts (at most 127).
        Err(ProcessError::Failed {
            code: Some(1..=127),
            ..
        }) => Ok(Outcome::Conflict),
        Err(e) => Err(VcsError::Carry {
            action: "merge an unrecorded edit of",
            path: saved.to_path_buf(),
            source: Box::new(CarryFailure::Process(e)),
            kept: saved.to_path_buf(),
            resumes: true,
        }),
    }
}

/// Writes `side` at `rel` inside `ws`, replacing what is there; returns false (writing
/// nothing) when a directory on the way is not a real directory inside the workspace.
fn write_side(ws: &Path, rel: &Path, side: &Side) -> io::Result<bool> {
    let target = ws.join(rel);
    let mut dir = ws.to_path_buf();
    for part in rel.parent().into_iter().flat_map(Path::components) {
        dir.push(part);
        match fs::symlink_metadata(&dir) {
            Ok(m) if m.is_dir() => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => fs::create_dir(&dir)?,
            Ok(_) => return Ok(false),
            Err(e) => return Err(e),
        }
    }
    let name = rel.file_name().unwrap_or_default().to_string_lossy();
    let tmp = target.with_file_name(format!(".{name}.aw-carry"));
    if fs::symlink_metadata(&tmp).is_ok() {
        crate::store::tree::remove(&tmp)?;
    }
    match side {
        Side::Absent => {
            if fs::symlink_metadata(&target).is_ok() {
                crate::store::tree::remove(&target)?;
            }
            return Ok(true);
        }
        Side::File { bytes, exec } => {
            fs::write(&tmp, bytes)?;
            let mode = if exec.unwrap_or(false) { 0o755 } else { 0o644 };
            fs::set_permissions(&tmp, fs::Permissions::from_mode(mode))?;
        }
        Side::Link(to) => std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(to), &tmp)?,
        Side::Conflict(_) | Side::Other => return Ok(false),
    }
    if matches!(fs::symlink_metadata(&target), Ok(m) if m.is_dir()) {
        crate::store::tree::remove(&target)?;
    }
    fs::rename(&tmp, &target)?;
    Ok(true)
}

/// Keeps the saved version of `rel` (when the workspace had one) in `kept`.
fn keep(saved: &Path, ours: &Side, kept: &Path, rel: &Path, path: &str) -> Result<StaleEdit> {
    if *ours == Side::Absent {
        return Ok(StaleEdit {
            path: path.to_string(),
            kept: None,
        });
    }
    let dest = kept.join(rel);
    let copy = || -> io::Result<()> {
        if let Some(parent) = dest.parent() {
            fs::create_dir_all(parent)?;
        }
        if fs::symlink_metadata(&dest).is_ok() {
            crate::store::tree::remove(&dest)?;
        }
        crate::store::tree::copy_entry(saved, &dest)
    };
    copy().map_err(|source| VcsError::Io {
        action: "keep an unrecorded edit in",
        path: dest.clone(),
        source,
    })?;
    Ok(StaleEdit {
        path: path.to_string(),
        kept: Some(dest),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_paths_are_parsed_with_renames_as_two_paths() {
        let out = concat!(
            "modified\0a.txt\0file\0a.txt\0file\0",
            "added\0sub/new file\0\0sub/new file\0file\0",
            "modified\0c\0conflict\0c\0file\0",
            "renamed\0s1.txt\0file\0moved/s1 {x => y}.txt\0symlink\0",
            "copied\0a.txt\0file\0b.txt\0file\0",
            "removed\0gone\0git-submodule\0gone\0\0"
        );
        assert_eq!(
            parse_diff(out.as_bytes()),
            [
                ("a.txt".to_string(), 'F', 'F'),
                ("sub/new file".to_string(), '-', 'F'),
                ("c".to_string(), 'C', 'F'),
                ("s1.txt".to_string(), 'F', '-'),
                ("moved/s1 {x => y}.txt".to_string(), '-', 'L'),
                ("b.txt".to_string(), '-', 'F'),
                ("gone".to_string(), 'G', '-'),
            ]
        );
    }

    #[test]
    fn materialized_conflicts_are_not_edits() {
        let markers = b"<<<<<<< conflict 1 of 1\n".to_vec();
        let disk = Side::File {
            bytes: markers.clone(),
            exec: Some(false),
        };
        assert!(same(&disk, &Side::Conflict(markers)));
        assert!(!same(&disk, &Side::Absent));
        let exec = Side::File {
            bytes: vec![],
            exec: Some(true),
        };
        let plain = Side::File {
            bytes: vec![],
            exec: Some(false),
        };
        assert!(!same(&exec, &plain));
    }

    #[test]
    fn only_plain_relative_paths_are_written() {
        assert!(safe_relative("a/b").is_some());
        assert!(safe_relative("../a").is_none());
        assert!(safe_relative("/etc/passwd").is_none());
    }
}
