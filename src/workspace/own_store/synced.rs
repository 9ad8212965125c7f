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

impl Synced {
    fn text(&self) -> String {
        let base = self
            .base_objects
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        format!(
            "commit {}\nparents {}\nop {}\nuser-op {}\nbase {}\n",
            self.at.commit,
            self.at.parents.join(" "),
            self.op,
            self.user_op,
            base
        )
    }

    fn parse(text: &str) -> Option<Synced> {
        let mut fields = std::collections::HashMap::new();
        for line in text.lines() {
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            fields.insert(key, value);
        }
        let base = fields.get("base")?;
        Some(Synced {
            at: WorkingCommit {
                commit: fields.get("commit")?.to_string(),
                parents: fields
                    .get("parents")?
                    .split_whitespace()
                    .map(str::to_string)
                    .collect(),
            },
            op: fields.get("op")?.to_string(),
            user_op: fields.get("user-op")?.to_string(),
            base_objects: (!base.is_empty()).then(|| PathBuf::from(base)),
        })
    }
}

/// The record of the store at `dir`, if it can be read.
pub(super) fn read(dir: &Path) -> Option<Synced> {
    let text = crate::store::fsutil::read_untrusted_string(&dir.join("synced"), 64 << 10).ok()?;
    Synced::parse(&text)
}

pub(super) fn write(dir: &Path, synced: &Synced) -> Result<()> {
    Ok(crate::store::fsutil::write_atomic(
        &dir.join("synced"),
        synced.text().as_bytes(),
    )?)
}

/// Records the store's own state as it was made (`made`, never mounted): while it is the
/// same, the agent did nothing there at all.
pub(super) fn write_made(dir: &Path, state: &str) -> Result<()> {
    Ok(crate::store::fsutil::write_atomic(
        &dir.join("made"),
        state.as_bytes(),
    )?)
}

/// The store's state as it was made, if recorded.
pub(super) fn read_made(dir: &Path) -> Option<String> {
    crate::store::fsutil::read_untrusted_string(&dir.join("made"), 64 << 10).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synced_reads_back_what_it_wrote() {
        let synced = Synced {
            at: WorkingCommit {
                commit: "abc".into(),
                parents: vec!["p1".into(), "p2".into()],
            },
            op: "o1,o2".into(),
            user_op: "u1".into(),
            base_objects: Some("/x/objects".into()),
        };
        assert_eq!(Synced::parse(&synced.text()), Some(synced.clone()));
        let rootless = Synced {
            at: WorkingCommit {
                commit: "abc".into(),
                parents: vec![],
            },
            base_objects: None,
            ..synced
        };
        assert_eq!(Synced::parse(&rootless.text()), Some(rootless));
    }
}
