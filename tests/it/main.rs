//! End-to-end tests of agent-workspace against the real jj, direnv, git and just.
//!
//! Every test owns a [`harness::TestEnv`]: a temp dir with its own HOME, XDG dirs and jj
//! config, in which every command starts from a cleared environment.

// Test code reports with println! and friends; the crate speaks only through its Ui.
#![allow(clippy::disallowed_macros)]

mod architecture;
mod backends;
mod base_change;
mod capacity;
mod checkpoint_command;
mod checkpoint_run;
mod checkpoint_support;
mod children;
mod clean;
mod colour;
mod completions;
mod config;
mod copy;
mod create_path;
mod diff_changes;
mod diff_patch;
mod diff_safety;
mod diff_support;
mod doctor;
mod errors;
mod faults;
mod gc;
mod git_backend;
mod harness;
mod hostile_fifo;
mod hostile_fs;
mod hostile_keep;
mod hostile_procs;
mod hostile_records;
mod hostile_stale;
mod ids;
mod just_recipes;
mod land_dry_run;
mod land_git;
mod land_jj;
mod land_parent;
mod land_record;
mod land_safety_git;
mod land_safety_jj;
mod land_status;
mod land_support;
mod layers;
mod live_look;
mod man_pages;
mod messages;
mod metadata;
mod nested;
mod pool_crash;
mod pool_fill;
mod pool_support;
mod pool_take;
mod progress;
mod recovery;
mod reliability_locking;
mod reliability_signals;
mod reliability_status;
mod reliability_support;
mod run_env;
mod run_outcome;
mod sandbox_confinement;
mod sandbox_guarantees;
mod sandbox_refused;
mod sandbox_support;
mod sandbox_walls;
mod schemas;
mod setup;
mod sha256;
mod shell;
mod shim;
mod stale_check;
mod stale_repair;
mod status;
mod status_details;
mod status_watch;
mod stress_model;
mod tools;
mod tools_walls;
mod usage;
mod verdicts;
mod voice;
