//! Scenario steps: order, branches, exhaustion, recording, and files.

use std::path::Path;

use expect_test::expect;
use pretty_assertions::assert_eq;
use rein_scripted::fake_model::{Condition, FakeModel, Reply, Scenario, WireFormat};
use serde_json::{Value, json};

use crate::support::{anthropic, anthropic_body, openai, openai_body, serve};

fn branch_on(condition: Condition) -> Scenario {
    Scenario::new().branch(
        vec![(condition, Reply::text("matched"))],
        Reply::text("otherwise"),
    )
}

#[tokio::test]
async fn a_branch_picks_the_first_case_that_holds() {
    let failing = json!([
        {"role": "user", "content": "run the tests"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "run", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
            "content": [{"type": "text", "text": "2 FAILED"}]}]},
    ]);
    let cases = [
        (
            "failed result",
            Condition::LastToolResultContains("FAILED".into()),
            failing.clone(),
            "matched",
        ),
        (
            "passing result",
            Condition::LastToolResultContains("PASSED".into()),
            failing,
            "otherwise",
        ),
        (
            "user text",
            Condition::LastUserTextContains("cart".into()),
            json!([{"role": "user", "content": "Fix the cart."}]),
            "matched",
        ),
        (
            "other text",
            Condition::LastUserTextContains("bike".into()),
            json!([{"role": "user", "content": "Fix the cart."}]),
            "otherwise",
        ),
    ];
    for (name, condition, messages, expected) in cases {
        let server = FakeModel::start(branch_on(condition)).await.unwrap();
        let mut body = anthropic_body(false);
        body["messages"] = messages;
        let message: Value = anthropic(&server, &body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(message["content"][0]["text"], expected, "{name}");
        assert_eq!(server.requests()[0].step, Some(0), "{name}");
    }
}

#[tokio::test]
async fn branches_read_openai_requests_too() {
    let scenario = branch_on(Condition::SystemContains("terse".into())).branch(
        vec![(
            Condition::LastToolResultContains("ok".into()),
            Reply::text("tool ok"),
        )],
        Reply::text("no"),
    );
    let server = FakeModel::start(scenario).await.unwrap();
    let mut body = openai_body(false);
    body["messages"] =
        json!([{"role": "developer", "content": "Be terse."}, {"role": "user", "content": "hi"}]);
    let first: Value = openai(&server, &body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    body["messages"] = json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "run", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
    ]);
    let second: Value = openai(&server, &body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(first["choices"][0]["message"]["content"], "matched");
    assert_eq!(second["choices"][0]["message"]["content"], "tool ok");
}

#[tokio::test]
async fn an_exhausted_scenario_answers_500_and_records_a_violation() {
    let server = serve(vec![Reply::text("only one")]).await;
    assert_eq!(
        anthropic(&server, &anthropic_body(false))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let anthropic_response = anthropic(&server, &anthropic_body(false))
        .send()
        .await
        .unwrap();
    assert_eq!(anthropic_response.status(), 500);
    let anthropic_error = anthropic_response.text().await.unwrap();
    let openai_response = openai(&server, &openai_body(true)).send().await.unwrap();
    assert_eq!(openai_response.status(), 500);
    let openai_error = openai_response.text().await.unwrap();
    expect![[r#"
        {"type":"error","error":{"type":"api_error","message":"fake model: scenario exhausted after 1 replies"},"request_id":"req_fake_0002"}
        {"error":{"message":"fake model: scenario exhausted after 1 replies","type":"server_error","param":null,"code":null}}"#]].assert_eq(&format!("{anthropic_error}\n{openai_error}"));
    expect![[r#"
        [
            "POST /v1/messages: fake model: scenario exhausted after 1 replies",
            "POST /v1/chat/completions: fake model: scenario exhausted after 1 replies",
        ]
    "#]]
    .assert_debug_eq(&server.violations());
}

#[tokio::test]
async fn requests_are_recorded_in_order_with_their_step() {
    let server = serve(vec![Reply::text("a"), Reply::text("b")]).await;
    anthropic(&server, &anthropic_body(false))
        .send()
        .await
        .unwrap();
    reqwest::Client::new()
        .post(format!("{}/v1/messages?beta=true", server.base_url()))
        .header("X-Api-Key", "sk-ant-test")
        .json(&anthropic_body(true))
        .send()
        .await
        .unwrap();
    openai(&server, &openai_body(false)).send().await.unwrap();
    let summary: Vec<String> = server
        .requests()
        .iter()
        .map(|r| {
            format!(
                "{:?} {} {} step={:?} key={:?} stream={} violations={:?}",
                r.format,
                r.method,
                r.path,
                r.step,
                r.headers
                    .get("x-api-key")
                    .or(r.headers.get("authorization")),
                r.body["stream"],
                r.violations
            )
        })
        .collect();
    expect![[r#"
        [
            "Anthropic POST /v1/messages step=Some(0) key=Some(\"sk-ant-test\") stream=false violations=[]",
            "Anthropic POST /v1/messages?beta=true step=None key=Some(\"sk-ant-test\") stream=true violations=[\"anthropic-version: header is required\"]",
            "OpenAi POST /v1/chat/completions step=Some(1) key=Some(\"Bearer sk-test\") stream=false violations=[]",
        ]
    "#]].assert_debug_eq(&summary);
    assert_eq!(server.requests()[0].format, WireFormat::Anthropic);
}

#[test]
fn the_example_file_loads_and_round_trips() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/example.json");
    let scenario = Scenario::load(&path).unwrap();
    assert_eq!(scenario.len(), 8);
    let json = serde_json::to_string_pretty(&scenario).unwrap();
    assert_eq!(Scenario::from_json(&json).unwrap(), scenario);
}

#[tokio::test]
async fn the_example_file_plays() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/example.json");
    let server = FakeModel::start(Scenario::load(&path).unwrap())
        .await
        .unwrap();
    // No key needed: the example turns `require_api_key` off.
    let client = reqwest::Client::new();
    let send = || {
        client
            .post(format!("{}/v1/messages", server.base_url()))
            .header("anthropic-version", "2023-06-01")
            .json(&anthropic_body(false))
            .send()
    };
    let first: Value = send().await.unwrap().json().await.unwrap();
    assert_eq!(first["content"][2]["name"], "read_file");
    let second = send().await.unwrap();
    assert_eq!(
        (
            second.status().as_u16(),
            second.headers()["retry-after"].to_str().unwrap()
        ),
        (429, "1")
    );
    assert!(server.violations().is_empty(), "{:?}", server.violations());
}

#[test]
fn bad_scenarios_say_what_and_where() {
    let cases = [
        "{\"replies\": [{\"text\": \"hi\",}]}",
        "{\"replies\": [{\"txt\": \"hi\"}]}",
        "{\"replies\": [\n  {\"fault\": {\"status\": 429, \"cut_after_events\": 2}}\n]}",
        "{\"replies\": [\n  {\"branch\": []}\n]}",
        "{\"replies\": [{\"branch\": [], \"otherwise\": {\"branch\": [], \"otherwise\": {}}}]}",
        "{\"replies\": [{\"tool_calls\": [{\"name\": \"x\", \"input\": [1]}]}]}",
        "{\"replies\": [{\"stop\": \"finished\"}]}",
        "{\"replies\": [{\"fault\": {\"connection_reset\": false}}]}",
        "{\"replies\": [{\"branch\": [{\"when\": {\"last_tool_result\": \"x\"}, \"reply\": {}}], \"otherwise\": {}}]}",
    ];
    let messages: Vec<String> = cases
        .iter()
        .map(|text| Scenario::from_json(text).unwrap_err().to_string())
        .collect();
    expect![[r#"
        [
            "invalid scenario: trailing comma at line 1 column 28",
            "invalid scenario: unknown field `txt`, expected one of `comment`, `thinking`, `text`, `tool_calls`, `content`, `stop`, `usage`, `fault`, `faults`, `branch`, `otherwise` at line 1 column 19",
            "invalid scenario: a fault needs exactly one of `status`, `connection_reset`, `cut_after_events`, `invalid_json_event`, `malformed_tool_json`, `delay_ms`, `first_event_delay_ms`, `wait_for_file`, `stream_error`; found status, cut_after_events at line 2 column 51",
            "invalid scenario: a `branch` needs an `otherwise` reply at line 3 column 1",
            "invalid scenario: `branch`/`otherwise` are only allowed for a step of `replies`, not inside a branch at line 1 column 73",
            "invalid scenario: the input of tool call `x` must be a JSON object at line 1 column 59",
            "invalid scenario: unknown variant `finished`, expected one of `end_turn`, `tool_use`, `max_tokens`, `stop_sequence`, `pause_turn`, `refusal`, `model_context_window_exceeded` at line 1 column 32",
            "invalid scenario: `connection_reset` must be true (leave the fault out instead) at line 1 column 51",
            "invalid scenario: unknown variant `last_tool_result`, expected one of `last_tool_result_contains`, `last_user_text_contains`, `system_contains` at line 1 column 53",
        ]
    "#]].assert_debug_eq(&messages);
    let missing = Scenario::load("/nonexistent/scenario.json")
        .unwrap_err()
        .to_string();
    assert!(
        missing.starts_with("cannot read scenario /nonexistent/scenario.json: "),
        "{missing}"
    );
}

#[test]
fn a_scenario_built_in_code_serializes_to_the_file_format() {
    use rein_scripted::fake_model::{Fault, StopReason, Usage};
    let scenario = Scenario::new()
        .reply(
            Reply::text("I'll run the tests.").tool_call("run_tests", json!({"target": "tests"})),
        )
        .reply(Reply::fault(Fault::Status {
            status: 429,
            retry_after: Some(1),
            message: None,
        }))
        .reply(
            Reply::text("a")
                .tool_call("t", json!({}))
                .text("b")
                .stop(StopReason::MaxTokens),
        )
        .reply(Reply::text("Done.").usage(Usage {
            input: 1200,
            output: 30,
            cache_read: 1000,
            cache_write: 0,
        }))
        .branch(
            vec![(
                Condition::LastToolResultContains("FAILED".into()),
                Reply::text("still failing"),
            )],
            Reply::text("all green"),
        )
        .require_api_key(false);
    let json = serde_json::to_string_pretty(&scenario).unwrap();
    expect![[r#"
        {
          "replies": [
            {
              "text": "I'll run the tests.",
              "tool_calls": [
                {
                  "name": "run_tests",
                  "input": {
                    "target": "tests"
                  }
                }
              ]
            },
            {
              "fault": {
                "status": 429,
                "retry_after": 1
              }
            },
            {
              "content": [
                {
                  "text": "a"
                },
                {
                  "tool_call": {
                    "name": "t",
                    "input": {}
                  }
                },
                {
                  "text": "b"
                }
              ],
              "stop": "max_tokens"
            },
            {
              "text": "Done.",
              "usage": {
                "input": 1200,
                "output": 30,
                "cache_read": 1000,
                "cache_write": 0
              }
            },
            {
              "branch": [
                {
                  "when": {
                    "last_tool_result_contains": "FAILED"
                  },
                  "reply": {
                    "text": "still failing"
                  }
                }
              ],
              "otherwise": {
                "text": "all green"
              }
            }
          ],
          "require_api_key": false,
          "text_chunk_chars": 4
        }"#]]
    .assert_eq(&json);
    assert_eq!(Scenario::from_json(&json).unwrap(), scenario);
}
