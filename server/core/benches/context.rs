//! What assembling the context costs the harness per turn, with 10, 100
//! and 1000 turns of history (each a file read or a test run, a few
//! thousand tokens), excluding the model and the tools.
//!
//! Run: `cargo bench -p rein-core --bench context`

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rein_core::context::history::{History, Item, RecordedResult, ResultMeta};
use rein_core::context::{ContextConfig, ContextManager};
use rein_core::exec::{CommandKind, CommandResult};
use rein_core::task::{TaskId, TaskSpec};
use rein_core::tools::ALL;
use rein_core::workspace::ReadVersion;
use rein_models::{Part, ToolCall};
use serde_json::json;

fn history(turns: usize) -> History {
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

fn assemble(c: &mut Criterion) {
    let task = TaskSpec::fix_test(TaskId("t-bench".into()), "tests/test_cart.py", "test_total");
    let tools = ALL.iter().map(|t| t.spec()).collect();
    let manager = ContextManager::new(
        ContextConfig::default(),
        "claude-sonnet-4-5",
        &task,
        tools,
        None,
    );
    let mut group = c.benchmark_group("context_assemble");
    for turns in [10, 100, 1000] {
        let h = history(turns);
        group.bench_with_input(BenchmarkId::from_parameter(turns), &h, |b, h| {
            b.iter(|| {
                black_box(manager.assemble(h, "[Progress: turn 5 of 20] No files changed yet."))
            })
        });
    }
    group.finish();

    // Counting a new result's tokens happens once, when it is recorded.
    let mut group = c.benchmark_group("record_result");
    let text: String = (1..=120)
        .map(|l| format!("    let value_{l} = compute(items, {l}); // step {l}\n"))
        .collect();
    group.bench_function("count_tokens_3k", |b| {
        b.iter(|| black_box(rein_models::tokens::count_text(&text)))
    });
    group.finish();
}

criterion_group!(benches, assemble);
criterion_main!(benches);
