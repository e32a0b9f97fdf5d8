//! `rein-testkit` is what Rein's tests stand on: an LSP client that speaks
//! raw JSON-RPC frames (so tests compare whole messages, exactly as an editor
//! would see them), helpers to find and spawn the real `rein` binary, and
//! [`fake_model`], a scripted model server speaking the Anthropic and OpenAI
//! wire formats.
//!
//! One part ships: the fake model server is the binary's "scripted"
//! provider, and `rein demo` drives the real server with the headless
//! editor, so the binary depends on this crate for those purposes alone.
//! Nothing here ever reaches the network: everything it serves listens on
//! 127.0.0.1.
//!
//! It shares no code with `rein-models`: both were written from the
//! providers' documentation, so each checks the other.

mod bin;
mod closed_port;
mod project;

pub use bin::{BinaryError, rein_binary};
pub use closed_port::ClosedPort;
pub use project::copy_project;
// The scripted model and the headless editor ship in the binary; tests reach
// them here as before.
pub use rein_scripted::{ClientError, LspClient, editor, fake_model, frame};

/// The environment variables through which a developer's shell would
/// change what `rein` does (a real provider, its key, budgets): every
/// test and benchmark that spawns it removes them, so it runs on the
/// settings the test gives only.
pub const PROVIDER_ENV: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "REIN_PROVIDER",
    "REIN_MODEL",
    "REIN_MAX_TURNS",
    "REIN_MAX_COST_USD",
];
