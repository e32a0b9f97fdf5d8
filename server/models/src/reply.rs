//! Gathering a stream of events into one reply, for callers that do not
//! need the deltas (and for tests).

use futures::StreamExt;

use crate::client::EventStream;
use crate::error::ModelError;
use crate::types::{BadToolCall, ModelEvent, Part, StopReason, ToolCall, Usage};

/// A complete reply.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelReply {
    /// The assistant message's parts in the order the model produced them.
    /// A call with unusable arguments is here too (with `{}` arguments), so
    /// the history stays paired; it is also in `bad_calls`.
    pub parts: Vec<Part>,
    pub bad_calls: Vec<BadToolCall>,
    pub usage: Usage,
    pub stop: StopReason,
    /// How many attempts failed transiently before this one.
    pub retries: u32,
}

impl ModelReply {
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .filter_map(|p| match p {
                Part::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The calls that can run.
    pub fn tool_calls(&self) -> Vec<&ToolCall> {
        self.parts
            .iter()
            .filter_map(|p| match p {
                Part::ToolCall(call) if !self.bad_calls.iter().any(|b| b.id == call.id) => {
                    Some(call)
                }
                _ => None,
            })
            .collect()
    }
}

/// Reads `stream` to its end.
pub async fn collect(mut stream: EventStream) -> Result<ModelReply, ModelError> {
    let mut builder = Builder::default();
    let mut retries = 0;
    while let Some(event) = stream.next().await {
        match event? {
            ModelEvent::Retrying { .. } => {
                builder = Builder::default();
                retries += 1;
            }
            ModelEvent::Stop(stop) => {
                return Ok(ModelReply {
                    parts: builder.parts,
                    bad_calls: builder.bad,
                    usage: builder.usage,
                    stop,
                    retries,
                });
            }
            event => builder.push(event),
        }
    }
    Err(ModelError::Protocol {
        provider: "model",
        reason: "the event stream ended without a stop event".into(),
    })
}

#[derive(Default)]
struct Builder {
    parts: Vec<Part>,
    /// Where each call's part is, by call index.
    call_slots: Vec<usize>,
    bad: Vec<BadToolCall>,
    usage: Usage,
}

impl Builder {
    fn push(&mut self, event: ModelEvent) {
        match event {
            ModelEvent::TextDelta(delta) => match self.parts.last_mut() {
                Some(Part::Text { text }) => text.push_str(&delta),
                _ => self.parts.push(Part::Text { text: delta }),
            },
            ModelEvent::ThinkingDelta(delta) => match self.parts.last_mut() {
                Some(Part::Thinking {
                    text,
                    signature: None,
                }) => text.push_str(&delta),
                _ => self.parts.push(Part::Thinking {
                    text: delta,
                    signature: None,
                }),
            },
            ModelEvent::ThinkingSignature(sig) => {
                if let Some(Part::Thinking { signature, .. }) = self.parts.last_mut() {
                    *signature = Some(sig);
                }
            }
            ModelEvent::ToolCallStarted { id, name, .. } => {
                self.call_slots.push(self.parts.len());
                self.parts.push(Part::ToolCall(ToolCall {
                    id,
                    name,
                    arguments: serde_json::json!({}),
                }));
            }
            ModelEvent::ToolCallFinished { index, call } => {
                let Some(&slot) = self.call_slots.get(index) else {
                    return;
                };
                match call {
                    Ok(call) => self.parts[slot] = Part::ToolCall(call),
                    Err(bad) => self.bad.push(bad),
                }
            }
            ModelEvent::Usage(usage) => self.usage = usage,
            ModelEvent::ToolArgumentsDelta { .. }
            | ModelEvent::Stop(_)
            | ModelEvent::Retrying { .. } => {}
        }
    }
}
