//! One module per subcommand.

pub(in crate::cli) mod checkpoint;
pub(in crate::cli) mod clean;
pub(in crate::cli) mod completions;
pub(in crate::cli) mod create;
pub(in crate::cli) mod diff;
pub(in crate::cli) mod doctor;
pub(in crate::cli) mod exec;
pub(in crate::cli) mod gc;
pub(in crate::cli) mod land;
pub(in crate::cli) mod man;
pub(in crate::cli) mod mcp;
pub(in crate::cli) mod path;
pub(in crate::cli) mod pool;
pub(in crate::cli) mod run;
pub(in crate::cli) mod shell;
pub(in crate::cli) mod status;
pub(in crate::cli) mod status_watch;
pub(in crate::cli) mod sync_tools;
