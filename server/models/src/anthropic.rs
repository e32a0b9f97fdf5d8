//! The Anthropic Messages API: `POST {base}/v1/messages`.
//! <https://docs.anthropic.com/en/api/messages>,
//! <https://docs.anthropic.com/en/docs/build-with-claude/streaming>.

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::assemble::{Assembler, token_count};
use crate::error::{ModelError, is_context_overflow, parse_context_numbers};
use crate::retry::retry_after;
use crate::secret::{ApiKey, redact};
use crate::sse::SseEvent;
use crate::types::{Message, ModelEvent, ModelRequest, Part, Role, StopReason, ToolChoice, Usage};
use crate::wire::{Decoder, Wire};

const PROVIDER: &str = "Anthropic";
pub const API_VERSION: &str = "2023-06-01";
/// Anthropic accepts at most four cache breakpoints per request.
const MAX_BREAKPOINTS: usize = 4;

pub(crate) struct Anthropic {
    base_url: String,
    key: ApiKey,
}

impl Anthropic {
    pub(crate) fn new(base_url: &str, key: ApiKey) -> Self {
        Self {
            base_url: base_url.trim_end_matches('/').to_owned(),
            key,
        }
    }
}

impl Wire for Anthropic {
    fn provider(&self) -> &'static str {
        PROVIDER
    }

    fn constrains_calls(&self) -> bool {
        true
    }

    fn url(&self) -> String {
        format!("{}/v1/messages", self.base_url)
    }

    fn models_url(&self) -> String {
        format!("{}/v1/models", self.base_url)
    }

    fn headers(&self) -> Result<HeaderMap, ModelError> {
        let mut headers = HeaderMap::new();
        let mut key = HeaderValue::from_str(self.key.expose()).map_err(|_| {
            ModelError::InvalidRequest(
                "ANTHROPIC_API_KEY contains characters not allowed in a header".into(),
            )
        })?;
        key.set_sensitive(true);
        headers.insert(HeaderName::from_static("x-api-key"), key);
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        Ok(headers)
    }

    fn body(&self, request: &ModelRequest, stream: bool) -> Value {
        request_body(request, stream)
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(StreamDecoder::default())
    }

    fn parse_reply(&self, body: &[u8]) -> Result<Vec<ModelEvent>, ModelError> {
        parse_reply(body)
    }

    fn error(&self, status: u16, headers: &HeaderMap, body: &[u8], model: &str) -> ModelError {
        let (kind, message) = match serde_json::from_slice::<ErrorBody>(body) {
            Ok(body) => (body.error.kind, body.error.message),
            Err(_) => (
                String::new(),
                String::from_utf8_lossy(body).chars().take(500).collect(),
            ),
        };
        let message = redact(&message, Some(&self.key));
        classify(status, kind, message, retry_after(headers), model)
    }
}

fn classify(
    status: u16,
    kind: String,
    message: String,
    retry_after: Option<std::time::Duration>,
    model: &str,
) -> ModelError {
    match status {
        401 => ModelError::Unauthorized {
            provider: PROVIDER,
            status,
            kind,
            message,
            key_from: "ANTHROPIC_API_KEY".to_owned(),
        },
        404 if message.contains("model") => ModelError::ModelNotFound {
            provider: PROVIDER,
            model: model.to_owned(),
            status,
            message,
        },
        400 | 413 if is_context_overflow(&message) => {
            let (tokens, window) = parse_context_numbers(&message);
            ModelError::ContextTooLong {
                tokens,
                window,
                message,
            }
        }
        408 | 429 | 500..=504 | 529 => ModelError::Unavailable {
            provider: PROVIDER,
            status,
            kind,
            message,
            retry_after,
        },
        _ if status >= 500 => ModelError::Unavailable {
            provider: PROVIDER,
            status,
            kind,
            message,
            retry_after,
        },
        _ => ModelError::Rejected {
            provider: PROVIDER,
            status,
            kind,
            message,
        },
    }
}

#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Deserialize)]
struct ErrorDetail {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    message: String,
}

// ---- request ------------------------------------------------------------

fn request_body(request: &ModelRequest, stream: bool) -> Value {
    let mut breakpoints = 0;
    let cache = request.cache.enabled;
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_output_tokens,
        "messages": messages(&request.messages),
    });
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect();
        if cache {
            breakpoints += mark(tools.last_mut());
        }
        body["tools"] = Value::Array(tools);
        if request.tool_choice == ToolChoice::Required {
            body["tool_choice"] = json!({"type": "any"});
        }
    }
    if !request.system.is_empty() {
        let mut system: Vec<Value> = request
            .system
            .iter()
            .map(|s| json!({"type": "text", "text": s}))
            .collect();
        if cache {
            breakpoints += mark(system.last_mut());
        }
        body["system"] = Value::Array(system);
    }
    if cache {
        // The end of the stable prefix (read next turn), then the end of the
        // whole history (written now, read by the next call).
        let last = request.messages.len().checked_sub(1);
        let mut targets = vec![request.cache.stable_message, last];
        targets.dedup();
        if let Some(messages) = body["messages"].as_array_mut() {
            for index in targets.into_iter().flatten() {
                if breakpoints >= MAX_BREAKPOINTS {
                    break;
                }
                let block = messages
                    .get_mut(index)
                    .and_then(|m| m["content"].as_array_mut())
                    .and_then(|c| c.last_mut());
                breakpoints += mark(block);
            }
        }
    }
    if let Some(t) = request.temperature {
        body["temperature"] = json!(t);
    }
    if stream {
        body["stream"] = json!(true);
    }
    body
}

/// Adds an ephemeral cache breakpoint to a block; returns how many it added.
fn mark(block: Option<&mut Value>) -> usize {
    match block {
        Some(Value::Object(block)) if !block.contains_key("cache_control") => {
            block.insert("cache_control".into(), json!({"type": "ephemeral"}));
            1
        }
        _ => 0,
    }
}

fn messages(messages: &[Message]) -> Vec<Value> {
    messages
        .iter()
        .map(|m| {
            let role = match m.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            json!({"role": role, "content": m.parts.iter().filter_map(block).collect::<Vec<_>>()})
        })
        .collect()
}

fn block(part: &Part) -> Option<Value> {
    Some(match part {
        // Empty text blocks are rejected by the API.
        Part::Text { text } if text.is_empty() => return None,
        Part::Text { text } => json!({"type": "text", "text": text}),
        // A thinking block is only valid with the signature it came with.
        Part::Thinking {
            text,
            signature: Some(signature),
        } => {
            json!({"type": "thinking", "thinking": text, "signature": signature})
        }
        Part::Thinking {
            signature: None, ..
        } => return None,
        Part::ToolCall(call) => {
            json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
        }
        Part::ToolResult(result) => {
            let mut block = json!({"type": "tool_result", "tool_use_id": result.call_id, "content": result.content});
            if result.is_error {
                block["is_error"] = json!(true);
            }
            block
        }
    })
}

// ---- reply ----------------------------------------------------------------

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        "pause_turn" => StopReason::PauseTurn,
        "refusal" => StopReason::Refusal,
        "model_context_window_exceeded" => StopReason::ContextWindowExceeded,
        other => StopReason::Other(other.to_owned()),
    }
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default, deserialize_with = "token_count")]
    input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "token_count")]
    output_tokens: Option<u64>,
    #[serde(default, deserialize_with = "token_count")]
    cache_read_input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "token_count")]
    cache_creation_input_tokens: Option<u64>,
}

impl WireUsage {
    /// Later reports (`message_delta`) carry cumulative counts: a field that
    /// is present replaces the earlier value.
    fn merge_into(&self, usage: &mut Usage) {
        if let Some(n) = self.input_tokens {
            usage.input_tokens = n;
        }
        if let Some(n) = self.output_tokens {
            usage.output_tokens = n;
        }
        if let Some(n) = self.cache_read_input_tokens {
            usage.cache_read_tokens = n;
        }
        if let Some(n) = self.cache_creation_input_tokens {
            usage.cache_write_tokens = n;
        }
    }
}

fn protocol(reason: impl Into<String>) -> ModelError {
    ModelError::Protocol {
        provider: PROVIDER,
        reason: reason.into(),
    }
}

fn parse_reply(body: &[u8]) -> Result<Vec<ModelEvent>, ModelError> {
    #[derive(Deserialize)]
    struct Reply {
        content: Vec<Value>,
        stop_reason: Option<String>,
        #[serde(default)]
        usage: WireUsage,
    }
    let reply: Reply =
        serde_json::from_slice(body).map_err(|e| protocol(format!("not a message: {e}")))?;
    let mut assembler = Assembler::default();
    let mut events = Vec::new();
    for block in &reply.content {
        match block["type"].as_str() {
            Some("text") => {
                assembler.other_block();
                events.push(ModelEvent::TextDelta(
                    block["text"].as_str().unwrap_or_default().to_owned(),
                ));
            }
            Some("thinking") => {
                assembler.other_block();
                events.push(ModelEvent::ThinkingDelta(
                    block["thinking"].as_str().unwrap_or_default().to_owned(),
                ));
                if let Some(signature) = block["signature"].as_str() {
                    events.push(ModelEvent::ThinkingSignature(signature.to_owned()));
                }
            }
            Some("tool_use") => {
                let id = block["id"].as_str().unwrap_or_default().to_owned();
                let name = block["name"].as_str().unwrap_or_default().to_owned();
                let (index, started) = assembler.start_call(id, name);
                events.push(started);
                // `input` is an object; a string is passed through as the
                // raw arguments so a broken one is reported, not guessed at.
                let raw = match &block["input"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                events.extend(assembler.call_arguments(index, &raw));
            }
            other => tracing::debug!(?other, "ignored content block"),
        }
    }
    reply.usage.merge_into(&mut assembler.usage);
    assembler.stop = reply.stop_reason.as_deref().map(stop_reason);
    events.extend(assembler.finish());
    Ok(events)
}

#[derive(Default)]
struct StreamDecoder {
    assembler: Assembler,
    /// The call index of each open tool_use content block, by block index.
    blocks: Vec<(u64, usize)>,
    done: bool,
}

impl Decoder for StreamDecoder {
    fn event(&mut self, event: SseEvent) -> Result<Vec<ModelEvent>, ModelError> {
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|e| crate::error::garbled_event(PROVIDER, &event.data, &e))?;
        // The `type` in the data is authoritative; `event:` repeats it.
        let kind = data["type"]
            .as_str()
            .or(event.event.as_deref())
            .unwrap_or_default();
        let mut out = Vec::new();
        match kind {
            "message_start" => {
                if let Ok(usage) =
                    serde_json::from_value::<WireUsage>(data["message"]["usage"].clone())
                {
                    usage.merge_into(&mut self.assembler.usage);
                }
            }
            "content_block_start" => {
                let block = &data["content_block"];
                match block["type"].as_str() {
                    Some("tool_use") => {
                        let id = block["id"].as_str().unwrap_or_default().to_owned();
                        let name = block["name"].as_str().unwrap_or_default().to_owned();
                        let (call, started) = self.assembler.start_call(id, name);
                        self.blocks
                            .push((data["index"].as_u64().unwrap_or(u64::MAX), call));
                        out.push(started);
                    }
                    Some("text") => {
                        self.assembler.other_block();
                        if let Some(text) = block["text"].as_str().filter(|t| !t.is_empty()) {
                            out.push(ModelEvent::TextDelta(text.to_owned()));
                        }
                    }
                    _ => self.assembler.other_block(),
                }
            }
            "content_block_delta" => {
                let delta = &data["delta"];
                match delta["type"].as_str() {
                    Some("text_delta") => {
                        out.push(ModelEvent::TextDelta(
                            delta["text"].as_str().unwrap_or_default().to_owned(),
                        ));
                    }
                    Some("input_json_delta") => {
                        let block = data["index"].as_u64().unwrap_or(u64::MAX);
                        let call = self
                            .blocks
                            .iter()
                            .find(|(b, _)| *b == block)
                            .map(|(_, c)| *c);
                        let Some(call) = call else {
                            return Err(protocol(format!(
                                "input_json_delta for block {block}, which is not a tool_use"
                            )));
                        };
                        out.extend(self.assembler.call_arguments(
                            call,
                            delta["partial_json"].as_str().unwrap_or_default(),
                        ));
                    }
                    Some("thinking_delta") => {
                        out.push(ModelEvent::ThinkingDelta(
                            delta["thinking"].as_str().unwrap_or_default().to_owned(),
                        ));
                    }
                    Some("signature_delta") => {
                        out.push(ModelEvent::ThinkingSignature(
                            delta["signature"].as_str().unwrap_or_default().to_owned(),
                        ));
                    }
                    other => tracing::debug!(?other, "ignored delta"),
                }
            }
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    self.assembler.stop = Some(stop_reason(reason));
                }
                if let Ok(usage) = serde_json::from_value::<WireUsage>(data["usage"].clone()) {
                    usage.merge_into(&mut self.assembler.usage);
                }
            }
            "message_stop" => {
                self.done = true;
                out.extend(self.assembler.finish());
            }
            "error" => {
                let kind = data["error"]["type"].as_str().unwrap_or("error").to_owned();
                let message = redact(data["error"]["message"].as_str().unwrap_or_default(), None);
                let transient = matches!(
                    kind.as_str(),
                    "overloaded_error" | "api_error" | "rate_limit_error" | "timeout_error"
                );
                return Err(ModelError::StreamError {
                    provider: PROVIDER,
                    kind,
                    message,
                    transient,
                });
            }
            // `ping`, `content_block_stop` and event types added after this
            // was written carry nothing we need.
            _ => {}
        }
        Ok(out)
    }

    fn end(&mut self) -> Result<Vec<ModelEvent>, ModelError> {
        Err(ModelError::StreamCut {
            provider: PROVIDER,
            reason: "no message_stop event".into(),
        })
    }

    fn is_done(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sse::SseParser;
    use expect_test::expect;

    /// The documented stream shape: text, then a tool call whose input
    /// arrives as `input_json_delta` fragments (the first one empty).
    const STREAM: &str = r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_014p7gG3wDgGV9EUtLvnow3U","type":"message","role":"assistant","model":"claude-sonnet-4-5","stop_sequence":null,"usage":{"input_tokens":472,"output_tokens":2,"cache_read_input_tokens":100,"cache_creation_input_tokens":0},"content":[],"stop_reason":null}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: ping
data: {"type": "ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Okay, let's check"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" the weather 😀"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"location\":"}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" \"San Francisco, CA\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: some_future_event
data: {"type":"some_future_event"}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}

event: message_stop
data: {"type":"message_stop"}

"#;

    fn decode(stream: &str, chunk: usize) -> Result<Vec<ModelEvent>, ModelError> {
        let mut parser = SseParser::new();
        let mut decoder = StreamDecoder::default();
        let mut events = Vec::new();
        for piece in stream.as_bytes().chunks(chunk) {
            for event in parser.feed(piece) {
                events.extend(decoder.event(event)?);
            }
        }
        if !decoder.is_done() {
            events.extend(decoder.end()?);
        }
        Ok(events)
    }

    #[test]
    fn decodes_the_documented_tool_use_stream() {
        let events = decode(STREAM, 7).unwrap();
        assert_eq!(events, decode(STREAM, 1000).unwrap());
        expect![[r#"
            [
                TextDelta(
                    "Okay, let's check",
                ),
                TextDelta(
                    " the weather 😀",
                ),
                ToolCallStarted {
                    index: 0,
                    id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                    name: "get_weather",
                },
                ToolArgumentsDelta {
                    index: 0,
                    fragment: "{\"location\":",
                },
                ToolArgumentsDelta {
                    index: 0,
                    fragment: " \"San Francisco, CA\"}",
                },
                ToolCallFinished {
                    index: 0,
                    call: Ok(
                        ToolCall {
                            id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                            name: "get_weather",
                            arguments: Object {
                                "location": String("San Francisco, CA"),
                            },
                        },
                    ),
                },
                Usage(
                    Usage {
                        input_tokens: 472,
                        output_tokens: 89,
                        cache_read_tokens: 100,
                        cache_write_tokens: 0,
                    },
                ),
                Stop(
                    ToolUse,
                ),
            ]
        "#]]
        .assert_debug_eq(&events);
    }

    #[test]
    fn a_stream_without_message_stop_is_cut() {
        let cut = &STREAM[..STREAM.find("event: message_delta").unwrap()];
        assert!(matches!(decode(cut, 64), Err(ModelError::StreamCut { .. })));
    }

    #[test]
    fn an_event_that_is_not_json_is_transient() {
        let stream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_del\n\n";
        let err = decode(stream, 16).unwrap_err();
        assert!(err.is_transient(), "{err}");
        assert_eq!(
            err.to_string(),
            "Anthropic sent a stream event that is not JSON (EOF while parsing a string at line 1 column 65: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_del)"
        );
    }

    #[test]
    fn usage_beyond_u64_counts_as_the_maximum_not_as_nothing() {
        let stream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1e30,\"output_tokens\":-3,\"cache_read_input_tokens\":18446744073709551616,\"cache_creation_input_tokens\":\"many\"}}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":18446744073709551615}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        let events = decode(stream, 9).unwrap();
        assert!(
            events.contains(&ModelEvent::Usage(Usage {
                input_tokens: u64::MAX,
                output_tokens: u64::MAX,
                cache_read_tokens: u64::MAX,
                cache_write_tokens: 0,
            })),
            "{events:?}"
        );
        // Not streamed: the reply is read, not refused for its usage.
        let body = br#"{"content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1e30,"output_tokens":7}}"#;
        let events = parse_reply(body).unwrap();
        assert!(
            events.contains(&ModelEvent::Usage(Usage {
                input_tokens: u64::MAX,
                output_tokens: 7,
                ..Usage::default()
            })),
            "{events:?}"
        );
    }

    #[test]
    fn an_error_event_mid_stream_is_transient_when_overloaded() {
        let stream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
        let err = decode(stream, 16).unwrap_err();
        assert!(err.is_transient(), "{err}");
        assert_eq!(
            err.to_string(),
            "Anthropic reported an error mid-stream (overloaded_error: Overloaded)"
        );
    }

    #[test]
    fn thinking_and_max_tokens_truncation() {
        let stream = r#"event: message_start
data: {"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"I should edit"}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"edit_file","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"cart.py\", \"new_text\": \"def to"}}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":4096}}

event: message_stop
data: {"type":"message_stop"}

"#;
        let events = decode(stream, 5).unwrap();
        assert_eq!(events[0], ModelEvent::ThinkingDelta("I should edit".into()));
        assert_eq!(
            events[1],
            ModelEvent::ThinkingSignature("EqQBCgIYAhIM".into())
        );
        let finished = events.iter().find_map(|e| match e {
            ModelEvent::ToolCallFinished { call, .. } => Some(call.clone()),
            _ => None,
        });
        let bad = finished.unwrap().unwrap_err();
        assert_eq!(bad.problem, crate::types::BadArguments::Truncated);
        assert!(bad.message_for_model().contains("Retry with less output"));
        assert_eq!(
            events.last(),
            Some(&ModelEvent::Stop(StopReason::MaxTokens))
        );
    }

    #[test]
    fn errors_are_classified_with_fixes() {
        let wire = Anthropic::new("http://x", ApiKey::new("sk-ant-test-0123456789").unwrap());
        let headers = {
            let mut h = HeaderMap::new();
            h.insert("retry-after", HeaderValue::from_static("3"));
            h
        };
        let body = |kind: &str, message: &str| {
            json!({"type": "error", "error": {"type": kind, "message": message}})
                .to_string()
                .into_bytes()
        };
        let e = wire.error(
            401,
            &HeaderMap::new(),
            &body("authentication_error", "invalid x-api-key"),
            "m",
        );
        assert_eq!(
            e.to_string(),
            "Anthropic rejected the API key (401 authentication_error: invalid x-api-key); check the key from ANTHROPIC_API_KEY"
        );
        let e = wire.error(529, &headers, &body("overloaded_error", "Overloaded"), "m");
        assert!(e.is_transient());
        assert_eq!(e.retry_after(), Some(std::time::Duration::from_secs(3)));
        let e = wire.error(
            400,
            &HeaderMap::new(),
            &body(
                "invalid_request_error",
                "prompt is too long: 212345 tokens > 200000 maximum",
            ),
            "m",
        );
        assert_eq!(
            e.to_string(),
            "the request is 212k tokens; this model's window is 200k (the context must be trimmed or compacted)"
        );
        let e = wire.error(
            404,
            &HeaderMap::new(),
            &body("not_found_error", "model: claude-nope"),
            "claude-nope",
        );
        assert_eq!(
            e.to_string(),
            "Anthropic does not know model \"claude-nope\" (404: model: claude-nope); set REIN_MODEL to a model it serves"
        );
        let e = wire.error(
            400,
            &HeaderMap::new(),
            &body("invalid_request_error", "bad key sk-ant-test-0123456789"),
            "m",
        );
        assert!(!e.to_string().contains("0123456789"), "{e}");
        assert!(!e.is_transient());
        let e = wire.error(502, &HeaderMap::new(), b"<html>Bad Gateway</html>", "m");
        assert!(e.is_transient(), "{e}");
    }
}
