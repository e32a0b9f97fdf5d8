//! `rein-testkit` is what Rein's tests stand on: an LSP client that speaks
//! raw JSON-RPC frames (so tests compare whole messages, exactly as an editor
//! would see them), helpers to find and spawn the real `rein` binary, and
//! (with the providers issue) the fake model server and fixture projects.
//!
//! It must never be a dependency of shipping code, and it must never reach
//! the network: everything it serves listens on 127.0.0.1.

mod bin;
mod lsp_client;

pub use bin::{BinaryError, rein_binary};
pub use lsp_client::{ClientError, LspClient, frame};
