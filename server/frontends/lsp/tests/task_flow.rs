//! A task end to end through the in-process server: the code action, the
//! command, the approved edit on the live buffer, the save before the test
//! run, the verification, the progress and status the editor sees.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use pretty_assertions::assert_eq;
use rein_testkit::editor::{EditorOptions, HeadlessEditor};
use serde_json::{Value, json};

/// A copy of the demo project in a temporary folder (kept while the
/// returned guard lives) and its canonical path.
fn demo_workspace() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    rein_testkit::copy_project(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../app/demo/project"),
        &root,
    )
    .unwrap();
    (dir, root)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fix_test_from_the_code_action_to_verified() {
    let (_dir, root) = demo_workspace();
    let server = support::start(rein_lsp::ServerOptions::default());
    let options = EditorOptions {
        settings: json!({"provider": "scripted"}),
        ..EditorOptions::default()
    };
    let mut editor = HeadlessEditor::new(server.client, &root, options);
    editor.initialize().await.unwrap();
    editor.open("tests/test_cart.py").await.unwrap();
    editor.open("cart.py").await.unwrap();

    // The cursor on `def test_total`.
    let uri = editor.uri("tests/test_cart.py");
    let actions = editor
        .request(
            "textDocument/codeAction",
            json!({
                "textDocument": {"uri": uri},
                "range": {"start": {"line": 7, "character": 8}, "end": {"line": 7, "character": 8}},
                "context": {"diagnostics": []}
            }),
        )
        .await
        .unwrap();
    let fix = &actions["result"][0];
    assert_eq!(fix["title"], "Fix test test_total with Rein");
    assert_eq!(fix["kind"], "quickfix");
    assert_eq!(fix["command"]["command"], "rein.fixTest");
    assert_eq!(
        fix["command"]["arguments"][0]["testName"],
        "TestCart.test_total"
    );
    // Quiet when idle: "Ask Rein…" is for a selection, not every cursor.
    assert_eq!(actions["result"].as_array().unwrap().len(), 1, "{actions}");

    let started = editor
        .request(
            "workspace/executeCommand",
            json!({"command": "rein.fixTest", "arguments": fix["command"]["arguments"]}),
        )
        .await
        .unwrap();
    let task_id = started["result"]["taskId"].as_str().unwrap().to_owned();
    let status = editor.until_task_ends(&task_id).await.unwrap();
    assert_eq!(status["state"], "succeeded", "{status}");

    let fixed = "    return sum(item.price * item.qty for item in items)";
    assert!(editor.buffer("cart.py").unwrap().contains(fixed));
    // Saved before the tests ran, through rein/saveDocuments.
    assert!(
        std::fs::read_to_string(root.join("cart.py"))
            .unwrap()
            .contains(fixed)
    );

    let methods: Vec<&str> = editor
        .received()
        .iter()
        .filter_map(|m| m["method"].as_str())
        .collect();
    for expected in [
        "window/workDoneProgress/create",
        "$/progress",
        "workspace/applyEdit",
        "rein/saveDocuments",
        "rein/taskStatus",
    ] {
        assert!(
            methods.contains(&expected),
            "{expected} missing from {methods:?}"
        );
    }
    // The edit was a versioned, annotated, minimal hunk that needed the user's confirmation.
    let edit = editor
        .received()
        .iter()
        .find(|m| m["method"] == "workspace/applyEdit")
        .unwrap();
    let change = &edit["params"]["edit"]["documentChanges"][0];
    assert_eq!(change["textDocument"]["version"], 1);
    assert_eq!(change["edits"].as_array().unwrap().len(), 1);
    assert_eq!(change["edits"][0]["range"]["start"]["line"], 12);
    let annotation = change["edits"][0]["annotationId"]
        .as_str()
        .unwrap_or_else(|| panic!("{edit}"));
    assert_eq!(
        edit["params"]["edit"]["changeAnnotations"][annotation]["needsConfirmation"],
        true
    );
    let progress: Vec<&Value> = editor
        .received()
        .iter()
        .filter(|m| m["method"] == "$/progress")
        .collect();
    assert_eq!(
        progress.first().unwrap()["params"]["value"]["kind"],
        "begin"
    );
    let end = &progress.last().unwrap()["params"]["value"];
    assert_eq!(end["kind"], "end");
    assert!(
        end["message"]
            .as_str()
            .unwrap()
            .starts_with("fixed: `TestCart.test_total` passes, no regressions in 5 turns"),
        "{end}"
    );
}

/// Regression: a task started right after `initialize`, before the
/// editor's answer to `workspace/configuration` arrived, ran without those
/// settings (`maxTurns: 1` was ignored once). It now waits for them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_started_before_the_settings_arrive_waits_for_them() {
    let (_dir, root) = demo_workspace();
    let mut server = support::start(rein_lsp::ServerOptions::default());
    let c = &mut server.client;
    let root_uri = format!("file://{}", root.display());
    c.request(
        "initialize",
        json!({
            "capabilities": {"workspace": {"configuration": true}},
            "rootUri": root_uri,
            "initializationOptions": {"provider": "scripted"},
        }),
    )
    .await
    .unwrap();
    c.notify("initialized", json!({})).await.unwrap();
    let asked = c.expect_method("workspace/configuration").await.unwrap();
    // The task starts while the settings are still on their way.
    let started = c
        .request(
            "workspace/executeCommand",
            json!({"command": "rein.runTask", "arguments": [{"instruction": "what does cart.py do?"}]}),
        )
        .await
        .unwrap();
    let task = started["result"]["taskId"].as_str().unwrap().to_owned();
    c.respond(
        &asked["id"],
        json!([{"provider": "scripted", "maxTurns": 1}]),
    )
    .await
    .unwrap();
    let status = loop {
        let message = c.recv().await.unwrap();
        if message.get("id").is_some() && message.get("method").is_some() {
            // Progress tokens, messages: answered and passed over.
            let id = message["id"].clone();
            c.respond(&id, Value::Null).await.unwrap();
            continue;
        }
        if message["method"] == "rein/taskStatus" && message["params"]["taskId"] == task {
            break message["params"].clone();
        }
    };
    assert_eq!(status["maxTurns"], 1, "{status}");
}
