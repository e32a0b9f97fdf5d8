//! The server in-process, spoken to in raw JSON-RPC frames; every assertion
//! compares whole messages, as the editor would receive them.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use expect_test::expect;
use pretty_assertions::assert_eq;
use rein_lsp::ServerOptions;
use serde_json::json;
use support::{did_change, did_open, initialized, range};

fn pretty(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap()
}

#[tokio::test]
async fn initialize_announces_incremental_sync_and_utf8() {
    let (_server, response) =
        initialized(json!({"general": {"positionEncodings": ["utf-16", "utf-8"]}})).await;
    expect![[r#"
        {
          "jsonrpc": "2.0",
          "result": {
            "capabilities": {
              "positionEncoding": "utf-8",
              "textDocumentSync": {
                "openClose": true,
                "change": 2,
                "save": {
                  "includeText": true
                }
              },
              "codeActionProvider": {
                "codeActionKinds": [
                  "quickfix",
                  ""
                ]
              },
              "codeLensProvider": {
                "resolveProvider": false
              },
              "executeCommandProvider": {
                "commands": [
                  "rein.fixTest",
                  "rein.fixError",
                  "rein.runTask",
                  "rein.cancelTask",
                  "rein.resumeTask",
                  "rein.answer",
                  "rein.trustWorkspace",
                  "rein.undoTask"
                ]
              }
            },
            "serverInfo": {
              "name": "rein",
              "version": "0.1.0"
            }
          },
          "id": 1
        }"#]]
    .assert_eq(&pretty(&response));
}

/// The negotiated encoding decides what a column means. The same edit
/// (replace columns 1..3 of "a😀b") removes different text in each.
#[tokio::test]
async fn encoding_negotiation_decides_column_units() {
    let cases = [
        (json!({}), "utf-16", "a"),
        (json!({"general": {}}), "utf-16", "a"),
        (
            json!({"general": {"positionEncodings": ["utf-32", "utf-16"]}}),
            "utf-16",
            "a",
        ),
        (
            json!({"general": {"positionEncodings": ["utf-32", "utf-8"]}}),
            "utf-8",
            "a\u{FFFD}",
        ),
    ];
    for (capabilities, want_encoding, _) in &cases {
        let (mut server, response) = initialized(capabilities.clone()).await;
        assert_eq!(
            response["result"]["capabilities"]["positionEncoding"], *want_encoding,
            "{capabilities}"
        );
        server
            .client
            .notify("textDocument/didOpen", did_open("file:///e.py", "a😀b\n"))
            .await
            .unwrap();
        server
            .client
            .notify(
                "textDocument/didChange",
                did_change(
                    "file:///e.py",
                    2,
                    json!([{"range": range(0, 1, 0, 3), "text": "X"}]),
                ),
            )
            .await
            .unwrap();
        let text = server.document("file:///e.py").await["text"].clone();
        // UTF-16 units 1..3 are exactly 😀; UTF-8 bytes 1..3 are the first
        // half of 😀, which rounds down to nothing before it: an empty range.
        let want = if *want_encoding == "utf-16" {
            "aXb\n"
        } else {
            "aX😀b\n"
        };
        assert_eq!(text, want, "{capabilities}");
    }
}

#[tokio::test]
async fn changes_in_one_notification_apply_in_order() {
    let (mut server, _) = initialized(json!({})).await;
    let c = &mut server.client;
    c.notify(
        "textDocument/didOpen",
        did_open("file:///a.py", "hello world\n"),
    )
    .await
    .unwrap();
    c.notify(
        "textDocument/didChange",
        did_change(
            "file:///a.py",
            2,
            json!([
                {"range": range(0, 0, 0, 5), "text": "goodbye"},
                {"range": range(0, 8, 0, 13), "text": "moon"},
                {"text": "replaced\r\nwhole"},
                {"range": range(1, 5, 1, 5), "text": "!"}
            ]),
        ),
    )
    .await
    .unwrap();
    let state = server.document("file:///a.py").await;
    assert_eq!(
        state,
        json!({
            "uri": "file:///a.py",
            "version": 2,
            "languageId": "python",
            "contentHash": rein_text::ContentHash::of_str("replaced\r\nwhole!").to_hex(),
            "lineCount": 2,
            "utf8Length": 16,
            "text": "replaced\r\nwhole!"
        })
    );
}

#[tokio::test]
async fn out_of_range_edits_are_clamped_not_fatal() {
    let (mut server, _) = initialized(json!({})).await;
    let c = &mut server.client;
    c.notify("textDocument/didOpen", did_open("file:///a.py", "ab\ncd"))
        .await
        .unwrap();
    c.notify(
        "textDocument/didChange",
        did_change(
            "file:///a.py",
            2,
            json!([{"range": range(0, 99, 40, 7), "text": "!"}]),
        ),
    )
    .await
    .unwrap();
    assert_eq!(server.document("file:///a.py").await["text"], "ab!");
}

#[tokio::test]
async fn malformed_params_get_an_error_and_the_server_carries_on() {
    let (mut server, _) = initialized(json!({})).await;
    let c = &mut server.client;

    // A request with params of the wrong shape: a whole error response.
    let id = c
        .send_request("rein/documentState", json!({"uri": 42}))
        .await
        .unwrap();
    let response = c.response(id).await.unwrap();
    expect![[r#"
        {
          "jsonrpc": "2.0",
          "error": {
            "code": -32602,
            "message": "invalid type: integer `42`, expected a string"
          },
          "id": 2
        }"#]]
    .assert_eq(&pretty(&response));

    // Notifications with broken params, and for documents never opened,
    // get no answer (they can't) and break nothing.
    c.notify("textDocument/didChange", json!({"textDocument": 5}))
        .await
        .unwrap();
    c.notify(
        "textDocument/didChange",
        did_change("file:///never.py", 2, json!([{"text": "x"}])),
    )
    .await
    .unwrap();
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": "not a uri at all"}}),
    )
    .await
    .unwrap();

    // Regression: one undecodable frame used to end the session, because
    // the transport's reader stops after its first decode error. Each kind
    // of broken frame now gets its JSON-RPC error (id null) and nothing else.
    let broken: [(&[u8], serde_json::Value); 3] = [
        (
            b"Content-Length: 9\r\n\r\n{not json",
            json!({"code": -32700, "message": "Parse error: key must be a string at line 1 column 2"}),
        ),
        (
            b"Content-Length: 5\r\n\r\n[1,2]",
            json!({"code": -32600, "message": "Invalid request: not a JSON-RPC 2.0 request, notification or response (invalid type: integer `1`, expected a string at line 1 column 2)"}),
        ),
        (
            b"Content-Length: many\r\n\r\n",
            json!({"code": -32700, "message": "Parse error: invalid Content-Length \"many\""}),
        ),
    ];
    for (raw, error) in broken {
        c.send_raw(raw).await.unwrap();
        let response = c.recv().await.unwrap();
        assert_eq!(
            response,
            json!({"jsonrpc": "2.0", "id": null, "error": error})
        );
    }

    // Unknown methods and unknown documents are plain errors.
    let unknown = c.request("rein/noSuchMethod", json!({})).await.unwrap();
    assert_eq!(
        unknown,
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "Method not found", "data": "rein/noSuchMethod"}})
    );
    let missing = c
        .request("rein/documentState", json!({"uri": "file:///never.py"}))
        .await
        .unwrap();
    assert_eq!(
        missing,
        json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "document file:///never.py is not open"}})
    );

    // Still alive and still correct.
    c.notify("textDocument/didOpen", did_open("file:///ok.py", "fine"))
        .await
        .unwrap();
    assert_eq!(server.document("file:///ok.py").await["text"], "fine");
}

#[tokio::test]
async fn did_save_with_text_resyncs_a_drifted_buffer() {
    let (mut server, _) = initialized(json!({})).await;
    let c = &mut server.client;
    c.notify("textDocument/didOpen", did_open("file:///s.py", "ours"))
        .await
        .unwrap();
    c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": "file:///s.py"}, "text": "theirs"}),
    )
    .await
    .unwrap();
    let state = server.document("file:///s.py").await;
    assert_eq!(
        (state["text"].clone(), state["version"].clone()),
        (json!("theirs"), json!(1))
    );
}

#[tokio::test]
async fn did_close_forgets_the_document() {
    let (mut server, _) = initialized(json!({})).await;
    let c = &mut server.client;
    c.notify("textDocument/didOpen", did_open("file:///c.py", "x"))
        .await
        .unwrap();
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": "file:///c.py"}}),
    )
    .await
    .unwrap();
    let response = c
        .request("rein/documentState", json!({"uri": "file:///c.py"}))
        .await
        .unwrap();
    assert_eq!(
        response["error"]["message"],
        "document file:///c.py is not open"
    );
    assert!(server.handle.documents().is_empty());
}

/// DESIGN.md §1: no handler awaits a server→client request. The client
/// here never answers `workspace/configuration`; the server must keep
/// serving everything else. The request's timeout outlasts the test, so
/// it is still pending throughout (a short one could run out first, on a
/// loaded machine, and the test would prove nothing).
#[tokio::test]
async fn an_unanswered_client_request_blocks_nothing() {
    let mut server = support::start(ServerOptions {
        client_request_timeout: Duration::from_secs(600),
        ..ServerOptions::default()
    });
    let c = &mut server.client;
    c.request(
        "initialize",
        json!({"capabilities": {"workspace": {"configuration": true}}}),
    )
    .await
    .unwrap();
    c.notify("initialized", json!({})).await.unwrap();
    let config_request = c.expect_method("workspace/configuration").await.unwrap();
    assert_eq!(
        config_request["params"],
        json!({"items": [{"section": "rein"}]})
    );

    // Never answered: the server still handles notifications and requests,
    // more of them than the transport has concurrency slots.
    c.notify("textDocument/didOpen", did_open("file:///w.py", ""))
        .await
        .unwrap();
    for version in 2..40 {
        c.notify(
            "textDocument/didChange",
            did_change(
                "file:///w.py",
                version,
                json!([{"range": range(0, 0, 0, 0), "text": "x"}]),
            ),
        )
        .await
        .unwrap();
        let state = c
            .request("rein/documentState", json!({"uri": "file:///w.py"}))
            .await
            .unwrap();
        assert_eq!(state["result"]["version"], version);
    }
    assert_eq!(
        c.request("shutdown", json!(null)).await.unwrap()["result"],
        json!(null)
    );
}

#[tokio::test]
async fn settings_come_from_initialization_options_then_workspace_configuration() {
    let mut server = support::start(ServerOptions::default());
    let c = &mut server.client;
    c.request(
        "initialize",
        json!({"capabilities": {"workspace": {"configuration": true}}, "initializationOptions": {"maxTurns": 5}}),
    )
    .await
    .unwrap();
    assert_eq!(server.handle.settings(), json!({"maxTurns": 5}));
    c.notify("initialized", json!({})).await.unwrap();
    let request = c.expect_method("workspace/configuration").await.unwrap();
    c.respond(&request["id"], json!([{"maxTurns": 7}]))
        .await
        .unwrap();
    // Poll the handle until the spawned task has stored the answer; a
    // round trip alone does not order the two. The bound is a hang guard,
    // far above what storing takes even on a loaded machine.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while tokio::time::Instant::now() < deadline {
        if server.handle.settings() == json!({"maxTurns": 7}) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("settings never updated: {}", server.handle.settings());
}

#[tokio::test]
async fn shutdown_then_exit_ends_the_server_cleanly() {
    let (mut server, _) = initialized(json!({})).await;
    let c = &mut server.client;
    assert_eq!(
        c.request("shutdown", json!(null)).await.unwrap(),
        json!({"jsonrpc": "2.0", "id": 2, "result": null})
    );
    // After shutdown, requests are refused with InvalidRequest.
    let refused = c
        .request("rein/documentState", json!({"uri": "file:///x"}))
        .await
        .unwrap();
    assert_eq!(refused["error"]["code"], -32600);
    c.notify("exit", json!(null)).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), server.server)
        .await
        .unwrap()
        .unwrap();
    assert!(server.handle.shutdown_requested());
}
