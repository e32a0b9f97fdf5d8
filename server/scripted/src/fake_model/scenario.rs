//! What the fake model says: a [`Scenario`] is an ordered list of steps, each
//! step a [`Reply`] or a branch between replies. The types here are plain
//! data; how they look on disk is in `scenario_file.rs`, how they look on the
//! wire is in `anthropic.rs` and `openai.rs`.

use std::path::{Path, PathBuf};

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::streamed::Streamed;

/// A script for the fake model: the replies it gives, one per valid model
/// request, in order, plus options that shape every reply.
///
/// Built in code with the chainable methods, or loaded from JSON with
/// [`Scenario::from_json`] / [`Scenario::load`] (the format is described in
/// the [module docs](super)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Free-form documentation in scenario files; ignored.
    #[serde(default, skip_serializing, rename = "comment")]
    _comment: IgnoredAny,
    #[serde(default)]
    pub(crate) replies: Vec<Step>,
    #[serde(default = "default_true")]
    pub(crate) require_api_key: bool,
    /// The one API key accepted: any other is answered 401, as the real
    /// API answers a wrong key. A test that sets a key somewhere (an
    /// editor's settings) proves with it that this key, and not a
    /// default, reached the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) api_key: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub(crate) ollama_parallel_tool_calls: bool,
    #[serde(default = "default_text_chunk_chars")]
    pub(crate) text_chunk_chars: usize,
    /// What `GET /v1/models` (or `/models`) lists.
    #[serde(default = "default_models", skip_serializing_if = "is_default_models")]
    pub(crate) models: Vec<String>,
    /// What the server says about itself where local servers do
    /// (`GET /props`, `POST /api/show`, the model list's `max_model_len`);
    /// without it those routes answer 404, as a hosted API's do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) server_info: Option<ServerInfo>,
    /// Told of every event streamed ([`Scenario::watch_streams`]).
    #[serde(skip)]
    pub(crate) streamed: Option<Streamed>,
}

/// The models the fake lists unless told otherwise: one per provider
/// family, so a client's "is my model there?" check has something real to
/// find or miss.
fn is_default_models(models: &Vec<String>) -> bool {
    *models == default_models()
}

fn default_models() -> Vec<String> {
    [
        "claude-sonnet-4-5",
        "claude-haiku-4-5",
        "gpt-4o",
        "gpt-4o-mini",
    ]
    .map(str::to_owned)
    .to_vec()
}

fn default_true() -> bool {
    true
}

fn is_false(value: &bool) -> bool {
    !value
}

/// Small on purpose: clients must assemble text from many deltas.
const DEFAULT_TEXT_CHUNK_CHARS: usize = 4;

fn default_text_chunk_chars() -> usize {
    DEFAULT_TEXT_CHUNK_CHARS
}

impl Default for Scenario {
    fn default() -> Self {
        Self {
            _comment: IgnoredAny,
            replies: Vec::new(),
            require_api_key: true,
            api_key: None,
            ollama_parallel_tool_calls: false,
            text_chunk_chars: DEFAULT_TEXT_CHUNK_CHARS,
            models: default_models(),
            server_info: None,
            streamed: None,
        }
    }
}

/// Why a scenario file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("cannot read scenario {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// The JSON is malformed or does not describe a scenario; the message
    /// carries serde_json's line and column.
    #[error("invalid scenario{}: {source}", path.as_deref().map(|p| format!(" {p}")).unwrap_or_default())]
    Parse {
        /// The file, when loaded from one.
        path: Option<String>,
        /// serde_json's error, with line and column.
        #[source]
        source: serde_json::Error,
    },
}

impl Scenario {
    /// An empty scenario: every request is answered with "scenario exhausted".
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses a scenario from JSON text.
    pub fn from_json(text: &str) -> Result<Self, ScenarioError> {
        serde_json::from_str(text).map_err(|source| ScenarioError::Parse { path: None, source })
    }

    /// Reads and parses a scenario file.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ScenarioError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            path: path.display().to_string(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| ScenarioError::Parse {
            path: Some(path.display().to_string()),
            source,
        })
    }

    /// Appends a step that always gives `reply`.
    pub fn reply(mut self, reply: Reply) -> Self {
        self.replies.push(Step::Reply(reply));
        self
    }

    /// Appends ONE step that, when consumed, gives the reply of the first
    /// case whose condition holds for that request, else `otherwise`.
    pub fn branch(mut self, cases: Vec<(Condition, Reply)>, otherwise: Reply) -> Self {
        let cases = cases
            .into_iter()
            .map(|(when, reply)| Case { when, reply })
            .collect();
        self.replies.push(Step::Branch { cases, otherwise });
        self
    }

    /// Whether requests must carry an API key (default: true). `rein demo`
    /// turns this off so it works with no configuration.
    pub fn require_api_key(mut self, required: bool) -> Self {
        self.require_api_key = required;
        self
    }

    /// Accept only this API key (`x-api-key`, or `Authorization: Bearer`);
    /// any other, or none, is answered 401.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// OpenAI streaming quirk of Ollama: every tool call is sent whole, in one
    /// chunk, with `index: 0` and a distinct `id`.
    pub fn ollama_parallel_tool_calls(mut self) -> Self {
        self.ollama_parallel_tool_calls = true;
        self
    }

    /// How many characters each streamed text, thinking or tool-argument
    /// delta carries. Default 4; 0 is treated as 1.
    pub fn text_chunk_chars(mut self, chars: usize) -> Self {
        self.text_chunk_chars = chars;
        self
    }

    /// Tells `streamed` of each event of a streamed reply as it is sent,
    /// so a test can wait for the moment a reply is streaming.
    pub fn watch_streams(mut self, streamed: &Streamed) -> Self {
        self.streamed = Some(streamed.clone());
        self
    }

    /// The model ids `GET /v1/models` lists (default: a few real ids).
    pub fn models<S: Into<String>>(mut self, models: impl IntoIterator<Item = S>) -> Self {
        self.models = models.into_iter().map(Into::into).collect();
        self
    }

    /// Answers where llama.cpp, vLLM and Ollama state the model's context
    /// window, as `info` says ([`ServerInfo`]).
    pub fn server_info(mut self, info: ServerInfo) -> Self {
        self.server_info = Some(info);
        self
    }

    /// Number of steps in the script.
    pub fn len(&self) -> usize {
        self.replies.len()
    }

    /// Whether the script has no steps.
    pub fn is_empty(&self) -> bool {
        self.replies.is_empty()
    }
}

/// One scripted step, consumed by one valid model request.
/// (De)serialized through its file form (`scenario_file.rs`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    Reply(Reply),
    Branch { cases: Vec<Case>, otherwise: Reply },
}

impl Step {
    /// The reply this step gives for a request, judged by `matches`.
    pub(crate) fn choose(&self, matches: impl Fn(&Condition) -> bool) -> &Reply {
        match self {
            Step::Reply(reply) => reply,
            Step::Branch { cases, otherwise } => cases
                .iter()
                .find(|case| matches(&case.when))
                .map_or(otherwise, |case| &case.reply),
        }
    }
}

/// One arm of a branch: `{"when": {…}, "reply": {…}}` in files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Case {
    pub(crate) when: Condition,
    pub(crate) reply: Reply,
}

/// What the model answers to one request: content blocks in order, how it
/// stopped, what it cost, and the faults applied while sending it.
///
/// `Reply::text(…)` and `Reply::tool_call(…)` start a reply, and
/// `.text(…)` / `.tool_call(…)` append to one, with the same names. Rust
/// allows one inherent item per name, so the appending pair lives on
/// [`ReplyParts`], which `Reply` derefs to: method calls skip the
/// self-less constructors and find them there, with no extra import.
///
/// (De)serialized through its file form (`scenario_file.rs`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    pub(crate) parts: ReplyParts,
}

/// The contents of a [`Reply`]. Never named by users: it only carries the
/// chainable `.text(…)` and `.tool_call(…)` (see [`Reply`] for why).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReplyParts {
    pub(crate) content: Vec<Block>,
    pub(crate) stop: Option<StopReason>,
    pub(crate) usage: Option<Usage>,
    pub(crate) faults: Vec<Fault>,
}

impl std::ops::Deref for Reply {
    type Target = ReplyParts;

    fn deref(&self) -> &ReplyParts {
        &self.parts
    }
}

impl ReplyParts {
    /// Appends a text block: `Reply::text("a").text("b")`.
    pub fn text(&self, text: impl Into<String>) -> Reply {
        self.to_reply().with_block(Block::Text(text.into()))
    }

    /// Appends a tool call (id assigned by the server):
    /// `Reply::text("Running.").tool_call("run_tests", json!({}))`.
    pub fn tool_call(&self, name: impl Into<String>, input: Value) -> Reply {
        self.to_reply().with_tool_call(None, name.into(), input)
    }

    /// Reached through `Deref`, so the parts are borrowed: appending copies
    /// them (a few blocks, in tests) into a new reply.
    fn to_reply(&self) -> Reply {
        Reply {
            parts: self.clone(),
        }
    }

    /// The stop reason the reply reports.
    pub(crate) fn stop_reason(&self) -> StopReason {
        self.stop.unwrap_or_else(|| {
            if self.tool_calls().next().is_some() {
                StopReason::ToolUse
            } else {
                StopReason::EndTurn
            }
        })
    }

    pub(crate) fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|block| match block {
            Block::ToolCall(call) => Some(call),
            _ => None,
        })
    }
}

/// One content block of a reply.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Block {
    Thinking(String),
    Text(String),
    ToolCall(ToolCall),
}

/// A tool call the model makes. Without an `id`, the server assigns a
/// deterministic one in the provider's style.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolCall {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) id: Option<String>,
    pub(crate) name: String,
    #[serde(default = "empty_object")]
    pub(crate) input: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

impl Reply {
    /// A reply with no content (useful with `.thinking(…)` first).
    pub fn empty() -> Self {
        Self::default()
    }

    /// A reply that starts with a text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::default().with_block(Block::Text(text.into()))
    }

    /// A reply that starts with a tool call (id assigned by the server).
    pub fn tool_call(name: impl Into<String>, input: Value) -> Self {
        Self::default().with_tool_call(None, name.into(), input)
    }

    /// A reply that only fails: an HTTP error status or a connection reset.
    pub fn fault(fault: Fault) -> Self {
        Self::default().with_fault(fault)
    }

    /// Appends a thinking block (Anthropic only; OpenAI rendering skips it).
    pub fn thinking(self, thinking: impl Into<String>) -> Self {
        self.with_block(Block::Thinking(thinking.into()))
    }

    /// Appends a tool call with a fixed id, e.g. to script a later
    /// `tool_result` that refers to it.
    pub fn tool_call_with_id(
        self,
        id: impl Into<String>,
        name: impl Into<String>,
        input: Value,
    ) -> Self {
        self.with_tool_call(Some(id.into()), name.into(), input)
    }

    /// Sets the stop reason (default: `ToolUse` when the reply has tool
    /// calls, else `EndTurn`).
    pub fn stop(mut self, stop: StopReason) -> Self {
        self.parts.stop = Some(stop);
        self
    }

    /// Sets the reported token usage (default: estimated from sizes).
    pub fn usage(mut self, usage: Usage) -> Self {
        self.parts.usage = Some(usage);
        self
    }

    /// Adds a fault applied while this reply is sent.
    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.parts.faults.push(fault);
        self
    }

    fn with_block(mut self, block: Block) -> Self {
        self.parts.content.push(block);
        self
    }

    fn with_tool_call(self, id: Option<String>, name: String, input: Value) -> Self {
        self.with_block(Block::ToolCall(ToolCall { id, name, input }))
    }
}

/// Why the model stopped. Rendered verbatim for Anthropic; mapped to
/// `finish_reason` for OpenAI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its turn.
    EndTurn,
    /// The model wants tool results.
    ToolUse,
    /// The request's `max_tokens` was reached.
    MaxTokens,
    /// A stop sequence of the request matched.
    StopSequence,
    /// A long-running server-tool turn was paused.
    PauseTurn,
    /// The model declined to answer.
    Refusal,
    /// The context window filled up.
    ModelContextWindowExceeded,
}

impl StopReason {
    /// Anthropic's `stop_reason`.
    pub fn anthropic(self) -> &'static str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::ToolUse => "tool_use",
            StopReason::MaxTokens => "max_tokens",
            StopReason::StopSequence => "stop_sequence",
            StopReason::PauseTurn => "pause_turn",
            StopReason::Refusal => "refusal",
            StopReason::ModelContextWindowExceeded => "model_context_window_exceeded",
        }
    }

    /// OpenAI's `finish_reason`.
    pub fn openai(self) -> &'static str {
        match self {
            StopReason::EndTurn | StopReason::StopSequence | StopReason::PauseTurn => "stop",
            StopReason::ToolUse => "tool_calls",
            StopReason::MaxTokens | StopReason::ModelContextWindowExceeded => "length",
            StopReason::Refusal => "content_filter",
        }
    }
}

/// Token usage as Anthropic counts it: `input` is the *uncached* input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Usage {
    /// Input tokens not read from or written to the cache.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
}

/// Something going wrong on purpose.
///
/// (De)serialized through its file form (`scenario_file.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Answer with this HTTP status and the provider's error body; with
    /// `retry_after`, also a `retry-after: <seconds>` header.
    Status {
        status: u16,
        retry_after: Option<u64>,
        message: Option<String>,
    },
    /// Read the request, then reset the TCP connection without answering.
    ConnectionReset,
    /// Streaming: send the first `n` SSE events, then drop the connection
    /// without ending the chunked body. Non-streaming: send the headers and
    /// half the body, then drop.
    CutAfterEvents(usize),
    /// Streaming: after the first `n` SSE events (at most all but the
    /// last), one event whose data is not JSON (the next event's data cut
    /// in half, as a broken proxy or a garbled buffer would send it), then
    /// the whole stream as usual.
    /// Non-streaming replies are sent unchanged.
    InvalidJsonEvent(usize),
    /// The first tool call's arguments are invalid JSON (its serialized
    /// input minus the closing brace). Anthropic non-streaming replies carry
    /// that text as a JSON string in `input`, since an object cannot be
    /// malformed.
    MalformedToolJson,
    /// Sleep this long between SSE events (before the body, when not
    /// streaming).
    Slow { delay_ms: u64 },
    /// Streaming: send the headers, then wait this long before the first
    /// event, as a local model reading a long prompt does (non-streaming:
    /// before the body).
    SlowStart { delay_ms: u64 },
    /// Answer only once this file exists (a relative path is taken from the
    /// server process's working directory): the test creates it when what
    /// it needs has happened, instead of hoping a delay was long enough.
    WaitForFile(PathBuf),
    /// Streaming: after `after_events` events, send the provider's in-stream
    /// error and end the stream. Non-streaming: answer with the HTTP status
    /// that error type stands for.
    StreamError {
        after_events: usize,
        error_type: String,
        message: String,
    },
}

/// What the server says about itself on the routes where local
/// OpenAI-compatible servers state the model's context window. Each value
/// is sent as given (any JSON, so a test can send a string or a huge
/// number where a count belongs); a `*_body` replaces the whole answer of
/// its route. A route with nothing to say answers 404.
///
/// (De)serialized through its file form (`scenario_file.rs`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerInfo {
    /// llama.cpp: `GET /props` → `default_generation_settings.n_ctx`.
    pub(crate) llama_cpp_n_ctx: Option<Value>,
    /// vLLM: every entry of `GET /v1/models` gets this `max_model_len`.
    pub(crate) vllm_max_model_len: Option<Value>,
    /// Ollama: `POST /api/show` → `num_ctx <n>` in `parameters`.
    pub(crate) ollama_num_ctx: Option<Value>,
    /// Ollama: `POST /api/show` → `model_info["<arch>.context_length"]`.
    pub(crate) ollama_context_length: Option<Value>,
    /// The whole body of `GET /props`.
    pub(crate) props_body: Option<Value>,
    /// The whole body of `GET /v1/models`.
    pub(crate) models_body: Option<Value>,
    /// The whole body of `POST /api/show` (for any model).
    pub(crate) show_body: Option<Value>,
    /// How all three routes misbehave.
    pub(crate) fault: Option<InfoFault>,
}

impl ServerInfo {
    /// Nothing to say: `/props` and `/api/show` answer 404.
    pub fn new() -> Self {
        Self::default()
    }

    /// As `llama-server -c <n_ctx>` answers `GET /props`.
    pub fn llama_cpp_n_ctx(mut self, n_ctx: impl Into<Value>) -> Self {
        self.llama_cpp_n_ctx = Some(n_ctx.into());
        self
    }

    /// As `vllm serve --max-model-len <len>` lists its model.
    pub fn vllm_max_model_len(mut self, len: impl Into<Value>) -> Self {
        self.vllm_max_model_len = Some(len.into());
        self
    }

    /// As Ollama shows a model whose Modelfile sets `num_ctx`.
    pub fn ollama_num_ctx(mut self, num_ctx: impl Into<Value>) -> Self {
        self.ollama_num_ctx = Some(num_ctx.into());
        self
    }

    /// As Ollama shows a model trained for this context length.
    pub fn ollama_context_length(mut self, length: impl Into<Value>) -> Self {
        self.ollama_context_length = Some(length.into());
        self
    }

    /// `GET /props` answers exactly this.
    pub fn props_body(mut self, body: Value) -> Self {
        self.props_body = Some(body);
        self
    }

    /// `GET /v1/models` answers exactly this.
    pub fn models_body(mut self, body: Value) -> Self {
        self.models_body = Some(body);
        self
    }

    /// `POST /api/show` answers exactly this.
    pub fn show_body(mut self, body: Value) -> Self {
        self.show_body = Some(body);
        self
    }

    /// `/props`, `/v1/models` and `/api/show` all misbehave so.
    pub fn fault(mut self, fault: InfoFault) -> Self {
        self.fault = Some(fault);
        self
    }
}

/// How the server-info routes misbehave, each applied to the answer the
/// route would have given (so a client that ignores the misbehaviour
/// finds a valid answer, and a test proves it did not).
///
/// (De)serialized through its file form (`scenario_file.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InfoFault {
    /// The answer's body with this status.
    Status(u16),
    /// `307 Temporary Redirect` to the same path under this base URL
    /// (`http://127.0.0.1:PORT`), the answer's body included.
    RedirectTo(String),
    /// The answer followed by spaces (still the same JSON) up to this many
    /// bytes.
    PadToBytes(usize),
    /// All of the answer but its last byte, then a space every 100 ms,
    /// for as long as the client listens.
    Endless,
}

/// A test on the request that consumes a branch step. Texts are matched as
/// case-sensitive substrings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// The last tool result in the request (Anthropic `tool_result` content,
    /// OpenAI `role: "tool"` message content).
    LastToolResultContains(String),
    /// The text of the last user message that has text (tool-result-only
    /// user messages are skipped).
    LastUserTextContains(String),
    /// The system prompt (Anthropic `system`; OpenAI system and developer
    /// messages).
    SystemContains(String),
}
