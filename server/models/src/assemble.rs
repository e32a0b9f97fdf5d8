//! What both wire formats share once decoded: tool calls assembled from
//! fragments, usage, the stop reason, and the rule that a tool call cut off
//! by the token limit never runs.
//!
//! Text and argument fragments stream out as they arrive; the
//! `ToolCallFinished` events are held until the stop reason is known (only
//! then can a truncated call be told from a complete one) and come out
//! together, right before `Usage` and `Stop`.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::types::{BadArguments, BadToolCall, ModelEvent, StopReason, ToolCall, Usage};

#[derive(Debug, Default)]
pub(crate) struct Assembler {
    calls: Vec<PendingCall>,
    /// Whether the most recent content block was a tool call (the one the
    /// token limit would have cut).
    last_block_is_call: bool,
    pub usage: Usage,
    pub stop: Option<StopReason>,
}

#[derive(Debug)]
struct PendingCall {
    id: String,
    name: String,
    arguments: String,
}

impl Assembler {
    /// A new tool call; returns its index (its order among the calls).
    pub fn start_call(&mut self, id: String, name: String) -> (usize, ModelEvent) {
        let index = self.calls.len();
        self.calls.push(PendingCall {
            id: id.clone(),
            name: name.clone(),
            arguments: String::new(),
        });
        self.last_block_is_call = true;
        (index, ModelEvent::ToolCallStarted { index, id, name })
    }

    pub fn call_arguments(&mut self, index: usize, fragment: &str) -> Option<ModelEvent> {
        let call = self.calls.get_mut(index)?;
        if fragment.is_empty() {
            return None;
        }
        call.arguments.push_str(fragment);
        Some(ModelEvent::ToolArgumentsDelta {
            index,
            fragment: fragment.to_owned(),
        })
    }

    /// Text or thinking started after the calls so far.
    pub fn other_block(&mut self) {
        self.last_block_is_call = false;
    }

    /// The closing events: every call's outcome, usage, stop.
    pub fn finish(&mut self) -> Vec<ModelEvent> {
        let mut stop = self
            .stop
            .clone()
            .unwrap_or(StopReason::Other("unknown".into()));
        // Some OpenAI-compatible servers (Ollama, older vLLM) say "stop"
        // when the reply is tool calls.
        if !self.calls.is_empty() && stop == StopReason::EndTurn {
            stop = StopReason::ToolUse;
        }
        let truncated = (stop == StopReason::MaxTokens && self.last_block_is_call)
            .then(|| self.calls.len() - 1);
        let mut events: Vec<ModelEvent> = self
            .calls
            .drain(..)
            .enumerate()
            .map(|(index, call)| {
                let outcome = if truncated == Some(index) {
                    Err(BadArguments::Truncated)
                } else {
                    parse_arguments(&call.arguments)
                };
                let call = match outcome {
                    Ok(arguments) => Ok(ToolCall {
                        id: call.id,
                        name: call.name,
                        arguments,
                    }),
                    Err(problem) => Err(BadToolCall {
                        id: call.id,
                        name: call.name,
                        raw_arguments: call.arguments,
                        problem,
                    }),
                };
                ModelEvent::ToolCallFinished { index, call }
            })
            .collect();
        events.push(ModelEvent::Usage(self.usage));
        events.push(ModelEvent::Stop(stop));
        events
    }
}

/// A token count as a provider reports it, read leniently: a number too
/// large for a `u64` (JSON has no limit) counts as `u64::MAX`, a negative
/// one or a non-number as absent. Absurd usage then neither fails the reply
/// nor is dropped (which would undercount the budget).
pub(crate) fn token_count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(match Option::<Value>::deserialize(d)? {
        Some(Value::Number(n)) => n
            .as_u64()
            // `as` saturates: 1e30 becomes u64::MAX.
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)),
        _ => None,
    })
}

/// Arguments must be a JSON object; an empty string means no arguments
/// (several servers send that for parameterless calls).
pub fn parse_arguments(raw: &str) -> Result<Value, BadArguments> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(BadArguments::Invalid(format!(
            "expected an object, got {}",
            kind(&other)
        ))),
        Err(e) => Err(BadArguments::Invalid(e.to_string())),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn outcomes(a: &mut Assembler) -> Vec<Result<ToolCall, BadToolCall>> {
        a.finish()
            .into_iter()
            .filter_map(|e| match e {
                ModelEvent::ToolCallFinished { call, .. } => Some(call),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn fragments_join_and_parse() {
        let mut a = Assembler::default();
        let (i, _) = a.start_call("t1".into(), "read_file".into());
        for f in ["{\"pa", "th\": \"cart", ".py\"}"] {
            a.call_arguments(i, f);
        }
        a.start_call("t2".into(), "list_files".into());
        a.stop = Some(StopReason::ToolUse);
        let got = outcomes(&mut a);
        assert_eq!(
            got[0].as_ref().unwrap().arguments,
            json!({"path": "cart.py"})
        );
        assert_eq!(got[1].as_ref().unwrap().arguments, json!({}));
    }

    #[test]
    fn the_call_cut_by_max_tokens_never_runs() {
        let mut a = Assembler::default();
        let (i, _) = a.start_call("t1".into(), "read_file".into());
        a.call_arguments(i, "{\"path\": \"a.py\"}");
        let (j, _) = a.start_call("t2".into(), "edit_file".into());
        // Even arguments that happen to parse are not trusted.
        a.call_arguments(j, "{}");
        a.stop = Some(StopReason::MaxTokens);
        let got = outcomes(&mut a);
        assert!(got[0].is_ok());
        assert_eq!(
            got[1].as_ref().unwrap_err().problem,
            BadArguments::Truncated
        );
    }

    #[test]
    fn invalid_arguments_are_reported_not_run() {
        let mut a = Assembler::default();
        let (i, _) = a.start_call("t1".into(), "read_file".into());
        a.call_arguments(i, "{\"path\": ");
        let (j, _) = a.start_call("t2".into(), "read_file".into());
        a.call_arguments(j, "[1]");
        a.stop = Some(StopReason::EndTurn);
        let events = a.finish();
        assert_eq!(events.last(), Some(&ModelEvent::Stop(StopReason::ToolUse)));
        let bad: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                ModelEvent::ToolCallFinished { call: Err(bad), .. } => Some(bad.problem.clone()),
                _ => None,
            })
            .collect();
        assert!(
            matches!(&bad[0], BadArguments::Invalid(m) if m.contains("EOF")),
            "{bad:?}"
        );
        assert_eq!(
            bad[1],
            BadArguments::Invalid("expected an object, got an array".into())
        );
    }
}
