//! A worktree's untracked files counted as `git diff --numstat` counts a new file, without
//! adding them to an index: a line is what ends with a newline, plus an unterminated last
//! one; a NUL byte in the first 8,000 bytes makes a file binary; a symlink is the text of
//! its target (never followed).
//!
//! That is git's count only where nothing can change it. Anything that could is left to
//! git (`None`): an attributes file that names a diff driver, a filter, an encoding, binary
//! or a macro, and every configuration git could read one from (or a different big-file
//! threshold) that this cannot see; a file that is no regular file or symlink, a nested
//! repository, a file bigger than [`LIMIT`], or one that cannot be opened beneath the
//! worktree without following a symlink.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};

use crate::vcs::diff::{FileChange, FileStatus};

/// The biggest file counted here; git counts a bigger one.
const LIMIT: u64 = 32 << 20;

/// git calls a file binary when one of its first this many bytes is NUL.
const FIRST_FEW_BYTES: usize = 8000;

/// Words that, in an attributes file, may change how git counts a file's lines or whether it
/// is binary (`text`, `eol` and `crlf` only turn CRLF into LF, which keeps every line).
const ATTRIBUTE_WORDS: [&str; 5] = ["diff", "binary", "filter", "encoding", "[attr]"];

/// Words that, in a configuration file, may name another attributes file or threshold, or
/// bring in another configuration file.
const CONFIG_WORDS: [&str; 3] = ["attr", "bigfilethreshold", "include"];

/// Environment variables through which git could read other configuration or attributes.
const ENV: [&str; 7] = [
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG",
    "GIT_ATTR_SOURCE",
    "GIT_DIR",
];

/// Where git reads a worktree's configuration and attributes besides the worktree itself.
pub(super) struct Sources {
    /// The worktree's own git directory and the repository's common one.
    pub git_dir: PathBuf,
    pub common_dir: PathBuf,
    /// The git binary run (its installation prefix has the system files).
    pub git: PathBuf,
}

/// The untracked files `listed` (`ls-files -z --others`) of the worktree at `ws`, each a
/// created file with git's count of its lines; `None` where git must count.
pub(super) fn count(ws: &Path, listed: &str, sources: &Sources) -> Option<Vec<FileChange>> {
    let paths: Vec<&str> = listed.split('\0').filter(|p| !p.is_empty()).collect();
    if paths.is_empty() {
        return Some(vec![]);
    }
    if !outside_sources_clear(sources) {
        return None;
    }
    let root = rustix::fs::open(
        ws,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let mut dirs: HashMap<String, bool> = HashMap::new();
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        // A repository inside the worktree is listed as its directory.
        if path.ends_with('/') {
            return None;
        }
        if !attributes_clear(&root, path, &mut dirs) {
            return None;
        }
        let (lines, binary) = count_one(&root, path)?;
        files.push(FileChange {
            path: path.to_string(),
            old_path: None,
            status: FileStatus::Created,
            added: lines,
            removed: 0,
            binary,
        });
    }
    Some(files)
}

/// git's count of `bytes` as a new file: its lines, or binary.
fn lines(bytes: &[u8]) -> (u64, bool) {
    if bytes[..bytes.len().min(FIRST_FEW_BYTES)].contains(&0) {
        return (0, true);
    }
    let ends = bytes.iter().filter(|b| **b == b'\n').count() as u64;
    let unterminated = !bytes.is_empty() && !bytes.ends_with(b"\n");
    (ends + u64::from(unterminated), false)
}

/// The resolution every open here uses: beneath the worktree, through no symlink.
fn beneath() -> ResolveFlags {
    ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS
}

/// Opens `path` beneath `root` for reading, without following a symlink or waiting on a
/// FIFO; `Err` with the errno on failure (`LOOP` for a symlink).
fn open_beneath(root: &OwnedFd, path: &str, flags: OFlags) -> rustix::io::Result<OwnedFd> {
    // `openat2` refuses any flag but these beside `O_PATH`.
    let extra = match flags.contains(OFlags::PATH) {
        true => OFlags::empty(),
        false => OFlags::NOCTTY,
    };
    rustix::fs::openat2(
        root,
        path,
        flags | extra | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
        beneath(),
    )
}

/// The count of the untracked file `path`; `None` where git must count it.
fn count_one(root: &OwnedFd, path: &str) -> Option<(u64, bool)> {
    match open_beneath(root, path, OFlags::RDONLY | OFlags::NONBLOCK) {
        Ok(fd) => read_regular(fd).map(|bytes| lines(&bytes)),
        // The last component is a symlink (or one is above it: then git counts).
        Err(rustix::io::Errno::LOOP) => {
            let fd = open_beneath(root, path, OFlags::PATH).ok()?;
            let stat = rustix::fs::fstat(&fd).ok()?;
            if FileType::from_raw_mode(stat.st_mode) != FileType::Symlink {
                return None;
            }
            let target = rustix::fs::readlinkat(&fd, "", Vec::new()).ok()?;
            Some(lines(target.as_bytes()))
        }
        Err(_) => None,
    }
}

/// The bytes of the regular file open at `fd`, when it is one no bigger than [`LIMIT`].
fn read_regular(fd: OwnedFd) -> Option<Vec<u8>> {
    let file = File::from(fd);
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > LIMIT {
        return None;
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(LIMIT + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= LIMIT).then_some(bytes)
}

/// Whether no `.gitattributes` in a directory above `path` (the worktree's root included)
/// may change its count; `dirs` keeps each directory's answer.
fn attributes_clear(root: &OwnedFd, path: &str, dirs: &mut HashMap<String, bool>) -> bool {
    let mut dir = String::new();
    let mut parts = path.split('/').peekable();
    while let Some(part) = parts.next() {
        let clear = *dirs.entry(dir.clone()).or_insert_with(|| {
            let file = format!("{dir}.gitattributes");
            match open_beneath(root, &file, OFlags::RDONLY | OFlags::NONBLOCK) {
                Ok(fd) => read_regular(fd).is_some_and(|text| !mentions(&text, &ATTRIBUTE_WORDS)),
                Err(rustix::io::Errno::NOENT) => true,
                Err(_) => false,
            }
        });
        if !clear {
            return false;
        }
        if parts.peek().is_none() {
            break;
        }
        dir.push_str(part);
        dir.push('/');
    }
    true
}

/// Whether no configuration or attributes file outside the worktree may change a count.
fn outside_sources_clear(sources: &Sources) -> bool {
    if ENV
        .iter()
        .any(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()))
    {
        return false;
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    let prefix = sources
        .git
        .parent()
        .and_then(Path::parent)
        .map(|p| p.join("etc"));
    let mut attributes = vec![
        sources.common_dir.join("info/attributes"),
        sources.git_dir.join("info/attributes"),
        PathBuf::from("/etc/gitattributes"),
    ];
    let mut configs = vec![
        sources.common_dir.join("config"),
        sources.common_dir.join("config.worktree"),
        sources.git_dir.join("config.worktree"),
        PathBuf::from("/etc/gitconfig"),
    ];
    if let Some(xdg) = &xdg {
        attributes.push(xdg.join("git/attributes"));
        configs.push(xdg.join("git/config"));
    }
    if let Some(home) = &home {
        configs.push(home.join(".gitconfig"));
    }
    if let Some(prefix) = &prefix {
        attributes.push(prefix.join("gitattributes"));
        configs.push(prefix.join("gitconfig"));
    }
    let clear = |path: &PathBuf, words: &[&str]| match std::fs::read(path) {
        Ok(text) => !mentions(&text, words),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    };
    attributes.iter().all(|p| clear(p, &ATTRIBUTE_WORDS))
        && configs.iter().all(|p| clear(p, &CONFIG_WORDS))
}

/// Whether `text` has one of `words`, ignoring ASCII case.
fn mentions(text: &[u8], words: &[&str]) -> bool {
    let lower = text.to_ascii_lowercase();
    words.iter().any(|word| {
        lower
            .windows(word.len())
            .any(|window| window == word.as_bytes())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_as_git_counts_them() {
        assert_eq!(lines(b""), (0, false));
        assert_eq!(lines(b"a"), (1, false));
        assert_eq!(lines(b"a\n"), (1, false));
        assert_eq!(lines(b"a\nb"), (2, false));
        assert_eq!(lines(b"\n\n"), (2, false));
        assert_eq!(lines(b"a\r\nb\r"), (2, false));
        assert_eq!(lines(b"a\0"), (0, true));
        let mut late = vec![b'x'; FIRST_FEW_BYTES];
        late.push(0);
        assert_eq!(lines(&late), (1, false));
    }

    #[test]
    fn words() {
        assert!(mentions(b"*.png -DIFF\n", &ATTRIBUTE_WORDS));
        assert!(mentions(b"[include]\n\tpath = x\n", &CONFIG_WORDS));
        assert!(!mentions(b"* text=auto eol=lf\n", &ATTRIBUTE_WORDS));
        assert!(!mentions(b"[core]\n\tbare = false\n", &CONFIG_WORDS));
    }
}
