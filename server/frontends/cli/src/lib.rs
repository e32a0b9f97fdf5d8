//! `rein-cli`: Rein without an editor — `rein run` on the terminal (its
//! human is the terminal: `terminal/`; its result for programs:
//! `run_result`), `rein trust` and `rein undo`. A front end over the task service
//! (`rein-app`), like the LSP server and the ACP agent.

pub mod args;
pub mod run;
pub mod run_result;
pub mod terminal;
pub mod trust_cmd;
pub mod undo_cmd;
