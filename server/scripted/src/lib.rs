//! What a scripted run needs, and the binary ships: [`fake_model`], a model
//! server that plays a scenario over the Anthropic and OpenAI wire formats
//! (the `scripted` provider, `rein demo`'s model), and [`editor`] with
//! [`LspClient`], a headless editor that drives an LSP server over stdio
//! (`rein demo` drives the real server with it; the test kit and the
//! benchmarks too).
//!
//! Nothing here reaches the network: everything it serves listens on
//! 127.0.0.1. It shares no code with `rein-models`: both were written from
//! the providers' documentation, so each checks the other.
//!
//! Never: depends on Rein's own crates beyond `rein-text`; holds anything
//! only tests need (that is `rein-testkit`).

pub mod editor;
pub mod fake_model;
mod lsp_client;

pub use lsp_client::{ClientError, LspClient, frame};
