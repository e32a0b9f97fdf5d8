//! `rein-testkit` is what Rein's tests and benchmarks stand on: helpers to
//! find and spawn the real `rein` binary, copy a fixture project, and hold
//! a port no one listens on; and, re-exported from `rein-scripted` (where
//! they live because the binary ships them: the "scripted" provider and
//! `rein demo`'s headless editor), the raw-frame LSP client and
//! [`fake_model`], the scripted model server speaking the Anthropic and
//! OpenAI wire formats.
//!
//! The binary does not depend on this crate. Nothing here ever reaches the
//! network: everything it serves listens on 127.0.0.1.

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
