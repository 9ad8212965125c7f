//! Writing a land's target working copy all or nothing: a checkout jj could not finish for
//! want of space is put back to the files the working copy last recorded, so the update
//! that finishes it once there is room never snapshots a half-written file as an edit.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::Jj;
use crate::store::layout::WorkspaceId;
use crate::vcs::land::{LandError, Result};

impl Jj {
    /// Brings the target working copy at `dir` up to the integrated land. When jj fails for
    /// want of space, the `files` the land changes are put back as commit `before` (the
    /// working-copy commit jj last recorded there) holds them, and the error says the land
    /// happened and in which state the working copy was left.
    /// `id` is the landed workspace's.
    pub(super) fn write_target_after_land(
        &self,
        id: &WorkspaceId,
        dir: &Path,
        before: &str,
        files: &[String],
    ) -> Result<()> {
        match self.write_target(dir, before, files)? {
            None => Ok(()),
            Some(half) => Err(LandError::MainNotWritten {
                id: id.clone(),
                path: dir.to_path_buf(),
                restored: half.is_empty(),
                half,
                before: before.to_string(),
            }),
        }
    }

    /// [`Jj::write_target_after_land`]'s writing: `None` when jj wrote the working copy;
    /// when it ran out of space, the files that could not be put back (none: all were).
    fn write_target(
        &self,
        dir: &Path,
        before: &str,
        files: &[String],
    ) -> crate::vcs::Result<Option<Vec<String>>> {
        match self.call(dir)?.args(["workspace", "update-stale"]).stdout() {
            Ok(_) => return Ok(None),
            Err(err) if crate::exec::classify::disk_full(err.stderr()) => {}
            Err(err) => return Err(err.into()),
        }
        Ok(Some(
            files
                .iter()
                .filter(|f| self.put_back_file(dir, before, f).is_err())
                .cloned()
                .collect(),
        ))
    }

    /// [`Jj::write_target_after_land`] for a working copy a land left stale without saying
    /// what it changed (a killed or failed land finished by a later command): the commit it
    /// last recorded is read at its own operation, and the files are those between that
    /// commit and the one it is updated to.
    pub(super) fn write_main_whole(&self, dir: &Path) -> crate::vcs::Result<()> {
        let plain = || -> crate::vcs::Result<()> {
            self.call(dir)?
                .args(["workspace", "update-stale"])
                .stdout()?;
            Ok(())
        };
        let Some((before, files)) = self.stale_update_span(dir) else {
            return plain();
        };
        match self.write_target(dir, &before, &files)? {
            None => Ok(()),
            Some(_) => Err(crate::vcs::VcsError::NoRoom(crate::store::disk::NoRoom {
                dir: dir.to_path_buf(),
                bytes: 0,
                free: crate::store::disk::free_bytes(dir).unwrap_or(0),
            })),
        }
    }

    /// The commit the working copy at `dir` last recorded and the files between it and the
    /// working-copy commit it is to be updated to; `None` when jj does not say.
    fn stale_update_span(&self, dir: &Path) -> Option<(String, Vec<String>)> {
        let ask = |args: &[&str]| -> Option<String> {
            let out = self
                .call(dir)
                .ok()?
                .arg("--ignore-working-copy")
                .args(args)
                .stdout()
                .ok()?;
            Some(out.trim().to_string())
        };
        let state = ask(&["debug", "working-copy"])?;
        let op = state
            .lines()
            .find_map(|l| l.strip_prefix("Current operation: OperationId(\""))?
            .trim_end_matches("\")");
        let at = format!("--at-op={op}");
        let template = ["log", "--no-graph", "-r", "@", "-T", "commit_id"];
        let before = ask(&[&[at.as_str()][..], &template[..]].concat())?;
        let after = ask(&template)?;
        let files = ask(&["diff", "--name-only", "--from", &before, "--to", &after])?;
        Some((before, files.lines().map(str::to_string).collect()))
    }

    /// Puts `file` in the working copy at `dir` back as commit `before` holds it (absent
    /// when it holds none): the half-written file is removed first, freeing its space.
    fn put_back_file(&self, dir: &Path, before: &str, file: &str) -> std::io::Result<()> {
        let path = dir.join(file);
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => return Ok(()),
            Ok(_) => fs::remove_file(&path)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let pattern = format!("root-file:{:?}", file);
        let kind = self
            .query()
            .and_then(|c| {
                Ok(c.args(["file", "list", "-r", before, "-T", "executable"])
                    .arg(&pattern)
                    .stdout()?)
            })
            .map_err(std::io::Error::other)?;
        let kind = kind.trim();
        if kind.is_empty() {
            return Ok(());
        }
        let content = self
            .query()
            .and_then(|c| {
                Ok(c.args(["file", "show", "-r", before])
                    .arg(&pattern)
                    .stdout_bytes()?)
            })
            .map_err(std::io::Error::other)?;
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&path, content)?;
        if kind == "true" {
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755))?;
        }
        Ok(())
    }
}
