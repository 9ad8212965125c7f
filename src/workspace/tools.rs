//! Keeping a workspace's tools bundle (`tools.paths` copied into `tools.dir`) current: on
//! creation, on every run when a source changed (told by a stamp, without reading files),
//! and on demand (`sync-tools`).

use std::path::PathBuf;

use super::Note;
use crate::error::Result;
use crate::store::metadata::{self, Record};
use crate::store::tools::{self, Recorded};
use crate::workspace::context::Context;
use crate::workspace::error::WorkspaceError;

/// What a sync copied.
#[derive(Debug)]
pub(crate) struct Synced {
    pub version: String,
    pub bundle: PathBuf,
    pub paths: Vec<String>,
}

/// Brings the bundle of `record`'s workspace up to date, copying only when its content
/// changed (or always, with `force`). `None` when there is nothing to bundle. Symlinks not
/// followed are pushed to `notes`. The caller saves the record. `tools.paths` from the
/// repository's file is followed only when that file is the base revision's, or `trust`.
pub(crate) fn sync(
    ctx: &Context,
    record: &mut Record,
    force: bool,
    trust: bool,
    notes: &mut Vec<Note>,
) -> Result<Option<Synced>> {
    let root = &ctx.repo.root;
    let config = &ctx.config;
    let paths = match config.tools_paths_set {
        true => config.tools_paths.clone(),
        false => tools::existing(root, &config.tools_paths),
    };
    let bundle = record.workspace_path.join(&config.tools_dir);
    let stamp = tools::stamp(root, &paths);
    let present = std::fs::symlink_metadata(&bundle).is_ok_and(|m| m.is_dir());
    let previous = record.tools.as_ref().filter(|t| t.dir == config.tools_dir);
    if let Some(known) = previous.filter(|t| !force && present && t.stamp == stamp) {
        return Ok(Some(synced(known, &bundle)));
    }
    if paths.is_empty() && record.tools.is_none() {
        return Ok(None);
    }
    if let Some((file, relative)) = &config.tools_paths_from_repo {
        if !trust && !super::setup::repo_file_trusted(ctx, record, file, relative)? {
            return Err(WorkspaceError::ToolsUntrusted {
                file: file.clone(),
                id: record.workspace_id.clone(),
            }
            .into());
        }
    }
    let content = tools::read(root, &paths).map_err(|source| match source.kind() {
        std::io::ErrorKind::InvalidInput => WorkspaceError::ToolsLink { source },
        _ => WorkspaceError::ToolsRead {
            root: root.to_path_buf(),
            source,
        },
    })?;
    if !content.skipped.is_empty() {
        notes.push(Note::ToolsLinksSkipped {
            paths: content.skipped.clone(),
        });
    }
    let current = previous.is_some_and(|t| t.version == content.version && present);
    if !force && current {
        if let Some(tools) = record.tools.as_mut() {
            tools.stamp = stamp;
        }
        return Ok(record.tools.as_ref().map(|t| synced(t, &bundle)));
    }
    super::create::ensure_excluded(ctx)?;
    let old: Vec<String> = previous.map(|t| t.paths.clone()).unwrap_or_default();
    tools::install(&record.workspace_path, &bundle, &content, &old)?;
    let recorded = Recorded {
        dir: config.tools_dir.clone(),
        version: content.version,
        source: root.clone(),
        paths: content.paths,
        stamp,
        synced_at: metadata::now(),
    };
    let done = synced(&recorded, &bundle);
    record.tools = Some(recorded);
    Ok(Some(done))
}

fn synced(recorded: &Recorded, bundle: &std::path::Path) -> Synced {
    Synced {
        version: recorded.version.clone(),
        bundle: bundle.to_path_buf(),
        paths: recorded.paths.clone(),
    }
}
