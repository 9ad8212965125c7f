//! agent-workspace: isolated, resumable jj (or git worktree) workspaces for agent workflows.
//!
//! The crate behind the `agent-workspace` binary; `src/main.rs` parses, calls, renders and
//! exits through the few items re-exported at the end. The modules, by layer (top first,
//! imports point down; `docs/architecture.md` draws them):
//!
//! - command: `cli`, `commands`, `report`, `output`, `status_table`, `progress_line`
//! - lifecycle: `workspace`, `inventory`, `checkup`, `launch`, `context`
//! - middle: `vcs`, `config`, `sandbox`, `direnv`, `envrc_loads`, `metadata`, `state`,
//!   `verdict`, `aside`, `recovery`, `tree`, `layout`, `lock`, `liveness`, `disk`, `tools`,
//!   `include`, `reflink`, `pool_journal`
//! - bottom: `repo`, `process`, `fsutil`, `signals`, `vars`, `refname`, `error`, `progress`

mod aside;
mod checkup;
mod cli;
mod commands;
mod config;
mod context;
mod direnv;
mod disk;
mod envrc_loads;
mod error;
mod fsutil;
mod include;
mod inventory;
mod launch;
mod layout;
mod liveness;
mod lock;
mod metadata;
mod output;
mod pool_journal;
mod process;
mod progress;
mod progress_line;
mod recovery;
mod reflink;
mod refname;
mod repo;
mod report;
mod sandbox;
mod signals;
mod state;
mod status_table;
mod tools;
mod tree;
mod vars;
mod vcs;
mod verdict;
mod workspace;

// What the binary uses: parsing, the one dispatch, the guard's entry, the error and its
// rendering, stdout for clap's own text.
pub use cli::{dispatch, parse, Cli, Parsed};
pub use commands::exec::cmd_exec as run_guard;
pub use error::CliError;
pub use output::print;
pub use process::TRAMPOLINE;
