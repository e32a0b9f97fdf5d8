//! Requests as well-behaved clients send them, and helpers to read answers.

use rein_scripted::fake_model::{FakeModel, Reply, Scenario};
use reqwest::{RequestBuilder, Response};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A server with these replies, keys required.
pub async fn serve(replies: Vec<Reply>) -> FakeModel {
    let scenario = replies.into_iter().fold(Scenario::new(), Scenario::reply);
    FakeModel::start(scenario).await.unwrap()
}

/// A valid Anthropic request, ready to send.
pub fn anthropic(server: &FakeModel, body: &Value) -> RequestBuilder {
    reqwest::Client::new()
        .post(format!("{}/v1/messages", server.base_url()))
        .header("x-api-key", "sk-ant-test")
        .header("anthropic-version", "2023-06-01")
        .json(body)
}

/// A valid OpenAI request, ready to send.
pub fn openai(server: &FakeModel, body: &Value) -> RequestBuilder {
    reqwest::Client::new()
        .post(format!("{}/v1/chat/completions", server.base_url()))
        .bearer_auth("sk-test")
        .json(body)
}

/// A minimal valid Anthropic body: one user turn.
pub fn anthropic_body(stream: bool) -> Value {
    json!({
        "model": "claude-test",
        "max_tokens": 1024,
        "stream": stream,
        "messages": [{"role": "user", "content": "Fix the cart."}],
    })
}

/// A minimal valid OpenAI body: one user turn.
pub fn openai_body(stream: bool) -> Value {
    json!({
        "model": "gpt-test",
        "stream": stream,
        "messages": [{"role": "user", "content": "Fix the cart."}],
    })
}

/// Status, the headers a client looks at, and the body.
pub async fn describe(response: Response) -> String {
    let mut out = format!("{}\n", response.status().as_u16());
    for name in [
        "content-type",
        "content-length",
        "transfer-encoding",
        "cache-control",
        "connection",
        "request-id",
        "x-request-id",
        "retry-after",
    ] {
        if let Some(value) = response.headers().get(name) {
            out.push_str(&format!("{name}: {}\n", value.to_str().unwrap()));
        }
    }
    out.push_str(&normalize(&response.text().await.unwrap()));
    out
}

/// OpenAI's `created` is the real clock; snapshots show `<created>`.
pub fn normalize(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some(at) = rest.find("\"created\":") {
        let (head, tail) = rest.split_at(at + "\"created\":".len());
        out.push_str(head);
        out.push_str("<created>");
        rest = tail.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// Reads a response body until the server stops sending, keeping what
/// arrived even when the body ends in an error.
pub async fn read_until_error(mut response: Response) -> (String, bool) {
    let mut bytes = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => bytes.extend_from_slice(&chunk),
            Ok(None) => return (String::from_utf8(bytes).unwrap(), false),
            Err(_) => return (String::from_utf8(bytes).unwrap(), true),
        }
    }
}

/// Sends raw bytes on a fresh connection and returns everything the server
/// writes until it closes.
pub async fn raw_exchange(server: &FakeModel, request: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(server.addr()).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    response
}

/// An HTTP/1.1 request with a JSON body, as raw bytes.
pub fn raw_request(path: &str, headers: &[&str], body: &Value) -> Vec<u8> {
    let body = body.to_string();
    let mut head =
        format!("POST {path} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n");
    for header in headers {
        head.push_str(header);
        head.push_str("\r\n");
    }
    head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    head.push_str(&body);
    head.into_bytes()
}

/// The SSE events (`…\n\n` records) of a stream body.
pub fn events(body: &str) -> Vec<&str> {
    body.split_inclusive("\n\n").collect()
}

/// The `data:` JSON of each SSE event (skipping `[DONE]`).
pub fn event_data(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}
