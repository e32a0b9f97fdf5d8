//! Checking every request the way the real APIs do, with their messages
//! where we know them, so a client bug fails a test here instead of a user's
//! session there. Each check returns every problem it finds; the server
//! answers with the first and records them all.

mod anthropic;
mod anthropic_messages;
mod openai;

use std::collections::BTreeMap;

use serde_json::Value;

use super::WireFormat;
use super::api_error::ApiError;

/// Every problem with a request's headers and (parsed) body.
pub(crate) fn validate(
    format: WireFormat,
    headers: &BTreeMap<String, String>,
    body: &Value,
    require_api_key: bool,
) -> Vec<ApiError> {
    match format {
        WireFormat::Anthropic => anthropic::validate(headers, body, require_api_key),
        WireFormat::OpenAi => openai::validate(headers, body, require_api_key),
    }
}

/// Every problem with the headers of a `GET /v1/models`.
pub(crate) fn validate_models_request(
    format: WireFormat,
    headers: &BTreeMap<String, String>,
    require_api_key: bool,
) -> Vec<ApiError> {
    let mut errors = Vec::new();
    match format {
        WireFormat::Anthropic => {
            anthropic::check_auth_and_version(headers, require_api_key, &mut errors)
        }
        WireFormat::OpenAi if require_api_key => openai::check_authorization(headers, &mut errors),
        WireFormat::OpenAi => {}
    }
    errors
}

/// A request whose key is not `expected` (a scenario's `api_key`): answered
/// as the real API answers a wrong key, without repeating either key (the
/// message reaches logs, and the key must not).
pub(crate) fn check_expected_key(
    format: WireFormat,
    headers: &BTreeMap<String, String>,
    expected: &str,
) -> Option<ApiError> {
    let sent = match format {
        WireFormat::Anthropic => headers.get("x-api-key").map(String::as_str),
        WireFormat::OpenAi => headers.get("authorization").and_then(|value| {
            value
                .strip_prefix("Bearer ")
                .or_else(|| value.strip_prefix("bearer "))
        }),
    };
    if sent.map(str::trim) == Some(expected) {
        return None;
    }
    let message =
        "fake model: the request's API key is not the one this scenario accepts (its `api_key`)";
    Some(match format {
        WireFormat::Anthropic => {
            ApiError::unauthorized(format!("invalid x-api-key: {message}"), None)
        }
        WireFormat::OpenAi => ApiError::unauthorized(
            format!("Incorrect API key provided: {message}"),
            Some("invalid_api_key"),
        ),
    })
}

/// Both providers accept tool names matching `^[a-zA-Z0-9_-]{1,64}$`.
fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Anthropic's pattern for tool-use ids: `^[a-zA-Z0-9_-]+$`.
fn is_valid_tool_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Whether the `content-type` header says JSON (parameters allowed).
fn is_json_content_type(headers: &BTreeMap<String, String>) -> bool {
    headers.get("content-type").is_some_and(|value| {
        value
            .split(';')
            .next()
            .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
    })
}

/// "a string", "an object"…: how OpenAI's messages name JSON types.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a decimal",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_follow_the_providers_pattern() {
        assert!(is_valid_tool_name("run_tests"));
        assert!(is_valid_tool_name("read-file2"));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name("read file"));
        assert!(!is_valid_tool_name("fs.read"));
        assert!(!is_valid_tool_name(&"x".repeat(65)));
    }
}
