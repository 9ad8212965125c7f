//! jj calls for the pool of prepared workspaces: renaming a prepared workspace to the id it is
//! handed out as, and moving it to the base asked for.

use std::path::Path;

use super::Jj;
use crate::exec::process::Started;
use crate::store::layout::WorkspaceId;
use crate::vcs::error::Result;

impl Jj {
    /// Starts renaming the workspace at `path` (the current name is jj's own record) to
    /// `name`, in the background: jj snapshots it first (finding nothing in a prepared
    /// workspace), most of a take's time, so the caller asks its other questions meanwhile.
    pub(crate) fn start_rename_workspace(
        &self,
        path: &Path,
        name: &WorkspaceId,
    ) -> Result<Started> {
        Ok(self
            .call(path)?
            .args(["workspace", "rename", "--", name])
            .start()?)
    }

    /// Starts a new working-copy commit on `base` in the workspace at `path`: jj rewrites only
    /// the files that differ from the current checkout.
    pub(crate) fn new_on(&self, path: &Path, base: &[String]) -> Result<()> {
        self.call(path)?.arg("new").args(base).stdout()?;
        Ok(())
    }
}
