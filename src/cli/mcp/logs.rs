//! A run's files beside the workspaces: its whole output (`<namespace>/.logs/<id>/`, the
//! newest [`KEPT_LOGS`] kept) and the failure document `run --failure-file` writes.

use std::path::PathBuf;

use serde_json::Value;

use crate::error::{CliError, Result};
use crate::store::layout::Layout;

/// Where a run's failure document goes: beside its logs, named for this call.
pub(super) fn failure_path(layout: &Layout, id: &str) -> PathBuf {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    layout
        .logs()
        .join(format!(".failure-{id}-{}-{stamp}.json", std::process::id()))
}

/// The failure document a `run` wrote (removing its file), if it failed.
pub(super) fn read_failure(path: &std::path::Path) -> Option<Value> {
    let bytes = crate::store::fsutil::read_untrusted(path, 1 << 20).ok();
    let _ = crate::store::fsutil::remove_file(path);
    serde_json::from_slice(&bytes?).ok()
}

/// How many run logs a workspace keeps: the oldest go when a run adds one.
const KEPT_LOGS: usize = 50;

/// A new log file for a run in `id`, `<namespace>/.logs/<id>/<time>.<ns>.log` (names sort
/// in time order), made without following a symlink and never shared with another run.
pub(super) fn open(layout: &Layout, id: &str) -> Result<(std::fs::File, PathBuf)> {
    use std::os::unix::fs::OpenOptionsExt;
    crate::store::fsutil::create_dir_nofollow(&layout.logs())?;
    let dir = layout.run_logs(id);
    crate::store::fsutil::create_dir_nofollow(&dir)?;
    let now = crate::store::timestamp::Timestamp::now()
        .to_string()
        .replace(':', "");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let mut n = 0u32;
    loop {
        let path = dir.join(format!("{now}.{:09}.log", nanos.saturating_add(n)));
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&path);
        match opened {
            Ok(file) => return Ok((file, path)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            Err(e) => return Err(CliError::io("create", &path, &e)),
        }
    }
}

/// Removes the oldest logs of workspace `id` beyond [`KEPT_LOGS`]; one that cannot go stays.
/// Done while the run's command runs, not before it starts.
pub(super) fn prune(layout: &Layout, id: &str) {
    let dir = layout.run_logs(id);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut logs: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".log"))
        .collect();
    if logs.len() <= KEPT_LOGS {
        return;
    }
    logs.sort();
    for name in &logs[..logs.len() - KEPT_LOGS] {
        let _ = crate::store::fsutil::remove_file(&dir.join(name));
    }
}
