//! Repositories an agent nested in its workspace (a `.git` or `.jj` it made), moved out of
//! the workspace into the namespace's kept-aside directory: `<namespace>/.kept/<id>-<stamp>/`,
//! each at its path relative to the workspace (`sub/.git`). Left inside under another name
//! they would be ordinary files to jj and git, which a checkpoint records and `land` brings.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};

/// Where a `.git` or `.jj` an agent made now is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MovedAside {
    /// Out of the workspace, in the kept-aside directory.
    Kept(PathBuf),
    /// Renamed in place (`<name>.from-sandbox`, numbered when taken): the kept-aside
    /// directory could not take it (on another file system, say); `why` says what failed.
    InPlace { path: PathBuf, why: String },
}

impl MovedAside {
    /// Where it now is.
    pub(crate) fn path(&self) -> &Path {
        match self {
            MovedAside::Kept(path) | MovedAside::InPlace { path, .. } => path,
        }
    }
}

/// One pass's destination for the repositories an agent nested in the workspace at `ws`:
/// a fresh `<kept_root>/<id>-<stamp>/`, made when the first one is moved into it.
pub(crate) struct KeptAside {
    ws: PathBuf,
    kept_root: PathBuf,
    id: String,
    dest: Option<PathBuf>,
}

impl KeptAside {
    pub(crate) fn new(ws: &Path, kept_root: PathBuf, id: &str) -> KeptAside {
        KeptAside {
            ws: ws.to_path_buf(),
            kept_root,
            id: id.to_string(),
            dest: None,
        }
    }

    /// Moves the `name` (`.git`, `.jj`) in `dir` (the workspace's root or a real directory
    /// below it, reached without following a link) to the kept-aside directory, at its
    /// relative path; one rename, so nothing is copied or lost, and a link is moved as a
    /// link. Where that fails (another file system: no rename crosses one), it is renamed in
    /// place as before and that is said. `None` when neither rename could be made.
    pub(crate) fn take(&mut self, dir: &Path, name: &OsStr) -> Option<MovedAside> {
        let why = match self.move_out(dir, name) {
            Ok(kept) => return Some(MovedAside::Kept(kept)),
            Err(why) => why,
        };
        let path = rename_in_place(dir, name)?;
        Some(MovedAside::InPlace { path, why })
    }

    fn move_out(&mut self, dir: &Path, name: &OsStr) -> Result<PathBuf, String> {
        let rel = dir
            .strip_prefix(&self.ws)
            .map_err(|_| format!("{} is not in the workspace", dir.display()))?;
        // The kept-aside directory is agent-workspace's own; a link in its place is never
        // followed.
        match fs::symlink_metadata(&self.kept_root) {
            Ok(meta) if !meta.file_type().is_dir() => {
                return Err(format!("{} is not a directory", self.kept_root.display()));
            }
            Ok(_) => {}
            Err(_) => fs::create_dir(&self.kept_root)
                .map_err(|e| format!("could not create {}: {e}", self.kept_root.display()))?,
        }
        let dest = match &self.dest {
            Some(dest) => dest.clone(),
            None => {
                let dest = crate::store::aside::fresh_dest(&self.kept_root, &self.id);
                fs::create_dir(&dest)
                    .map_err(|e| format!("could not create {}: {e}", dest.display()))?;
                self.dest = Some(dest.clone());
                dest
            }
        };
        // Only this pass writes below `dest`, which it made: no link is in the way.
        let parent = dest.join(rel);
        fs::create_dir_all(&parent)
            .map_err(|e| format!("could not create {}: {e}", parent.display()))?;
        let to = parent.join(name);
        if fs::symlink_metadata(&to).is_ok() {
            return Err(format!("{} is taken", to.display()));
        }
        let from = dir.join(name);
        match fs::rename(&from, &to) {
            Ok(()) => Ok(to),
            Err(e) => {
                remove_empty(&parent, &dest);
                Err(format!("could not move it to {}: {e}", to.display()))
            }
        }
    }
}

/// Removes `dir` and its parents up to `dest` while they are empty (made for a move that
/// then failed), `dest` too.
fn remove_empty(dir: &Path, dest: &Path) {
    let mut dir = dir.to_path_buf();
    while dir.starts_with(dest) && fs::remove_dir(&dir).is_ok() {
        if !dir.pop() {
            break;
        }
    }
}

/// Renames the `name` (`.git`, `.jj`) in `dir` to `<name>.from-sandbox` (numbered when
/// taken); the new path.
fn rename_in_place(dir: &Path, name: &OsStr) -> Option<PathBuf> {
    let mut stem: OsString = name.to_os_string();
    stem.push(".from-sandbox");
    let mut aside = dir.join(&stem);
    let mut n = 1;
    while fs::symlink_metadata(&aside).is_ok() {
        n += 1;
        let mut numbered = stem.clone();
        numbered.push(format!(".{n}"));
        aside = dir.join(numbered);
    }
    fs::rename(dir.join(name), &aside).ok().map(|()| aside)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_moved_aside_goes_to_one_kept_directory_at_its_relative_path() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("w");
        let kept_root = tmp.path().join(".kept");
        fs::create_dir_all(ws.join("sub/.git/objects")).unwrap();
        fs::write(ws.join("sub/.git/config"), "agent's").unwrap();
        fs::create_dir_all(ws.join("a/b")).unwrap();
        std::os::unix::fs::symlink("/nowhere", ws.join("a/b/.jj")).unwrap();
        let mut aside = KeptAside::new(&ws, kept_root.clone(), "w");
        let git = aside.take(&ws.join("sub"), ".git".as_ref()).unwrap();
        let jj = aside.take(&ws.join("a/b"), ".jj".as_ref()).unwrap();
        let MovedAside::Kept(git) = git else {
            panic!("{git:?}")
        };
        let MovedAside::Kept(jj) = jj else {
            panic!("{jj:?}")
        };
        let dest = git.parent().unwrap().parent().unwrap();
        assert_eq!(dest.parent(), Some(kept_root.as_path()));
        assert!(dest
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("w-"));
        assert!(crate::store::aside::kept_at(dest).is_some());
        assert_eq!(jj, dest.join("a/b/.jj"));
        assert_eq!(fs::read_to_string(git.join("config")).unwrap(), "agent's");
        assert!(git.join("objects").is_dir());
        assert!(fs::symlink_metadata(&jj).unwrap().file_type().is_symlink());
        assert!(fs::symlink_metadata(ws.join("sub/.git")).is_err());
        assert!(fs::symlink_metadata(ws.join("a/b/.jj")).is_err());
        assert_eq!(aside.take(&ws.join("sub"), ".git".as_ref()), None);
    }

    #[test]
    fn where_the_kept_directory_cannot_take_it_it_is_renamed_in_place() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("w");
        let kept_root = tmp.path().join(".kept");
        // A link where the kept-aside directory goes is never followed.
        let elsewhere = tmp.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &kept_root).unwrap();
        fs::create_dir_all(ws.join(".jj")).unwrap();
        fs::write(ws.join(".jj.from-sandbox"), "taken").unwrap();
        let mut aside = KeptAside::new(&ws, kept_root, "w");
        let moved = aside.take(&ws, ".jj".as_ref()).unwrap();
        let MovedAside::InPlace { path, why } = moved else {
            panic!("{moved:?}")
        };
        assert_eq!(path, ws.join(".jj.from-sandbox.2"));
        assert!(path.is_dir());
        assert!(why.contains("is not a directory"), "{why}");
        assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
    }
}
