//! Writing a land's target worktree all or nothing: a fast-forward git could not finish for
//! want of space leaves the branch where it was, and the files it had written are put back
//! as the index (untouched by the failed merge) holds them.

use std::path::Path;

use super::Git;
use crate::vcs::land::LandError;

impl Git {
    /// After `merge --ff-only` in worktree `wt` failed for want of space with the branch
    /// unmoved: each of the land's `files` is put back from the index, or removed when the
    /// index holds none (the merge made it). The error names what could not be put back.
    pub(super) fn put_back_after_full_disk(&self, wt: &Path, files: &[String]) -> LandError {
        let tracked = self
            .call(wt)
            .and_then(|c| Ok(c.args(["ls-files", "-z", "--"]).args(files).stdout()?))
            .unwrap_or_default();
        let tracked: Vec<&str> = tracked.split('\0').filter(|f| !f.is_empty()).collect();
        let mut half = vec![];
        for file in files {
            let path = wt.join(file);
            let done = match tracked.contains(&file.as_str()) {
                // Removed first: the half-written file's space is free for the old one.
                true => {
                    let _ = std::fs::remove_file(&path);
                    self.call(wt)
                        .and_then(|c| {
                            Ok(c.args(["checkout-index", "-f", "-q", "--"])
                                .arg(file)
                                .stdout()?)
                        })
                        .is_ok()
                }
                false => match std::fs::symlink_metadata(&path) {
                    Ok(meta) if !meta.is_dir() => std::fs::remove_file(&path).is_ok(),
                    _ => true,
                },
            };
            if !done {
                half.push(file.clone());
            }
        }
        LandError::MainPutBack {
            path: wt.to_path_buf(),
            main: wt == self.main,
            half,
        }
    }
}
