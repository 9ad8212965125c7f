//! The parent a workspace record names (`run --parent`), read as an id or kept as written.

use crate::store::layout::{InvalidId, WorkspaceId};

/// The workspace a record says this one was started from. A record is a file an agent may
/// edit, so a name there that is no id is kept as written (with why it is none) for the
/// command that uses it to refuse: it is never taken for no parent, nor joined into a path.
/// Written as the plain string either way, so a record reads back as it was.
#[derive(Debug, Clone)]
pub(crate) enum Parent {
    /// A valid id ([`WorkspaceId::parse`]; a prepared workspace's name is no parent).
    Id(WorkspaceId),
    /// What the record holds, which is no id.
    Unreadable(InvalidId),
}

impl Parent {
    /// The parent's id, or the usage error saying why what the record names is none.
    pub(crate) fn id(&self) -> Result<&WorkspaceId, InvalidId> {
        match self {
            Parent::Id(id) => Ok(id),
            Parent::Unreadable(invalid) => Err(invalid.clone()),
        }
    }

    /// The name as the record holds it.
    pub(crate) fn as_written(&self) -> &str {
        match self {
            Parent::Id(id) => id.as_str(),
            Parent::Unreadable(invalid) => &invalid.id,
        }
    }
}

impl From<WorkspaceId> for Parent {
    fn from(id: WorkspaceId) -> Parent {
        Parent::Id(id)
    }
}

/// Written as the name it holds.
impl serde::Serialize for Parent {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_written())
    }
}

/// Any string reads: one that is no id is kept as [`Parent::Unreadable`], so a tampered
/// parent leaves the rest of the record readable.
impl<'de> serde::Deserialize<'de> for Parent {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Parent, D::Error> {
        let name = String::deserialize(d)?;
        Ok(match WorkspaceId::parse(&name) {
            Ok(id) => Parent::Id(id),
            Err(invalid) => Parent::Unreadable(invalid),
        })
    }
}
