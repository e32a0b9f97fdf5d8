//! The real `rein` binary, spawned and spoken to over stdio as an editor
//! would: framing, logging to stderr only, and exit codes.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;
use std::time::Duration;

use pretty_assertions::assert_eq;
use rein_testkit::{LspClient, rein_binary};
use serde_json::{Value, json};
use tokio::process::{Child, ChildStdin, Command};

const URI: &str = "file:///project/src/cart.py";

fn spawn() -> (Child, LspClient<ChildStdin>) {
    let mut child = Command::new(rein_binary().unwrap())
        .arg("lsp")
        .env("REIN_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    (
        child,
        LspClient::new(stdout, stdin).with_timeout(Duration::from_secs(30)),
    )
}

async fn initialize(client: &mut LspClient<ChildStdin>) {
    let response = client
        .request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": {}}),
        )
        .await
        .unwrap();
    assert_eq!(
        response["result"]["capabilities"]["positionEncoding"],
        "utf-16"
    );
    client.notify("initialized", json!({})).await.unwrap();
}

async fn finish(child: Child) -> (i32, String) {
    let output = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("rein lsp did not exit")
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn a_whole_session_over_stdio() {
    let (child, mut c) = spawn();
    initialize(&mut c).await;
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": URI, "languageId": "python", "version": 1, "text": "def total(items):\r\n    return 0  # 😀\r\n"}}),
    )
    .await
    .unwrap();
    // UTF-16: after the first change 😀 spans columns 25..27.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 1, "character": 11}, "end": {"line": 1, "character": 12}}, "text": "sum(items)"},
            {"range": {"start": {"line": 1, "character": 27}, "end": {"line": 1, "character": 27}}, "text": "!"}
        ]}),
    )
    .await
    .unwrap();
    // A broken frame on the way does not end the session.
    c.send_raw(b"Content-Length: 3\r\n\r\n{{{").await.unwrap();
    assert_eq!(c.recv().await.unwrap()["error"]["code"], -32700);

    let state = c
        .request(
            "rein/documentState",
            json!({"uri": URI, "includeText": true}),
        )
        .await
        .unwrap();
    assert_eq!(
        state["result"]["text"],
        "def total(items):\r\n    return sum(items)  # 😀!\r\n"
    );
    assert_eq!(state["result"]["version"], 2);

    assert_eq!(
        c.request("shutdown", json!(null)).await.unwrap()["result"],
        json!(null)
    );
    c.notify("exit", json!(null)).await.unwrap();
    let (code, stderr) = finish(child).await;
    assert_eq!(code, 0, "stderr:\n{stderr}");
    // Logs went to stderr (stdout carried only frames, or parsing above
    // would have failed).
    assert!(stderr.contains("initialize"), "stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "stderr:\n{stderr}");
}

#[tokio::test]
async fn exit_without_shutdown_is_exit_code_one() {
    let (child, mut c) = spawn();
    initialize(&mut c).await;
    c.notify("exit", json!(null)).await.unwrap();
    let (code, stderr) = finish(child).await;
    assert_eq!(code, 1, "stderr:\n{stderr}");
}

#[tokio::test]
async fn the_editor_going_away_ends_the_server() {
    let (child, mut c) = spawn();
    initialize(&mut c).await;
    drop(c); // Closes stdin, as a crashed editor would.
    let (code, stderr) = finish(child).await;
    assert_eq!(code, 1, "stderr:\n{stderr}");
}

/// The log also lands in the workspace, where the user can find it after
/// the editor threw stderr away, and an API key from the editor's settings
/// is never in it, even at `debug`.
#[tokio::test]
async fn the_log_is_kept_in_the_workspace_without_secrets() {
    const KEY: &str = "sk-ant-api03-EDITORKEY0123456789abcdef";
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (child, mut c) = spawn();
    let root_uri = format!("file://{}", root.display());
    c.request(
        "initialize",
        json!({"processId": null, "rootUri": root_uri, "capabilities": {},
               "initializationOptions": {"provider": "anthropic", "apiKey": KEY}}),
    )
    .await
    .unwrap();
    c.notify("initialized", json!({})).await.unwrap();
    c.request("shutdown", json!(null)).await.unwrap();
    c.notify("exit", json!(null)).await.unwrap();
    let (code, stderr) = finish(child).await;
    assert_eq!(code, 0, "stderr:\n{stderr}");
    let log = std::fs::read_to_string(root.join(".rein/logs/lsp.log")).unwrap();
    assert!(log.contains("workspace root"), "{log}");
    assert!(log.contains("initialize"), "{log}");
    for text in [&log, &stderr] {
        assert!(!text.contains("EDITORKEY"), "{text}");
    }
}

// Bad bytes from the editor: each is answered with a JSON-RPC error (id
// `null`), and the session goes on with the next frame.

const GOOD_BODY: &str = r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;

fn framed(body: &str) -> String {
    format!("Content-Length: {}\r\n\r\n{body}", body.len())
}

/// The next error the server sent about bytes it could not read.
async fn malformed_frame_error(c: &mut LspClient<ChildStdin>) -> Value {
    loop {
        let message = c.recv().await.unwrap();
        if message.get("method").is_none() && message["id"].is_null() {
            assert!(message["error"]["code"].is_i64(), "{message}");
            return message["error"].clone();
        }
    }
}

/// The server still answers, then exits cleanly.
async fn still_serves(child: Child, mut c: LspClient<ChildStdin>) {
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": URI, "languageId": "python", "version": 1, "text": "x = 1\n"}}),
    )
    .await
    .unwrap();
    let state = c
        .request(
            "rein/documentState",
            json!({"uri": URI, "includeText": true}),
        )
        .await
        .unwrap();
    assert_eq!(state["result"]["text"], "x = 1\n");
    assert_eq!(
        c.request("shutdown", json!(null)).await.unwrap()["result"],
        json!(null)
    );
    c.notify("exit", json!(null)).await.unwrap();
    let (code, stderr) = finish(child).await;
    assert_eq!(code, 0, "stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "stderr:\n{stderr}");
}

#[tokio::test]
async fn a_100k_deep_array_does_not_end_the_session() {
    let (child, mut c) = spawn();
    initialize(&mut c).await;
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    // A response to a request the server never sent, and a request whose
    // unknown field is deep: the transport's parser fails on both.
    for body in [
        format!(r#"{{"jsonrpc":"2.0","id":1,"result":{deep}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":99,"method":"shutdown","junk":{deep}}}"#),
    ] {
        c.send_raw(framed(&body).as_bytes()).await.unwrap();
        let error = malformed_frame_error(&mut c).await;
        assert_eq!(error["code"], -32700, "{error}");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("deeper than 100"),
            "{error}"
        );
    }
    still_serves(child, c).await;
}

#[tokio::test]
async fn a_duplicated_content_length_is_answered_and_the_next_frame_is_served() {
    let (child, mut c) = spawn();
    initialize(&mut c).await;
    c.send_raw(
        format!(
            "Content-Length: {}\r\nContent-Length: 7\r\n\r\n{GOOD_BODY}",
            GOOD_BODY.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let error = malformed_frame_error(&mut c).await;
    assert!(
        error["message"].as_str().unwrap().contains("conflicting"),
        "{error}"
    );
    still_serves(child, c).await;
}

#[tokio::test]
async fn a_wrong_content_length_is_answered_and_the_next_frame_is_served() {
    let (child, mut c) = spawn();
    initialize(&mut c).await;
    // Too long: the claim swallows the start of the next frame.
    let too_long = format!(
        "Content-Length: {}\r\n\r\n{GOOD_BODY}",
        GOOD_BODY.len() + 30
    );
    // Too short: the rest of the body is left in front of the next frame.
    let too_short = format!("Content-Length: 20\r\n\r\n{GOOD_BODY}");
    for bad in [too_long, too_short] {
        c.send_raw(format!("{bad}{}", framed(GOOD_BODY)).as_bytes())
            .await
            .unwrap();
        assert_eq!(malformed_frame_error(&mut c).await["code"], -32700);
        let state = c
            .request("rein/documentState", json!({"uri": URI}))
            .await
            .unwrap();
        // Not open: answered all the same.
        assert_eq!(state["error"]["code"], -32602, "{state}");
    }
    still_serves(child, c).await;
}

#[tokio::test]
async fn a_body_without_a_header_is_answered_and_the_next_frame_is_served() {
    let (child, mut c) = spawn();
    initialize(&mut c).await;
    c.send_raw(GOOD_BODY.as_bytes()).await.unwrap();
    assert_eq!(malformed_frame_error(&mut c).await["code"], -32700);
    // Garbage between frames, too. (One error at a time: tower-lsp-server
    // answers a second request with the same id, `null`, arriving while
    // the first is in flight with a bare "Invalid request".)
    c.send_raw(format!("{}\r\n}}{{ garbage\r\n", framed(GOOD_BODY)).as_bytes())
        .await
        .unwrap();
    assert_eq!(malformed_frame_error(&mut c).await["code"], -32700);
    still_serves(child, c).await;
}

#[tokio::test]
async fn a_500mb_content_length_claim_is_answered_at_once() {
    let (child, mut c) = spawn();
    initialize(&mut c).await;
    c.send_raw(b"Content-Length: 524288000\r\n\r\n{\"jsonrpc\":")
        .await
        .unwrap();
    let error = malformed_frame_error(&mut c).await;
    assert_eq!(error["code"], -32600, "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("larger than"),
        "{error}"
    );
    still_serves(child, c).await;
}

#[tokio::test]
async fn an_endless_header_line_is_cut_at_8k() {
    let (child, mut c) = spawn();
    initialize(&mut c).await;
    // No line break ever: answered without waiting for one.
    c.send_raw(&vec![b'a'; 1024 * 1024]).await.unwrap();
    let error = malformed_frame_error(&mut c).await;
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("longer than 8192"),
        "{error}"
    );
    still_serves(child, c).await;
}
