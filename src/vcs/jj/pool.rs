//! jj calls for the pool of prepared workspaces: renaming a prepared workspace to the id it is
//! handed out as, and moving it to the base asked for.

use std::path::Path;

use super::Jj;
use crate::vcs::error::Result;

impl Jj {
    /// Renames the workspace at `path` (the current name is jj's own record) to `name`.
    /// jj needs to snapshot it first, which finds nothing in a prepared workspace.
    pub fn rename_workspace(&self, path: &Path, name: &str) -> Result<()> {
        self.call(path)?
            .args(["workspace", "rename", "--", name])
            .stdout()?;
        Ok(())
    }

    /// Starts a new working-copy commit on `base` in the workspace at `path`: jj rewrites only
    /// the files that differ from the current checkout.
    pub fn new_on(&self, path: &Path, base: &[String]) -> Result<()> {
        self.call(path)?.arg("new").args(base).stdout()?;
        Ok(())
    }
}
