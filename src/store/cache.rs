//! One way to keep derived data between commands: a file holding a body under a key,
//! versioned, checksummed and written atomically. Whatever is not exactly what this version
//! wrote for that key (missing, torn, another version, another key, a checksum that does not
//! match, a symlink or a FIFO planted there, too big) is a miss, never an error: the caller
//! computes the answer again and keeps it.
//!
//! The file is one header line, then the key, then the body:
//! `agent-workspace cache <name> v<version> <key bytes> <body bytes> <sha256 of key and body>\n`.

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
        let bytes = fsutil::read_untrusted(&self.path, fsutil::UNTRUSTED_LIMIT).ok()?;
        let newline = bytes.iter().position(|&b| b == b'\n')?;
        let header = std::str::from_utf8(&bytes[..newline]).ok()?;
        let rest = &bytes[newline + 1..];
        let words: Vec<&str> = header.split(' ').collect();
        let ["agent-workspace", "cache", name, version, key_len, body_len, sum] = words[..] else {
            return None;
        };
        let (key_len, body_len): (usize, usize) = (key_len.parse().ok()?, body_len.parse().ok()?);
        let whole = name == self.name
            && version == format!("v{}", self.version)
            && rest.len() == key_len.checked_add(body_len)?
            && &rest[..key_len] == key
            && sum == checksum(rest);
        whole.then(|| rest[key_len..].to_vec())
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
            "agent-workspace cache {} v{} {} {} {}\n",
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

fn checksum(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::Cache;

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
}
