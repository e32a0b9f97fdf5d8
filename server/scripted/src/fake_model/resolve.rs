//! Turning a scripted [`Reply`] into exactly what will be sent: ids assigned,
//! stop reason and usage defaulted, faults that change content applied. Both
//! wire formats render from this one shape.

use serde_json::Value;

use super::WireFormat;
use super::scenario::{Block, Fault, Reply, StopReason, Usage};

/// A reply with every detail settled.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedReply {
    /// `msg_fake_…` or `chatcmpl-fake…`.
    pub(crate) id: String,
    /// Echoed from the request, as the real APIs do.
    pub(crate) model: String,
    pub(crate) blocks: Vec<ResolvedBlock>,
    pub(crate) stop: StopReason,
    /// The stop sequence that "matched": the request's first one.
    pub(crate) stop_sequence: Option<String>,
    pub(crate) usage: Usage,
}

#[derive(Debug, Clone)]
pub(crate) enum ResolvedBlock {
    Thinking {
        thinking: String,
        signature: String,
    },
    Text(String),
    ToolCall {
        id: String,
        name: String,
        input: ToolInput,
    },
}

/// A tool call's arguments, well-formed or deliberately broken.
#[derive(Debug, Clone)]
pub(crate) enum ToolInput {
    Object(Value),
    Malformed(String),
}

impl ToolInput {
    /// The arguments as JSON text, which is what streams carry.
    pub(crate) fn json(&self) -> String {
        match self {
            ToolInput::Object(value) => value.to_string(),
            ToolInput::Malformed(text) => text.clone(),
        }
    }
}

impl ResolvedReply {
    /// All text blocks joined, as OpenAI's single `content` string.
    pub(crate) fn text(&self) -> String {
        self.blocks
            .iter()
            .filter_map(|block| match block {
                ResolvedBlock::Text(text) => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    pub(crate) fn tool_calls(&self) -> impl Iterator<Item = (&str, &str, &ToolInput)> {
        self.blocks.iter().filter_map(|block| match block {
            ResolvedBlock::ToolCall { id, name, input } => {
                Some((id.as_str(), name.as_str(), input))
            }
            _ => None,
        })
    }
}

/// Deterministic, per-server counters behind every generated id, so
/// snapshots are stable and ids never repeat within one server.
#[derive(Debug, Default)]
pub(crate) struct Ids {
    requests: u64,
    messages: u64,
    tool_calls: u64,
    signatures: u64,
}

impl Ids {
    /// `req_fake_0001`, for `request-id` / `x-request-id`.
    pub(crate) fn request(&mut self) -> String {
        self.requests += 1;
        format!("req_fake_{:04}", self.requests)
    }

    fn message(&mut self, format: WireFormat) -> String {
        self.messages += 1;
        match format {
            WireFormat::Anthropic => format!("msg_fake_{:04}", self.messages),
            WireFormat::OpenAi => format!("chatcmpl-fake{:04}", self.messages),
        }
    }

    /// The next tool call id that the conversation in `body` has not used
    /// yet: a client resuming a task after a crash sends a history made by
    /// an earlier server, whose counter started at the same place, and the
    /// real APIs reject a request whose `tool_use` ids repeat.
    fn tool_call(&mut self, format: WireFormat, body: &Value) -> String {
        let used = body.to_string();
        loop {
            self.tool_calls += 1;
            let id = match format {
                WireFormat::Anthropic => format!("toolu_fake_{:04}", self.tool_calls),
                WireFormat::OpenAi => format!("call_fake_{:04}", self.tool_calls),
            };
            if !used.contains(&format!("\"{id}\"")) {
                return id;
            }
        }
    }

    fn signature(&mut self) -> String {
        self.signatures += 1;
        format!("sig_fake_{:04}", self.signatures)
    }
}

/// What the request contributes to the reply.
pub(crate) struct RequestFacts<'a> {
    pub(crate) format: WireFormat,
    pub(crate) body: &'a Value,
    pub(crate) body_bytes: usize,
}

/// Settles every detail of `reply` for this request.
pub(crate) fn resolve(reply: &Reply, request: &RequestFacts<'_>, ids: &mut Ids) -> ResolvedReply {
    let malformed = reply.faults.contains(&Fault::MalformedToolJson);
    let mut first_tool_call = true;
    let blocks = reply
        .content
        .iter()
        .map(|block| match block {
            Block::Thinking(thinking) => ResolvedBlock::Thinking {
                thinking: thinking.clone(),
                signature: ids.signature(),
            },
            Block::Text(text) => ResolvedBlock::Text(text.clone()),
            Block::ToolCall(call) => {
                let break_this = malformed && first_tool_call;
                first_tool_call = false;
                ResolvedBlock::ToolCall {
                    id: call
                        .id
                        .clone()
                        .unwrap_or_else(|| ids.tool_call(request.format, request.body)),
                    name: call.name.clone(),
                    input: if break_this {
                        ToolInput::Malformed(broken_json(&call.input))
                    } else {
                        ToolInput::Object(call.input.clone())
                    },
                }
            }
        })
        .collect::<Vec<_>>();
    let stop = reply.stop_reason();
    let model = request
        .body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let stop_sequence = match stop {
        StopReason::StopSequence => request
            .body
            .get("stop_sequences")
            .and_then(|sequences| sequences.get(0))
            .and_then(Value::as_str)
            .map(str::to_string),
        _ => None,
    };
    let usage = reply
        .usage
        .unwrap_or_else(|| estimated_usage(request.body_bytes, &blocks));
    ResolvedReply {
        id: ids.message(request.format),
        model: model.to_string(),
        blocks,
        stop,
        stop_sequence,
        usage,
    }
}

/// The serialized input without its closing brace: a realistic truncation.
fn broken_json(input: &Value) -> String {
    let mut text = input.to_string();
    text.pop();
    text
}

/// About four bytes per token, rounded up, when the scenario gives no usage.
fn estimated_usage(body_bytes: usize, blocks: &[ResolvedBlock]) -> Usage {
    let content_bytes: usize = blocks
        .iter()
        .map(|block| match block {
            ResolvedBlock::Thinking { thinking, .. } => thinking.len(),
            ResolvedBlock::Text(text) => text.len(),
            ResolvedBlock::ToolCall { name, input, .. } => name.len() + input.json().len(),
        })
        .sum();
    Usage {
        input: (body_bytes as u64).div_ceil(4),
        output: (content_bytes as u64).div_ceil(4),
        cache_read: 0,
        cache_write: 0,
    }
}
