//! The OpenAI Chat Completions wire format: `chat.completion`, the
//! `chat.completion.chunk` stream, and error bodies. Thinking blocks have no
//! place here and are skipped.

use serde::Serialize;

use super::api_error::{ApiError, openai_error_type};
use super::resolve::ResolvedReply;
use super::scenario::Usage;
use super::sse::{chunk_chars, data_event, to_json};

/// Stream options that change what OpenAI-style servers send.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StreamStyle {
    /// `stream_options.include_usage` was set: a final usage chunk, and
    /// `"usage": null` on every other chunk.
    pub(crate) include_usage: bool,
    /// Ollama's way: each tool call whole, in one chunk, at index 0.
    pub(crate) ollama_tool_calls: bool,
    pub(crate) chunk_chars: usize,
}

#[derive(Serialize)]
struct Completion<'a> {
    id: &'a str,
    object: &'static str,
    created: u64,
    model: &'a str,
    choices: [Choice<'a>; 1],
    usage: UsageBody,
}

#[derive(Serialize)]
struct Choice<'a> {
    index: u32,
    message: AssistantMessage<'a>,
    logprobs: Option<()>,
    finish_reason: &'static str,
}

#[derive(Serialize)]
struct AssistantMessage<'a> {
    role: &'static str,
    content: Option<String>,
    refusal: Option<()>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCall<'a>>,
}

#[derive(Serialize)]
struct ToolCall<'a> {
    id: &'a str,
    r#type: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    arguments: String,
}

#[derive(Serialize)]
struct UsageBody {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
    prompt_tokens_details: PromptDetails,
}

#[derive(Serialize)]
struct PromptDetails {
    cached_tokens: u64,
}

impl From<&Usage> for UsageBody {
    /// OpenAI's prompt count includes cached tokens; ours does not.
    fn from(usage: &Usage) -> Self {
        let prompt_tokens = usage
            .input
            .saturating_add(usage.cache_read)
            .saturating_add(usage.cache_write);
        Self {
            prompt_tokens,
            completion_tokens: usage.output,
            total_tokens: prompt_tokens.saturating_add(usage.output),
            prompt_tokens_details: PromptDetails {
                cached_tokens: usage.cache_read,
            },
        }
    }
}

/// The non-streaming response body.
pub(crate) fn completion_body(reply: &ResolvedReply, created: u64) -> Vec<u8> {
    let text = reply.text();
    let tool_calls = reply
        .tool_calls()
        .map(|(id, name, input)| ToolCall {
            id,
            r#type: "function",
            function: Function {
                name,
                arguments: input.json(),
            },
        })
        .collect();
    let completion = Completion {
        id: &reply.id,
        object: "chat.completion",
        created,
        model: &reply.model,
        choices: [Choice {
            index: 0,
            message: AssistantMessage {
                role: "assistant",
                content: (!text.is_empty()).then_some(text),
                refusal: None,
                tool_calls,
            },
            logprobs: None,
            finish_reason: reply.stop.openai(),
        }],
        usage: UsageBody::from(&reply.usage),
    };
    to_json(&completion).into_bytes()
}

#[derive(Serialize)]
struct Chunk<'a> {
    id: &'a str,
    object: &'static str,
    created: u64,
    model: &'a str,
    choices: Vec<ChunkChoice<'a>>,
    /// Present (as `null` until the last chunk) only with `include_usage`.
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<Option<UsageBody>>,
}

#[derive(Serialize)]
struct ChunkChoice<'a> {
    index: u32,
    delta: Delta<'a>,
    logprobs: Option<()>,
    finish_reason: Option<&'static str>,
}

#[derive(Serialize, Default)]
struct Delta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_calls: Option<[ToolCallDelta<'a>; 1]>,
}

#[derive(Serialize)]
struct ToolCallDelta<'a> {
    index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    r#type: Option<&'static str>,
    function: FunctionDelta<'a>,
}

#[derive(Serialize)]
struct FunctionDelta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    arguments: &'a str,
}

/// The streaming events: role, content pieces, tool calls, the finish
/// reason, the usage chunk when asked for, and `[DONE]`.
pub(crate) fn stream_events(
    reply: &ResolvedReply,
    created: u64,
    style: StreamStyle,
) -> Vec<String> {
    let chunk = |delta: Delta<'_>, finish_reason: Option<&'static str>| {
        data_event(&Chunk {
            id: &reply.id,
            object: "chat.completion.chunk",
            created,
            model: &reply.model,
            choices: vec![ChunkChoice {
                index: 0,
                delta,
                logprobs: None,
                finish_reason,
            }],
            usage: style.include_usage.then_some(None),
        })
    };
    let mut events = vec![chunk(
        Delta {
            role: Some("assistant"),
            content: Some(""),
            ..Delta::default()
        },
        None,
    )];
    let text = reply.text();
    for piece in chunk_chars(&text, style.chunk_chars) {
        events.push(chunk(
            Delta {
                content: Some(piece),
                ..Delta::default()
            },
            None,
        ));
    }
    for (index, (id, name, input)) in reply.tool_calls().enumerate() {
        let arguments = input.json();
        let announce = |index: usize, arguments: &str| {
            chunk(
                Delta {
                    tool_calls: Some([ToolCallDelta {
                        index,
                        id: Some(id),
                        r#type: Some("function"),
                        function: FunctionDelta {
                            name: Some(name),
                            arguments,
                        },
                    }]),
                    ..Delta::default()
                },
                None,
            )
        };
        if style.ollama_tool_calls {
            events.push(announce(0, &arguments));
            continue;
        }
        events.push(announce(index, ""));
        for piece in chunk_chars(&arguments, style.chunk_chars) {
            events.push(chunk(
                Delta {
                    tool_calls: Some([ToolCallDelta {
                        index,
                        id: None,
                        r#type: None,
                        function: FunctionDelta {
                            name: None,
                            arguments: piece,
                        },
                    }]),
                    ..Delta::default()
                },
                None,
            ));
        }
    }
    events.push(chunk(Delta::default(), Some(reply.stop.openai())));
    if style.include_usage {
        events.push(data_event(&Chunk {
            id: &reply.id,
            object: "chat.completion.chunk",
            created,
            model: &reply.model,
            choices: Vec::new(),
            usage: Some(Some(UsageBody::from(&reply.usage))),
        }));
    }
    events.push("data: [DONE]\n\n".to_string());
    events
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: ErrorDetail<'a>,
}

#[derive(Serialize)]
struct ErrorDetail<'a> {
    message: &'a str,
    r#type: &'a str,
    param: Option<&'a str>,
    code: Option<&'a str>,
}

/// `{"error":{"message":…,"type":…,"param":…,"code":…}}`.
pub(crate) fn error_body(error: &ApiError) -> Vec<u8> {
    to_json(&ErrorBody {
        error: ErrorDetail {
            message: &error.message,
            r#type: openai_error_type(error.status),
            param: error.param.as_deref(),
            code: error.code.as_deref(),
        },
    })
    .into_bytes()
}

/// The in-stream error: a `data:` line holding an error object.
pub(crate) fn error_event(error_type: &str, message: &str) -> String {
    data_event(&ErrorBody {
        error: ErrorDetail {
            message,
            r#type: error_type,
            param: None,
            code: None,
        },
    })
}
