//! Every fault, as a client experiences it.

use std::time::{Duration, Instant};

use expect_test::expect;
use rein_scripted::fake_model::{FakeModel, Fault, Reply, Scenario, StepStream, Streamed};
use serde_json::{Value, json};

use crate::support::{
    anthropic, anthropic_body, describe, event_data, events, openai, openai_body, read_until_error,
    serve,
};

fn status(status: u16, retry_after: Option<u64>) -> Reply {
    Reply::fault(Fault::Status {
        status,
        retry_after,
        message: None,
    })
}

#[tokio::test]
async fn status_faults_use_each_providers_error_format() {
    let cases = [
        (429, Some(1)),
        (529, None),
        (500, None),
        (401, None),
        (404, None),
        (413, None),
    ];
    let replies = || {
        cases
            .iter()
            .map(|(code, retry)| status(*code, *retry))
            .collect()
    };
    let anthropic_server = serve(replies()).await;
    let openai_server = serve(replies()).await;
    let mut out = String::new();
    for _ in cases {
        // Streaming requests get JSON errors too: the stream never starts.
        let response = anthropic(&anthropic_server, &anthropic_body(true))
            .send()
            .await
            .unwrap();
        out.push_str(&format!("anthropic {}\n\n", describe(response).await));
        let response = openai(&openai_server, &openai_body(true))
            .send()
            .await
            .unwrap();
        out.push_str(&format!("openai {}\n\n", describe(response).await));
    }
    expect![[r#"
        anthropic 429
        content-type: application/json
        content-length: 159
        connection: keep-alive
        request-id: req_fake_0001
        retry-after: 1
        {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit."},"request_id":"req_fake_0001"}

        openai 429
        content-type: application/json
        content-length: 197
        connection: keep-alive
        x-request-id: req_fake_0001
        retry-after: 1
        {"error":{"message":"Rate limit reached for gpt-test on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}

        anthropic 529
        content-type: application/json
        content-length: 104
        connection: keep-alive
        request-id: req_fake_0002
        {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_fake_0002"}

        openai 529
        content-type: application/json
        content-length: 143
        connection: keep-alive
        x-request-id: req_fake_0002
        {"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}

        anthropic 500
        content-type: application/json
        content-length: 108
        connection: keep-alive
        request-id: req_fake_0003
        {"type":"error","error":{"type":"api_error","message":"Internal server error"},"request_id":"req_fake_0003"}

        openai 500
        content-type: application/json
        content-length: 143
        connection: keep-alive
        x-request-id: req_fake_0003
        {"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}

        anthropic 401
        content-type: application/json
        content-length: 115
        connection: keep-alive
        request-id: req_fake_0004
        {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_fake_0004"}

        openai 401
        content-type: application/json
        content-length: 195
        connection: keep-alive
        x-request-id: req_fake_0004
        {"error":{"message":"Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}

        anthropic 404
        content-type: application/json
        content-length: 102
        connection: keep-alive
        request-id: req_fake_0005
        {"type":"error","error":{"type":"not_found_error","message":"Not found"},"request_id":"req_fake_0005"}

        openai 404
        content-type: application/json
        content-length: 161
        connection: keep-alive
        x-request-id: req_fake_0005
        {"error":{"message":"The model `gpt-test` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}

        anthropic 413
        content-type: application/json
        content-length: 147
        connection: keep-alive
        request-id: req_fake_0006
        {"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."},"request_id":"req_fake_0006"}

        openai 413
        content-type: application/json
        content-length: 98
        connection: keep-alive
        x-request-id: req_fake_0006
        {"error":{"message":"Request too large.","type":"invalid_request_error","param":null,"code":null}}

    "#]].assert_eq(&out);
    assert_eq!(anthropic_server.remaining(), 0);
}

#[tokio::test]
async fn a_custom_status_message_replaces_the_default() {
    let server = serve(vec![Reply::fault(Fault::Status {
        status: 503,
        retry_after: None,
        message: Some("try later".into()),
    })])
    .await;
    let body: Value = openai(&server, &openai_body(false))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        body,
        json!({"error": {"message": "try later", "type": "server_error", "param": null, "code": null}})
    );
}

#[tokio::test]
async fn connection_reset_fails_the_request_and_the_server_goes_on() {
    let server = serve(vec![
        Reply::fault(Fault::ConnectionReset),
        Reply::text("back"),
    ])
    .await;
    let error = anthropic(&server, &anthropic_body(false))
        .send()
        .await
        .unwrap_err();
    assert!(error.is_request(), "{error:?}");
    // The request was read and answered by the step, exactly once (a client
    // retrying on its own would have consumed the next step too).
    assert_eq!(server.requests().len(), 1);
    assert_eq!(server.remaining(), 1);
    let next = anthropic(&server, &anthropic_body(false))
        .send()
        .await
        .unwrap();
    assert_eq!(next.status(), 200);
}

#[tokio::test]
async fn cut_stream_delivers_exactly_n_events_then_drops() {
    let reply =
        Reply::text("This answer never arrives whole.").with_fault(Fault::CutAfterEvents(5));
    let server = serve(vec![reply.clone(), reply]).await;
    for send in [
        anthropic(&server, &anthropic_body(true)),
        openai(&server, &openai_body(true)),
    ] {
        let response = send.send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["connection"], "close");
        let (received, failed) = read_until_error(response).await;
        assert!(failed, "the body must end in an error, not cleanly");
        assert_eq!(events(&received).len(), 5, "{received}");
        assert!(received.ends_with("\n\n"), "{received}");
    }
}

#[tokio::test]
async fn cut_body_sends_headers_and_half_the_body() {
    let reply = Reply::text("Half of this.").with_fault(Fault::CutAfterEvents(0));
    let server = serve(vec![reply]).await;
    let response = anthropic(&server, &anthropic_body(false))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let length: usize = response.headers()["content-length"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let (received, failed) = read_until_error(response).await;
    assert!(failed, "an incomplete body must be an error");
    assert_eq!(received.len(), length / 2);
}

#[tokio::test]
async fn malformed_tool_json_in_every_mode() {
    let reply = Reply::tool_call("read_file", json!({"path": "cart.py"}))
        .tool_call_with_id("toolu_ok", "list", json!({}))
        .with_fault(Fault::MalformedToolJson);
    let server = serve(vec![reply.clone(), reply.clone(), reply.clone(), reply]).await;

    let message: Value = anthropic(&server, &anthropic_body(false))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    // An object cannot be malformed; the broken text travels as a string.
    assert_eq!(
        message["content"][0]["input"],
        json!("{\"path\":\"cart.py\"")
    );
    assert_eq!(
        message["content"][1]["input"],
        json!({}),
        "only the first call breaks"
    );

    let stream = anthropic(&server, &anthropic_body(true))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let partial: String = event_data(&stream)
        .iter()
        .filter(|e| e["index"] == 0)
        .filter_map(|e| e["delta"]["partial_json"].as_str())
        .collect();
    assert_eq!(partial, "{\"path\":\"cart.py\"");

    let completion: Value = openai(&server, &openai_body(false))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let arguments = completion["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .unwrap();
    assert!(
        serde_json::from_str::<Value>(arguments).is_err(),
        "{arguments}"
    );

    let stream = openai(&server, &openai_body(true))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let arguments: String = event_data(&stream)
        .iter()
        .filter_map(|chunk| {
            chunk["choices"][0]["delta"]["tool_calls"][0]
                .as_object()
                .cloned()
        })
        .filter(|call| call["index"] == 0)
        .filter_map(|call| call["function"]["arguments"].as_str().map(str::to_string))
        .collect();
    assert_eq!(arguments, "{\"path\":\"cart.py\"");
}

#[tokio::test]
async fn stream_errors_arrive_in_band() {
    let reply = Reply::text("Overloaded halfway.").with_fault(Fault::StreamError {
        after_events: 3,
        error_type: "overloaded_error".into(),
        message: "Overloaded".into(),
    });
    let server = serve(vec![reply.clone(), reply.clone(), reply]).await;

    let anthropic_stream = anthropic(&server, &anthropic_body(true))
        .send()
        .await
        .unwrap();
    let (body, failed) = read_until_error(anthropic_stream).await;
    assert!(!failed, "the stream ends cleanly after the error event");
    let last_events = events(&body).split_off(3);
    expect![[r#"
        [
            "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
        ]
    "#]].assert_debug_eq(&last_events);

    let openai_stream = openai(&server, &openai_body(true)).send().await.unwrap();
    let body = openai_stream.text().await.unwrap();
    let last_events = events(&body).split_off(3);
    expect![[r#"
        [
            "data: {\"error\":{\"message\":\"Overloaded\",\"type\":\"overloaded_error\",\"param\":null,\"code\":null}}\n\n",
        ]
    "#]].assert_debug_eq(&last_events);

    // Without a stream, the same failure is an HTTP status.
    let response = anthropic(&server, &anthropic_body(false))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 529);
}

#[tokio::test]
async fn slow_streams_arrive_intact_and_no_sooner_than_the_delays() {
    let delay = Duration::from_millis(20);
    let slow = Reply::text("Slow and steady.").with_fault(Fault::Slow { delay_ms: 20 });
    let server = serve(vec![Reply::text("Slow and steady."), slow]).await;
    let normal = anthropic(&server, &anthropic_body(true))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();

    let started = Instant::now();
    let slowed = anthropic(&server, &anthropic_body(true))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // A lower bound the server's sleeps guarantee; never flaky.
    let gaps = events(&slowed).len() as u32 - 1;
    assert!(started.elapsed() >= delay * gaps);
    assert_eq!(
        slowed.replace("0002", "0001"),
        normal,
        "same events, only slower"
    );
}

/// `wait_for_file`: the request is taken (recorded, its step consumed) but
/// nothing is answered until the test creates the file; then the reply
/// comes whole.
#[tokio::test]
async fn a_gated_reply_waits_for_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("typed.gate");
    let server = serve(vec![
        Reply::text("after the gate").with_fault(Fault::WaitForFile(gate.clone())),
    ])
    .await;
    let request = tokio::spawn(anthropic(&server, &anthropic_body(false)).send());
    while server.requests().is_empty() {
        tokio::task::yield_now().await;
    }
    // Only a broken gate could answer in this time; a slow machine cannot
    // make this fail.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!request.is_finished(), "answered before the gate opened");
    std::fs::write(&gate, "").unwrap();
    let response = request.await.unwrap().unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["content"][0]["text"], "after the gate");
}

/// `Streamed` sees a streamed reply begin and go on, event by event: a test
/// can act while it is in flight, as a real one's first bytes arrive.
#[tokio::test]
async fn a_watched_stream_is_seen_in_flight() {
    let streamed = Streamed::new();
    let scenario = Scenario::new()
        .reply(Reply::text("first"))
        .reply(Reply::text("a slow second answer").with_fault(Fault::Slow { delay_ms: 60_000 }))
        .watch_streams(&streamed);
    let server = FakeModel::start(scenario).await.unwrap();
    let first = anthropic(&server, &anthropic_body(true))
        .send()
        .await
        .unwrap();
    let total = events(&first.text().await.unwrap()).len();
    assert_eq!(streamed.of(0), StepStream { sent: total, total });
    assert!(!streamed.of(0).in_flight());

    let second = tokio::spawn(anthropic(&server, &anthropic_body(true)).send());
    streamed.until_sent(1, 1).await;
    let now = streamed.of(1);
    assert!(now.in_flight(), "{now:?}");
    assert_eq!(now.sent, 1, "the next event is a minute away");
    second.abort();
}
