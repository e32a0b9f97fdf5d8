//! The pairing invariant, in one place: every tool call in the history is
//! followed, in the very next message, by exactly one result for it.
//!
//! Both providers answer a request that breaks this with a 400 ("`tool_use`
//! ids were found without `tool_result` blocks immediately after",
//! "insufficient tool messages following tool_calls message"), which would
//! end a task for a bookkeeping slip. So before anything is sent the
//! history is repaired where that is safe, and refused where it is not:
//! - a call without a result gets a synthetic `is_error` "cancelled" result;
//! - a second result for the same call is dropped;
//! - results are put first in their message, in the order of the calls
//!   (Anthropic requires results before any text);
//! - an empty message is dropped;
//! - a result whose call is not in the previous message is refused: there is
//!   no safe guess at what it answered.

use crate::error::ModelError;
use crate::types::{Message, Part, Role, ToolResult};

/// The text of the synthetic result for a call that never got one.
pub const CANCELLED_RESULT: &str = "cancelled: this call was not run to completion, so there is no result. Run it again if you still need it.";

/// One change [`repair`] made, for the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Repair {
    AddedCancelledResult { call_id: String },
    DroppedDuplicateResult { call_id: String },
    ReorderedResults { message: usize },
    DroppedEmptyMessage { message: usize },
}

/// Repairs `messages` in place (see the module doc) or refuses them.
pub fn repair(messages: &mut Vec<Message>) -> Result<Vec<Repair>, ModelError> {
    let mut repairs = Vec::new();

    let before = messages.len();
    let mut index = 0;
    messages.retain(|m| {
        let keep = !m.parts.is_empty();
        if !keep {
            repairs.push(Repair::DroppedEmptyMessage { message: index });
        }
        index += 1;
        keep
    });
    debug_assert!(messages.len() <= before);

    let mut i = 0;
    while i < messages.len() {
        let calls: Vec<String> = match messages[i].role {
            Role::Assistant => messages[i].tool_calls().map(|c| c.id.clone()).collect(),
            Role::User => Vec::new(),
        };
        // Results in a message must answer calls of the message before it.
        if calls.is_empty() {
            if let Some(orphan) = messages[i].tool_results_iter().next() {
                return Err(orphan_error(i, &orphan.call_id));
            }
            i += 1;
            continue;
        }
        let next_is_user = messages.get(i + 1).is_some_and(|m| m.role == Role::User);
        if !next_is_user {
            messages.insert(
                i + 1,
                Message {
                    role: Role::User,
                    parts: Vec::new(),
                },
            );
        }
        let next = &mut messages[i + 1];

        // Each kept part remembers where it was, to tell a reorder.
        let mut results: Vec<Option<(usize, ToolResult)>> = vec![None; calls.len()];
        let mut others = Vec::new();
        for (position, part) in next.parts.drain(..).enumerate() {
            match part {
                Part::ToolResult(result) => {
                    let Some(slot) = calls.iter().position(|id| *id == result.call_id) else {
                        return Err(orphan_error(i + 1, &result.call_id));
                    };
                    if results[slot].is_some() {
                        repairs.push(Repair::DroppedDuplicateResult {
                            call_id: result.call_id,
                        });
                    } else {
                        results[slot] = Some((position, result));
                    }
                }
                other => others.push((position, other)),
            }
        }
        let mut positions = Vec::new();
        let mut parts = Vec::with_capacity(calls.len() + others.len());
        for (call_id, result) in calls.iter().zip(results) {
            let result = match result {
                Some((position, result)) => {
                    positions.push(position);
                    result
                }
                None => {
                    repairs.push(Repair::AddedCancelledResult {
                        call_id: call_id.clone(),
                    });
                    ToolResult {
                        call_id: call_id.clone(),
                        content: CANCELLED_RESULT.to_owned(),
                        is_error: true,
                    }
                }
            };
            parts.push(Part::ToolResult(result));
        }
        for (position, part) in others {
            positions.push(position);
            parts.push(part);
        }
        if positions.windows(2).any(|w| w[0] > w[1]) {
            repairs.push(Repair::ReorderedResults { message: i + 1 });
        }
        next.parts = parts;
        i += 2;
    }
    Ok(repairs)
}

fn orphan_error(message: usize, call_id: &str) -> ModelError {
    ModelError::InvalidRequest(format!(
        "message {message} holds a result for tool call {call_id}, which the message before it did not make"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ToolCall;
    use serde_json::json;

    fn call(id: &str) -> Part {
        Part::ToolCall(ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: json!({}),
        })
    }

    fn result(id: &str, content: &str) -> Part {
        Part::ToolResult(ToolResult {
            call_id: id.into(),
            content: content.into(),
            is_error: false,
        })
    }

    fn ids(m: &Message) -> Vec<(String, String)> {
        m.tool_results_iter()
            .map(|r| (r.call_id.clone(), r.content.clone()))
            .collect()
    }

    #[test]
    fn a_missing_result_becomes_cancelled() {
        let mut messages = vec![
            Message::user("fix it"),
            Message::assistant(vec![call("a"), call("b")]),
            Message {
                role: Role::User,
                parts: vec![result("a", "ok")],
            },
        ];
        let repairs = repair(&mut messages).unwrap();
        assert_eq!(
            repairs,
            vec![Repair::AddedCancelledResult {
                call_id: "b".into()
            }]
        );
        assert_eq!(
            ids(&messages[2]),
            vec![
                ("a".into(), "ok".into()),
                ("b".into(), CANCELLED_RESULT.into())
            ]
        );
    }

    #[test]
    fn a_trailing_call_gets_a_new_result_message() {
        let mut messages = vec![
            Message::user("go"),
            Message::assistant(vec![Part::text("let me see"), call("a")]),
        ];
        repair(&mut messages).unwrap();
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[2].role, Role::User);
        assert!(messages[2].tool_results_iter().all(|r| r.is_error));
    }

    #[test]
    fn results_go_first_in_call_order_and_duplicates_are_dropped() {
        let mut messages = vec![
            Message::user("go"),
            Message::assistant(vec![call("a"), call("b")]),
            Message {
                role: Role::User,
                parts: vec![
                    Part::text("note"),
                    result("b", "B"),
                    result("a", "A"),
                    result("a", "A again"),
                ],
            },
        ];
        let repairs = repair(&mut messages).unwrap();
        assert!(repairs.contains(&Repair::DroppedDuplicateResult {
            call_id: "a".into()
        }));
        assert!(repairs.contains(&Repair::ReorderedResults { message: 2 }));
        assert_eq!(
            ids(&messages[2]),
            vec![("a".into(), "A".into()), ("b".into(), "B".into())]
        );
        assert_eq!(messages[2].parts.last(), Some(&Part::text("note")));
    }

    #[test]
    fn an_orphan_result_is_refused() {
        let mut messages = vec![
            Message::user("go"),
            Message::tool_results(vec![ToolResult {
                call_id: "ghost".into(),
                content: "?".into(),
                is_error: false,
            }]),
        ];
        let err = repair(&mut messages).unwrap_err();
        assert_eq!(
            err.to_string(),
            "refusing to send an invalid request: message 1 holds a result for tool call ghost, which the message before it did not make"
        );
    }

    #[test]
    fn empty_messages_are_dropped_and_valid_history_is_untouched() {
        let valid = vec![
            Message::user("go"),
            Message::assistant(vec![call("a")]),
            Message {
                role: Role::User,
                parts: vec![result("a", "ok"), Part::text("and then?")],
            },
            Message::assistant(vec![Part::text("done")]),
        ];
        let mut messages = valid.clone();
        messages.insert(
            1,
            Message {
                role: Role::Assistant,
                parts: vec![],
            },
        );
        assert_eq!(
            repair(&mut messages).unwrap(),
            vec![Repair::DroppedEmptyMessage { message: 1 }]
        );
        assert_eq!(messages, valid);
    }
}
