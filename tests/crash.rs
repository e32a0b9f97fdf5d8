//! The crash matrix: the real server is killed (SIGKILL, via
//! `REIN_CRASH_AT`) at each step of a fix-test task — before and after each
//! op-log write, during an `applyEdit`, during a test run, during
//! compaction — then a new server is started on the same workspace, with
//! the editor's unsaved buffers. Each time: the task is recovered and
//! finishes, the fix is in the file exactly once, and the op log holds no
//! call left unaccounted for.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rein_testkit::editor::{EditorOptions, HeadlessEditor};
use rein_testkit::{LspClient, rein_binary};
use serde_json::{Value, json};
use tokio::process::{Child, ChildStdin, Command};

const FIX: &str = "return sum(item.price * item.qty for item in items)";

fn demo_project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/app/demo/project")
}

fn settings(compaction: bool) -> Value {
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/crash/stateless.json");
    // Generous, so that the editors slow to reopen their buffers (below)
    // are slow against the test's clock, not the server's.
    let mut settings = json!({"provider": "scripted", "scenario": scenario, "confirmTimeoutSecs": 5, "reopenTimeoutSecs": 30});
    if compaction {
        // A window so small that the context is compacted whenever there
        // is something old enough to summarize (its compaction threshold,
        // 80 % of the window less a quarter kept for the answer, is below
        // what the system prompt and the tools alone take).
        settings["prices"] = json!({"scripted": {"input": 0.0, "output": 0.0, "cache_read": 0.0, "cache_write": 0.0, "context_window": 2048}});
    }
    settings
}

struct Session {
    child: Child,
    editor: HeadlessEditor<ChildStdin>,
}

fn spawn(root: &Path, crash_at: Option<&str>, compaction: bool, log: &str) -> Session {
    let mut command = Command::new(rein_binary().unwrap());
    command
        .arg("lsp")
        .env("REIN_LOG", "info")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("REIN_PROVIDER")
        .env_remove("REIN_CRASH_AT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(root.join(log)).unwrap())
        .kill_on_drop(true);
    if let Some(point) = crash_at {
        command.env("REIN_CRASH_AT", point);
    }
    let mut child = command.spawn().unwrap();
    let client = LspClient::new(child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let options = EditorOptions {
        settings: settings(compaction),
        ..EditorOptions::default()
    };
    let editor = HeadlessEditor::new(client, root, options).with_timeout(Duration::from_secs(90));
    Session { child, editor }
}

fn is_final(status: &Value) -> bool {
    matches!(
        status["state"].as_str(),
        Some("succeeded" | "failed" | "cancelled" | "budget_exhausted")
    )
}

/// Runs the matrix case for one crash point.
async fn crash_and_recover(point: &str, compaction: bool) {
    crash_and_recover_with(point, compaction, Duration::ZERO).await;
}

/// The same, with an editor that takes `reopen_after` to send its buffers
/// to the new server (the recovery must not judge the files before).
async fn crash_and_recover_with(point: &str, compaction: bool, reopen_after: Duration) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    rein_testkit::copy_project(&demo_project(), &root).unwrap();

    // 1. The task starts; the server dies at `point`.
    let mut first = spawn(&root, Some(point), compaction, "first.log");
    first.editor.initialize().await.unwrap();
    first.editor.open("tests/test_cart.py").await.unwrap();
    first.editor.open("cart.py").await.unwrap();
    let uri = first.editor.uri("tests/test_cart.py");
    let started = first
        .editor
        .request("workspace/executeCommand", json!({"command": "rein.fixTest", "arguments": [{"uri": uri, "position": {"line": 7, "character": 8}, "testName": "TestCart.test_total"}]}))
        .await
        .unwrap();
    let task = started["result"]["taskId"].as_str().unwrap().to_owned();
    // Until the server dies (the client sees its output close) — or, if
    // the point is never reached, the task ends: that is a test bug.
    let ended = first
        .editor
        .pump_until(|m| m["method"] == "rein/taskStatus" && is_final(&m["params"]))
        .await;
    assert!(
        ended.is_err(),
        "{point}: the server did not crash; the task ended: {ended:?}"
    );
    let status = first.child.wait().await.unwrap();
    assert_eq!(
        status.code(),
        None,
        "{point}: the server should die by a signal"
    );
    // What the editor holds, saved or not, survives the server.
    let cart_buffer = first.editor.buffer("cart.py").unwrap();
    drop(first);

    // 2. A new server on the same workspace, the same editor buffers.
    let mut second = spawn(&root, None, compaction, "second.log");
    second.editor.initialize().await.unwrap();
    tokio::time::sleep(reopen_after).await;
    second.editor.open("tests/test_cart.py").await.unwrap();
    second
        .editor
        .open_text("cart.py", &cart_buffer)
        .await
        .unwrap();
    let mut status = second.editor.until_task_ends(&task).await.unwrap();
    if status["state"] == "waiting_user" {
        // Reality was unknown: the user looked and says go on.
        second
            .editor
            .request(
                "workspace/executeCommand",
                json!({"command": "rein.resumeTask", "arguments": [{"taskId": task}]}),
            )
            .await
            .unwrap();
        status = second.editor.until_task_ends(&task).await.unwrap();
    }
    let log = std::fs::read_to_string(root.join("second.log")).unwrap_or_default();
    let trace = std::fs::read_to_string(root.join(format!(".rein/traces/{task}.jsonl")))
        .unwrap_or_default();
    let trace_tail = &trace[trace.len().saturating_sub(6000)..];
    assert_eq!(
        status["state"], "succeeded",
        "{point}: {status}\n--- server log ---\n{log}\n--- trace tail ---\n{trace_tail}"
    );

    // 3. Applied exactly once: in the buffer and on disk.
    let buffer = second.editor.buffer("cart.py").unwrap();
    assert_eq!(buffer.matches(FIX).count(), 1, "{point}: {buffer}");
    let disk = std::fs::read_to_string(root.join("cart.py")).unwrap();
    assert_eq!(disk.matches(FIX).count(), 1, "{point}: {disk}");
    second.editor.shutdown().await.unwrap();
    assert_eq!(second.child.wait().await.unwrap().code(), Some(0));

    // 4. The op log: every call accounted for.
    let store = rein_store::Store::open(&rein_store::state_db_path(&root)).unwrap();
    let record = store.task(&task).unwrap().unwrap();
    assert_eq!(record.state, "succeeded", "{point}");
    let ops = store.ops(&task).unwrap();
    assert!(
        ops.iter().all(|o| matches!(
            o.state,
            rein_store::OpState::Finished | rein_store::OpState::Recovered
        )),
        "{point}: {:#?}",
        ops.iter()
            .map(|o| (o.tool.clone(), o.state, o.outcome.clone()))
            .collect::<Vec<_>>()
    );
    let applied_edits = ops
        .iter()
        .filter(|o| o.tool == "edit_file")
        .filter(|o| {
            o.outcome.as_deref() == Some("applied")
                || o.result_json
                    .as_deref()
                    .is_some_and(|r| r.contains("Edited cart.py"))
        })
        .count();
    assert_eq!(
        applied_edits, 1,
        "{point}: the edit was applied {applied_edits} times"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_the_edit_is_recorded() {
    crash_and_recover("op_requested:edit_file", false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_edit_is_started() {
    crash_and_recover("op_started:edit_file", false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn during_the_apply_edit() {
    crash_and_recover("apply_edit", false).await;
}

/// Regression: recovery read `cart.py` from the disk before the editor had
/// reopened its buffer, which held the applied (unsaved) edit, and logged
/// the edit as not applied. The server now waits for the buffer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn during_the_apply_edit_with_an_editor_slow_to_reopen() {
    crash_and_recover_with("apply_edit", false, Duration::from_millis(2500)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_edit_is_finished() {
    crash_and_recover("op_finished:edit_file", false).await;
}

/// The edit is logged as applied but was never saved: the resumed task
/// must go on from the buffer, not from the stale file on disk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_edit_is_finished_with_an_editor_slow_to_reopen() {
    crash_and_recover_with("op_finished:edit_file", false, Duration::from_millis(2500)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_first_model_reply_is_saved() {
    crash_and_recover("checkpoint_after_model", false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_first_results_are_saved() {
    crash_and_recover("checkpoint_after_tools", false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn during_the_baseline_test_run() {
    crash_and_recover("run_tests#1", false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn during_the_models_test_run() {
    crash_and_recover("run_tests#2", false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn during_compaction() {
    crash_and_recover("compaction", true).await;
}
