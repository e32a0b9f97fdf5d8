//! OpenAI Chat Completions, and every server that copies it (Ollama,
//! llama.cpp's server, vLLM, DeepSeek, OpenRouter): `POST
//! {base}/chat/completions`.
//! <https://platform.openai.com/docs/api-reference/chat>.

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::assemble::{Assembler, token_count};
use crate::error::{ModelError, is_context_overflow, parse_context_numbers};
use crate::retry::retry_after;
use crate::secret::{ApiKey, redact};
use crate::sse::SseEvent;
use crate::types::{Message, ModelEvent, ModelRequest, Part, Role, StopReason, ToolChoice};
use crate::wire::{Decoder, Wire};

const PROVIDER: &str = "OpenAI-compatible server";

/// Tool results that failed are marked in the text: the format has no
/// error flag for them.
const ERROR_PREFIX: &str = "ERROR: ";

pub(crate) struct OpenAi {
    base_url: String,
    key: Option<ApiKey>,
}

impl OpenAi {
    pub(crate) fn new(base_url: &str, key: Option<ApiKey>) -> Self {
        Self {
            base_url: base_url.trim_end_matches('/').to_owned(),
            key,
        }
    }

    /// OpenAI's own newer models refuse `max_tokens`; the compatible
    /// servers do not all know `max_completion_tokens`.
    fn is_openai_itself(&self) -> bool {
        self.base_url.contains("://api.openai.com")
    }
}

impl Wire for OpenAi {
    fn provider(&self) -> &'static str {
        PROVIDER
    }

    fn constrains_calls(&self) -> bool {
        self.is_openai_itself()
    }

    fn url(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }

    fn models_url(&self) -> String {
        format!("{}/models", self.base_url)
    }

    fn headers(&self) -> Result<HeaderMap, ModelError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = &self.key {
            let mut value =
                HeaderValue::from_str(&format!("Bearer {}", key.expose())).map_err(|_| {
                    ModelError::InvalidRequest(
                        "OPENAI_API_KEY contains characters not allowed in a header".into(),
                    )
                })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        Ok(headers)
    }

    fn body(&self, request: &ModelRequest, stream: bool) -> Value {
        let mut body = json!({"model": request.model, "messages": messages(request)});
        let max_key = if self.is_openai_itself() {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body[max_key] = json!(request.max_output_tokens);
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}))
                .collect();
        }
        if request.tool_choice == ToolChoice::Required && !request.tools.is_empty() {
            body["tool_choice"] = json!("required");
        }
        if let Some(t) = request.temperature {
            body["temperature"] = json!(t);
        }
        if let Some(seed) = request.seed {
            body["seed"] = json!(seed);
        }
        if stream {
            body["stream"] = json!(true);
            body["stream_options"] = json!({"include_usage": true});
        }
        body
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(StreamDecoder::default())
    }

    fn parse_reply(&self, body: &[u8]) -> Result<Vec<ModelEvent>, ModelError> {
        parse_reply(body)
    }

    fn error(&self, status: u16, headers: &HeaderMap, body: &[u8], model: &str) -> ModelError {
        let (kind, code, message) = match serde_json::from_slice::<ErrorBody>(body) {
            Ok(ErrorBody {
                error: ErrorField::Object(e),
            }) => (e.kind, e.code.and_then(code_text), e.message),
            Ok(ErrorBody {
                error: ErrorField::Text(message),
            }) => (String::new(), None, message),
            Err(_) => (
                String::new(),
                None,
                String::from_utf8_lossy(body).chars().take(500).collect(),
            ),
        };
        let message = redact(&message, self.key.as_ref());
        let kind = code.clone().unwrap_or(kind);
        match status {
            401 => ModelError::Unauthorized {
                provider: PROVIDER,
                status,
                kind,
                message,
                key_from: "OPENAI_API_KEY".to_owned(),
            },
            404 if kind == "model_not_found" || message.contains("model") => {
                ModelError::ModelNotFound {
                    provider: PROVIDER,
                    model: model.to_owned(),
                    status,
                    message,
                }
            }
            400 | 413
                if kind == "context_length_exceeded"
                    || kind == "exceed_context_size_error"
                    || is_context_overflow(&message) =>
            {
                let (tokens, window) = parse_context_numbers(&message);
                ModelError::ContextTooLong {
                    tokens,
                    window,
                    message,
                }
            }
            // Out of credit is a 429 that no retry will fix.
            429 if kind == "insufficient_quota" => ModelError::Rejected {
                provider: PROVIDER,
                status,
                kind,
                message,
            },
            408 | 429 => ModelError::Unavailable {
                provider: PROVIDER,
                status,
                kind,
                message,
                retry_after: retry_after(headers),
            },
            _ if status >= 500 => ModelError::Unavailable {
                provider: PROVIDER,
                status,
                kind,
                message,
                retry_after: retry_after(headers),
            },
            _ => ModelError::Rejected {
                provider: PROVIDER,
                status,
                kind,
                message,
            },
        }
    }
}

#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorField,
}

/// OpenAI sends an object; some compatible servers send a bare string.
#[derive(Deserialize)]
#[serde(untagged)]
enum ErrorField {
    Object(ErrorObject),
    Text(String),
}

#[derive(Deserialize)]
struct ErrorObject {
    #[serde(default)]
    message: String,
    #[serde(rename = "type", default)]
    kind: String,
    code: Option<Value>,
}

/// An error's `code` when it names the error; a number (llama.cpp
/// repeats the HTTP status there) says nothing the status does not.
fn code_text(code: Value) -> Option<String> {
    match code {
        Value::String(s) if !s.is_empty() => Some(s),
        _ => None,
    }
}

// ---- request ------------------------------------------------------------

fn messages(request: &ModelRequest) -> Vec<Value> {
    let mut out = Vec::new();
    if !request.system.is_empty() {
        out.push(json!({"role": "system", "content": request.system.join("\n\n")}));
    }
    for message in &request.messages {
        push_message(&mut out, message);
    }
    out
}

fn push_message(out: &mut Vec<Value>, message: &Message) {
    let text: Vec<&str> = message
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } if !text.is_empty() => Some(text.as_str()),
            _ => None,
        })
        .collect();
    match message.role {
        Role::Assistant => {
            let calls: Vec<Value> = message
                .tool_calls()
                .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments.to_string()}}))
                .collect();
            let content = if text.is_empty() {
                Value::Null
            } else {
                json!(text.join("\n\n"))
            };
            let mut m = json!({"role": "assistant", "content": content});
            if !calls.is_empty() {
                m["tool_calls"] = Value::Array(calls);
            }
            out.push(m);
        }
        Role::User => {
            // Tool results are messages of their own and must come right
            // after the assistant's calls; any text follows as a user turn.
            for result in message.tool_results_iter() {
                let content = if result.is_error {
                    format!("{ERROR_PREFIX}{}", result.content)
                } else {
                    result.content.clone()
                };
                out.push(
                    json!({"role": "tool", "tool_call_id": result.call_id, "content": content}),
                );
            }
            if !text.is_empty() {
                out.push(json!({"role": "user", "content": text.join("\n\n")}));
            }
        }
    }
}

// ---- reply ----------------------------------------------------------------

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        "content_filter" => StopReason::Refusal,
        other => StopReason::Other(other.to_owned()),
    }
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default, deserialize_with = "token_count")]
    prompt_tokens: Option<u64>,
    #[serde(default, deserialize_with = "token_count")]
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize, Default)]
struct PromptDetails {
    #[serde(default, deserialize_with = "token_count")]
    cached_tokens: Option<u64>,
}

impl WireUsage {
    fn apply(&self, assembler: &mut Assembler) {
        let cached = self
            .prompt_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens)
            .unwrap_or(0);
        let prompt = self.prompt_tokens.unwrap_or(0);
        assembler.usage.input_tokens = prompt.saturating_sub(cached);
        assembler.usage.cache_read_tokens = cached;
        assembler.usage.output_tokens = self.completion_tokens.unwrap_or(0);
    }
}

fn protocol(reason: impl Into<String>) -> ModelError {
    ModelError::Protocol {
        provider: PROVIDER,
        reason: reason.into(),
    }
}

fn parse_reply(body: &[u8]) -> Result<Vec<ModelEvent>, ModelError> {
    let reply: Value = serde_json::from_slice(body)
        .map_err(|e| protocol(format!("not a chat completion: {e}")))?;
    let choice = &reply["choices"][0];
    if choice.is_null() {
        return Err(protocol("the reply has no choices"));
    }
    let message = &choice["message"];
    let mut assembler = Assembler::default();
    let mut events = Vec::new();
    for field in ["reasoning_content", "reasoning"] {
        if let Some(thinking) = message[field].as_str().filter(|t| !t.is_empty()) {
            events.push(ModelEvent::ThinkingDelta(thinking.to_owned()));
        }
    }
    if let Some(text) = message["content"].as_str().filter(|t| !t.is_empty()) {
        assembler.other_block();
        events.push(ModelEvent::TextDelta(text.to_owned()));
    }
    for call in message["tool_calls"].as_array().into_iter().flatten() {
        let id = call["id"].as_str().unwrap_or_default().to_owned();
        let name = call["function"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let (index, started) = assembler.start_call(id, name);
        events.push(started);
        let arguments = match &call["function"]["arguments"] {
            Value::String(s) => s.clone(),
            // Some servers send an object instead of a string.
            Value::Null => String::new(),
            other => other.to_string(),
        };
        events.extend(assembler.call_arguments(index, &arguments));
    }
    if let Ok(usage) = serde_json::from_value::<WireUsage>(reply["usage"].clone()) {
        usage.apply(&mut assembler);
    }
    assembler.stop = choice["finish_reason"].as_str().map(stop_reason);
    events.extend(assembler.finish());
    Ok(events)
}

#[derive(Default)]
struct StreamDecoder {
    assembler: Assembler,
    /// (wire index, id) of each call, in order: fragments are joined by
    /// index *and* id, because Ollama sends parallel calls all at index 0.
    calls: Vec<(u64, String)>,
    finished: bool,
    done: bool,
}

impl StreamDecoder {
    fn tool_call_delta(
        &mut self,
        delta: &Value,
        out: &mut Vec<ModelEvent>,
    ) -> Result<(), ModelError> {
        let index = delta["index"].as_u64().unwrap_or(0);
        let id = delta["id"].as_str().filter(|id| !id.is_empty());
        let function = &delta["function"];
        // A new call: an id we have not seen at this index (or the first
        // fragment at this index, for servers that send no ids).
        let existing = self
            .calls
            .iter()
            .rposition(|(i, known)| *i == index && id.is_none_or(|id| id == known));
        let call = match existing {
            Some(call) => call,
            None => {
                let id = id
                    .map(str::to_owned)
                    .unwrap_or_else(|| format!("call_{index}_{}", self.calls.len()));
                let name = function["name"].as_str().unwrap_or_default().to_owned();
                if name.is_empty() {
                    return Err(protocol(format!(
                        "tool call {id} started without a function name"
                    )));
                }
                self.calls.push((index, id.clone()));
                let (call, started) = self.assembler.start_call(id, name);
                out.push(started);
                call
            }
        };
        let fragment = match &function["arguments"] {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        out.extend(self.assembler.call_arguments(call, &fragment));
        Ok(())
    }
}

impl Decoder for StreamDecoder {
    fn event(&mut self, event: SseEvent) -> Result<Vec<ModelEvent>, ModelError> {
        let mut out = Vec::new();
        if event.data.trim() == "[DONE]" {
            self.done = true;
            if !self.finished {
                return self.end();
            }
            out.extend(self.assembler.finish());
            return Ok(out);
        }
        let chunk: Value = serde_json::from_str(&event.data)
            .map_err(|e| crate::error::garbled_event(PROVIDER, &event.data, &e))?;
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            let message = error["message"]
                .as_str()
                .map_or_else(|| error.to_string(), str::to_owned);
            let kind = error["type"].as_str().unwrap_or("error").to_owned();
            let transient = !matches!(kind.as_str(), "invalid_request_error");
            return Err(ModelError::StreamError {
                provider: PROVIDER,
                kind,
                message: redact(&message, None),
                transient,
            });
        }
        if let Some(usage) = chunk.get("usage").filter(|u| !u.is_null())
            && let Ok(usage) = serde_json::from_value::<WireUsage>(usage.clone())
        {
            usage.apply(&mut self.assembler);
        }
        for choice in chunk["choices"].as_array().into_iter().flatten() {
            let delta = &choice["delta"];
            for field in ["reasoning_content", "reasoning"] {
                if let Some(thinking) = delta[field].as_str().filter(|t| !t.is_empty()) {
                    out.push(ModelEvent::ThinkingDelta(thinking.to_owned()));
                }
            }
            if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                self.assembler.other_block();
                out.push(ModelEvent::TextDelta(text.to_owned()));
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                self.tool_call_delta(call, &mut out)?;
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                self.assembler.stop = Some(stop_reason(reason));
                self.finished = true;
            }
        }
        Ok(out)
    }

    /// Without `[DONE]`, a stream that reached its `finish_reason` is
    /// complete (some servers omit `[DONE]`); one that did not was cut.
    fn end(&mut self) -> Result<Vec<ModelEvent>, ModelError> {
        if self.finished {
            self.done = true;
            Ok(self.assembler.finish())
        } else {
            Err(ModelError::StreamCut {
                provider: PROVIDER,
                reason: "the stream ended before a finish_reason".into(),
            })
        }
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

    /// A required call is trusted to OpenAI itself, not to a compatible
    /// local server (llama.cpp answered it with text and blank lines).
    #[test]
    fn only_openai_itself_is_held_to_a_required_call() {
        assert!(OpenAi::new("https://api.openai.com/v1", None).constrains_calls());
        assert!(!OpenAi::new("http://127.0.0.1:8080/v1", None).constrains_calls());
        assert!(!OpenAi::new("http://localhost:11434/v1", None).constrains_calls());
    }

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

    fn finished(events: &[ModelEvent]) -> Vec<(String, Value)> {
        events
            .iter()
            .filter_map(|e| match e {
                ModelEvent::ToolCallFinished { call: Ok(c), .. } => {
                    Some((c.id.clone(), c.arguments.clone()))
                }
                _ => None,
            })
            .collect()
    }

    /// The documented shape: parallel calls by index, arguments in
    /// fragments, `finish_reason`, then a usage chunk and `[DONE]`.
    const STREAM: &str = r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Checking é"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\": \"a"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"read_file","arguments":"{\"path\""}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":".py\"}"}},{"index":1,"function":{"arguments":": \"b.py\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":40,"total_tokens":1240,"prompt_tokens_details":{"cached_tokens":1024}}}

data: [DONE]

"#;

    #[test]
    fn decodes_parallel_calls_joined_by_index() {
        let events = decode(STREAM, 9).unwrap();
        assert_eq!(events, decode(STREAM, 4096).unwrap());
        assert_eq!(events[0], ModelEvent::TextDelta("Checking é".into()));
        assert_eq!(
            finished(&events),
            vec![
                ("call_a".into(), json!({"path": "a.py"})),
                ("call_b".into(), json!({"path": "b.py"}))
            ]
        );
        expect![[r#"
            [
                Usage(
                    Usage {
                        input_tokens: 176,
                        output_tokens: 40,
                        cache_read_tokens: 1024,
                        cache_write_tokens: 0,
                    },
                ),
                Stop(
                    ToolUse,
                ),
            ]
        "#]]
        .assert_debug_eq(&events[events.len() - 2..].to_vec());
    }

    /// Ollama streams each parallel call whole, all at index 0, with
    /// distinct ids, and says "stop".
    #[test]
    fn joins_ollama_parallel_calls_by_id() {
        let stream = r#"data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"qwen2.5-coder:7b","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_x1","index":0,"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.py\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"qwen2.5-coder:7b","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_x2","index":0,"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"b.py\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"qwen2.5-coder:7b","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}

data: [DONE]

"#;
        let events = decode(stream, 13).unwrap();
        assert_eq!(
            finished(&events),
            vec![
                ("call_x1".into(), json!({"path": "a.py"})),
                ("call_x2".into(), json!({"path": "b.py"}))
            ]
        );
        assert_eq!(events.last(), Some(&ModelEvent::Stop(StopReason::ToolUse)));
    }

    #[test]
    fn a_stream_without_finish_reason_is_cut_one_without_done_is_not() {
        let cut = &STREAM[..STREAM.find(r#"{"index":0,"delta":{},"#).unwrap() - 60];
        let cut = &cut[..cut.rfind("\n\n").unwrap() + 2];
        assert!(matches!(decode(cut, 64), Err(ModelError::StreamCut { .. })));
        let no_done = &STREAM[..STREAM.find("data: [DONE]").unwrap()];
        assert_eq!(decode(no_done, 64).unwrap(), decode(STREAM, 64).unwrap());
    }

    #[test]
    fn a_chunk_that_is_not_json_is_transient() {
        let stream =
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\n\ndata: [DONE]\n\n";
        let err = decode(stream, 7).unwrap_err();
        assert!(err.is_transient(), "{err}");
        assert!(
            matches!(&err, ModelError::GarbledEvent { reason, .. } if reason.ends_with(r#"{"choices":[{"index":0,"delta":{"content":"Hel"#)),
            "{err:?}"
        );
    }

    #[test]
    fn usage_beyond_u64_counts_as_the_maximum_not_as_nothing() {
        let stream = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":1e30,\"completion_tokens\":18446744073709551616,\"prompt_tokens_details\":{\"cached_tokens\":-1}}}\n\ndata: [DONE]\n\n";
        let events = decode(stream, 11).unwrap();
        assert!(
            events.contains(&ModelEvent::Usage(crate::types::Usage {
                input_tokens: u64::MAX,
                output_tokens: u64::MAX,
                ..crate::types::Usage::default()
            })),
            "{events:?}"
        );
    }

    #[test]
    fn errors_are_classified_with_fixes() {
        let wire = OpenAi::new("http://x", ApiKey::new("sk-proj-0123456789abcdef"));
        let body = |kind: &str, code: &str, message: &str| {
            json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
                .to_string()
                .into_bytes()
        };
        let e = wire.error(
            401,
            &HeaderMap::new(),
            &body(
                "invalid_request_error",
                "invalid_api_key",
                "Incorrect API key provided: sk-proj-***cdef.",
            ),
            "m",
        );
        assert_eq!(
            e.to_string(),
            "OpenAI-compatible server rejected the API key (401 invalid_api_key: Incorrect API key provided: <redacted>.); check the key from OPENAI_API_KEY"
        );
        let e = wire.error(
            429,
            &HeaderMap::new(),
            &body(
                "insufficient_quota",
                "insufficient_quota",
                "You exceeded your current quota",
            ),
            "m",
        );
        assert!(!e.is_transient(), "{e}");
        let e = wire.error(
            429,
            &HeaderMap::new(),
            &body("requests", "rate_limit_exceeded", "Rate limit reached"),
            "m",
        );
        assert!(e.is_transient(), "{e}");
        let e = wire.error(400, &HeaderMap::new(), &body("invalid_request_error", "context_length_exceeded", "This model's maximum context length is 128000 tokens. However, your messages resulted in 212000 tokens."), "m");
        assert_eq!(
            e.to_string(),
            "the request is 212k tokens; this model's window is 128k (the context must be trimmed or compacted)"
        );
        // llama.cpp's own overflow error: a numeric code, its own type.
        let e = wire.error(
            400,
            &HeaderMap::new(),
            br#"{"error":{"code":400,"message":"request (3305 tokens) exceeds the available context size (3072 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":3305,"n_ctx":3072}}"#,
            "m",
        );
        assert!(
            matches!(
                e,
                ModelError::ContextTooLong {
                    tokens: Some(3305),
                    window: Some(3072),
                    ..
                }
            ),
            "{e:?}"
        );
        // vLLM's and Ollama's wordings.
        for message in [
            "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).",
            "The decoder prompt (length 5000) is longer than the maximum model length of 4096.",
            "the input length exceeds the context length",
        ] {
            let e = wire.error(
                400,
                &HeaderMap::new(),
                &body("BadRequestError", "", message),
                "m",
            );
            assert!(
                matches!(e, ModelError::ContextTooLong { .. }),
                "{message}: {e:?}"
            );
        }
        // A numeric code is not shown as the error's kind: the status
        // once, not "400 400".
        let e = wire.error(
            400,
            &HeaderMap::new(),
            br#"{"error":{"code":400,"message":"bad grammar","type":"invalid_request_error"}}"#,
            "m",
        );
        assert!(!e.to_string().contains("400 400"), "{e}");
        assert!(e.to_string().contains("invalid_request_error"), "{e}");
        // llama.cpp and others send a bare string or plain text.
        let e = wire.error(
            500,
            &HeaderMap::new(),
            br#"{"error": "model is loading"}"#,
            "m",
        );
        assert!(e.is_transient());
        assert!(e.to_string().contains("model is loading"), "{e}");
    }

    #[test]
    fn non_streamed_reply() {
        let body = json!({
            "id": "chatcmpl-2", "object": "chat.completion", "created": 1, "model": "gpt-4o",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "refusal": null,
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "run_tests", "arguments": "{}"}}]},
                "logprobs": null, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 7, "total_tokens": 57}
        });
        let events = parse_reply(body.to_string().as_bytes()).unwrap();
        assert_eq!(finished(&events), vec![("call_1".into(), json!({}))]);
        assert_eq!(events.last(), Some(&ModelEvent::Stop(StopReason::ToolUse)));
    }
}
