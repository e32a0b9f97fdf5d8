//! Exact Anthropic Messages API output, streamed and not.

use expect_test::expect;
use rein_scripted::fake_model::{Reply, StopReason, Usage};
use serde_json::json;

use crate::support::{anthropic, anthropic_body, describe, event_data, serve};

fn thinking_text_and_tool_call() -> Reply {
    Reply::empty()
        .thinking("Le café?")
        .text("Reading cart.py.")
        .tool_call("read_file", json!({"path": "cart.py"}))
}

#[tokio::test]
async fn streams_thinking_text_and_a_tool_call() {
    let server = serve(vec![thinking_text_and_tool_call()]).await;
    let response = anthropic(&server, &anthropic_body(true))
        .send()
        .await
        .unwrap();
    expect![[r#"
        200
        content-type: text/event-stream; charset=utf-8
        transfer-encoding: chunked
        cache-control: no-cache
        connection: keep-alive
        request-id: req_fake_0001
        event: message_start
        data: {"type":"message_start","message":{"id":"msg_fake_0001","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":28,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}

        event: content_block_start
        data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}

        event: ping
        data: {"type": "ping"}

        event: content_block_delta
        data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Le c"}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"afé?"}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig_fake_0001"}}

        event: content_block_stop
        data: {"type":"content_block_stop","index":0}

        event: content_block_start
        data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Read"}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"ing "}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"cart"}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":".py."}}

        event: content_block_stop
        data: {"type":"content_block_stop","index":1}

        event: content_block_start
        data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_fake_0001","name":"read_file","input":{}}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"pa"}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"th\":"}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"car"}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"t.py"}}

        event: content_block_delta
        data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"}"}}

        event: content_block_stop
        data: {"type":"content_block_stop","index":2}

        event: message_delta
        data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":13}}

        event: message_stop
        data: {"type":"message_stop"}

    "#]]
    .assert_eq(&describe(response).await);
    assert!(server.violations().is_empty(), "{:?}", server.violations());
}

#[tokio::test]
async fn answers_without_streaming() {
    let reply = thinking_text_and_tool_call().usage(Usage {
        input: 1200,
        output: 30,
        cache_read: 1000,
        cache_write: 24,
    });
    let server = serve(vec![reply]).await;
    let response = anthropic(&server, &anthropic_body(false))
        .send()
        .await
        .unwrap();
    expect![[r#"
        200
        content-type: application/json
        content-length: 453
        connection: keep-alive
        request-id: req_fake_0001
        {"id":"msg_fake_0001","type":"message","role":"assistant","model":"claude-test","content":[{"type":"thinking","thinking":"Le café?","signature":"sig_fake_0001"},{"type":"text","text":"Reading cart.py."},{"type":"tool_use","id":"toolu_fake_0001","name":"read_file","input":{"path":"cart.py"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":1200,"cache_creation_input_tokens":24,"cache_read_input_tokens":1000,"output_tokens":30}}"#]]
    .assert_eq(&describe(response).await);
}

#[tokio::test]
async fn stop_sequence_names_the_requests_first_sequence() {
    let server = serve(vec![Reply::text("3, 2, 1").stop(StopReason::StopSequence)]).await;
    let mut body = anthropic_body(false);
    body["stop_sequences"] = json!(["STOP", "END"]);
    let message: serde_json::Value = anthropic(&server, &body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(message["stop_reason"], "stop_sequence");
    assert_eq!(message["stop_sequence"], "STOP");
}

#[tokio::test]
async fn every_stop_reason_is_sent_verbatim() {
    let reasons = [
        StopReason::EndTurn,
        StopReason::ToolUse,
        StopReason::MaxTokens,
        StopReason::StopSequence,
        StopReason::PauseTurn,
        StopReason::Refusal,
        StopReason::ModelContextWindowExceeded,
    ];
    let server = serve(reasons.iter().map(|r| Reply::text("x").stop(*r)).collect()).await;
    let mut sent = Vec::new();
    for _ in reasons {
        let text = anthropic(&server, &anthropic_body(true))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let delta = event_data(&text)
            .into_iter()
            .find(|e| e["type"] == "message_delta")
            .unwrap();
        sent.push(delta["delta"]["stop_reason"].as_str().unwrap().to_string());
    }
    assert_eq!(
        sent,
        [
            "end_turn",
            "tool_use",
            "max_tokens",
            "stop_sequence",
            "pause_turn",
            "refusal",
            "model_context_window_exceeded"
        ]
    );
}

#[tokio::test]
async fn tool_ids_are_unique_across_replies_and_fixed_ids_are_kept() {
    let server = serve(vec![
        Reply::tool_call("a", json!({})).tool_call("b", json!({})),
        Reply::tool_call("c", json!({})).tool_call_with_id("toolu_mine", "d", json!({})),
    ])
    .await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let message: serde_json::Value = anthropic(&server, &anthropic_body(false))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        for block in message["content"].as_array().unwrap() {
            ids.push(block["id"].as_str().unwrap().to_string());
        }
    }
    assert_eq!(
        ids,
        [
            "toolu_fake_0001",
            "toolu_fake_0002",
            "toolu_fake_0003",
            "toolu_mine"
        ]
    );
}

/// A server restarted mid-task starts its counter over, but the history the
/// client resends carries the ids of the server before it; repeating one
/// would make the real API refuse the request.
#[tokio::test]
async fn generated_tool_ids_skip_the_ids_already_in_the_history() {
    let server = serve(vec![Reply::tool_call("run_tests", json!({}))]).await;
    let body = json!({
        "model": "claude-test",
        "max_tokens": 1024,
        "messages": [
            {"role": "user", "content": "Fix the cart."},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_fake_0001", "name": "read_file", "input": {}},
                {"type": "tool_use", "id": "toolu_fake_0002", "name": "read_file", "input": {}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_fake_0001", "content": "a"},
                {"type": "tool_result", "tool_use_id": "toolu_fake_0002", "content": "b"}
            ]}
        ]
    });
    let message: serde_json::Value = anthropic(&server, &body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(message["content"][0]["id"], "toolu_fake_0003");
}
