//! The HTTP layer: keep-alive, chunked requests, events split across chunk
//! writes, malformed requests.

use rein_scripted::fake_model::Reply;
use serde_json::json;

use crate::support::{anthropic_body, openai_body, raw_exchange, raw_request, serve};

#[tokio::test]
async fn one_client_sends_several_requests() {
    let server = serve(vec![
        Reply::text("one"),
        Reply::text("two"),
        Reply::text("three"),
    ])
    .await;
    let client = reqwest::Client::new();
    for expected in ["one", "two", "three"] {
        let response = client
            .post(format!("{}/v1/chat/completions", server.base_url()))
            .bearer_auth("sk-test")
            .json(&openai_body(expected == "two"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        assert!(response.text().await.unwrap().contains(expected));
    }
}

#[tokio::test]
async fn pipelined_requests_on_one_connection_are_all_answered() {
    let server = serve(vec![Reply::text("one"), Reply::text("two")]).await;
    let keys = ["authorization: Bearer sk-test"];
    let mut bytes = raw_request("/chat/completions", &keys, &openai_body(false));
    bytes.extend(raw_request(
        "/chat/completions",
        &[keys[0], "connection: close"],
        &openai_body(false),
    ));
    let response = String::from_utf8(raw_exchange(&server, &bytes).await).unwrap();
    assert_eq!(
        response.matches("HTTP/1.1 200 OK\r\n").count(),
        2,
        "{response}"
    );
    assert!(response.contains("\"content\":\"one\"") && response.contains("\"content\":\"two\""));
    assert!(response.contains("connection: close\r\n"));
}

#[tokio::test]
async fn chunked_request_bodies_are_accepted() {
    let server = serve(vec![Reply::text("ok")]).await;
    let body = anthropic_body(false).to_string();
    let (first, second) = body.split_at(10);
    let request = format!(
        "POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: k\r\nanthropic-version: 2023-06-01\r\n\
         content-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n\
         {:x}\r\n{first}\r\n{:x};ext=1\r\n{second}\r\n0\r\n\r\n",
        first.len(),
        second.len()
    );
    let response = String::from_utf8(raw_exchange(&server, request.as_bytes()).await).unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert_eq!(server.requests()[0].body, anthropic_body(false));
}

/// Decodes a chunked body into its chunks.
fn chunks(body: &[u8]) -> Vec<&[u8]> {
    let mut chunks = Vec::new();
    let mut rest = body;
    loop {
        let line_end = rest.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&rest[..line_end]).unwrap(), 16).unwrap();
        if size == 0 {
            return chunks;
        }
        let data_start = line_end + 2;
        chunks.push(&rest[data_start..data_start + size]);
        rest = &rest[data_start + size + 2..];
    }
}

#[tokio::test]
async fn each_event_is_split_across_two_chunks_sometimes_inside_a_character() {
    let server = serve(vec![Reply::text("Crème brûlée, s’il vous plaît.")]).await;
    let request = raw_request(
        "/v1/messages",
        &[
            "x-api-key: k",
            "anthropic-version: 2023-06-01",
            "connection: close",
        ],
        &anthropic_body(true),
    );
    let response = raw_exchange(&server, &request).await;
    let body_start = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let chunks = chunks(&response[body_start..]);
    let joined: Vec<u8> = chunks.concat();
    let events = String::from_utf8(joined).unwrap().matches("\n\n").count();
    assert_eq!(chunks.len(), events * 2, "two writes per event");
    assert!(
        chunks
            .iter()
            .any(|chunk| std::str::from_utf8(chunk).is_err()),
        "some chunk must end inside a multi-byte character"
    );
}

#[tokio::test]
async fn malformed_http_gets_400_and_a_violation() {
    let server = serve(vec![Reply::text("unused")]).await;
    let response = raw_exchange(&server, b"HELLO\r\n\r\n").await;
    let response = String::from_utf8(response).unwrap();
    assert!(
        response.starts_with("HTTP/1.1 400 Bad Request\r\n"),
        "{response}"
    );
    assert_eq!(
        server.violations(),
        ["malformed HTTP request: malformed request line: \"HELLO\""]
    );
    assert_eq!(server.remaining(), 1);
}

#[tokio::test]
async fn unknown_endpoints_are_404_in_the_clients_dialect() {
    let server = serve(vec![Reply::text("unused")]).await;
    let anthropic = raw_request(
        "/v1/models",
        &["anthropic-version: 2023-06-01", "connection: close"],
        &json!({}),
    );
    let openai = raw_request("/v1/embeddings", &["connection: close"], &json!({}));
    let anthropic = String::from_utf8(raw_exchange(&server, &anthropic).await).unwrap();
    let openai = String::from_utf8(raw_exchange(&server, &openai).await).unwrap();
    assert!(anthropic.starts_with("HTTP/1.1 404 Not Found\r\n"));
    assert!(anthropic.ends_with(
        "{\"type\":\"error\",\"error\":{\"type\":\"not_found_error\",\"message\":\"Not Found\"},\"request_id\":\"req_fake_0001\"}"
    ));
    assert!(openai.ends_with(
        "{\"error\":{\"message\":\"Invalid URL (POST /v1/embeddings)\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":null}}"
    ));
    assert_eq!(server.remaining(), 1);
}
