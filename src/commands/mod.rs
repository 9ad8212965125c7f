//! One module per subcommand.

pub mod clean;
pub mod run;
pub mod shell;
pub mod status;
