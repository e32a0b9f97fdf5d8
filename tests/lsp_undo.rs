//! `rein.undoTask` end to end: the real `rein lsp` over stdio, a headless
//! editor, the demo's fix-test task by the scripted model; then the user
//! types in the buffer and undoes the task. The undo reaches the live
//! buffer as `workspace/applyEdit` (minimal hunks, applied without asking:
//! the user asked for it) and keeps the typing; a conflict is reported and
//! the buffer left as it is.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{FIXED, Server, Setup, UNFIXED, demo_cart, demo_project, demo_scenario, fixed_cart};

const CART_TEST: &str = "tests/test_cart.py";
const TEST_TOTAL_LINE: u32 = 6;
const DOC_FROM: &str = "\"\"\"A tiny shopping cart.\"\"\"\n";
const DOC_TO: &str = "\"\"\"A tiny shopping cart.\"\"\"\n# typed by the user after the task\n";

async fn fixed_task(s: &mut Server) -> String {
    s.editor.open(CART_TEST).await.unwrap();
    let task = s
        .fix_test(CART_TEST, TEST_TOTAL_LINE, "TestCart.test_total")
        .await;
    let status = s.until_end(&task).await;
    assert_eq!(status["state"], "succeeded", "{status}");
    assert_eq!(s.editor.buffer("cart.py").unwrap(), fixed_cart());
    task
}

/// `rein.undoTask` answered at once; then its `rein/undone`.
async fn undo(s: &mut Server, task: &str) -> Value {
    // Before the request: `rein/undone` may come before its answer.
    let mark = s.mark();
    let response = s
        .editor
        .request(
            "workspace/executeCommand",
            json!({"command": "rein.undoTask", "arguments": [{"taskId": task}]}),
        )
        .await
        .unwrap();
    assert_eq!(response["result"]["undoing"], true, "{response}");
    s.wait_for(mark, |m| m["method"] == "rein/undone").await["params"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_task_keeps_a_line_the_user_typed_in_the_buffer_after_the_task() {
    let mut s = Server::start(Setup::new(demo_project(), demo_scenario())).await;
    let task = fixed_task(&mut s).await;
    s.editor.replace("cart.py", DOC_FROM, DOC_TO).await.unwrap();
    let typed = s.editor.version("cart.py").unwrap();
    s.until_server_has("cart.py", typed).await;

    let edits_before = s.edits_of("cart.py").len();
    let undone = undo(&mut s, &task).await;
    assert_eq!(
        undone["summary"], "Undid Rein's changes to 1 file.",
        "{undone}"
    );
    assert_eq!(undone["incomplete"], false);
    assert_eq!(undone["files"][0]["result"], "restored");

    // The buffer: the task's fix taken back, the typed line kept.
    let expected = demo_cart().replacen(DOC_FROM, DOC_TO, 1);
    assert!(expected.contains(UNFIXED));
    assert_eq!(s.editor.buffer("cart.py").unwrap(), expected);
    // One applyEdit, one minimal hunk (the fixed line), tied to the
    // version with the typing, applied without a confirmation.
    let edits = s.edits_of("cart.py");
    assert_eq!(edits.len(), edits_before + 1);
    let change = &edits[edits_before]["params"]["edit"]["documentChanges"][0];
    assert_eq!(change["textDocument"]["version"], typed);
    let hunks = change["edits"].as_array().unwrap();
    assert_eq!(hunks.len(), 1, "{change}");
    assert!(
        hunks[0]["newText"]
            .as_str()
            .unwrap()
            .contains("item.qty for item"),
        "{change}"
    );
    let annotations = &edits[edits_before]["params"]["edit"]["changeAnnotations"];
    assert!(
        annotations
            .as_object()
            .is_none_or(|a| a.values().all(|n| n["needsConfirmation"] == false)),
        "{annotations}"
    );

    // Again: already undone, nothing sent.
    let again = undo(&mut s, &task).await;
    assert_eq!(
        again["summary"],
        "Already undone: every file is as it was before the task."
    );
    assert_eq!(s.edits_of("cart.py").len(), edits_before + 1);
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_task_leaves_a_buffer_where_the_user_changed_the_fixed_line() {
    let mut s = Server::start(Setup::new(demo_project(), demo_scenario())).await;
    let task = fixed_task(&mut s).await;
    let mine = FIXED.replace("item.price * item.qty", "item.qty * item.price");
    s.editor.replace("cart.py", FIXED, &mine).await.unwrap();
    let typed = s.editor.version("cart.py").unwrap();
    s.until_server_has("cart.py", typed).await;
    let buffer = s.editor.buffer("cart.py").unwrap();

    let edits_before = s.edits_of("cart.py").len();
    let undone = undo(&mut s, &task).await;
    assert_eq!(undone["incomplete"], true, "{undone}");
    assert_eq!(undone["files"][0]["result"], "conflict");
    assert_eq!(undone["files"][0]["conflictLines"], json!([13]));
    assert_eq!(
        s.editor.buffer("cart.py").unwrap(),
        buffer,
        "never overwritten"
    );
    assert_eq!(s.edits_of("cart.py").len(), edits_before);
    let shown: Vec<String> = s
        .messages("window/showMessage")
        .iter()
        .filter_map(|m| m["params"]["message"].as_str().map(str::to_owned))
        .collect();
    assert!(
        shown
            .iter()
            .any(|m| m.contains("cart.py: not undone: you changed what Rein changed")),
        "{shown:?}"
    );
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_task_of_an_unknown_task_says_so() {
    let mut s = Server::start(Setup::new(demo_project(), demo_scenario())).await;
    let undone = undo(&mut s, "t-nope").await;
    assert_eq!(undone["refused"], true);
    assert_eq!(
        undone["summary"],
        "Rein did not undo the task: there is no task t-nope in this workspace"
    );
    assert_eq!(s.shutdown().await, 0);
}

/// A file the task created, open in the editor and untouched since: the
/// undo has the editor delete it (a `DeleteFile`); once the user typed in
/// it, it stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_task_has_the_editor_delete_a_file_the_task_created() {
    for typed in [false, true] {
        let mut s = Server::start(Setup::new(
            demo_project(),
            support::fixture("lsp_tasks/create_notes.json"),
        ))
        .await;
        let task = s.run_task("Write down that prices are per unit").await;
        let status = s.until_end(&task).await;
        assert!(
            ["succeeded", "unverified"].contains(&status["state"].as_str().unwrap()),
            "{status}"
        );
        // In the editor's buffer (the file on disk is made empty, as VS
        // Code makes it, and the buffer is not saved).
        assert_eq!(
            s.editor.buffer("NOTES.md").as_deref(),
            Some("# Notes\n\nPrices are per unit.\n")
        );
        if typed {
            s.editor
                .replace("NOTES.md", "per unit.", "per unit (typed).")
                .await
                .unwrap();
            let version = s.editor.version("NOTES.md").unwrap();
            s.until_server_has("NOTES.md", version).await;
        }

        let undone = undo(&mut s, &task).await;
        let file = &undone["files"][0];
        assert_eq!(file["path"], "NOTES.md", "{undone}");
        if typed {
            assert_eq!(file["result"], "conflict", "{undone}");
            assert!(s.editor.buffer("NOTES.md").is_some());
            assert!(s.root.join("NOTES.md").exists());
        } else {
            assert_eq!(file["result"], "removed", "{undone}");
            assert!(!s.root.join("NOTES.md").exists());
            assert!(s.editor.buffer("NOTES.md").is_none(), "its buffer closed");
            let deletes: Vec<Value> = s
                .messages("workspace/applyEdit")
                .into_iter()
                .filter(|m| m["params"]["edit"]["documentChanges"][0]["kind"] == "delete")
                .collect();
            assert_eq!(deletes.len(), 1, "{deletes:?}");
        }
        assert_eq!(s.shutdown().await, 0);
    }
}
