//! Anthropic `messages`: roles, content blocks, and the pairing of every
//! `tool_use` with a `tool_result` in the very next message.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::is_valid_tool_id;
use crate::fake_model::api_error::ApiError;

/// Block types accepted without looking inside: server-tool results and the
/// like, which a client may echo back but which we never produce.
const OPAQUE_BLOCKS: &[&str] = &[
    "search_result",
    "server_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "mcp_tool_use",
    "mcp_tool_result",
    "container_upload",
];

const NON_EMPTY: &str =
    "all messages must have non-empty content except for the optional final assistant message";

pub(super) fn check(messages: Option<&Value>, errors: &mut Vec<ApiError>) {
    let Some(messages) = messages else {
        errors.push(ApiError::invalid("messages: Field required"));
        return;
    };
    let Some(messages) = messages.as_array() else {
        errors.push(ApiError::invalid("messages: Input should be a valid list"));
        return;
    };
    if messages.is_empty() {
        errors.push(ApiError::invalid(
            "messages: at least one message is required",
        ));
        return;
    }
    for (index, message) in messages.iter().enumerate() {
        check_message(index, message, index + 1 == messages.len(), errors);
    }
    if role(&messages[0]) == Some("assistant") {
        errors.push(ApiError::invalid(
            "messages: first message must use the \"user\" role",
        ));
    }
    check_pairing(messages, errors);
}

fn check_message(index: usize, message: &Value, is_last: bool, errors: &mut Vec<ApiError>) {
    let path = format!("messages.{index}");
    let Some(message) = message.as_object() else {
        errors.push(ApiError::invalid(format!(
            "{path}: Input should be a valid dictionary"
        )));
        return;
    };
    for field in message
        .keys()
        .filter(|k| !matches!(k.as_str(), "role" | "content"))
    {
        errors.push(ApiError::invalid(format!(
            "{path}.{field}: Extra inputs are not permitted"
        )));
    }
    let role = match message.get("role").map(|r| r.as_str()) {
        None => {
            errors.push(ApiError::invalid(format!("{path}.role: Field required")));
            return;
        }
        Some(Some(role @ ("user" | "assistant"))) => role,
        Some(_) => {
            errors.push(ApiError::invalid(format!(
                "{path}.role: Input should be 'user' or 'assistant'"
            )));
            return;
        }
    };
    let may_be_empty = is_last && role == "assistant";
    match message.get("content") {
        None => errors.push(ApiError::invalid(format!("{path}.content: Field required"))),
        Some(Value::String(text)) => {
            if text.is_empty() && !may_be_empty {
                errors.push(ApiError::invalid(format!("{path}: {NON_EMPTY}")));
            }
        }
        Some(Value::Array(blocks)) => {
            if blocks.is_empty() && !may_be_empty {
                errors.push(ApiError::invalid(format!("{path}: {NON_EMPTY}")));
            }
            for (block_index, block) in blocks.iter().enumerate() {
                check_block(
                    &format!("{path}.content.{block_index}"),
                    block,
                    role,
                    errors,
                );
            }
        }
        Some(_) => errors.push(ApiError::invalid(format!(
            "{path}.content: Input should be a valid string or a list of content blocks"
        ))),
    }
}

fn check_block(path: &str, block: &Value, role: &str, errors: &mut Vec<ApiError>) {
    let Some(block) = block.as_object() else {
        errors.push(ApiError::invalid(format!(
            "{path}: Input should be a valid dictionary"
        )));
        return;
    };
    let Some(block_type) = block.get("type").and_then(Value::as_str) else {
        errors.push(ApiError::invalid(format!("{path}.type: Field required")));
        return;
    };
    let mut require_string = |field: &str| {
        if !block.get(field).is_some_and(Value::is_string) {
            errors.push(ApiError::invalid(format!(
                "{path}.{block_type}.{field}: Input should be a valid string"
            )));
        }
    };
    match block_type {
        "text" => {
            require_string("text");
            check_text(block, errors);
        }
        "image" | "document" => {
            if !block.get("source").is_some_and(Value::is_object) {
                errors.push(ApiError::invalid(format!("{path}.{block_type}.source: Field required")));
            }
        }
        "tool_use" => {
            require_string("name");
            check_tool_use(path, block, role, errors);
        }
        "tool_result" => {
            require_string("tool_use_id");
            check_tool_result(path, block, role, errors);
        }
        "thinking" => {
            require_string("thinking");
            require_string("signature");
        }
        "redacted_thinking" => require_string("data"),
        other if OPAQUE_BLOCKS.contains(&other) => {}
        other => errors.push(ApiError::invalid(format!(
            "{path}: Input tag '{other}' found using 'type' does not match any of the expected tags: \
             'text', 'image', 'document', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking'"
        ))),
    }
}

/// Empty text blocks are rejected without an index, as the real API does.
fn check_text(block: &Map<String, Value>, errors: &mut Vec<ApiError>) {
    let Some(text) = block.get("text").and_then(Value::as_str) else {
        return;
    };
    if text.is_empty() {
        errors.push(ApiError::invalid(
            "messages: text content blocks must be non-empty",
        ));
    } else if text.trim().is_empty() {
        errors.push(ApiError::invalid(
            "messages: text content blocks must contain non-whitespace text",
        ));
    }
}

fn check_tool_use(path: &str, block: &Map<String, Value>, role: &str, errors: &mut Vec<ApiError>) {
    if role != "assistant" {
        errors.push(ApiError::invalid(format!(
            "{path}: `tool_use` blocks can only be in `assistant` messages"
        )));
    }
    match block.get("id").and_then(Value::as_str) {
        None => errors.push(ApiError::invalid(format!(
            "{path}.tool_use.id: Field required"
        ))),
        Some(id) if !is_valid_tool_id(id) => errors.push(ApiError::invalid(format!(
            "{path}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
        ))),
        Some(_) => {}
    }
    if !block.get("input").is_some_and(Value::is_object) {
        errors.push(ApiError::invalid(format!(
            "{path}.tool_use.input: Input should be a valid dictionary"
        )));
    }
}

fn check_tool_result(
    path: &str,
    block: &Map<String, Value>,
    role: &str,
    errors: &mut Vec<ApiError>,
) {
    if role != "user" {
        errors.push(ApiError::invalid(format!(
            "{path}: `tool_result` blocks can only be in `user` messages"
        )));
    }
    if block.get("is_error").is_some_and(|e| !e.is_boolean()) {
        errors.push(ApiError::invalid(format!(
            "{path}.tool_result.is_error: Input should be a valid boolean"
        )));
    }
    match block.get("content") {
        None | Some(Value::String(_)) => {}
        Some(Value::Array(parts)) => {
            for (index, part) in parts.iter().enumerate() {
                let part_type = part.get("type").and_then(Value::as_str);
                let valid = match part_type {
                    Some("text") => part.get("text").is_some_and(Value::is_string),
                    Some("image" | "document" | "search_result") => true,
                    _ => false,
                };
                if !valid {
                    errors.push(ApiError::invalid(format!(
                        "{path}.tool_result.content.{index}: Input should be a text, image, document or search_result block"
                    )));
                }
            }
        }
        Some(_) => errors.push(ApiError::invalid(format!(
            "{path}.tool_result.content: Input should be a valid string or a list of content blocks"
        ))),
    }
}

/// Every `tool_use` is answered by a `tool_result` in the next message, and
/// every `tool_result` answers a `tool_use` of the previous one. The index
/// named in the first error is the assistant message holding the calls.
fn check_pairing(messages: &[Value], errors: &mut Vec<ApiError>) {
    let mut seen_ids = HashSet::new();
    for (index, message) in messages.iter().enumerate() {
        match role(message) {
            Some("assistant") => {
                let mut calls = Vec::new();
                for (block_index, id) in ids_of(message, "tool_use", "id") {
                    if !seen_ids.insert(id) {
                        errors.push(ApiError::invalid(format!(
                            "messages.{index}.content.{block_index}: `tool_use` ids must be unique"
                        )));
                    }
                    calls.push(id);
                }
                let answered: HashSet<&str> = messages
                    .get(index + 1)
                    .filter(|next| role(next) == Some("user"))
                    .map(|next| {
                        ids_of(next, "tool_result", "tool_use_id")
                            .map(|(_, id)| id)
                            .collect()
                    })
                    .unwrap_or_default();
                let missing: Vec<&str> = calls
                    .into_iter()
                    .filter(|id| !answered.contains(id))
                    .collect();
                if !missing.is_empty() {
                    errors.push(ApiError::invalid(format!(
                        "messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. \
                         Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                        missing.join(", ")
                    )));
                }
            }
            Some("user") => {
                let calls: HashSet<&str> = index
                    .checked_sub(1)
                    .map(|previous| &messages[previous])
                    .filter(|previous| role(previous) == Some("assistant"))
                    .map(|previous| {
                        ids_of(previous, "tool_use", "id")
                            .map(|(_, id)| id)
                            .collect()
                    })
                    .unwrap_or_default();
                for (block_index, id) in ids_of(message, "tool_result", "tool_use_id") {
                    if !calls.contains(id) {
                        errors.push(ApiError::invalid(format!(
                            "messages.{index}.content.{block_index}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. \
                             Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                        )));
                    }
                }
            }
            _ => {}
        }
    }
}

fn role(message: &Value) -> Option<&str> {
    message.get("role").and_then(Value::as_str)
}

/// `(block index, id)` of the blocks of `block_type` in a message.
fn ids_of<'a>(
    message: &'a Value,
    block_type: &'a str,
    id_field: &'a str,
) -> impl Iterator<Item = (usize, &'a str)> {
    message
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .filter(move |(_, block)| block.get("type").and_then(Value::as_str) == Some(block_type))
        .filter_map(move |(index, block)| Some((index, block.get(id_field)?.as_str()?)))
}
