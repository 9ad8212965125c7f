//! Where every lower layer's error is worded: one file per family, each an
//! `impl From<...> for CliError` giving the message, its causes, its hint and its kind (so
//! its exit code). The layers below return what happened as types; only these files (and
//! the commands' own refusals) write the prose.

mod config;
mod discover;
mod land;
pub(in crate::cli) mod process;
mod sandbox;
mod session;
mod store;
mod vcs;
pub(in crate::cli) mod workspace;
