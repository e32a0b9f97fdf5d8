//! `rein` is the binary and the only crate that knows LSP: it adapts the
//! editor's messages to the plain Rust types of `rein-text` and `rein-core`
//! and back (`proto.rs`), hosts the document store, and runs the CLI.
//!
//! Handlers stay thin and follow two rules that keep the transport sound
//! (tower-lsp-server runs handlers concurrently):
//! - document notifications change the store **before their first
//!   `.await`**, so edits apply in the order the editor sent them;
//! - **no handler awaits a server→client request**: such requests are
//!   spawned with a timeout (`client_requests.rs`), because awaiting one
//!   inside a handler can deadlock the transport.
//!
//! It must never hold domain logic of its own, and never write anything but
//! LSP frames to stdout.

pub mod acp;
pub mod cli;
mod client_requests;
mod code_actions;
mod commands;
pub mod demo;
pub mod doctor;
mod doubt;
mod edit_approval;
mod editor_trust;
pub mod eval;
pub mod ext;
pub mod framing;
mod guard;
pub mod hardening;
pub mod launch;
pub mod logging;
mod lsp_progress;
mod lsp_trust;
mod lsp_workspace;
mod proto;
mod questions;
mod review;
pub mod run_cmd;
pub mod run_result;
pub mod sandbox;
mod saving;
mod server;
mod session;
pub mod settings;
mod tasks;
mod terminal;
pub mod trace_cmd;
pub mod trust_cmd;

pub use server::{Backend, ServerHandle, ServerOptions, build_service, serve, start};
