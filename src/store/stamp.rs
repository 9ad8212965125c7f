//! A file as `stat` sees it, the one form in which every kept file says what it stands on.
//!
//! A stamp is the file's device, inode, size, modification and change times (seconds and
//! nanoseconds). Every save agent-workspace makes replaces a file (a new inode), and any
//! write in place moves its change time, which nobody but the kernel can set; so while a
//! file's stamp is the same, so is the file. A file whose change time is within
//! [`SETTLED`] of the moment a command began is never trusted that way: a second change in
//! the same clock tick could leave its times alike ([`Stamp::settled`]).
//!
//! Kept, a stamp is its seven numbers (a JSON array inside a [`crate::store::cache`] body).

use std::os::fd::OwnedFd;
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

/// How long after its last change a file's times are trusted to tell every later change.
pub(crate) const SETTLED: Duration = Duration::from_secs(2);

/// A file's device, inode, size, modification and change times (see the module's
/// documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct Stamp([i64; 7]);

impl Stamp {
    /// The stamp of seven numbers in the order above.
    #[cfg(test)]
    pub(crate) fn new(numbers: [i64; 7]) -> Stamp {
        Stamp(numbers)
    }

    /// The stamp of `name` under the directory `dir`, never following a symlink at its end;
    /// `None` when there is no such file (or it cannot be looked at).
    pub(crate) fn at(dir: &OwnedFd, name: &str) -> Option<Stamp> {
        let st = rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).ok()?;
        Some(Stamp([
            st.st_dev as i64,
            st.st_ino as i64,
            st.st_size,
            st.st_mtime,
            st.st_mtime_nsec as i64,
            st.st_ctime,
            st.st_ctime_nsec as i64,
        ]))
    }

    /// The stamp of the file `path` leads to (following symlinks: a file an `.envrc`
    /// watches is the user's, wherever it is), `None` when it is not there; `Err` when that
    /// cannot be told (a permission error): such a file is never trusted to be unchanged.
    pub(crate) fn of_path(path: &Path) -> Result<Option<Stamp>, ()> {
        use std::os::unix::fs::MetadataExt;
        match std::fs::metadata(path) {
            Ok(m) => Ok(Some(Stamp([
                m.dev() as i64,
                m.ino() as i64,
                m.size() as i64,
                m.mtime(),
                m.mtime_nsec(),
                m.ctime(),
                m.ctime_nsec(),
            ]))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(_) => Err(()),
        }
    }

    /// Its modification time, in whole seconds.
    pub(crate) fn modified_secs(&self) -> i64 {
        self.0[3]
    }

    /// Whether the file last changed (by its change time, which nobody but the kernel
    /// sets) at least [`SETTLED`] before `began`: only then do its times tell every later
    /// change.
    pub(crate) fn settled(&self, began: SystemTime) -> bool {
        let changed = SystemTime::UNIX_EPOCH
            + Duration::new(
                u64::try_from(self.0[5]).unwrap_or(u64::MAX / 2),
                u32::try_from(self.0[6]).unwrap_or(0),
            );
        changed + SETTLED < began
    }
}

/// The directory at `path` opened to stamp the files under it, never through a symlink.
pub(crate) fn open_dir(path: &Path) -> rustix::io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_is_kept_as_its_seven_numbers() {
        let stamp = Stamp::new([1, -1, 0, i64::MAX, i64::MIN, 6, 7]);
        let text = serde_json::to_string(&stamp).unwrap();
        assert_eq!(text, format!("[1,-1,0,{},{},6,7]", i64::MAX, i64::MIN));
        assert_eq!(serde_json::from_str::<Stamp>(&text).unwrap(), stamp);
        for bad in ["[1,2,3,4,5,6]", "[1,2,3,4,5,6,7,8]", "\"1,2,3,4,5,6,7\""] {
            assert!(serde_json::from_str::<Stamp>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_file_is_settled_two_seconds_after_its_last_change() {
        let changed_at = |secs: i64| Stamp::new([0, 0, 0, 0, 0, secs, 0]);
        let began = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        assert!(changed_at(997).settled(began));
        assert!(!changed_at(998).settled(began));
        assert!(!changed_at(2_000).settled(began), "a change in the future");
    }

    #[test]
    fn a_symlink_is_stamped_as_itself_by_name_and_followed_by_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), "x").unwrap();
        std::os::unix::fs::symlink("file", dir.path().join("link")).unwrap();
        let fd = open_dir(dir.path()).unwrap();
        let (file, link) = (Stamp::at(&fd, "file"), Stamp::at(&fd, "link"));
        assert!(file.is_some() && link.is_some());
        assert_ne!(file, link);
        assert_eq!(Stamp::of_path(&dir.path().join("link")), Ok(file));
        assert_eq!(Stamp::at(&fd, "missing"), None);
        assert_eq!(Stamp::of_path(&dir.path().join("missing")), Ok(None));
    }
}
