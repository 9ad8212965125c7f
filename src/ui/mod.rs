//! The output sink: stdout's columns and colour, the status table, the progress line, and the
//! words for what the lifecycle returns. Called by `cli` only; names the lifecycle's types to
//! render them, never the other way round.

pub(crate) mod output;
pub(crate) mod progress_line;
pub(crate) mod report;
pub(crate) mod screen;
pub(crate) mod sink;
pub(crate) mod status_table;

pub use sink::Ui;
