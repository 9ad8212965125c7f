//! The test environment: a temp dir holding HOME, the XDG dirs (direnv's trust db among them)
//! and JJ_CONFIG, and runners that start the tool, jj, just and direnv inside it with a cleared
//! environment, so nothing from the developer's shell leaks in.
//!
//! - [`env`]: [`TestEnv`], its directories and the repositories tests start from;
//! - [`command`]: [`Cmd`], [`Running`], [`Outcome`];
//! - [`filters`]: the placeholders output is compared with ([`TestEnv::normalize`],
//!   [`TestEnv::settings`]);
//! - [`system`]: the machine: [`which`], [`running_as_root`], running as an unprivileged user;
//! - [`report`]: the file listing failure reports show;
//! - [`wait`]: [`eventually`] and [`until`], the one way to wait for another process.

mod command;
mod env;
mod filters;
mod report;
mod system;
mod wait;

// The harness's whole surface, whether or not a test module uses an item today.
#[allow(unused_imports)]
pub use command::{wait_for_file, Cmd, Outcome, Running};
#[allow(unused_imports)]
pub use env::{TestEnv, AW, ENVRC};
#[allow(unused_imports)]
pub use system::{running_as_root, which, NOBODY};
#[allow(unused_imports)]
pub use wait::{eventually, until};

/// Every visible subcommand, as `--help` lists them (completions and man pages cover each).
pub const SUBCOMMANDS: &[&str] = &[
    "run",
    "status",
    "create",
    "path",
    "shell",
    "clean",
    "pool",
    "checkpoint",
    "diff",
    "land",
    "sync-tools",
    "gc",
    "doctor",
    "mcp",
    "integrate",
    "skill",
    "completions",
    "man",
];
