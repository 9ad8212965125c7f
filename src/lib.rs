//! agent-workspace: isolated, resumable jj (or git worktree) workspaces for agent workflows.
//!
//! The crate behind the `agent-workspace` binary; `src/main.rs` parses, calls, renders and
//! exits through the few items re-exported at the end. One line per layer, top first; a
//! module names only its own layer's modules (without a circle) or a lower layer's
//! (`docs/architecture.md` draws them, `tests/it/layers.rs` holds it):
//!
//! - `cli`: clap definitions, the dispatch and one thin command per subcommand;
//!   `ui`: the output sink (stdout, colour, the status table, the progress line, the words)
//! - `session`: a run from lease to outcome (the lifecycle of `run`, built on `workspace`);
//!   `workspace`: the lifecycle: open, create, take from the pool, repair, land, remove; the
//!   inventory of a namespace, `doctor`'s checkup, the context every command starts from,
//!   the command's launch and direnv's trust policy
//! - `vcs`: jj and git behind one enum; `config`: the configuration files
//! - `exec`: every process start (helpers, the user's command and its guard), signals,
//!   liveness, bubblewrap
//! - `store`: the record and state, the layout, locks, symlink-safe files, trees
//! - `error`, `repo`, `vars`, `refname`, `progress`: the error type, repository discovery,
//!   variable names, git's ref-name rules, the phases of a slow step

// Items are `pub(crate)` at most; only the re-exports below leave the crate.
#![warn(unreachable_pub)]

mod cli;
mod config;
mod error;
mod exec;
mod progress;
mod refname;
mod repo;
mod session;
mod store;
mod ui;
mod vars;
mod vcs;
mod workspace;

// What the binary uses: parsing, the one dispatch, the guard's entry, the error, and the
// output sink that renders it and prints clap's own text.
pub use cli::{complete_from_env, dispatch, parse, run_guard, Cli, Parsed};
pub use error::CliError;
pub use exec::process::TRAMPOLINE;
pub use ui::output::ColorChoice;
pub use ui::Ui;
