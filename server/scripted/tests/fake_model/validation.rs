//! Every validation rule: the status, the provider's message, and that no
//! scenario step is consumed by an invalid request.

use expect_test::{Expect, expect};
use rein_scripted::fake_model::{FakeModel, Reply, Scenario};
use serde_json::{Value, json};

use crate::support::{anthropic_body, openai_body, serve};

/// A request to send: which API, header changes, and the body.
struct Case {
    name: &'static str,
    path: &'static str,
    /// `(name, Some(value))` sets a header, `(name, None)` removes it.
    headers: Vec<(&'static str, Option<&'static str>)>,
    body: Body,
}

enum Body {
    Json(Value),
    Raw(&'static str),
}

fn anthropic_case(name: &'static str, body: Value) -> Case {
    Case {
        name,
        path: "/v1/messages",
        headers: Vec::new(),
        body: Body::Json(body),
    }
}

fn openai_case(name: &'static str, body: Value) -> Case {
    Case {
        name,
        path: "/v1/chat/completions",
        headers: Vec::new(),
        body: Body::Json(body),
    }
}

fn with_header(mut case: Case, name: &'static str, value: Option<&'static str>) -> Case {
    case.headers.push((name, value));
    case
}

/// `anthropic_body(false)` with `messages` replaced.
fn anthropic_messages(messages: Value) -> Value {
    let mut body = anthropic_body(false);
    body["messages"] = messages;
    body
}

fn anthropic_with(field: &str, value: Value) -> Value {
    let mut body = anthropic_body(false);
    body[field] = value;
    body
}

fn openai_messages(messages: Value) -> Value {
    let mut body = openai_body(false);
    body["messages"] = messages;
    body
}

fn openai_with(field: &str, value: Value) -> Value {
    let mut body = openai_body(false);
    body[field] = value;
    body
}

fn tool_use(id: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "run", "input": {}})
}

fn tool_result(id: &str) -> Value {
    json!({"type": "tool_result", "tool_use_id": id, "content": "ok"})
}

fn tool_call(id: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": "run", "arguments": "{}"}})
}

/// Status and body text.
async fn send(server: &FakeModel, case: &Case) -> (u16, String) {
    let mut headers = vec![
        ("x-api-key", Some("sk-ant-test")),
        ("anthropic-version", Some("2023-06-01")),
        ("authorization", Some("Bearer sk-test")),
        ("content-type", Some("application/json")),
    ];
    if case.path.contains("completions") {
        headers.retain(|(name, _)| !matches!(*name, "x-api-key" | "anthropic-version"));
    } else {
        headers.retain(|(name, _)| *name != "authorization");
    }
    for (name, value) in &case.headers {
        headers.retain(|(existing, _)| existing != name);
        headers.push((name, *value));
    }
    let mut request = reqwest::Client::new().post(format!("{}{}", server.base_url(), case.path));
    for (name, value) in headers {
        if let Some(value) = value {
            request = request.header(name, value);
        }
    }
    let body = match &case.body {
        Body::Json(value) => value.to_string(),
        Body::Raw(text) => text.to_string(),
    };
    let response = request.body(body).send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

/// Sends every case to a server holding one reply, then checks the reply is
/// still there for a valid request: invalid requests consume nothing.
async fn check(cases: Vec<Case>, valid: Case, expected: Expect) {
    let server = serve(vec![Reply::text("still here")]).await;
    let mut out = String::new();
    for case in &cases {
        let (status, body) = send(&server, case).await;
        let body: Value = serde_json::from_str(&body).unwrap();
        let error = body.get("error").unwrap();
        let kind = error["type"].as_str().unwrap();
        let param = error
            .get("param")
            .and_then(Value::as_str)
            .map(|p| format!(" [{p}]"));
        out.push_str(&format!(
            "{}: {status} {kind}{}: {}\n",
            case.name,
            param.unwrap_or_default(),
            error["message"].as_str().unwrap()
        ));
    }
    expected.assert_eq(&out);
    assert_eq!(
        server.remaining(),
        1,
        "invalid requests must not consume steps"
    );
    assert_eq!(server.requests().len(), cases.len());
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.step.is_none() && !r.violations.is_empty())
    );
    let (status, _) = send(&server, &valid).await;
    assert_eq!(status, 200);
    assert_eq!(server.remaining(), 0);
}

#[tokio::test]
async fn anthropic_requests_are_checked_like_the_real_api() {
    let valid = || anthropic_body(false);
    let five_marked_tools: Vec<Value> = (0..5)
        .map(|i| {
            json!({"name": format!("t{i}"), "description": "d", "input_schema": {"type": "object"},
                   "cache_control": {"type": "ephemeral"}})
        })
        .collect();
    let cases = vec![
        with_header(anthropic_case("no key", valid()), "x-api-key", None),
        with_header(anthropic_case("empty key", valid()), "x-api-key", Some(" ")),
        with_header(
            anthropic_case("no version", valid()),
            "anthropic-version",
            None,
        ),
        with_header(
            anthropic_case("bad version", valid()),
            "anthropic-version",
            Some("2024-01-01"),
        ),
        with_header(
            anthropic_case("not json content", valid()),
            "content-type",
            Some("text/plain"),
        ),
        Case {
            body: Body::Raw("{\"model\": "),
            ..anthropic_case("broken json", Value::Null)
        },
        anthropic_case("extra field", anthropic_with("temprature", json!(0.5))),
        anthropic_case("no model", {
            let mut body = valid();
            body.as_object_mut().unwrap().remove("model");
            body
        }),
        anthropic_case("zero max_tokens", anthropic_with("max_tokens", json!(0))),
        anthropic_case("no messages", anthropic_messages(json!([]))),
        anthropic_case(
            "assistant first",
            anthropic_messages(
                json!([{"role": "assistant", "content": "hi"}, {"role": "user", "content": "x"}]),
            ),
        ),
        anthropic_case(
            "system role",
            anthropic_messages(json!([{"role": "system", "content": "x"}])),
        ),
        anthropic_case(
            "message extra field",
            anthropic_messages(json!([{"role": "user", "content": "x", "name": "bob"}])),
        ),
        anthropic_case(
            "empty content",
            anthropic_messages(json!([{"role": "user", "content": []}])),
        ),
        anthropic_case(
            "empty text block",
            anthropic_messages(
                json!([{"role": "user", "content": [{"type": "text", "text": ""}]}]),
            ),
        ),
        anthropic_case(
            "unknown block",
            anthropic_messages(
                json!([{"role": "user", "content": [{"type": "video", "url": "x"}]}]),
            ),
        ),
        anthropic_case(
            "tool_use unanswered",
            anthropic_messages(json!([
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [tool_use("toolu_a"), tool_use("toolu_b")]},
                {"role": "user", "content": [tool_result("toolu_a")]},
            ])),
        ),
        anthropic_case(
            "tool_result unexpected",
            anthropic_messages(json!([
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": "done"},
                {"role": "user", "content": [{"type": "text", "text": "and"}, tool_result("toolu_z")]},
            ])),
        ),
        anthropic_case(
            "duplicate tool_use ids",
            anthropic_messages(json!([
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [tool_use("toolu_a")]},
                {"role": "user", "content": [tool_result("toolu_a")]},
                {"role": "assistant", "content": [tool_use("toolu_a")]},
                {"role": "user", "content": [tool_result("toolu_a")]},
            ])),
        ),
        anthropic_case(
            "bad tool_use id",
            anthropic_messages(json!([
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [tool_use("call.1")]},
                {"role": "user", "content": [tool_result("call.1")]},
            ])),
        ),
        anthropic_case(
            "bad tool name",
            anthropic_with(
                "tools",
                json!([{"name": "read file", "description": "d", "input_schema": {"type": "object"}}]),
            ),
        ),
        anthropic_case(
            "schema not object",
            anthropic_with(
                "tools",
                json!([{"name": "read", "description": "d", "input_schema": {"type": "string"}}]),
            ),
        ),
        anthropic_case(
            "duplicate tool names",
            anthropic_with(
                "tools",
                json!([
                    {"name": "read", "input_schema": {"type": "object"}},
                    {"name": "read", "input_schema": {"type": "object"}},
                ]),
            ),
        ),
        anthropic_case(
            "five cache_control",
            anthropic_with("tools", json!(five_marked_tools)),
        ),
        anthropic_case(
            "bad cache_control",
            anthropic_with(
                "system",
                json!([{"type": "text", "text": "s", "cache_control": {"type": "permanent"}}]),
            ),
        ),
        anthropic_case("system not text", anthropic_with("system", json!(42))),
        anthropic_case(
            "thinking budget",
            anthropic_with(
                "thinking",
                json!({"type": "enabled", "budget_tokens": 4096}),
            ),
        ),
        with_header(
            anthropic_case("wrong endpoint", valid()),
            "x-api-key",
            Some("k"),
        ),
    ];
    let mut cases = cases;
    cases.last_mut().unwrap().path = "/v1/complete";
    let expected = expect![[r#"
        no key: 401 authentication_error: x-api-key header is required
        empty key: 401 authentication_error: invalid x-api-key
        no version: 400 invalid_request_error: anthropic-version: header is required
        bad version: 400 invalid_request_error: anthropic-version: "2024-01-01" is not a valid version
        not json content: 400 invalid_request_error: content-type: expected application/json, got "text/plain"
        broken json: 400 invalid_request_error: There was an error parsing the body of your request: EOF while parsing a value at line 1 column 10
        extra field: 400 invalid_request_error: temprature: Extra inputs are not permitted
        no model: 400 invalid_request_error: model: Field required
        zero max_tokens: 400 invalid_request_error: max_tokens: Input should be greater than or equal to 1
        no messages: 400 invalid_request_error: messages: at least one message is required
        assistant first: 400 invalid_request_error: messages: first message must use the "user" role
        system role: 400 invalid_request_error: messages.0.role: Input should be 'user' or 'assistant'
        message extra field: 400 invalid_request_error: messages.0.name: Extra inputs are not permitted
        empty content: 400 invalid_request_error: messages.0: all messages must have non-empty content except for the optional final assistant message
        empty text block: 400 invalid_request_error: messages: text content blocks must be non-empty
        unknown block: 400 invalid_request_error: messages.0.content.0: Input tag 'video' found using 'type' does not match any of the expected tags: 'text', 'image', 'document', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking'
        tool_use unanswered: 400 invalid_request_error: messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_b. Each `tool_use` block must have a corresponding `tool_result` block in the next message.
        tool_result unexpected: 400 invalid_request_error: messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_z. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.
        duplicate tool_use ids: 400 invalid_request_error: messages.3.content.0: `tool_use` ids must be unique
        bad tool_use id: 400 invalid_request_error: messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'
        bad tool name: 400 invalid_request_error: tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'
        schema not object: 400 invalid_request_error: tools.0.custom.input_schema.type: Input should be 'object'
        duplicate tool names: 400 invalid_request_error: tools: Tool names must be unique.
        five cache_control: 400 invalid_request_error: A maximum of 4 blocks with cache_control may be provided. Found 5.
        bad cache_control: 400 invalid_request_error: system.0.cache_control.type: Input should be 'ephemeral'
        system not text: 400 invalid_request_error: system: Input should be a valid string or a list of text blocks
        thinking budget: 400 invalid_request_error: `max_tokens` must be greater than `thinking.budget_tokens`
        wrong endpoint: 404 not_found_error: Not Found
    "#]];
    check(cases, anthropic_case("valid", valid()), expected).await;
}

#[tokio::test]
async fn openai_requests_are_checked_like_the_real_api() {
    let valid = || openai_body(false);
    let cases = vec![
        with_header(openai_case("no key", valid()), "authorization", None),
        with_header(
            openai_case("not bearer", valid()),
            "authorization",
            Some("Basic abc"),
        ),
        Case {
            body: Body::Raw("not json"),
            ..openai_case("broken json", Value::Null)
        },
        openai_case(
            "unknown argument",
            openai_with("thinking", json!({"type": "enabled"})),
        ),
        openai_case("no model", {
            let mut body = valid();
            body.as_object_mut().unwrap().remove("model");
            body
        }),
        openai_case("no messages", openai_messages(json!([]))),
        openai_case(
            "bad role",
            openai_messages(json!([{"role": "robot", "content": "x"}])),
        ),
        openai_case(
            "message extra field",
            openai_messages(json!([{"role": "user", "content": "x", "reasoning_content": "y"}])),
        ),
        openai_case(
            "tool without tool_calls",
            openai_messages(json!([
                {"role": "user", "content": "go"},
                {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
            ])),
        ),
        openai_case(
            "tool_calls unanswered",
            openai_messages(json!([
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": null, "tool_calls": [tool_call("call_1"), tool_call("call_2")]},
                {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
                {"role": "user", "content": "and?"},
            ])),
        ),
        openai_case(
            "tool_call_id unknown",
            openai_messages(json!([
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": null, "tool_calls": [tool_call("call_1")]},
                {"role": "tool", "tool_call_id": "call_9", "content": "ok"},
            ])),
        ),
        openai_case(
            "arguments not a string",
            openai_messages(json!([
                {"role": "user", "content": "go"},
                {"role": "assistant", "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "run", "arguments": {}}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
            ])),
        ),
        openai_case(
            "tool message without id",
            openai_messages(json!([
                {"role": "user", "content": "go"},
                {"role": "assistant", "tool_calls": [tool_call("call_1")]},
                {"role": "tool", "content": "ok"},
            ])),
        ),
        openai_case(
            "bad tool name",
            openai_with(
                "tools",
                json!([{"type": "function", "function": {"name": "read file", "parameters": {}}}]),
            ),
        ),
        openai_case(
            "parameters not object",
            openai_with(
                "tools",
                json!([{"type": "function", "function": {"name": "read", "parameters": "x"}}]),
            ),
        ),
        openai_case(
            "stream_options without stream",
            openai_with("stream_options", json!({"include_usage": true})),
        ),
        openai_case("wrong endpoint", valid()),
    ];
    let mut cases = cases;
    cases.last_mut().unwrap().path = "/v1/completions";
    let expected = expect![[r#"
        no key: 401 invalid_request_error: You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).
        not bearer: 401 invalid_request_error: Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.
        broken json: 400 invalid_request_error: We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)
        unknown argument: 400 invalid_request_error: Unrecognized request argument supplied: thinking
        no model: 400 invalid_request_error: you must provide a model parameter
        no messages: 400 invalid_request_error [messages]: Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.
        bad role: 400 invalid_request_error [messages.[0].role]: Invalid value: 'robot'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.
        message extra field: 400 invalid_request_error [messages.[0]]: Additional properties are not allowed ('reasoning_content' was unexpected) - 'messages.0'
        tool without tool_calls: 400 invalid_request_error [messages.[1].role]: Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.
        tool_calls unanswered: 400 invalid_request_error [messages.[3].role]: An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_2
        tool_call_id unknown: 400 invalid_request_error [messages.[2].tool_call_id]: Invalid parameter: 'tool_call_id' of 'call_9' not found in 'tool_calls' of previous message.
        arguments not a string: 400 invalid_request_error [messages.[1].tool_calls.[0].function.arguments]: Invalid type for 'messages[1].tool_calls[0].function.arguments': expected a string, but got an object instead.
        tool message without id: 400 invalid_request_error [messages.[2].tool_call_id]: Missing required parameter: 'messages[2].tool_call_id'.
        bad tool name: 400 invalid_request_error [tools.[0].function.name]: Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.
        parameters not object: 400 invalid_request_error [tools.[0].function.parameters]: Invalid type for 'tools[0].function.parameters': expected an object, but got a string instead.
        stream_options without stream: 400 invalid_request_error [stream_options]: The 'stream_options' parameter is only allowed when 'stream' is enabled.
        wrong endpoint: 404 invalid_request_error: Invalid URL (POST /v1/completions)
    "#]];
    check(cases, openai_case("valid", valid()), expected).await;
}

#[tokio::test]
async fn a_correct_tool_round_trip_passes_in_both_formats() {
    let server = serve(vec![Reply::text("a"), Reply::text("b")]).await;
    let anthropic_body = anthropic_messages(json!([
        {"role": "user", "content": [{"type": "text", "text": "go", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "hm", "signature": "sig"},
            {"type": "text", "text": "running"},
            tool_use("toolu_a"), tool_use("toolu_b")]},
        {"role": "user", "content": [
            tool_result("toolu_b"),
            {"type": "tool_result", "tool_use_id": "toolu_a", "is_error": true,
             "content": [{"type": "text", "text": "boom"}]}]},
    ]));
    let case = anthropic_case("anthropic", anthropic_body);
    assert_eq!(send(&server, &case).await.0, 200);
    let openai_body = openai_messages(json!([
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": "running", "tool_calls": [tool_call("call_1"), tool_call("call_2")]},
        {"role": "tool", "tool_call_id": "call_2", "content": "ok"},
        {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "ok"}]},
    ]));
    assert_eq!(
        send(&server, &openai_case("openai", openai_body)).await.0,
        200
    );
    assert!(server.violations().is_empty(), "{:?}", server.violations());
}

#[tokio::test]
async fn keys_are_optional_when_the_scenario_says_so() {
    let scenario = Scenario::new()
        .reply(Reply::text("a"))
        .reply(Reply::text("b"))
        .require_api_key(false);
    let server = FakeModel::start(scenario).await.unwrap();
    let anthropic = with_header(
        anthropic_case("no key", anthropic_body(false)),
        "x-api-key",
        None,
    );
    let openai = with_header(
        openai_case("no key", openai_body(false)),
        "authorization",
        None,
    );
    assert_eq!(send(&server, &anthropic).await.0, 200);
    assert_eq!(send(&server, &openai).await.0, 200);
}

/// A scenario's `api_key`: that key is served, any other (or none) is
/// refused as the real APIs refuse a wrong key, and the refusal repeats
/// neither key.
#[tokio::test]
async fn a_scenario_with_an_api_key_accepts_that_key_only() {
    let scenario = Scenario::from_json(
        r#"{"api_key": "sk-the-right-one", "replies": [{"text": "a"}, {"text": "b"}]}"#,
    )
    .unwrap();
    let server = FakeModel::start(scenario).await.unwrap();
    let anthropic = |key| {
        with_header(
            anthropic_case("key", anthropic_body(false)),
            "x-api-key",
            key,
        )
    };
    let openai = |key| with_header(openai_case("key", openai_body(false)), "authorization", key);
    let mut answers = Vec::new();
    for case in [
        anthropic(Some("sk-ant-test")),
        anthropic(None),
        openai(Some("Bearer sk-test")),
        anthropic(Some("sk-the-right-one")),
        openai(Some("Bearer sk-the-right-one")),
    ] {
        let (status, body) = send(&server, &case).await;
        assert!(!body.contains("sk-"), "{body}");
        answers.push(status);
    }
    assert_eq!(answers, [401, 401, 401, 200, 200]);
    assert_eq!(server.remaining(), 0);
    let models = reqwest::Client::new()
        .get(format!("{}/v1/models", server.base_url()))
        .header("x-api-key", "scripted-key")
        .header("anthropic-version", "2023-06-01")
        .send()
        .await
        .unwrap();
    assert_eq!(models.status().as_u16(), 401);
}

#[tokio::test]
async fn validation_errors_use_the_provider_error_bodies() {
    let server = serve(vec![]).await;
    let anthropic = with_header(
        anthropic_case("no version", anthropic_body(false)),
        "anthropic-version",
        None,
    );
    let openai = openai_case(
        "stream_options",
        openai_with("stream_options", json!({"include_usage": true})),
    );
    let (_, anthropic_error) = send(&server, &anthropic).await;
    let (_, openai_error) = send(&server, &openai).await;
    expect![[r#"
        {"type":"error","error":{"type":"invalid_request_error","message":"anthropic-version: header is required"},"request_id":"req_fake_0001"}
        {"error":{"message":"The 'stream_options' parameter is only allowed when 'stream' is enabled.","type":"invalid_request_error","param":"stream_options","code":null}}"#]].assert_eq(&format!("{anthropic_error}\n{openai_error}"));
    expect![[r#"
        [
            "POST /v1/messages: anthropic-version: header is required",
            "POST /v1/chat/completions: The 'stream_options' parameter is only allowed when 'stream' is enabled.",
        ]
    "#]].assert_debug_eq(&server.violations());
}
