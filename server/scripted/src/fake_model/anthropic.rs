//! The Anthropic Messages API wire format: the `Message` object, its SSE
//! event stream, and error bodies. Structs (not `json!`) so that fields come
//! out in the order the real API sends them.

use serde::Serialize;
use serde_json::Value;

use super::api_error::{ApiError, anthropic_error_type};
use super::resolve::{ResolvedBlock, ResolvedReply, ToolInput};
use super::scenario::Usage;
use super::sse::{chunk_chars, named_event, to_json};

#[derive(Serialize)]
struct Message<'a> {
    id: &'a str,
    r#type: &'static str,
    role: &'static str,
    model: &'a str,
    content: Vec<ContentBlock<'a>>,
    stop_reason: Option<&'static str>,
    stop_sequence: Option<&'a str>,
    usage: UsageBody,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentBlock<'a> {
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    Text {
        text: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a Value,
    },
}

#[derive(Serialize)]
struct UsageBody {
    input_tokens: u64,
    cache_creation_input_tokens: u64,
    cache_read_input_tokens: u64,
    output_tokens: u64,
}

impl UsageBody {
    fn new(usage: &Usage, output_tokens: u64) -> Self {
        Self {
            input_tokens: usage.input,
            cache_creation_input_tokens: usage.cache_write,
            cache_read_input_tokens: usage.cache_read,
            output_tokens,
        }
    }
}

/// The non-streaming response body.
pub(crate) fn message_body(reply: &ResolvedReply) -> Vec<u8> {
    // A malformed tool input cannot be an object; it travels as a string.
    let malformed_inputs: Vec<Value> = reply
        .blocks
        .iter()
        .map(|block| match block {
            ResolvedBlock::ToolCall {
                input: ToolInput::Malformed(text),
                ..
            } => Value::String(text.clone()),
            _ => Value::Null,
        })
        .collect();
    let content = reply
        .blocks
        .iter()
        .zip(&malformed_inputs)
        .map(|(block, malformed)| match block {
            ResolvedBlock::Thinking {
                thinking,
                signature,
            } => ContentBlock::Thinking {
                thinking,
                signature,
            },
            ResolvedBlock::Text(text) => ContentBlock::Text { text },
            ResolvedBlock::ToolCall { id, name, input } => ContentBlock::ToolUse {
                id,
                name,
                input: match input {
                    ToolInput::Object(value) => value,
                    ToolInput::Malformed(_) => malformed,
                },
            },
        })
        .collect();
    let message = Message {
        id: &reply.id,
        r#type: "message",
        role: "assistant",
        model: &reply.model,
        content,
        stop_reason: Some(reply.stop.anthropic()),
        stop_sequence: reply.stop_sequence.as_deref(),
        usage: UsageBody::new(&reply.usage, reply.usage.output),
    };
    to_json(&message).into_bytes()
}

#[derive(Serialize)]
struct MessageStart<'a> {
    r#type: &'static str,
    message: Message<'a>,
}

#[derive(Serialize)]
struct BlockStart<'a> {
    r#type: &'static str,
    index: usize,
    content_block: StartBlock<'a>,
}

/// A block as `content_block_start` announces it: empty, to be filled by
/// deltas. The real API includes an empty `signature` on thinking blocks.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StartBlock<'a> {
    Thinking {
        thinking: &'static str,
        signature: &'static str,
    },
    Text {
        text: &'static str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Value,
    },
}

#[derive(Serialize)]
struct BlockDelta<'a> {
    r#type: &'static str,
    index: usize,
    delta: Delta<'a>,
}

// The variant names are the wire's `type` values.
#[allow(clippy::enum_variant_names)]
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Delta<'a> {
    TextDelta { text: &'a str },
    InputJsonDelta { partial_json: &'a str },
    ThinkingDelta { thinking: &'a str },
    SignatureDelta { signature: &'a str },
}

#[derive(Serialize)]
struct BlockStop {
    r#type: &'static str,
    index: usize,
}

#[derive(Serialize)]
struct MessageDelta<'a> {
    r#type: &'static str,
    delta: StopDelta<'a>,
    usage: OutputUsage,
}

#[derive(Serialize)]
struct StopDelta<'a> {
    stop_reason: &'static str,
    stop_sequence: Option<&'a str>,
}

#[derive(Serialize)]
struct OutputUsage {
    output_tokens: u64,
}

#[derive(Serialize)]
struct TypeOnly {
    r#type: &'static str,
}

/// The real API writes its ping with a space after the colon.
const PING: &str = "event: ping\ndata: {\"type\": \"ping\"}\n\n";

/// The streaming events, each a complete `event:`/`data:` SSE record.
/// Like the real API: `message_start` (empty content, output_tokens 1), a
/// `ping` after the first `content_block_start`, then per block a start,
/// deltas and a stop, then `message_delta` and `message_stop`.
pub(crate) fn stream_events(reply: &ResolvedReply, chunk: usize) -> Vec<String> {
    let start = MessageStart {
        r#type: "message_start",
        message: Message {
            id: &reply.id,
            r#type: "message",
            role: "assistant",
            model: &reply.model,
            content: Vec::new(),
            stop_reason: None,
            stop_sequence: None,
            usage: UsageBody::new(&reply.usage, 1),
        },
    };
    let mut events = vec![named_event("message_start", &start)];
    for (index, block) in reply.blocks.iter().enumerate() {
        events.push(named_event(
            "content_block_start",
            &BlockStart {
                r#type: "content_block_start",
                index,
                content_block: start_block(block),
            },
        ));
        if index == 0 {
            events.push(PING.to_string());
        }
        let delta = |delta: Delta<'_>| {
            named_event(
                "content_block_delta",
                &BlockDelta {
                    r#type: "content_block_delta",
                    index,
                    delta,
                },
            )
        };
        match block {
            ResolvedBlock::Thinking {
                thinking,
                signature,
            } => {
                for piece in chunk_chars(thinking, chunk) {
                    events.push(delta(Delta::ThinkingDelta { thinking: piece }));
                }
                events.push(delta(Delta::SignatureDelta { signature }));
            }
            ResolvedBlock::Text(text) => {
                for piece in chunk_chars(text, chunk) {
                    events.push(delta(Delta::TextDelta { text: piece }));
                }
            }
            ResolvedBlock::ToolCall { input, .. } => {
                // The real API opens every tool input with an empty piece.
                events.push(delta(Delta::InputJsonDelta { partial_json: "" }));
                let json = input.json();
                for piece in chunk_chars(&json, chunk) {
                    events.push(delta(Delta::InputJsonDelta {
                        partial_json: piece,
                    }));
                }
            }
        }
        events.push(named_event(
            "content_block_stop",
            &BlockStop {
                r#type: "content_block_stop",
                index,
            },
        ));
    }
    if reply.blocks.is_empty() {
        events.push(PING.to_string());
    }
    events.push(named_event(
        "message_delta",
        &MessageDelta {
            r#type: "message_delta",
            delta: StopDelta {
                stop_reason: reply.stop.anthropic(),
                stop_sequence: reply.stop_sequence.as_deref(),
            },
            usage: OutputUsage {
                output_tokens: reply.usage.output,
            },
        },
    ));
    events.push(named_event(
        "message_stop",
        &TypeOnly {
            r#type: "message_stop",
        },
    ));
    events
}

fn start_block(block: &ResolvedBlock) -> StartBlock<'_> {
    match block {
        ResolvedBlock::Thinking { .. } => StartBlock::Thinking {
            thinking: "",
            signature: "",
        },
        ResolvedBlock::Text(_) => StartBlock::Text { text: "" },
        ResolvedBlock::ToolCall { id, name, .. } => StartBlock::ToolUse {
            id,
            name,
            input: Value::Object(serde_json::Map::new()),
        },
    }
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    r#type: &'static str,
    error: ErrorDetail<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_id: Option<&'a str>,
}

#[derive(Serialize)]
struct ErrorDetail<'a> {
    r#type: &'a str,
    message: &'a str,
}

/// `{"type":"error","error":{"type":…,"message":…},"request_id":…}`.
pub(crate) fn error_body(error: &ApiError, request_id: &str) -> Vec<u8> {
    to_json(&ErrorBody {
        r#type: "error",
        error: ErrorDetail {
            r#type: anthropic_error_type(error.status),
            message: &error.message,
        },
        request_id: Some(request_id),
    })
    .into_bytes()
}

/// The in-stream `error` event.
pub(crate) fn error_event(error_type: &str, message: &str) -> String {
    named_event(
        "error",
        &ErrorBody {
            r#type: "error",
            error: ErrorDetail {
                r#type: error_type,
                message,
            },
            request_id: None,
        },
    )
}
