//! `rein-app`: the task service every front end of Rein uses — the LSP
//! server, the Agent Client Protocol agent, `rein run` — and the
//! subcommands that sit beside them (`rein doctor`, `eval`, `demo`).
//!
//! It turns configuration into running tasks: the settings layers and the
//! workspace's trust (`settings`, `editor_trust`), the set-up of a task —
//! model, verifier, executor, MCP servers — for the core's task host
//! (`setup`), the sandbox every command starts through (`confinement`),
//! the log (`logging`), and the helpers front ends share (`format`).
//!
//! Never here: a protocol (LSP, ACP, a terminal's lines); those are the
//! front ends', which adapt it to this crate's plain types.

pub mod confinement;
pub mod editor_trust;
pub mod find_test;
pub mod fix_error;
pub mod format;
pub mod logging;
pub mod service;
pub mod settings;
pub mod setup;
pub mod undo;
