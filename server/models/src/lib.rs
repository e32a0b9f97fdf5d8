//! `rein-models` talks to language models: one provider-neutral
//! [`ModelClient`] trait with Anthropic Messages and OpenAI-compatible Chat
//! Completions adapters (streamed over SSE), retries, token counting and cost.
//!
//! It is the only crate that knows provider wire formats. It must never
//! decide what to do with a reply (that is `rein-core`'s job), never send a
//! request whose tool calls and results are unpaired, and never let an API
//! key reach a log, a trace, an error message or `Debug` output.

mod anthropic;
mod assemble;
mod client;
pub mod config;
mod error;
mod openai;
pub mod pairing;
pub mod pricing;
pub mod redact;
mod reply;
pub mod retry;
mod secret;
pub mod sse;
pub mod tokens;
mod types;
pub mod window;
mod wire;

pub use assemble::parse_arguments;
pub use client::{
    EventStream, ModelClient, anthropic_client, build_client, list_models, openai_client,
};
pub use config::{
    ConfigError, GUESSED_WINDOW, ProviderConfig, ProviderKind, ProviderSettings, Timeouts,
    WindowSource,
};
pub use error::ModelError;
pub use redact::{REDACTED, Redactor, StreamRedactor};
pub use reply::{ModelReply, collect};
pub use secret::{ApiKey, is_secret_name, redact};
pub use types::*;
pub use window::{ask_context_window, server_window};
