//! The operating system side: the only code in `rein-core` that touches the disk or spawns
//! processes. It implements the traits the loop uses, for the headless CLI
//! and for files the editor does not have open.

pub mod artifacts;
pub mod atomic;
pub mod checkers;
pub mod disk;
pub mod instructions;
pub mod junit;
mod layer;
mod private_run;
pub mod process;
pub mod testcmd;
pub mod trace;
pub mod user_state;
