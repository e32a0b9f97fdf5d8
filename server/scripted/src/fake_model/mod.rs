//! A fake model server: real HTTP on 127.0.0.1 speaking the Anthropic
//! Messages API (`POST /v1/messages`) and the OpenAI Chat Completions API
//! (`POST /chat/completions`, `POST /v1/chat/completions`), streamed (SSE)
//! or not, byte-compatible with the real services as documented. A scripted
//! [`Scenario`] decides what the "model" says; [`Fault`]s make it fail the
//! ways real services fail; every request is validated as strictly as the
//! real APIs do it and recorded for the test to inspect.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use rein_scripted::fake_model::{FakeModel, Fault, Reply, Scenario, Usage};
//! use serde_json::json;
//!
//! let scenario = Scenario::new()
//!     .reply(Reply::text("I'll run the tests.").tool_call("run_tests", json!({"target": "tests"})))
//!     .reply(Reply::fault(Fault::Status { status: 429, retry_after: Some(1), message: None }))
//!     .reply(Reply::text("Done.").usage(Usage { input: 1200, output: 30, cache_read: 1000, cache_write: 0 }));
//! let server = FakeModel::start(scenario).await?;
//! let base_url = server.base_url(); // give this to the client under test
//! # let _ = base_url;
//! assert!(server.violations().is_empty());
//! # Ok(())
//! # }
//! ```
//!
//! # What is checked
//!
//! Anthropic: `x-api-key` (when required), `anthropic-version: 2023-06-01`,
//! JSON content type, known top-level fields only, `model`, positive
//! `max_tokens`, well-formed `messages` starting with a user turn, known
//! content blocks, `system`, `tools`, `thinking`, at most 4 `cache_control`
//! markers, and the pairing of every `tool_use` with a `tool_result` in the
//! next message. OpenAI: `Authorization: Bearer`, known top-level fields,
//! `model`, well-formed `messages` and `tool_calls`, `tools`,
//! `stream_options` only when streaming, and the pairing of `tool_calls`
//! with `role: "tool"` messages. A request that fails is answered with HTTP
//! 400 (401 for keys) in the provider's error format, carrying the first
//! problem's message; all problems are recorded; no step is consumed.
//!
//! # Scenario files
//!
//! `rein demo` and tests can load scenarios from JSON
//! (`server/scripted/scenarios/example.json` shows every feature):
//!
//! ```json
//! {
//!   "comment": "anything; ignored (any JSON value, at any level)",
//!   "require_api_key": false,
//!   "text_chunk_chars": 4,
//!   "ollama_parallel_tool_calls": false,
//!   "replies": [
//!     {"thinking": "…", "text": "I'll read it.",
//!      "tool_calls": [{"name": "read_file", "input": {"path": "cart.py"}}],
//!      "stop": "tool_use"},
//!     {"fault": {"status": 429, "retry_after": 1}},
//!     {"text": "Done.", "usage": {"input": 1200, "output": 30, "cache_read": 1000},
//!      "faults": [{"delay_ms": 5}, {"cut_after_events": 6}]},
//!     {"branch": [{"when": {"last_tool_result_contains": "FAILED"}, "reply": {"text": "still failing"}}],
//!      "otherwise": {"text": "all green"}},
//!     {"content": [{"text": "First,"}, {"tool_call": {"id": "toolu_x", "name": "run", "input": {}}}, {"text": "then."}]}
//!   ]
//! }
//! ```
//!
//! A reply gives `thinking`, `text` and `tool_calls` (in that order), or
//! `content` for any order; `stop` (`end_turn`, `tool_use`, `max_tokens`,
//! `stop_sequence`, `pause_turn`, `refusal`, `model_context_window_exceeded`);
//! `usage` (`input`, `output`, `cache_read`, `cache_write`; missing ones are
//! 0); and `fault` or `faults`. A fault is an object with one kind key:
//! `{"status": 529, "retry_after": 2, "message": "…"}`,
//! `{"connection_reset": true}`, `{"cut_after_events": 5}`,
//! `{"invalid_json_event": 2}`, `{"malformed_tool_json": true}`, `{"delay_ms": 20}`,
//! `{"wait_for_file": "typed.gate"}` (answer only once that file exists,
//! relative to the server process's working directory: the test decides
//! when, by creating it once what it needs has happened), or
//! `{"stream_error": "overloaded_error", "after_events": 3, "message": "Overloaded"}`.
//! Conditions: `last_tool_result_contains`, `last_user_text_contains`,
//! `system_contains`. Errors name the line and column.
//!
//! `"api_key": "sk-…"` makes the server accept that key only (any other, or
//! none, is answered 401, as a real provider answers a wrong key): a test
//! that sets a key in an editor proves with it that this very key, and not
//! a default, reached the model.
//!
//! `"server_info"` makes it answer where local OpenAI-compatible servers
//! state the model's context window (without it, `GET /props` and
//! `POST /api/show` answer 404, as a hosted API does):
//! `{"llama_cpp_n_ctx": 4096}` (llama.cpp, `GET /props`),
//! `{"vllm_max_model_len": 8192}` (vLLM: each entry of `GET /v1/models`),
//! `{"ollama_num_ctx": 8192, "ollama_context_length": 32768}` (Ollama,
//! `POST /api/show` for a listed model). Each value is sent as given, any
//! JSON; `props_body`, `models_body` and `show_body` replace a route's
//! whole answer. `"fault"` spoils all three routes' answers:
//! `{"status": 500}`, `{"redirect_to": "http://127.0.0.1:PORT"}` (307 to
//! the same path there), `{"pad_to_bytes": 5000000}` (trailing spaces),
//! `{"endless": true}` (the body never ends).
//!
//! This server is also the "scripted" provider of `rein demo`, so it ships
//! inside the binary; it only ever listens on 127.0.0.1 and never reaches the
//! network.

mod anthropic;
mod api_error;
mod conditions;
mod http;
mod openai;
mod plan;
mod resolve;
mod scenario;
mod scenario_file;
mod server;
mod server_info;
mod sse;
mod streamed;
mod validate;

use std::collections::BTreeMap;

use serde_json::Value;

pub use scenario::{
    Condition, Fault, InfoFault, Reply, ReplyParts, Scenario, ScenarioError, ServerInfo,
    StopReason, Usage,
};
pub use server::{FakeModel, FakeModelError};
pub use streamed::{StepStream, Streamed};

/// Which API a request spoke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireFormat {
    /// Anthropic Messages API.
    Anthropic,
    /// OpenAI Chat Completions API (and compatible servers).
    OpenAi,
}

/// One request as the server received it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// The API the endpoint belongs to; for unknown endpoints, the one the
    /// headers suggest (`anthropic-version`/`x-api-key` → Anthropic).
    pub format: WireFormat,
    /// The HTTP method, as sent.
    pub method: String,
    /// The request target, query string included.
    pub path: String,
    /// Header names lowercased; repeated headers joined with ", ".
    pub headers: BTreeMap<String, String>,
    /// The parsed JSON body; a body that is not JSON is kept as a string.
    pub body: Value,
    /// Every validation problem found (empty for a valid request).
    pub violations: Vec<String>,
    /// The scenario step (0-based) that answered it, if one did.
    pub step: Option<usize>,
}
