//! Anthropic Messages API request checks. Messages follow the real API's
//! (pydantic-style `path: problem`, and verbatim texts for the errors
//! clients hit most: tool pairing, cache_control, extra inputs).

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value};

use super::anthropic_messages as messages;
use super::{is_json_content_type, is_valid_tool_name};
use crate::fake_model::api_error::ApiError;

const VERSION: &str = "2023-06-01";

/// Top-level fields of a Messages request.
const KNOWN_FIELDS: &[&str] = &[
    "model",
    "messages",
    "max_tokens",
    "cache_control",
    "container",
    "context_management",
    "inference_geo",
    "mcp_servers",
    "metadata",
    "output_config",
    "service_tier",
    "stop_sequences",
    "stream",
    "system",
    "temperature",
    "thinking",
    "tool_choice",
    "tools",
    "top_k",
    "top_p",
];

const MAX_CACHE_CONTROLS: usize = 4;

pub(super) fn validate(
    headers: &BTreeMap<String, String>,
    body: &Value,
    require_api_key: bool,
) -> Vec<ApiError> {
    let mut errors = Vec::new();
    check_headers(headers, require_api_key, &mut errors);
    let Some(body) = body.as_object() else {
        errors.push(ApiError::invalid("Input should be a valid dictionary"));
        return errors;
    };
    for field in body.keys().filter(|k| !KNOWN_FIELDS.contains(&k.as_str())) {
        errors.push(ApiError::invalid(format!(
            "{field}: Extra inputs are not permitted"
        )));
    }
    match body.get("model") {
        None => errors.push(ApiError::invalid("model: Field required")),
        Some(Value::String(_)) => {}
        Some(_) => errors.push(ApiError::invalid("model: Input should be a valid string")),
    }
    check_max_tokens(body, &mut errors);
    messages::check(body.get("messages"), &mut errors);
    check_system(body.get("system"), &mut errors);
    check_tools(body.get("tools"), &mut errors);
    check_thinking(body, &mut errors);
    check_cache_controls(body, &mut errors);
    if let Some(stream) = body.get("stream")
        && !stream.is_boolean()
    {
        errors.push(ApiError::invalid("stream: Input should be a valid boolean"));
    }
    errors
}

fn check_headers(
    headers: &BTreeMap<String, String>,
    require_api_key: bool,
    errors: &mut Vec<ApiError>,
) {
    check_auth_and_version(headers, require_api_key, errors);
    if !is_json_content_type(headers) {
        errors.push(ApiError::invalid(format!(
            "content-type: expected application/json, got {:?}",
            headers
                .get("content-type")
                .map(String::as_str)
                .unwrap_or_default()
        )));
    }
}

/// The headers every Anthropic request needs, a `GET` included.
pub(super) fn check_auth_and_version(
    headers: &BTreeMap<String, String>,
    require_api_key: bool,
    errors: &mut Vec<ApiError>,
) {
    if require_api_key {
        match headers.get("x-api-key") {
            None => errors.push(ApiError::unauthorized("x-api-key header is required", None)),
            Some(key) if key.trim().is_empty() => {
                errors.push(ApiError::unauthorized("invalid x-api-key", None));
            }
            Some(_) => {}
        }
    }
    match headers.get("anthropic-version").map(String::as_str) {
        None => errors.push(ApiError::invalid("anthropic-version: header is required")),
        Some(VERSION) => {}
        // Valid for the real API, but it selects an older wire format that
        // the fake model does not speak.
        Some("2023-01-01") => errors.push(ApiError::invalid(
            "anthropic-version: \"2023-01-01\" is valid, but the fake model only speaks 2023-06-01",
        )),
        Some(other) => errors.push(ApiError::invalid(format!(
            "anthropic-version: \"{other}\" is not a valid version"
        ))),
    }
}

fn check_max_tokens(body: &Map<String, Value>, errors: &mut Vec<ApiError>) {
    match body.get("max_tokens") {
        None => errors.push(ApiError::invalid("max_tokens: Field required")),
        Some(value) => match value.as_i64() {
            None => errors.push(ApiError::invalid(
                "max_tokens: Input should be a valid integer",
            )),
            Some(tokens) if tokens < 1 => errors.push(ApiError::invalid(
                "max_tokens: Input should be greater than or equal to 1",
            )),
            Some(_) => {}
        },
    }
}

fn check_system(system: Option<&Value>, errors: &mut Vec<ApiError>) {
    match system {
        None | Some(Value::String(_)) => {}
        Some(Value::Array(blocks)) => {
            for (index, block) in blocks.iter().enumerate() {
                let is_text_block = block.get("type").and_then(Value::as_str) == Some("text")
                    && block.get("text").is_some_and(Value::is_string);
                if !is_text_block {
                    errors.push(ApiError::invalid(format!(
                        "system.{index}: Input should be a valid text block ({{\"type\": \"text\", \"text\": …}})"
                    )));
                }
            }
        }
        Some(_) => errors.push(ApiError::invalid(
            "system: Input should be a valid string or a list of text blocks",
        )),
    }
}

fn check_tools(tools: Option<&Value>, errors: &mut Vec<ApiError>) {
    let Some(tools) = tools else { return };
    let Some(tools) = tools.as_array() else {
        errors.push(ApiError::invalid("tools: Input should be a valid list"));
        return;
    };
    let mut names = HashSet::new();
    for (index, tool) in tools.iter().enumerate() {
        let Some(tool) = tool.as_object() else {
            errors.push(ApiError::invalid(format!(
                "tools.{index}: Input should be a valid dictionary"
            )));
            continue;
        };
        let name = tool.get("name").and_then(Value::as_str);
        if let Some(name) = name
            && !names.insert(name.to_string())
        {
            errors.push(ApiError::invalid("tools: Tool names must be unique."));
        }
        // Server tools (`web_search_20250305`, …) have their own schemas.
        let tool_type = tool.get("type").and_then(Value::as_str).unwrap_or("custom");
        if tool_type != "custom" {
            continue;
        }
        let path = format!("tools.{index}.custom");
        for field in tool.keys() {
            let known = [
                "name",
                "description",
                "input_schema",
                "cache_control",
                "type",
                "strict",
            ];
            if !known.contains(&field.as_str()) {
                errors.push(ApiError::invalid(format!(
                    "{path}.{field}: Extra inputs are not permitted"
                )));
            }
        }
        match name {
            None => errors.push(ApiError::invalid(format!("{path}.name: Field required"))),
            Some(name) if !is_valid_tool_name(name) => errors.push(ApiError::invalid(format!(
                "{path}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            ))),
            Some(_) => {}
        }
        if tool.get("description").is_some_and(|d| !d.is_string()) {
            errors.push(ApiError::invalid(format!(
                "{path}.description: Input should be a valid string"
            )));
        }
        match tool.get("input_schema") {
            None => errors.push(ApiError::invalid(format!(
                "{path}.input_schema: Field required"
            ))),
            Some(Value::Object(schema)) => {
                if schema.get("type").and_then(Value::as_str) != Some("object") {
                    errors.push(ApiError::invalid(format!(
                        "{path}.input_schema.type: Input should be 'object'"
                    )));
                }
            }
            Some(_) => errors.push(ApiError::invalid(format!(
                "{path}.input_schema: Input should be a valid dictionary"
            ))),
        }
    }
}

fn check_thinking(body: &Map<String, Value>, errors: &mut Vec<ApiError>) {
    let Some(thinking) = body.get("thinking") else {
        return;
    };
    match thinking.get("type").and_then(Value::as_str) {
        Some("enabled") => {
            let Some(budget) = thinking.get("budget_tokens").and_then(Value::as_i64) else {
                errors.push(ApiError::invalid("thinking.enabled.budget_tokens: Field required"));
                return;
            };
            if budget < 1024 {
                errors.push(ApiError::invalid(
                    "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
                ));
            }
            let max_tokens = body.get("max_tokens").and_then(Value::as_i64).unwrap_or_default();
            if max_tokens <= budget {
                errors.push(ApiError::invalid(
                    "`max_tokens` must be greater than `thinking.budget_tokens`",
                ));
            }
        }
        Some("disabled" | "adaptive") => {}
        _ => errors.push(ApiError::invalid(
            "thinking: Input tag found using 'type' does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'",
        )),
    }
}

/// Validates every `cache_control` marker and enforces the limit of four
/// across tools, system blocks and message content (a top-level
/// `cache_control` places one more marker, so it counts too).
fn check_cache_controls(body: &Map<String, Value>, errors: &mut Vec<ApiError>) {
    let mut markers: Vec<(String, &Value)> = Vec::new();
    if let Some(marker) = body.get("cache_control").filter(|m| !m.is_null()) {
        markers.push(("cache_control".into(), marker));
    }
    let array = |key: &str| {
        body.get(key)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    };
    for (index, tool) in array("tools").iter().enumerate() {
        push_marker(&mut markers, format!("tools.{index}"), tool);
    }
    for (index, block) in array("system").iter().enumerate() {
        push_marker(&mut markers, format!("system.{index}"), block);
    }
    for (m, message) in array("messages").iter().enumerate() {
        let Some(blocks) = message.get("content").and_then(Value::as_array) else {
            continue;
        };
        for (b, block) in blocks.iter().enumerate() {
            push_marker(&mut markers, format!("messages.{m}.content.{b}"), block);
            // Blocks inside a tool result can be marked as well.
            let nested = block.get("content").and_then(Value::as_array);
            for (n, inner) in nested.into_iter().flatten().enumerate() {
                push_marker(
                    &mut markers,
                    format!("messages.{m}.content.{b}.content.{n}"),
                    inner,
                );
            }
        }
    }
    for (path, marker) in &markers {
        check_cache_control(path, marker, errors);
    }
    if markers.len() > MAX_CACHE_CONTROLS {
        errors.push(ApiError::invalid(format!(
            "A maximum of {MAX_CACHE_CONTROLS} blocks with cache_control may be provided. Found {}.",
            markers.len()
        )));
    }
}

fn push_marker<'a>(markers: &mut Vec<(String, &'a Value)>, path: String, holder: &'a Value) {
    if let Some(marker) = holder.get("cache_control").filter(|m| !m.is_null()) {
        markers.push((format!("{path}.cache_control"), marker));
    }
}

fn check_cache_control(path: &str, marker: &Value, errors: &mut Vec<ApiError>) {
    let Some(marker) = marker.as_object() else {
        errors.push(ApiError::invalid(format!(
            "{path}: Input should be a valid dictionary"
        )));
        return;
    };
    if marker.get("type").and_then(Value::as_str) != Some("ephemeral") {
        errors.push(ApiError::invalid(format!(
            "{path}.type: Input should be 'ephemeral'"
        )));
    }
    if let Some(ttl) = marker.get("ttl")
        && !matches!(ttl.as_str(), Some("5m" | "1h"))
    {
        errors.push(ApiError::invalid(format!(
            "{path}.ttl: Input should be '5m' or '1h'"
        )));
    }
    for field in marker
        .keys()
        .filter(|k| !matches!(k.as_str(), "type" | "ttl"))
    {
        errors.push(ApiError::invalid(format!(
            "{path}.ephemeral.{field}: Extra inputs are not permitted"
        )));
    }
}
