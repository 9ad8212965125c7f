//! `synced`: agent-workspace's own record of a store (never mounted), what it was made from
//! or last brought back to; and `made`, the store's own state as it was made.

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::vcs::jj::WorkingCommit;

/// What `synced` records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Synced {
    /// The user's store's working-copy commit of the workspace the store matches.
    pub at: WorkingCommit,
    /// The store's own operation heads then.
    pub op: String,
    /// The user's store's operation heads then (read before the commit): while they are
    /// the same, so is the workspace's working-copy commit there.
    pub user_op: String,
    /// The shared objects the store borrows.
    pub base_objects: Option<PathBuf>,
}

impl From<crate::store::private_state::Synced> for Synced {
    fn from(kept: crate::store::private_state::Synced) -> Synced {
        Synced {
            at: WorkingCommit {
                commit: kept.commit,
                parents: kept.parents,
            },
            op: kept.op,
            user_op: kept.user_op,
            base_objects: kept.base_objects,
        }
    }
}

/// The record of the store at `dir`, if it can be read.
pub(super) fn read(dir: &Path) -> Option<Synced> {
    crate::store::private_state::read_synced(dir).map(Synced::from)
}

pub(super) fn write(dir: &Path, synced: &Synced) -> Result<()> {
    let kept = crate::store::private_state::Synced {
        commit: synced.at.commit.clone(),
        parents: synced.at.parents.clone(),
        op: synced.op.clone(),
        user_op: synced.user_op.clone(),
        base_objects: synced.base_objects.clone(),
    };
    Ok(crate::store::private_state::write_synced(dir, &kept)?)
}

/// Records the store's own state as it was made (`made`, never mounted): while it is the
/// same, the agent did nothing there at all.
pub(super) fn write_made(dir: &Path, state: &str) -> Result<()> {
    Ok(crate::store::private_state::write_made(dir, state)?)
}

/// The store's state as it was made, if recorded.
pub(super) fn read_made(dir: &Path) -> Option<String> {
    crate::store::private_state::read_made(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synced_reads_back_what_it_wrote() {
        let tmp = tempfile::tempdir().unwrap();
        let parse = |synced: &Synced| {
            write(tmp.path(), synced).unwrap();
            read(tmp.path())
        };
        let synced = Synced {
            at: WorkingCommit {
                commit: "abc".into(),
                parents: vec!["p1".into(), "p2".into()],
            },
            op: "o1,o2".into(),
            user_op: "u1".into(),
            base_objects: Some("/x/objects".into()),
        };
        assert_eq!(parse(&synced), Some(synced.clone()));
        let rootless = Synced {
            at: WorkingCommit {
                commit: "abc".into(),
                parents: vec![],
            },
            base_objects: None,
            ..synced
        };
        assert_eq!(parse(&rootless), Some(rootless));
    }
}
