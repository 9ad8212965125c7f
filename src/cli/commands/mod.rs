//! One module per subcommand.

pub mod checkpoint;
pub mod clean;
pub mod complete_ids;
pub mod completions;
pub mod diff;
pub mod doctor;
pub mod exec;
pub mod gc;
pub mod land;
pub mod man;
pub mod pool;
pub mod run;
pub mod shell;
pub mod status;
pub mod status_watch;
pub mod sync_tools;
