//! What agent-workspace keeps on disk and how it touches files: the record (`metadata`) and
//! its state, the layout under the root, locks, symlink-safe file access (`fsutil`), trees
//! copied and measured, files kept aside, `copy.include` matches and their clones, the tools
//! bundle. Starts no process; names only the bottom modules (`error`, `repo`, `vars`).

pub mod aside;
pub mod disk;
pub mod fsutil;
pub mod include;
pub mod layout;
pub mod lock;
pub mod metadata;
pub mod recovery;
pub mod reflink;
pub mod state;
pub mod tools;
pub mod tree;
