//! What the harness benches share: a history of `turns` turns, each a file
//! read (120 lines) or a failing test run (60 lines of log), as the loop
//! records them.

use rein_core::context::history::{History, Item, RecordedResult, ResultMeta};
use rein_core::exec::{CommandKind, CommandResult};
use rein_core::workspace::ReadVersion;
use rein_models::{Part, ToolCall};
use serde_json::json;

/// A history of `turns` turns after the task's first message.
pub fn history(turns: usize) -> History {
    let file: String = (1..=120)
        .map(|l| format!("    let value_{l} = compute(items, {l}); // step {l}\n"))
        .collect();
    let log: String = (1..=60)
        .map(|l| format!("test cart::tests::case_{l} ... ok\n"))
        .collect();
    let mut h = History::default();
    h.push(Item::user(
        "Fix the failing test `test_total` in `tests/test_cart.py`.",
    ));
    for t in 0..turns {
        let id = format!("call_{t}");
        let (call, result) = if t % 3 == 2 {
            let result = CommandResult {
                exit_code: Some(1),
                failures: vec!["cart::tests::total".into()],
                ..CommandResult::default()
            };
            (
                ToolCall {
                    id: id.clone(),
                    name: "run_tests".into(),
                    arguments: json!({}),
                },
                RecordedResult::new(
                    id,
                    "run_tests".into(),
                    log.clone(),
                    true,
                    ResultMeta::Command {
                        kind: CommandKind::Test,
                        command: "cargo test".into(),
                        result,
                        summary: "cargo test: exit code 1; failing: cart::tests::total".into(),
                    },
                ),
            )
        } else {
            let path = format!("src/file_{}.rs", t % 7);
            let text = format!("{path}\n{file}");
            (
                ToolCall {
                    id: id.clone(),
                    name: "read_file".into(),
                    arguments: json!({"path": path}),
                },
                RecordedResult::new(
                    id,
                    "read_file".into(),
                    text.clone(),
                    false,
                    ResultMeta::FileRead {
                        path,
                        version: ReadVersion::of_disk(&text),
                    },
                ),
            )
        };
        h.push(Item::assistant(vec![
            Part::text("Looking."),
            Part::ToolCall(call),
        ]));
        h.push(Item::Results {
            results: vec![result],
            notes: Vec::new(),
        });
    }
    h
}
