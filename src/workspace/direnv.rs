//! direnv: finding it, allowing a workspace, and the policy for trusting its `.envrc`.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::exec::process::{Call, ProcessError};
use crate::store::fsutil;
use crate::store::kept_env::Read;
use crate::store::metadata::Record;
use crate::vcs::{Vcs, VcsError};
use crate::workspace::envrc_loads;

pub(crate) type Result<T> = std::result::Result<T, DirenvError>;

/// Why a workspace's environment is not loaded.
#[derive(Debug, thiserror::Error)]
pub enum DirenvError {
    /// The workspace has an `.envrc` but direnv is not on PATH.
    #[error("{} exists but direnv is not installed", envrc.display())]
    NotInstalled { envrc: PathBuf },
    /// The `.envrc` is neither the one allowed before nor the base revision's.
    #[error("{} differs from the .envrc of the workspace's base revision; not loading it", envrc.display())]
    EnvrcChanged { envrc: PathBuf },
    /// A file the `.envrc` loads changed since the workspace was created.
    #[error("{}, which {} loads, changed since the workspace was created; not loading the environment", file.display(), envrc.display())]
    LoadChanged { file: PathBuf, envrc: PathBuf },
    /// A file could not be read or resolved.
    #[error("could not {action} {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file an agent can write is not a regular file (a FIFO would hang direnv).
    #[error(transparent)]
    Unreadable(#[from] crate::store::fsutil::FsError),
    /// Asking the backend about the base revision failed.
    #[error(transparent)]
    Vcs(Box<VcsError>),
    /// `direnv allow` failed.
    #[error(transparent)]
    Allow(#[from] ProcessError),
}

impl From<VcsError> for DirenvError {
    fn from(err: VcsError) -> DirenvError {
        DirenvError::Vcs(Box::new(err))
    }
}

/// How a run loads its environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Loader {
    /// Run the command directly: no `.envrc`, or `--no-direnv`.
    Direct,
    /// Run through `direnv exec` with this binary.
    Direnv(PathBuf),
}

/// The sha256 of the workspace's `.envrc`, if it has one; an error when it is there but not
/// a regular file of a sane size (read without following a symlink or blocking).
pub(crate) fn envrc_digest(workspace: &Path) -> std::result::Result<Option<String>, DirenvError> {
    let envrc = workspace.join(".envrc");
    match fsutil::read_untrusted(&envrc, fsutil::UNTRUSTED_LIMIT) {
        Ok(bytes) => Ok(Some(format!("{:x}", Sha256::digest(&bytes)))),
        Err(e) if fsutil::is_missing(&e) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Decides how to load the environment of `record`'s workspace, allowing its `.envrc` when the
/// trust policy permits: unchanged since we allowed it, identical to the base revision's, or
/// `trust` given; and every file it loads that the workspace can change (see
/// [`crate::workspace::envrc_loads`]) unchanged since then too. Updates `record` with what was allowed.
pub(crate) fn prepare(
    record: &mut Record,
    vcs: &Vcs,
    no_direnv: bool,
    trust: bool,
) -> Result<Loader> {
    let ws = record.workspace_path.clone();
    if no_direnv {
        return Ok(Loader::Direct);
    }
    let Some(digest) = envrc_digest(&ws)? else {
        return Ok(Loader::Direct);
    };
    let envrc = ws.join(".envrc");
    let bin = crate::exec::process::find("direnv").map_err(|_| DirenvError::NotInstalled {
        envrc: envrc.clone(),
    })?;
    let loads = envrc_loads::current(&ws);
    let envrc_known = record.direnv_allowed && record.envrc_sha256.as_deref() == Some(&digest);
    if !trust && !envrc_known && !matches_base(&envrc, record, vcs)? {
        record.direnv_allowed = false;
        return Err(DirenvError::EnvrcChanged { envrc });
    }
    if !trust {
        if let Some(changed) = changed_load(&loads, record, vcs)? {
            record.direnv_allowed = false;
            return Err(DirenvError::LoadChanged {
                file: ws.join(&changed),
                envrc,
            });
        }
    }
    if !envrc_known {
        allow(&bin, &ws)?;
    }
    record.direnv_allowed = true;
    record.envrc_sha256 = Some(digest);
    record.envrc_loads_allowed = loads;
    Ok(Loader::Direnv(bin))
}

/// The first loaded file whose content is neither the one last allowed nor the base's.
fn changed_load(
    loads: &BTreeMap<String, String>,
    record: &Record,
    vcs: &Vcs,
) -> Result<Option<String>> {
    for (file, digest) in loads {
        if record.envrc_loads_allowed.get(file) == Some(digest) {
            continue;
        }
        let at_base = match &record.envrc_loads_base {
            Some(base) => base.get(file) == Some(digest),
            None => base_has(file, digest, record, vcs)?,
        };
        if !at_base {
            return Ok(Some(file.clone()));
        }
    }
    Ok(None)
}

/// Whether one of the base commits has `file` with `digest` (or lacks it, for `absent`).
fn base_has(file: &str, digest: &str, record: &Record, vcs: &Vcs) -> Result<bool> {
    for commit in &base_commits(record, vcs)? {
        let at = vcs.file_at(commit, file)?;
        let d = at.map_or_else(
            || envrc_loads::ABSENT.to_string(),
            |b| format!("{:x}", Sha256::digest(&b)),
        );
        if d == digest {
            return Ok(true);
        }
    }
    Ok(false)
}

fn base_commits(record: &Record, vcs: &Vcs) -> Result<Vec<String>> {
    match record.base_commits.is_empty() {
        true => Ok(vcs.resolve_base(None)?),
        false => Ok(record.base_commits.clone()),
    }
}

fn matches_base(envrc: &Path, record: &Record, vcs: &Vcs) -> Result<bool> {
    let current = fsutil::read_untrusted(envrc, fsutil::UNTRUSTED_LIMIT)?;
    if let Some(base) = &record.base_envrc_sha256 {
        return Ok(*base == format!("{:x}", Sha256::digest(&current)));
    }
    // A record rebuilt after it was lost (or migrated from an older version) does not know
    // its base's .envrc: ask the backend, comparing with the default base when the base
    // commits are unknown too.
    for commit in &base_commits(record, vcs)? {
        if vcs.file_at(commit, ".envrc")?.as_deref() == Some(current.as_slice()) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `direnv allow` on the canonical path, which is the one `direnv exec` will hash.
pub(crate) fn allow(bin: &Path, workspace: &Path) -> Result<()> {
    let canonical = fs::canonicalize(workspace).map_err(|source| DirenvError::Io {
        action: "resolve",
        path: workspace.to_path_buf(),
        source,
    })?;
    Call::new(bin)
        .arg("allow")
        .arg(&canonical)
        .env(crate::vars::DIRENV_LOG_FORMAT, "")
        .stdout()?;
    Ok(())
}

/// The files direnv reports an evaluation read, and whether each was there
/// (`DIRENV_WATCHES` in the environment it loaded: URL-safe base64 of zlib-compressed JSON,
/// `[{"Path": ..., "Exists": ...}, ...]`), the `.envrc` and its allow file among them;
/// `None` when it is missing or cannot be read whole.
pub(crate) fn watched_files(env: &[(OsString, OsString)]) -> Option<Vec<Read>> {
    let (_, value) = env.iter().find(|(k, _)| k == "DIRENV_WATCHES")?;
    let compressed = base64_url_decode(value.to_str()?)?;
    let json =
        miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(&compressed, 16 << 20).ok()?;
    #[derive(serde::Deserialize)]
    struct Watch {
        #[serde(rename = "Path")]
        path: String,
        #[serde(rename = "Exists")]
        exists: bool,
        #[serde(rename = "Modtime")]
        modtime: i64,
    }
    let watches: Vec<Watch> = serde_json::from_slice(&json).ok()?;
    // A path JSON could not carry as it is (not UTF-8) would be watched under another name.
    if watches.is_empty() || watches.iter().any(|w| w.path.contains('\u{FFFD}')) {
        return None;
    }
    let read = |w: Watch| Read {
        path: PathBuf::from(w.path),
        existed: Some(w.exists),
        modtime: w.exists.then_some(w.modtime),
        before: None,
    };
    Some(watches.into_iter().map(read).collect())
}

/// What direnv reads besides what it reports: the user's direnv configuration (`direnvrc`,
/// the TOML files, `lib/` and every file in it), as the environment it is given (`env`)
/// locates it, each stamped now (before the evaluation); `None` when one cannot be stamped.
pub(crate) fn configuration_files(env: &[(OsString, OsString)]) -> Option<Vec<Read>> {
    let get = |name: &str| {
        env.iter()
            .find(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| PathBuf::from(v))
    };
    let dir = get("DIRENV_CONFIG")
        .or_else(|| get("XDG_CONFIG_HOME").map(|d| d.join("direnv")))
        .or_else(|| get("HOME").map(|h| h.join(".config").join("direnv")));
    let Some(dir) = dir else {
        return Some(vec![]);
    };
    let mut files: Vec<PathBuf> = ["direnvrc", "direnv.toml", "config.toml", "lib"]
        .iter()
        .map(|name| dir.join(name))
        .collect();
    let mut lib: Vec<PathBuf> = fs::read_dir(dir.join("lib"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    lib.sort();
    files.extend(lib);
    let read = |path: PathBuf| {
        let before = crate::store::kept_env::stamp(&path).ok()?;
        Some(Read {
            path,
            existed: None,
            modtime: None,
            before: Some(before),
        })
    };
    files.into_iter().map(read).collect()
}

/// The key of an evaluation: a digest of everything direnv is given (the whole environment
/// it receives, the canonical workspace it evaluates, its binary's path and identity);
/// `None` when the binary cannot be stamped or changed too recently to be told apart.
pub(crate) fn evaluation_key(
    env: &[(OsString, OsString)],
    workspace: &Path,
    bin: &Path,
    began: std::time::SystemTime,
) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    let bin_stamp = crate::store::kept_env::stamp(bin).ok()??;
    if !bin_stamp.settled(began) {
        return None;
    }
    let mut sorted: Vec<&(OsString, OsString)> = env.iter().collect();
    sorted.sort();
    let mut hasher = Sha256::new();
    for (name, value) in sorted {
        hasher.update(name.as_bytes());
        hasher.update(b"=");
        hasher.update(value.as_bytes());
        hasher.update(b"\0");
    }
    hasher.update(b"\0workspace\0");
    hasher.update(workspace.as_os_str().as_bytes());
    hasher.update(b"\0direnv\0");
    hasher.update(bin.as_os_str().as_bytes());
    hasher.update(b"\0");
    hasher.update(
        serde_json::to_string(&bin_stamp)
            .unwrap_or_default()
            .as_bytes(),
    );
    Some(format!("{:x}", hasher.finalize()))
}

/// Decodes URL-safe base64 (`-` and `_`), padded or not; `None` on any other character.
fn base64_url_decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        } as u32)
    };
    let text = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.chunks(4) {
        let mut bits = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            bits |= value(*c)? << (18 - 6 * i);
        }
        let bytes = bits.to_be_bytes();
        match chunk.len() {
            4 => out.extend_from_slice(&bytes[1..4]),
            3 => out.extend_from_slice(&bytes[1..3]),
            2 => out.push(bytes[1]),
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_safe_base64_decodes_padded_or_not() {
        assert_eq!(
            base64_url_decode("aGk_-w"),
            Some(vec![b'h', b'i', 0x3f, 0xfb])
        );
        assert_eq!(
            base64_url_decode("aGk_-w=="),
            Some(vec![b'h', b'i', 0x3f, 0xfb])
        );
        assert_eq!(base64_url_decode("YWJj"), Some(b"abc".to_vec()));
        assert_eq!(base64_url_decode("YQ"), Some(b"a".to_vec()));
        assert_eq!(base64_url_decode("Y"), None);
        assert_eq!(base64_url_decode("a+b/"), None, "not the URL-safe alphabet");
    }

    #[test]
    fn direnv_watches_read_back_as_paths() {
        // The shape direnv 2.32 reports: an .envrc, and a dotenv_if_exists file not there.
        let json = br#"[{"Path":"/w/.envrc","Modtime":1,"Exists":true},{"Path":"/w/.env","Modtime":0,"Exists":false}]"#;
        let compressed = miniz_oxide::deflate::compress_to_vec_zlib(json, 6);
        let encoded = base64_url_encode(&compressed);
        let env = vec![("DIRENV_WATCHES".into(), encoded.into())];
        let read = |path: &str, modtime: Option<i64>| Read {
            path: PathBuf::from(path),
            existed: Some(modtime.is_some()),
            modtime,
            before: None,
        };
        assert_eq!(
            watched_files(&env),
            Some(vec![read("/w/.envrc", Some(1)), read("/w/.env", None)])
        );
        let env = vec![("DIRENV_WATCHES".into(), "eJzz".into())];
        assert_eq!(watched_files(&env), None, "truncated");
        assert_eq!(watched_files(&[]), None, "absent");
    }

    fn base64_url_encode(bytes: &[u8]) -> String {
        let table = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let mut bits = 0u32;
            for (i, b) in chunk.iter().enumerate() {
                bits |= (*b as u32) << (16 - 8 * i);
            }
            for i in 0..=chunk.len() {
                out.push(table[((bits >> (18 - 6 * i)) & 63) as usize] as char);
            }
        }
        out
    }
}
