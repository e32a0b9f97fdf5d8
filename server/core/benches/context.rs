//! What assembling the context costs the harness per turn, with 10, 100
//! and 1000 turns of history (each a file read or a test run, a few
//! thousand tokens), excluding the model and the tools.
//!
//! Run: `cargo bench -p rein-core --bench context`

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rein_core::context::{ContextConfig, ContextManager};
use rein_core::task::{TaskId, TaskSpec};
use support::history;

mod support;

fn assemble(c: &mut Criterion) {
    let task = TaskSpec::fix_test(TaskId("t-bench".into()), "tests/test_cart.py", "test_total");
    let tools = rein_core::tools::builtin().specs();
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
