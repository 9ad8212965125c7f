//! One module per subcommand.

pub(crate) mod checkpoint;
pub(crate) mod clean;
pub(crate) mod completions;
pub(crate) mod create;
pub(crate) mod diff;
pub(crate) mod doctor;
pub(crate) mod exec;
pub(crate) mod gc;
pub(crate) mod land;
pub(crate) mod man;
pub(crate) mod mcp;
pub(crate) mod path;
pub(crate) mod pool;
pub(crate) mod run;
pub(crate) mod shell;
pub(crate) mod status;
pub(crate) mod status_watch;
pub(crate) mod sync_tools;
