//! `rein-store` through its public API: one test binary, a module per
//! concern. Some tests re-run this binary as a child process (see
//! `support::child`) to get a second process on the same database, or one
//! that dies mid-sequence.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod artifacts;
mod checkpoints;
mod crash;
mod history;
mod lease;
mod migrations;
mod open;
mod ops;
mod sessions;
mod support;
mod task_files;
mod tasks;
mod turns;
