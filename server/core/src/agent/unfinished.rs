//! A model call that never finished still cost something: the prompt was
//! read and every token streamed before the cut (the task's time, a
//! cancel, a failure) was generated and, by a hosted API, billed. Without
//! this a task cut while a local model rambled for five minutes ended with
//! "0 tok · $0.00". The call counts as a turn with estimated tokens, and
//! the end of what the model was writing goes into the trace, so a person
//! can see why it never finished.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rein_models::{ModelEvent, Usage};

use super::Agent;
use super::call_of::CallOf;
use crate::ports::TaskEvent;

/// How much of the end of an unfinished reply the trace keeps.
const TAIL_CHARS: usize = 400;

/// What a call has streamed so far: its size, counted as it comes, and
/// the end of its text. Only bytes are counted on the stream (every
/// call's hot path); tokens are estimated from them if the call is cut.
#[derive(Default)]
pub(super) struct Streamed {
    bytes: AtomicU64,
    tail: Mutex<String>,
}

impl Streamed {
    /// Counts one streamed event (text, thinking, a tool call's arguments).
    pub(super) fn see(&self, event: &ModelEvent) {
        let text = match event {
            ModelEvent::TextDelta(text) | ModelEvent::ThinkingDelta(text) => text,
            ModelEvent::ToolArgumentsDelta { fragment, .. } => fragment,
            _ => return,
        };
        if text.is_empty() {
            return;
        }
        self.bytes.fetch_add(text.len() as u64, Ordering::Relaxed);
        if let Ok(mut tail) = self.tail.lock() {
            tail.push_str(text);
            let len = tail.chars().count();
            if len > 2 * TAIL_CHARS {
                let keep: String = tail.chars().skip(len - TAIL_CHARS).collect();
                *tail = keep;
            }
        }
    }

    /// About four bytes a token, as `rein_models::tokens` estimates
    /// without its tokenizer.
    pub(super) fn tokens(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed).div_ceil(4)
    }

    /// The last [`TAIL_CHARS`] characters streamed.
    fn tail(&self) -> String {
        let Ok(tail) = self.tail.lock() else {
            return String::new();
        };
        let len = tail.chars().count();
        tail.chars().skip(len.saturating_sub(TAIL_CHARS)).collect()
    }
}

impl Agent {
    /// Counts a call started at `started` that ended before its reply did
    /// (`why`, in the trace's words: "cut at the task's time",
    /// "cancelled", "broken off"): a call of a turn (`None`: a
    /// compaction's summary, no call of a turn), its prompt as estimated
    /// and what it streamed, priced where the model's price is known; the
    /// trace gets the call and the end of its text.
    pub(super) fn record_unfinished_call(
        &mut self,
        turn: Option<(u32, CallOf)>,
        estimated_input: u64,
        streamed: &Streamed,
        why: &str,
        started: Instant,
    ) {
        let latency_ms = started.elapsed().as_millis() as u64;
        let usage = Usage {
            input_tokens: estimated_input,
            output_tokens: streamed.tokens(),
            ..Usage::default()
        };
        let cost = self
            .config
            .prices
            .cost_usd(self.ports.model.model(), &usage);
        match turn {
            Some((turn, of)) => {
                if of.new_turn() {
                    self.tracker.record_call(&usage, cost);
                } else {
                    self.tracker.record_usage(&usage, cost);
                }
                self.event(TaskEvent::ModelCall {
                    turn,
                    usage,
                    cost_usd: cost,
                    latency_ms,
                    stop: format!("unfinished: {why}"),
                    retries: 0,
                    estimated_input_tokens: estimated_input,
                });
            }
            // Not a turn of its own (a compaction's summary).
            None => self.tracker.record_usage(&usage, cost),
        }
        let tail = streamed.tail();
        if !tail.is_empty() {
            self.event(TaskEvent::Context {
                transformation: "unfinished_reply".into(),
                detail: format!(
                    "the model's reply was {why} after about {} tokens; it ended with: {tail}",
                    streamed.tokens()
                ),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_counts_every_kind_of_text_and_keeps_the_end() {
        let streamed = Streamed::default();
        streamed.see(&ModelEvent::TextDelta("a".repeat(1_000)));
        streamed.see(&ModelEvent::ThinkingDelta("thinking".into()));
        streamed.see(&ModelEvent::ToolArgumentsDelta {
            index: 0,
            fragment: "{\"path\":\"é.py\"}".into(),
        });
        streamed.see(&ModelEvent::Usage(Usage::default()));
        assert!(streamed.tokens() > 250, "{}", streamed.tokens());
        let tail = streamed.tail();
        assert_eq!(tail.chars().count(), TAIL_CHARS);
        assert!(tail.ends_with("thinking{\"path\":\"é.py\"}"), "{tail}");
    }

    #[test]
    fn nothing_streamed_is_nothing_kept() {
        let streamed = Streamed::default();
        streamed.see(&ModelEvent::TextDelta(String::new()));
        assert_eq!(streamed.tokens(), 0);
        assert_eq!(streamed.tail(), "");
    }
}
