//! `rein-models` talks to language models: one provider-neutral
//! `ModelClient` trait with Anthropic Messages and OpenAI-compatible Chat
//! Completions adapters (streamed over SSE), retries, token counting and cost.
//!
//! It is the only crate that knows provider wire formats. It must never
//! decide what to do with a reply (that is `rein-core`'s job), never send a
//! request whose tool calls and results are unpaired, and never let an API
//! key reach a log, a trace, an error message or `Debug` output.
//!
//! Not built yet: see the open issue "Model providers".
