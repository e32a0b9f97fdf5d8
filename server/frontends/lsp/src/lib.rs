//! `rein-lsp`: Rein's LSP front end, the only crate that knows LSP. It
//! adapts the editor's messages to the plain Rust types of `rein-text`,
//! `rein-core` and the task service (`rein-app`) and back (`proto.rs`),
//! and hosts the document store.
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

mod client_requests;
mod code_actions;
mod code_lens;
mod commands;
mod doubt;
mod edit_approval;
pub mod ext;
mod fix_error;
pub mod framing;
mod guard;
mod known_outcomes;
mod lsp_progress;
mod lsp_trust;
mod lsp_workspace;
mod proto;
mod provider;
mod questions;
mod review;
mod said;
mod saving;
mod server;
mod session;
mod tasks;
mod undo;

pub use server::{Backend, ServerHandle, ServerOptions, build_service, serve, start};
