//! One way to keep derived data between commands: a file holding a body under a key,
//! versioned, checksummed and written atomically. Whatever is not exactly what this version
//! wrote for that key (missing, torn, another version, another key, a checksum that does not
//! match, a symlink or a FIFO planted there, too big) is a miss, never an error: the caller
//! computes the answer again and keeps it.
//!
//! The file is one header line, then the key, then the body:
//! `agent-workspace cache <name> v<version> <key bytes> <body bytes> <sha256 of key and body>\n`.
//! The file's name may carry a version of its own from before this form; the header's is the
//! one that counts. A body is bytes, or a value as JSON ([`Cache::get_json`]); state that must
//! survive an upgrade reads a file of no cache form at all once more in its earlier format
//! ([`Cache::find`]'s [`Found::Earlier`]), and never a damaged one.

use std::path::PathBuf;

use sha2::{Digest, Sha256};

use crate::store::fsutil;

/// A kept file of derived data (see the module's documentation).
#[derive(Debug, Clone)]
pub(crate) struct Cache {
    path: PathBuf,
    name: &'static str,
    version: u32,
}

impl Cache {
    /// The cache at `path`, whose content is `name` (one word) of format `version`: a file
    /// another version wrote is a miss.
    pub(crate) fn new(path: PathBuf, name: &'static str, version: u32) -> Cache {
        Cache {
            path,
            name,
            version,
        }
    }

    /// The body kept under `key`, when the file holds exactly that.
    pub(crate) fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        match self.find(key) {
            Found::Kept(body) => Some(body),
            Found::Earlier(_) | Found::Nothing => None,
        }
    }

    /// What the file holds: the body kept under `key`, or the whole of a file in a form
    /// older than this primitive (no cache header at all: what a caller whose state must
    /// survive an upgrade reads once more in its earlier format), or nothing usable. A file
    /// with a cache header that is not exactly what this version wrote for `key` (torn,
    /// changed, another name, version or key) is nothing: never read as an earlier form.
    pub(crate) fn find(&self, key: &[u8]) -> Found {
        let Ok(mut bytes) = fsutil::read_untrusted(&self.path, fsutil::UNTRUSTED_LIMIT) else {
            return Found::Nothing;
        };
        if !bytes.starts_with(MAGIC.as_bytes()) {
            return Found::Earlier(bytes);
        }
        match self.body_at(&bytes, key) {
            Some(start) => {
                bytes.drain(..start);
                Found::Kept(bytes)
            }
            None => Found::Nothing,
        }
    }

    /// Where the body starts in `bytes`, when they are exactly what this version wrote for
    /// `key`.
    fn body_at(&self, bytes: &[u8], key: &[u8]) -> Option<usize> {
        let newline = bytes.iter().position(|&b| b == b'\n')?;
        let header = std::str::from_utf8(&bytes[..newline]).ok()?;
        let rest = &bytes[newline + 1..];
        let words: Vec<&str> = header.split(' ').collect();
        let ["agent-workspace", "cache", name, version, key_len, body_len, sum] = words[..] else {
            return None;
        };
        let (key_len, body_len): (usize, usize) = (key_len.parse().ok()?, body_len.parse().ok()?);
        let whole = name == self.name
            && version.strip_prefix('v') == Some(self.version.to_string().as_str())
            && rest.len() == key_len.checked_add(body_len)?
            && &rest[..key_len] == key
            && sum == checksum(rest);
        whole.then_some(newline + 1 + key_len)
    }

    /// The value kept under `key` as JSON, when the file holds exactly that and it reads as
    /// a `T` (a body that does not is a miss, as a torn one is).
    pub(crate) fn get_json<T: serde::de::DeserializeOwned>(&self, key: &[u8]) -> Option<T> {
        serde_json::from_slice(&self.get(key)?).ok()
    }

    /// Keeps `value` under `key` as JSON (see [`Cache::put`]).
    pub(crate) fn put_json<T: serde::Serialize + ?Sized>(
        &self,
        key: &[u8],
        value: &T,
    ) -> fsutil::Result<()> {
        // Serializing plain data into memory cannot fail; were it to, nothing is kept.
        let body = serde_json::to_vec(value).unwrap_or_default();
        self.put(key, &body)
    }

    /// [`Cache::get`] of a UTF-8 body.
    pub(crate) fn get_string(&self, key: &str) -> Option<String> {
        String::from_utf8(self.get(key.as_bytes())?).ok()
    }

    /// Keeps `body` under `key`, replacing whatever was kept (atomically: a reader sees the
    /// old file or the new one). A failure to write is only a miss next time.
    pub(crate) fn put(&self, key: &[u8], body: &[u8]) -> fsutil::Result<()> {
        let mut rest = Vec::with_capacity(key.len() + body.len());
        rest.extend_from_slice(key);
        rest.extend_from_slice(body);
        let header = format!(
            "{MAGIC}{} v{} {} {} {}\n",
            self.name,
            self.version,
            key.len(),
            body.len(),
            checksum(&rest)
        );
        let mut bytes = header.into_bytes();
        bytes.extend_from_slice(&rest);
        fsutil::write_atomic(&self.path, &bytes)
    }
}

impl Cache {
    /// Removes the kept file (its name: a symlink there is removed, never followed).
    pub(crate) fn forget(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// What [`Cache::find`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// The body kept under the key asked for.
    Kept(Vec<u8>),
    /// A regular file with no cache header at all: written before this primitive, whole.
    Earlier(Vec<u8>),
    /// No file, or one that is not exactly what this version wrote for that key.
    Nothing,
}

/// How every kept file begins.
const MAGIC: &str = "agent-workspace cache ";

fn checksum(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::{Cache, Found};

    fn cache(dir: &tempfile::TempDir, version: u32) -> Cache {
        Cache::new(dir.path().join("c"), "test", version)
    }

    #[test]
    fn a_body_comes_back_under_its_key_only() {
        let dir = tempfile::tempdir().unwrap();
        let c = cache(&dir, 1);
        assert_eq!(c.get(b"k"), None, "nothing kept yet");
        c.put(b"k", b"body\nwith lines").unwrap();
        assert_eq!(c.get(b"k").as_deref(), Some(&b"body\nwith lines"[..]));
        assert_eq!(c.get(b"other"), None, "another key");
        assert_eq!(cache(&dir, 2).get(b"k"), None, "another version");
        assert_eq!(
            Cache::new(dir.path().join("c"), "else", 1).get(b"k"),
            None,
            "another name"
        );
        c.put(b"k", b"").unwrap();
        assert_eq!(c.get_string("k").as_deref(), Some(""), "an empty body");
    }

    #[test]
    fn a_torn_or_changed_file_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let c = cache(&dir, 1);
        c.put(b"key", b"the body").unwrap();
        let path = dir.path().join("c");
        let whole = std::fs::read(&path).unwrap();
        for cut in [1, whole.len() / 2, whole.len() - 1] {
            std::fs::write(&path, &whole[..cut]).unwrap();
            assert_eq!(c.get(b"key"), None, "cut at {cut}");
        }
        let mut changed = whole.clone();
        let last = changed.len() - 1;
        changed[last] ^= 1;
        std::fs::write(&path, &changed).unwrap();
        assert_eq!(c.get(b"key"), None, "a changed byte");
        let mut longer = whole.clone();
        longer.push(b'x');
        std::fs::write(&path, &longer).unwrap();
        assert_eq!(c.get(b"key"), None, "a byte more");
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &path).unwrap();
        std::fs::write(dir.path().join("elsewhere"), &whole).unwrap();
        assert_eq!(c.get(b"key"), None, "a symlink is never followed");
    }

    #[test]
    fn a_checksum_that_does_not_match_or_another_version_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let c = cache(&dir, 3);
        c.put(b"key", b"the body").unwrap();
        let path = dir.path().join("c");
        let whole = std::fs::read_to_string(&path).unwrap();
        // The body changed with its length kept: only the checksum tells.
        std::fs::write(&path, whole.replace("the body", "the bodY")).unwrap();
        assert_eq!(c.get(b"key"), None, "a body that is not the one summed");
        // The same bytes under another version's header (its checksum is right).
        std::fs::write(&path, whole.replacen(" v3 ", " v2 ", 1)).unwrap();
        assert_eq!(c.get(b"key"), None, "an earlier version");
        assert_eq!(
            cache(&dir, 2).get(b"key").as_deref(),
            Some(&b"the body"[..])
        );
        std::fs::write(&path, whole.replacen(" v3 ", " v03 ", 1)).unwrap();
        assert_eq!(c.get(b"key"), None, "a version written otherwise");
        assert_eq!(
            c.find(b"key"),
            Found::Nothing,
            "a cache file is never earlier"
        );
    }

    #[test]
    fn a_put_replaces_the_file_whole_and_never_writes_through_a_symlink() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let c = cache(&dir, 1);
        let path = dir.path().join("c");
        c.put(b"k", b"one").unwrap();
        let before = std::fs::metadata(&path).unwrap().ino();
        c.put(b"k", b"two").unwrap();
        assert_ne!(
            std::fs::metadata(&path).unwrap().ino(),
            before,
            "a new file"
        );
        assert_eq!(c.get(b"k").as_deref(), Some(&b"two"[..]));
        // No temporary file is left beside it.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
        // A symlink planted at its name is replaced, its target left as it was.
        let target = dir.path().join("target");
        std::fs::write(&target, "theirs").unwrap();
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&target, &path).unwrap();
        c.put(b"k", b"three").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "theirs");
        assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
        assert_eq!(c.get(b"k").as_deref(), Some(&b"three"[..]));
        c.forget();
        assert_eq!(c.get(b"k"), None);
        assert!(target.exists());
    }

    #[test]
    fn a_value_comes_back_as_json_and_a_body_of_another_shape_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let c = cache(&dir, 1);
        let value = vec![("a".to_string(), 1u32), ("b\n".to_string(), 2)];
        c.put_json(b"k", &value).unwrap();
        assert_eq!(c.get_json::<Vec<(String, u32)>>(b"k"), Some(value));
        assert_eq!(c.get_json::<Vec<(String, u32)>>(b"other"), None);
        c.put(b"k", b"not json").unwrap();
        assert_eq!(c.get_json::<Vec<(String, u32)>>(b"k"), None);
    }

    #[test]
    fn a_file_of_no_cache_form_is_found_as_earlier_and_is_never_a_hit() {
        let dir = tempfile::tempdir().unwrap();
        let c = cache(&dir, 1);
        assert_eq!(c.find(b""), Found::Nothing, "no file");
        let path = dir.path().join("c");
        std::fs::write(&path, "commit abc\n").unwrap();
        assert_eq!(c.find(b""), Found::Earlier(b"commit abc\n".to_vec()));
        assert_eq!(c.get(b""), None);
        c.put(b"", b"new").unwrap();
        assert_eq!(c.find(b""), Found::Kept(b"new".to_vec()));
        // A cache header cut short is not an earlier form.
        std::fs::write(&path, "agent-workspace cache ").unwrap();
        assert_eq!(c.find(b""), Found::Nothing);
        // Nor is a symlink to an earlier form's text.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(dir.path().join("old"), "commit abc\n").unwrap();
        std::os::unix::fs::symlink(dir.path().join("old"), &path).unwrap();
        assert_eq!(c.find(b""), Found::Nothing);
    }
}
