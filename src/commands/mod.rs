//! One module per subcommand.

pub mod checkpoint;
pub mod clean;
pub mod diff;
pub mod exec;
pub mod gc;
pub mod land;
pub mod run;
pub mod shell;
pub mod status;
pub mod sync_tools;
