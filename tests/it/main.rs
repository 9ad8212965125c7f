//! End-to-end tests of agent-workspace against the real jj, direnv, git and just.
//!
//! Every test owns a [`harness::TestEnv`]: a temp dir with its own HOME, XDG dirs and jj
//! config, in which every command starts from a cleared environment.

mod architecture;
mod backends;
mod base_change;
mod capacity;
mod checkpoint;
mod children;
mod clean;
mod colour;
mod completions;
mod config;
mod copy;
mod diff;
mod doctor;
mod errors;
mod gc;
mod git_backend;
mod harness;
mod hostile_fs;
mod hostile_keep;
mod hostile_procs;
mod hostile_records;
mod hostile_stale;
mod ids;
mod just_recipes;
mod land;
mod land_git;
mod layers;
mod man_pages;
mod messages;
mod metadata;
mod nested;
mod pool;
mod progress;
mod recovery;
mod reliability;
mod run;
mod sandbox;
mod schemas;
mod setup;
mod sha256;
mod shell;
mod status;
mod status_details;
mod status_watch;
mod tools;
mod usage;
mod verdicts;
