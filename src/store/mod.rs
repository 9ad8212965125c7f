//! What agent-workspace keeps on disk and how it touches files: the record (`metadata`) and
//! its state, the layout under the root, locks, symlink-safe file access (`fsutil`), trees
//! copied and measured, files kept aside, `copy.include` matches and their clones, the tools
//! bundle, the moments it keeps (`timestamp`), the environment direnv loaded (`kept_env`). Starts no process; names only the bottom modules (`error`, `repo`, `vars`).

pub(crate) mod aside;
pub(crate) mod cache;
pub(crate) mod deep;
pub(crate) mod disk;
pub(crate) mod fsutil;
pub(crate) mod include;
pub(crate) mod kept_env;
pub(crate) mod kept_table;
pub(crate) mod layout;
pub(crate) mod lock;
pub(crate) mod metadata;
pub(crate) mod nested_aside;
pub(crate) mod private_state;
pub(crate) mod recovery;
pub(crate) mod reflink;
pub(crate) mod stamp;
pub(crate) mod state;
pub(crate) mod summary;
pub(crate) mod timestamp;
pub(crate) mod tools;
pub(crate) mod tree;
