//! OpenAI Chat Completions request checks, with OpenAI's messages (and its
//! `param` paths) for the errors clients hit most.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{is_json_content_type, is_valid_tool_name, json_type};
use crate::fake_model::api_error::ApiError;

/// Top-level fields of a Chat Completions request.
const KNOWN_FIELDS: &[&str] = &[
    "audio",
    "frequency_penalty",
    "function_call",
    "functions",
    "logit_bias",
    "logprobs",
    "max_completion_tokens",
    "max_tokens",
    "messages",
    "metadata",
    "modalities",
    "model",
    "n",
    "parallel_tool_calls",
    "prediction",
    "presence_penalty",
    "prompt_cache_key",
    "prompt_cache_retention",
    "reasoning_effort",
    "response_format",
    "safety_identifier",
    "seed",
    "service_tier",
    "stop",
    "store",
    "stream",
    "stream_options",
    "temperature",
    "tool_choice",
    "tools",
    "top_logprobs",
    "top_p",
    "user",
    "verbosity",
    "web_search_options",
];

const ROLES: &str = "'system', 'assistant', 'user', 'function', 'tool', and 'developer'";

pub(super) fn validate(
    headers: &BTreeMap<String, String>,
    body: &Value,
    require_api_key: bool,
) -> Vec<ApiError> {
    let mut errors = Vec::new();
    if require_api_key {
        check_authorization(headers, &mut errors);
    }
    if !is_json_content_type(headers) {
        errors.push(ApiError::invalid(format!(
            "Invalid Content-Type header ({:?}), expected application/json.",
            headers
                .get("content-type")
                .map(String::as_str)
                .unwrap_or_default()
        )));
    }
    let Some(body) = body.as_object() else {
        errors.push(ApiError::invalid(format!(
            "Invalid type for request body: expected an object, but got {} instead.",
            json_type(body)
        )));
        return errors;
    };
    for field in body.keys().filter(|k| !KNOWN_FIELDS.contains(&k.as_str())) {
        errors.push(ApiError::invalid(format!(
            "Unrecognized request argument supplied: {field}"
        )));
    }
    match body.get("model") {
        None => errors.push(ApiError::invalid("you must provide a model parameter")),
        Some(Value::String(_)) => {}
        Some(other) => errors.push(type_error("model", "a string", other)),
    }
    check_messages(body.get("messages"), &mut errors);
    check_tools(body.get("tools"), &mut errors);
    let streaming = body.get("stream").and_then(Value::as_bool) == Some(true);
    if body.get("stream_options").is_some_and(|o| !o.is_null()) && !streaming {
        errors.push(ApiError::invalid_param(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            "stream_options",
        ));
    }
    errors
}

pub(super) fn check_authorization(headers: &BTreeMap<String, String>, errors: &mut Vec<ApiError>) {
    let Some(value) = headers.get("authorization") else {
        errors.push(ApiError::unauthorized(
            "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            Some("invalid_api_key"),
        ));
        return;
    };
    let key = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .map(str::trim);
    if key.is_none_or(str::is_empty) {
        errors.push(ApiError::unauthorized(
            "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.",
            Some("invalid_api_key"),
        ));
    }
}

/// OpenAI writes `messages[1].content` in messages but `messages.[1].content`
/// in `param`.
fn invalid_at(message: impl Into<String>, path: &str) -> ApiError {
    ApiError::invalid_param(message, path.replace('[', ".["))
}

fn type_error(path: &str, expected: &str, got: &Value) -> ApiError {
    invalid_at(
        format!(
            "Invalid type for '{path}': expected {expected}, but got {} instead.",
            json_type(got)
        ),
        path,
    )
}

fn missing(path: &str) -> ApiError {
    invalid_at(format!("Missing required parameter: '{path}'."), path)
}

fn check_messages(messages: Option<&Value>, errors: &mut Vec<ApiError>) {
    let Some(messages) = messages else {
        errors.push(missing("messages"));
        return;
    };
    let Some(messages) = messages.as_array() else {
        errors.push(type_error("messages", "an array", messages));
        return;
    };
    if messages.is_empty() {
        errors.push(ApiError::invalid_param(
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
            "messages",
        ));
        return;
    }
    for (index, message) in messages.iter().enumerate() {
        check_message(index, message, errors);
    }
    check_pairing(messages, errors);
}

fn check_message(index: usize, message: &Value, errors: &mut Vec<ApiError>) {
    let path = format!("messages[{index}]");
    let Some(message) = message.as_object() else {
        errors.push(type_error(&path, "an object", message));
        return;
    };
    let Some(role) = message.get("role") else {
        errors.push(missing(&format!("{path}.role")));
        return;
    };
    let allowed: &[&str] = match role.as_str() {
        Some("system" | "developer" | "user") => &["role", "content", "name"],
        Some("assistant") => &[
            "role",
            "content",
            "name",
            "tool_calls",
            "refusal",
            "audio",
            "function_call",
        ],
        Some("tool") => &["role", "content", "tool_call_id"],
        Some("function") => &["role", "content", "name"],
        _ => {
            errors.push(invalid_at(
                format!(
                    "Invalid value: '{}'. Supported values are: {ROLES}.",
                    display(role)
                ),
                &format!("{path}.role"),
            ));
            return;
        }
    };
    if let Some(field) = message.keys().find(|k| !allowed.contains(&k.as_str())) {
        errors.push(ApiError::invalid_param(
            format!("Additional properties are not allowed ('{field}' was unexpected) - 'messages.{index}'"),
            format!("messages.[{index}]"),
        ));
    }
    let role = role.as_str().unwrap_or_default();
    let content = message.get("content");
    match role {
        "assistant" => check_assistant(&path, message, errors),
        "tool" => {
            match message.get("tool_call_id") {
                None => errors.push(missing(&format!("{path}.tool_call_id"))),
                Some(Value::String(_)) => {}
                Some(other) => errors.push(type_error(
                    &format!("{path}.tool_call_id"),
                    "a string",
                    other,
                )),
            }
            check_content(&path, content, &["text"], errors);
        }
        "user" => check_content(
            &path,
            content,
            &["text", "image_url", "input_audio", "file"],
            errors,
        ),
        _ => check_content(&path, content, &["text"], errors),
    }
}

/// `content` is required and is a string or an array of typed parts.
fn check_content(
    path: &str,
    content: Option<&Value>,
    part_types: &[&str],
    errors: &mut Vec<ApiError>,
) {
    match content {
        None => errors.push(missing(&format!("{path}.content"))),
        Some(Value::String(_)) => {}
        Some(Value::Array(parts)) => {
            for (index, part) in parts.iter().enumerate() {
                let part_type = part.get("type").and_then(Value::as_str).unwrap_or_default();
                if !part_types.contains(&part_type) {
                    errors.push(invalid_at(
                        format!(
                            "Invalid value: '{part_type}'. Supported values are: {}.",
                            part_types
                                .iter()
                                .map(|t| format!("'{t}'"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        &format!("{path}.content[{index}].type"),
                    ));
                }
            }
        }
        Some(other) => errors.push(type_error(
            &format!("{path}.content"),
            "one of a string or array of objects",
            other,
        )),
    }
}

fn check_assistant(path: &str, message: &Map<String, Value>, errors: &mut Vec<ApiError>) {
    let tool_calls = message.get("tool_calls").filter(|calls| !calls.is_null());
    match message.get("content") {
        None | Some(Value::Null) if tool_calls.is_none() => {
            errors.push(missing(&format!("{path}.content")))
        }
        None | Some(Value::Null) => {}
        content => check_content(path, content, &["text", "refusal"], errors),
    }
    let Some(tool_calls) = tool_calls else { return };
    let calls_path = format!("{path}.tool_calls");
    let Some(calls) = tool_calls.as_array() else {
        errors.push(type_error(&calls_path, "an array", tool_calls));
        return;
    };
    if calls.is_empty() {
        errors.push(invalid_at(
            format!("Invalid '{calls_path}': empty array. Expected an array with minimum length 1, but got an empty array instead."),
            &calls_path,
        ));
    }
    for (index, call) in calls.iter().enumerate() {
        let call_path = format!("{calls_path}[{index}]");
        let mut require_string = |field: &str, value: Option<&Value>| match value {
            None => errors.push(missing(&format!("{call_path}.{field}"))),
            Some(Value::String(_)) => {}
            Some(other) => errors.push(type_error(
                &format!("{call_path}.{field}"),
                "a string",
                other,
            )),
        };
        require_string("id", call.get("id"));
        require_string(
            "function.name",
            call.get("function").and_then(|f| f.get("name")),
        );
        require_string(
            "function.arguments",
            call.get("function").and_then(|f| f.get("arguments")),
        );
        if call.get("type").and_then(Value::as_str) != Some("function") {
            errors.push(invalid_at(
                format!(
                    "Invalid value: '{}'. Supported values are: 'function'.",
                    call.get("type").map(display).unwrap_or_default()
                ),
                &format!("{call_path}.type"),
            ));
        }
    }
}

fn check_tools(tools: Option<&Value>, errors: &mut Vec<ApiError>) {
    let Some(tools) = tools else { return };
    let Some(tools) = tools.as_array() else {
        errors.push(type_error("tools", "an array", tools));
        return;
    };
    for (index, tool) in tools.iter().enumerate() {
        let path = format!("tools[{index}]");
        if tool.get("type").and_then(Value::as_str) != Some("function") {
            errors.push(missing(&format!("{path}.type")));
        }
        let Some(function) = tool.get("function").and_then(Value::as_object) else {
            errors.push(missing(&format!("{path}.function")));
            continue;
        };
        match function.get("name").and_then(Value::as_str) {
            None => errors.push(missing(&format!("{path}.function.name"))),
            Some(name) if !is_valid_tool_name(name) => errors.push(invalid_at(
                format!(
                    "Invalid '{path}.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
                ),
                &format!("{path}.function.name"),
            )),
            Some(_) => {}
        }
        if let Some(description) = function.get("description")
            && !description.is_string()
        {
            errors.push(type_error(
                &format!("{path}.function.description"),
                "a string",
                description,
            ));
        }
        if let Some(parameters) = function.get("parameters")
            && !parameters.is_object()
        {
            errors.push(type_error(
                &format!("{path}.function.parameters"),
                "an object",
                parameters,
            ));
        }
    }
}

/// Tool messages answer the `tool_calls` of the assistant message right
/// before them, one each, before any other message.
fn check_pairing(messages: &[Value], errors: &mut Vec<ApiError>) {
    // The unanswered calls of the last assistant message with `tool_calls`
    // (and its index), while we are in the run of tool messages after it.
    let mut open: Option<(usize, Vec<&str>)> = None;
    for (index, message) in messages.iter().enumerate() {
        let role = message.get("role").and_then(Value::as_str);
        if role == Some("tool") {
            let id = message
                .get("tool_call_id")
                .and_then(Value::as_str)
                .unwrap_or_default();
            match open.as_mut() {
                None => errors.push(ApiError::invalid_param(
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
                    format!("messages.[{index}].role"),
                )),
                Some((_, ids)) => match ids.iter().position(|open_id| *open_id == id) {
                    Some(position) => {
                        ids.remove(position);
                    }
                    None => errors.push(ApiError::invalid_param(
                        format!("Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message."),
                        format!("messages.[{index}].tool_call_id"),
                    )),
                },
            }
            continue;
        }
        if let Some((_, ids)) = open.take() {
            report_unanswered(&ids, index, errors);
        }
        let calls = message.get("tool_calls").and_then(Value::as_array);
        if role == Some("assistant") && calls.is_some_and(|calls| !calls.is_empty()) {
            let ids = calls
                .into_iter()
                .flatten()
                .filter_map(|call| call.get("id").and_then(Value::as_str))
                .collect();
            open = Some((index, ids));
        }
    }
    // Calls left open at the end are reported against their assistant message.
    if let Some((assistant, ids)) = open {
        report_unanswered(&ids, assistant, errors);
    }
}

fn report_unanswered(ids: &[&str], index: usize, errors: &mut Vec<ApiError>) {
    if ids.is_empty() {
        return;
    }
    errors.push(ApiError::invalid_param(
        format!(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. \
             The following tool_call_ids did not have response messages: {}",
            ids.join(", ")
        ),
        format!("messages.[{index}].role"),
    ));
}

/// A value as OpenAI quotes it in messages: strings bare, the rest as JSON.
fn display(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
