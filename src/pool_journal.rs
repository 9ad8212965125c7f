//! The journal of a take from the pool of prepared workspaces (`<namespace>/.pool/<token>.taking`):
//! written before a prepared workspace is touched, naming the id it becomes; read to keep a
//! half-taken one out of the workspaces listed (see `workspace::pool`).

use std::fs;
use std::path::{Path, PathBuf};

use crate::layout::{Layout, POOL_DIR};

/// The journal of a take of prepared workspace `token`.
pub fn journal(layout: &Layout, token: &str) -> PathBuf {
    layout.pool_dir().join(format!("{token}.taking"))
}

/// The ids a take's journal names whose workspace has no state yet: a half-taken entry,
/// never listed as a workspace.
pub fn taking(namespace_dir: &Path) -> Vec<String> {
    let Ok(dir) = fs::read_dir(namespace_dir.join(POOL_DIR)) else {
        return vec![];
    };
    dir.filter_map(|e| {
        let name = e.ok()?.file_name().into_string().ok()?;
        name.strip_suffix(".taking")?;
        let text = fs::read_to_string(namespace_dir.join(POOL_DIR).join(&name)).ok()?;
        let id = text.lines().next()?.to_string();
        crate::layout::validate_id(&id).ok()?;
        let state = crate::state::path(&namespace_dir.join(&id));
        fs::symlink_metadata(state).is_err().then_some(id)
    })
    .collect()
}
