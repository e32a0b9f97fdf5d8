//! The provider-neutral request and the normalized events that come back.
//! Nothing here knows a wire format: adapters translate at the edges.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

/// A call the model asked for. `arguments` is always a JSON object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
}

/// What Rein answers to one [`ToolCall`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub call_id: String,
    pub content: String,
    pub is_error: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    Text {
        text: String,
    },
    /// Extended thinking. Anthropic needs it (with its signature) sent back
    /// unchanged in the turn that made tool calls; OpenAI-format servers
    /// never see it.
    Thinking {
        text: String,
        signature: Option<String>,
    },
    ToolCall(ToolCall),
    ToolResult(ToolResult),
}

impl Part {
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub parts: Vec<Part>,
}

impl Message {
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            parts: vec![Part::text(text)],
        }
    }

    pub fn assistant(parts: Vec<Part>) -> Self {
        Self {
            role: Role::Assistant,
            parts,
        }
    }

    /// A user message carrying tool results (and possibly more parts).
    pub fn tool_results(results: Vec<ToolResult>) -> Self {
        Self {
            role: Role::User,
            parts: results.into_iter().map(Part::ToolResult).collect(),
        }
    }

    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.parts.iter().filter_map(|p| match p {
            Part::ToolCall(call) => Some(call),
            _ => None,
        })
    }

    pub fn tool_results_iter(&self) -> impl Iterator<Item = &ToolResult> {
        self.parts.iter().filter_map(|p| match p {
            Part::ToolResult(result) => Some(result),
            _ => None,
        })
    }
}

/// A tool the model may call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    /// When to use it, what it returns, what it does not do.
    pub description: String,
    /// JSON Schema of the arguments (an object schema).
    pub input_schema: Value,
}

/// Where prompt-cache breakpoints may go. Providers without explicit
/// markers (OpenAI-format) cache prefixes automatically and ignore this.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachePlan {
    pub enabled: bool,
    /// The last message the harness will send unchanged next turn (the end
    /// of the stable prefix), if any.
    pub stable_message: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelRequest {
    pub model: String,
    /// System prompt blocks, in order (stable ones first, for caching).
    pub system: Vec<String>,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub max_output_tokens: u32,
    pub temperature: Option<f64>,
    /// The sampler's seed, where the provider takes one (OpenAI-compatible
    /// servers): a seeded local server otherwise samples the same reply for
    /// the same prompt and temperature, and a search's candidates would be
    /// one candidate tried again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    pub cache: CachePlan,
    /// Whether the reply must be a tool call.
    #[serde(default)]
    pub tool_choice: ToolChoice,
}

/// Whether the model may answer in text or must call a tool. The hosted
/// APIs hold `Required` to the declared schemas; a local server may not
/// (llama.cpp answered it with text, Ollama ignores it): ask it only where
/// [`crate::ModelClient::constrains_calls`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    #[default]
    Auto,
    Required,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens not read from or written to the cache.
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
}

/// Sums saturate: a provider may report any number (`u64::MAX` included),
/// and a wrapped sum would show a small figure or slip under a budget
/// (and overflow panics in debug builds).
impl Usage {
    /// Every input token, cached or not.
    pub fn total_input(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_read_tokens)
            .saturating_add(self.cache_write_tokens)
    }

    /// Every token, input and output.
    pub fn total(&self) -> u64 {
        self.total_input().saturating_add(self.output_tokens)
    }

    pub fn add(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(other.cache_read_tokens);
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_add(other.cache_write_tokens);
    }
}

/// Why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    ToolUse,
    /// The output was cut at `max_output_tokens`: a tool call in progress is
    /// incomplete and must not run.
    MaxTokens,
    StopSequence,
    /// A long server-side turn was paused; send the reply back to continue.
    PauseTurn,
    Refusal,
    ContextWindowExceeded,
    Other(String),
}

/// A tool call that cannot run: its arguments are not a usable JSON object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BadToolCall {
    pub id: String,
    pub name: String,
    pub raw_arguments: String,
    pub problem: BadArguments,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BadArguments {
    /// The output hit the token limit in the middle of this call.
    Truncated,
    /// Not JSON, or not an object.
    Invalid(String),
    /// The arguments fell into a loop (the same lines over and over) and
    /// were cut off there.
    Looping,
}

impl BadToolCall {
    /// The error result the model gets instead of running the call.
    pub fn message_for_model(&self) -> String {
        match &self.problem {
            BadArguments::Truncated => format!(
                "The call to {} was cut off by the output token limit before its arguments were complete, so it was not run. Retry with less output: split large edits into several smaller calls.",
                self.name
            ),
            BadArguments::Looping => format!(
                "The arguments of this call to {} fell into a loop (the same lines over and over), so Rein cut them off and did not run the call. Send it again with each line written once.",
                self.name
            ),
            BadArguments::Invalid(why) => format!(
                "The arguments of this call to {} are not a valid JSON object ({why}), so it was not run. Send the call again with arguments matching its input schema.",
                self.name
            ),
        }
    }
}

/// One normalized event of a model reply, in the order they happened.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelEvent {
    TextDelta(String),
    ThinkingDelta(String),
    /// Closes the current thinking block; Anthropic needs it sent back.
    ThinkingSignature(String),
    ToolCallStarted {
        index: usize,
        id: String,
        name: String,
    },
    ToolArgumentsDelta {
        index: usize,
        fragment: String,
    },
    /// The call's arguments are complete (or known to be unusable).
    ToolCallFinished {
        index: usize,
        call: Result<ToolCall, BadToolCall>,
    },
    /// Token counts for the whole reply, as the provider reported them.
    Usage(Usage),
    Stop(StopReason),
    /// The attempt failed transiently and will be retried after `delay`:
    /// everything received since the previous `Retrying` (or the start)
    /// belongs to a reply that will never complete and must be discarded.
    Retrying {
        attempt: u32,
        delay: Duration,
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_sums_saturate() {
        let absurd = Usage {
            input_tokens: u64::MAX,
            output_tokens: u64::MAX,
            cache_read_tokens: u64::MAX,
            cache_write_tokens: u64::MAX,
        };
        let mut sum = Usage::default();
        sum.add(&absurd);
        sum.add(&absurd);
        assert_eq!(sum, absurd);
        assert_eq!(sum.total_input(), u64::MAX);
        assert_eq!(sum.total(), u64::MAX);
        let small = Usage {
            input_tokens: 1,
            output_tokens: 2,
            cache_read_tokens: 3,
            cache_write_tokens: 4,
        };
        assert_eq!((small.total_input(), small.total()), (8, 10));
    }
}
